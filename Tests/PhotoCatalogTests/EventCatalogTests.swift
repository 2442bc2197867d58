// Settled events in the library: stored with their members, joined by later photos, losing deleted photos.
import GRDB
@testable import PhotoCatalog
import XCTest

final class EventCatalogTests: XCTestCase {
    func testSettledEventsAreStoredJoinedAndLoseDeletedPhotos() throws {
        let scratch = try ScratchDirectory("events")
        let catalog = try Catalog(path: scratch.path("library.sqlite"))
        let places = [PlaceResolution(placeID: "lx", placeName: "Lisbon, Lisboa, Portugal", regionName: "Lisboa")]
        _ = try catalog.applyImport(places: places, photos: [
            importedPhoto("1", place: "lx", at: 1_560_000_000), importedPhoto("2", place: "lx", at: 1_560_000_600),
            importedPhoto("3", at: 1_560_090_000), importedPhoto("4", at: 1_560_000_300, size: nil),
        ])
        let photos = try catalog.eventPhotos()
        XCTAssertEqual(photos.map(\.seq), [1, 2, 3], "a photo the tree does not list is not clustered")
        XCTAssertEqual(photos.first?.placeName, "Lisbon, Lisboa, Portugal")
        XCTAssertEqual(photos.first?.regionName, "Lisboa")
        XCTAssertNil(photos.last?.regionName, "the fallback region names nothing")

        let generation = try catalog.generation()
        try catalog.settleEvents { photos, stored in
            XCTAssertTrue(stored.isEmpty)
            return EventSettlement(settled: [StoredEvent(id: 1, name: "2019-06-08 Lisbon", firstAt: 1_560_000_000,
                                                         lastAt: 1_560_000_600, members: [1, 2, 99])])
        }
        XCTAssertEqual(try catalog.generation(), generation, "settling changes nothing a mount shows")
        XCTAssertEqual(try catalog.storedEvents(), [StoredEvent(id: 1, name: "2019-06-08 Lisbon", firstAt: 1_560_000_000,
                                                                lastAt: 1_560_000_600, members: [1, 2])])
        // A later photo joins; the range follows it. Settling the same id again changes nothing.
        try catalog.settleEvents { _, _ in
            EventSettlement(settled: [StoredEvent(id: 1, name: "other", firstAt: 0, lastAt: 0, members: [3])],
                            joined: [(eventID: 1, seq: 3)])
        }
        XCTAssertEqual(try catalog.storedEvents(), [StoredEvent(id: 1, name: "2019-06-08 Lisbon", firstAt: 1_560_000_000,
                                                                lastAt: 1_560_090_000, members: [1, 2, 3])])
        XCTAssertEqual(try catalog.storedEventCount(), 1)
        try catalog.removePhotos(ids: ["2"])
        XCTAssertEqual(try catalog.storedEvents().first?.members, [1, 3])
    }

    func testAStoredEventThatMakesNoSenseIsLeftOut() throws {
        let scratch = try ScratchDirectory("events-hostile")
        let path = scratch.path("library.sqlite")
        _ = try Catalog(path: path)
        try tamper(path, """
            INSERT INTO event VALUES (5, 'backwards', 10, 0, 0), (6, 'bad end', 0, 'x', 0), (7, 'fine', 0, 10, 0),
                                     (8, 'far', -99999999999999, 10, 0), (9, x'00', 0, 10, 0);
            INSERT INTO event_photo VALUES (1, 7), (2, 'x');
            """)
        var reports: [String] = []
        let catalog = try Catalog(path: path)
        let lock = NSLock()
        catalog.onBadRow = { line in lock.lock(); reports.append(line); lock.unlock() }
        XCTAssertEqual(try catalog.storedEvents(), [StoredEvent(id: 7, name: "fine", firstAt: 0, lastAt: 10, members: [1])])
        XCTAssertEqual(reports.count, 4, reports.joined(separator: "\n"))
    }
}
