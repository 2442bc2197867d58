// Settling a library's events: stored once, the same events read back, nothing stored twice.
import Foundation
import PhotoCatalog
import PhotoFS
import PhotoTree
import XCTest

final class LibraryEventsTests: XCTestCase {
    var directories: [URL] = []

    override func tearDown() {
        for directory in directories { try? FileManager.default.removeItem(at: directory) }
    }

    /// An empty library in a folder of its own, removed after the test.
    func newCatalog() throws -> Catalog {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        directories.append(directory)
        return try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
    }

    func testEventsSettleOnceAndComeBackTheSame() throws {
        let catalog = try newCatalog()
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

    /// A mount clusters the photos its scan read (`withoutSettling`): the same events as `current` when nothing
    /// settles, nil (so the mount settles through the write) when something does, and nothing stored either way.
    func testEventsFromScannedPhotosAreTheSameAndLeaveSettlingToTheWrite() throws {
        let catalog = try newCatalog()
        let places = [PlaceResolution(placeID: "lx", placeName: "Lisbon", regionName: "Lisboa")]
        // Three days in Lisbon (2019-06-01…03), then an evening at home a week later.
        var photos: [ImportedPhoto] = []
        for step in 0..<30 {
            let moment: Int64 = step < 20 ? 1_559_383_200 + Int64(step) * 10_800 : 1_560_538_800 + Int64(step) * 600
            var photo = PhotoRecord(id: "p\(step)", title: "Photo \(step)", momentAt: moment,
                                    momentYear: PhotoRecord.year(ofMoment: moment), originalURL: "http://origin/\(step).jpg",
                                    byteSize: 100, contentType: "image/jpeg")
            if step < 20 { photo.placeID = "lx"; photo.latitude = 38.72; photo.longitude = -9.14 }
            photos.append(ImportedPhoto(photo: photo, owner: "me", ownerName: "Me"))
        }
        _ = try catalog.applyImport(places: places, photos: photos)
        let scanned = try catalog.listingRowsOfAllPhotos(limit: 100).map(\.event)
        XCTAssertEqual(scanned, try catalog.eventPhotos(), "the scan sees each photo as clustering's own read does")
        XCTAssertEqual(scanned.first?.placeName, "Lisbon")
        XCTAssertEqual(scanned.first?.regionName, "Lisboa")

        let later: Int64 = 1_560_538_800 + 30 * 86_400
        XCTAssertNil(try LibraryEvents.withoutSettling(catalog, photos: scanned, now: later),
                     "both events settle by then: the write must store them")
        XCTAssertEqual(try catalog.storedEventCount(), 0, "and nothing was written without it")
        let settled = try LibraryEvents.settle(catalog, now: later)
        XCTAssertEqual(settled.map(\.name), ["2019-06-01–03 Lisbon", "2019-06-14"])
        XCTAssertEqual(try LibraryEvents.withoutSettling(catalog, photos: scanned, now: later), settled)

        // Before the second event is 48 hours old only the first settles; once stored, a scan's clustering
        // needs no write and agrees with a read of the catalog.
        let fresh = try newCatalog()
        _ = try fresh.applyImport(places: places, photos: photos)
        let soon: Int64 = 1_560_538_800 + 86_400
        XCTAssertNil(try LibraryEvents.withoutSettling(fresh, photos: scanned, now: soon))
        _ = try LibraryEvents.settle(fresh, now: soon)
        let fromScan = try XCTUnwrap(try LibraryEvents.withoutSettling(fresh, photos: scanned, now: soon))
        XCTAssertEqual(fromScan, try LibraryEvents.current(fresh, now: soon))
        XCTAssertEqual(fromScan.map(\.isSettled), [true, false])
    }

    /// An event still open at the last settle, ended more than 48 hours ago by the next import: settled before
    /// that import's photos are written (`settleAged`), it keeps its name, and the same day's morning imported
    /// later is an event of its own (it was the evening that got a start time: "… 20.05 Porto").
    func testAnEventThatAgedPastTheSettlingTimeKeepsItsNameWhenTheSameDaysPhotosComeLater() throws {
        let catalog = try newCatalog()
        let places = [PlaceResolution(placeID: "po", placeName: "Porto", regionName: "Norte")]
        func photo(_ id: String, _ moment: Int64) -> ImportedPhoto {
            var record = PhotoRecord(id: id, title: id, momentAt: moment, momentYear: PhotoRecord.year(ofMoment: moment),
                                     originalURL: "http://origin/\(id).jpg", byteSize: 100, contentType: "image/jpeg")
            record.placeID = "po"; record.latitude = 41.1579; record.longitude = -8.6291
            return ImportedPhoto(photo: record, owner: "me", ownerName: "Me")
        }
        let day: Int64 = 1_565_395_200 // 2019-08-10 00:00
        // Home: noon on eight days before; the evening of the 10th, 20:05–20:25.
        let home = (1...8).map { photo("home\($0)", day - Int64(10 - $0) * 86_400 + 12 * 3600) }
        let evening = (0..<5).map { photo("evening\($0)", day + 20 * 3600 + 300 + Int64($0) * 300) }
        _ = try catalog.applyImport(places: places, photos: home + evening)
        let lastEvening = day + 20 * 3600 + 1500
        let first = try LibraryEvents.settle(catalog, now: lastEvening + 47 * 3600)
        XCTAssertEqual(first.first { $0.members.count == 5 }?.isSettled, false, "47 hours: still open")
        XCTAssertNil(try LibraryEvents.settleAged(catalog, now: lastEvening + 47 * 3600), "nothing aged: no clustering")

        // Three days later a card with that morning's photos.
        let now = lastEvening + 49 * 3600
        XCTAssertNotNil(try LibraryEvents.settleAged(catalog, now: now), "before the import writes")
        _ = try catalog.applyImport(places: places, photos: (0..<3).map { photo("morning\($0)", day + 7 * 3600 + Int64($0) * 1800) })
        let after = try LibraryEvents.settle(catalog, now: now)
        XCTAssertEqual(after.first { Set($0.members).count == 5 && $0.members.allSatisfy { $0 > 8 } }?.name, "2019-08-10 Porto",
                       "\(after.map(\.name))")
        XCTAssertEqual(after.first { $0.members.count == 3 }?.name, "2019-08-10 07.00 Porto", "\(after.map(\.name))")
        XCTAssertNil(try LibraryEvents.settleAged(catalog, now: now), "every old photo is in a settled event")
    }

    /// A run of a photo a day still going (its last photo yesterday) is one open event whose first photos are
    /// weeks old: nothing has ended 48 hours ago, so an import does not cluster before it writes.
    func testAnOpenEventStillGoingAsksForNoSettleBeforeAnImport() throws {
        let catalog = try newCatalog()
        let start: Int64 = 1_560_000_000
        let photos = (0..<20).map { day -> ImportedPhoto in
            let moment = start + Int64(day) * 86_000
            return ImportedPhoto(photo: PhotoRecord(id: "d\(day)", title: "Day \(day)", momentAt: moment,
                                                    momentYear: PhotoRecord.year(ofMoment: moment),
                                                    originalURL: "http://origin/d\(day).jpg", byteSize: 100,
                                                    contentType: "image/jpeg"),
                                 owner: "me", ownerName: "Me")
        }
        _ = try catalog.applyImport(places: [], photos: photos)
        XCTAssertNil(try catalog.openEventsLastAt(), "never settled")
        let lastPhoto = start + 19 * 86_000
        let now = lastPhoto + 86_400
        let events = try LibraryEvents.settle(catalog, now: now)
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events.first?.isSettled, false)
        XCTAssertEqual(try catalog.openEventsLastAt(), lastPhoto)
        XCTAssertNil(try LibraryEvents.settleAged(catalog, now: now), "nothing ended 48 hours ago")
        XCTAssertNotNil(try LibraryEvents.settleAged(catalog, now: lastPhoto + 49 * 3600))
        XCTAssertNil(try catalog.openEventsLastAt(), "settled: nothing open")
    }
}
