// Settling a library's events: stored once, the same events read back, nothing stored twice.
import Foundation
import PhotoCatalog
import PhotoFS
import PhotoTree
import XCTest

final class LibraryEventsTests: XCTestCase {
    func testEventsSettleOnceAndComeBackTheSame() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
        // Two evenings a week apart (2019-06-07 and 2019-06-14, 19:00–21:00), a photo every 10 minutes.
        let evenings: [Int64] = [1_559_934_000, 1_560_538_800]
        var photos: [ImportedPhoto] = []
        for (evening, start) in evenings.enumerated() {
            for step in 0...12 {
                let moment = start + Int64(step) * 600
                let id = "\(evening)\(100 + step)"
                photos.append(ImportedPhoto(photo: PhotoRecord(id: id, title: "Photo \(id)", momentAt: moment,
                                                               momentYear: PhotoRecord.year(ofMoment: moment),
                                                               originalURL: "http://origin/\(id).jpg", byteSize: 100,
                                                               contentType: "image/jpeg"),
                                            owner: "me", ownerName: "Me"))
            }
        }
        _ = try catalog.applyImport(places: [], photos: photos)
        // "Now" is two days after the first evening: it has settled, the second has not happened yet for it.
        let now = evenings[0] + 2 * 86_400 + 3 * 3600
        let events = try LibraryEvents.settle(catalog, now: now)
        XCTAssertEqual(events.map(\.name), ["2019-06-07", "2019-06-14"])
        XCTAssertEqual(events.map(\.isSettled), [true, false])
        XCTAssertEqual(try catalog.storedEvents().map(\.name), ["2019-06-07"])
        XCTAssertEqual(try LibraryEvents.current(catalog, now: now), events)
        XCTAssertEqual(try LibraryEvents.settle(catalog, now: now), events)
        XCTAssertEqual(try catalog.storedEventCount(), 1)
    }
}
