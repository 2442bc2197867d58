// The catalog: one transaction per import, idempotent re-import, merged regions, stored counts, recents.
import GRDB
@testable import PhotoCatalog
import XCTest

final class CatalogTests: XCTestCase {
    var directory: URL!
    var catalog: Catalog!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
    }

    override func tearDownWithError() throws {
        catalog = nil
        try? FileManager.default.removeItem(at: directory)
    }

    func testImportIsIdempotentAndKeepsSequenceNumbers() throws {
        let places = [PlaceResolution(placeID: "p1", placeName: "SF", regionName: "California")]
        let first = try catalog.applyImport(places: places, photos: [imported("1", place: "p1"), imported("2", place: "p1")])
        XCTAssertEqual(first.added, 2)
        let seqs = try catalog.allPhotos().map(\.seq)
        let generation = try catalog.generation()

        let again = try catalog.applyImport(places: [], photos: [imported("1", place: "p1"), imported("2", place: "p1")])
        XCTAssertEqual(again.added, 0)
        XCTAssertEqual(again.updated, 0)
        XCTAssertEqual(again.unchanged, 2)
        XCTAssertEqual(try catalog.allPhotos().map(\.seq), seqs)
        XCTAssertEqual(try catalog.generation(), generation, "an unchanged re-import must not invalidate mounts")

        var changed = imported("2", place: "p1")
        changed.photo.title = "Renamed"
        let update = try catalog.applyImport(places: [], photos: [changed])
        XCTAssertEqual(update.updated, 1)
        XCTAssertEqual(try catalog.photo(id: "2")?.title, "Renamed")
        XCTAssertEqual(try catalog.photo(id: "2")?.seq, seqs[1])
        XCTAssertNotEqual(try catalog.generation().photos, generation.photos)
    }

    func testPlacesOfOneRegionAreOneRegionWithStoredCounts() throws {
        let places = [PlaceResolution(placeID: "sf", placeName: "San Francisco", regionName: "California"),
                      PlaceResolution(placeID: "la", placeName: "Los Angeles", regionName: "California"),
                      PlaceResolution(placeID: "mu", placeName: "München", regionName: "Bayern")]
        _ = try catalog.applyImport(places: places, photos: [
            imported("1", place: "sf", owner: "a"), imported("2", place: "la", owner: "b"),
            imported("3", place: "la", owner: "b"), imported("4", place: "mu", owner: "a"),
            imported("5", place: nil, owner: "c"),
        ])
        let regions = Dictionary(uniqueKeysWithValues: try catalog.regions().map { ($0.name, $0) })
        XCTAssertEqual(Set(regions.keys), ["California", "Bayern", "Unknown Region"])
        XCTAssertEqual(regions["California"]?.photoCount, 3)
        XCTAssertEqual(regions["California"]?.photographerCount, 2)
        XCTAssertEqual(regions["Unknown Region"]?.photoCount, 1)
        XCTAssertEqual(try catalog.photographers(inRegion: regions["California"]!.id).map(\.owner).sorted(), ["a", "b"])
    }

    func testRegionCountsAfterEveryImportPageComeFromAnIndexNotThePhotoRows() throws {
        // A photo without a known size is not available: counted by neither number.
        var unsized = imported("6", place: "sf", owner: "d")
        unsized.photo.byteSize = nil
        _ = try catalog.applyImport(places: [PlaceResolution(placeID: "sf", placeName: "SF", regionName: "California")],
                                    photos: [imported("1", place: "sf", owner: "a"), unsized])
        XCTAssertEqual(try catalog.regions().first { $0.name == "California" }.map { [$0.photoCount, $0.photographerCount] }, [1, 1])
        // Reading every photo row per region after each 500-photo page made a 100,000-photo import quadratic.
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("library.sqlite").path)
        let plan = try queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + Catalog.recountRegionsSQL).map { ($0["detail"] as String?) ?? "" }
        }
        let search = "SEARCH photo USING INDEX photo_available_by_region (region_id=? AND available=?)"
        XCTAssertEqual(plan.filter { $0.contains("photo") }, [search, search], "\(plan)")
    }

    func testPhotosWithoutAKnownSizeAreNotListed() throws {
        var unmeasured = imported("9", place: nil)
        unmeasured.photo.byteSize = nil
        _ = try catalog.applyImport(places: [], photos: [imported("1", place: nil), unmeasured])
        XCTAssertEqual(try catalog.years().map(\.photoCount), [1])
        XCTAssertEqual(try catalog.regions().first?.photoCount, 1)
    }

    func testRecentOpensAreOrderedAndBounded() throws {
        _ = try catalog.applyImport(places: [], photos: (1...5).map { imported(String($0), place: nil) })
        let photos = try catalog.allPhotos()
        for (offset, photo) in photos.enumerated() {
            try catalog.recordOpen(seq: photo.seq, at: Date(timeIntervalSince1970: Double(1000 + offset)), keep: 3)
        }
        XCTAssertEqual(try catalog.recentPhotos(limit: 20).map(\.id), ["5", "4", "3"])
        XCTAssertEqual(try catalog.recentPhotos(limit: 2).map(\.id), ["5", "4"])
    }

    func testAReaderIsNotBlockedByAnOpenWriteTransaction() throws {
        _ = try catalog.applyImport(places: [], photos: [imported("1", place: nil)])
        // A second process's importer holding the write lock: WAL lets this catalog's reads go on.
        let other = try DatabaseQueue(path: directory.appendingPathComponent("library.sqlite").path)
        try other.inDatabase { db in
            try db.execute(sql: "BEGIN IMMEDIATE; UPDATE photo SET title = 'pending'")
            XCTAssertEqual(try catalog.photo(id: "1")?.title, "Photo 1")
            try db.execute(sql: "ROLLBACK")
        }
    }

    func testAFailedImportLeavesNothingBehind() throws {
        _ = try catalog.applyImport(places: [], photos: [imported("1", place: nil)])
        let generation = try catalog.generation()
        // Make the third row of the next import fail inside SQLite, after two rows were written.
        let other = try DatabaseQueue(path: directory.appendingPathComponent("library.sqlite").path)
        try other.write { db in
            try db.execute(sql: """
                CREATE TRIGGER refuse BEFORE INSERT ON photo WHEN NEW.id = 'boom'
                BEGIN SELECT RAISE(ABORT, 'refused by test'); END
                """)
        }
        XCTAssertThrowsError(try catalog.applyImport(
            places: [PlaceResolution(placeID: "p", placeName: nil, regionName: "New Region")],
            photos: [imported("2", place: "p"), imported("3", place: nil), imported("boom", place: nil)]))
        XCTAssertEqual(try catalog.allPhotos().map(\.id), ["1"])
        XCTAssertFalse(try catalog.knownPlaceIDs().contains("p"))
        XCTAssertEqual(try catalog.generation(), generation)
    }

    func testTheNewestMomentComesFromTheMomentIndexNotEveryRow() throws {
        // Moments over three years, the newest neither the first nor the last imported, and a newer one that
        // cannot be used (its stored year is not its moment's): the index read backwards skips it.
        let moments: [Int64] = [1_500_000_000, 1_700_000_000, 1_600_000_000, 1_700_000_100, 1_400_000_000]
        let photos = moments.enumerated().map { index, moment -> ImportedPhoto in
            var photo = imported("\(index + 1)", place: nil)
            photo.photo.momentAt = moment
            photo.photo.momentYear = PhotoRecord.year(ofMoment: moment)
            return photo
        }
        _ = try catalog.applyImport(places: [], photos: photos)
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("library.sqlite").path)
        try queue.write { db in try db.execute(sql: "UPDATE photo SET moment_year = 2031 WHERE id = '4'") }
        XCTAssertEqual(try catalog.newestMomentAt(), 1_700_000_000)
        // The rules' ranges (seq BETWEEN …) would have SQLite read the whole seq range and sort it: 70–150 ms
        // for 100,000 photos, where the index read backwards stops at the first usable row.
        let plan = try queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + Catalog.newestMomentSQL).map { ($0["detail"] as String?) ?? "" }
        }
        XCTAssertEqual(plan, ["SCAN photo USING INDEX photo_by_moment"])
    }

    private func imported(_ id: String, place: String?, owner: String = "owner") -> ImportedPhoto {
        var photo = PhotoRecord(id: id, title: "Photo \(id)", placeID: place, momentAt: 1_600_000_000 + (Int64(id) ?? 0),
                                originalURL: "http://origin/\(id).jpg", byteSize: 100, contentType: "image/jpeg")
        photo.momentYear = PhotoRecord.year(ofMoment: photo.momentAt)
        return ImportedPhoto(photo: photo, owner: owner, ownerName: owner.uppercased())
    }

    /// The year of a moment is gmtime's, from year 1 to 9999: at every year's first and last second, around
    /// the epoch and leap days, and at 200,000 random moments.
    func testTheYearOfAMomentIsGmtimes() {
        func gmtimeYear(_ seconds: Int64) -> Int {
            var time = time_t(seconds)
            var parts = tm()
            XCTAssertNotNil(gmtime_r(&time, &parts))
            return Int(parts.tm_year) + 1900
        }
        var moments: [Int64] = [CatalogLimits.momentRange.lowerBound, CatalogLimits.momentRange.upperBound, -1, 0, 1,
                                951_782_400, 951_868_799, 951_868_800, 4_107_542_399, 4_107_542_400]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200_000 { moments.append(Int64.random(in: CatalogLimits.momentRange, using: &generator)) }
        for year in [1, 2, 99, 100, 400, 1582, 1600, 1899, 1900, 1969, 1970, 2000, 2024, 2100, 9998, 9999] {
            var parts = tm()
            parts.tm_year = Int32(year - 1900)
            parts.tm_mday = 1
            let start = Int64(timegm(&parts))
            moments += [start - 1, start, start + 1]
        }
        for moment in moments where CatalogLimits.momentRange.contains(moment) {
            XCTAssertEqual(PhotoRecord.year(ofMoment: moment), gmtimeYear(moment), "moment \(moment)")
        }
        XCTAssertEqual(PhotoRecord.year(ofMoment: Int64.min), 1, "clamped to year 1")
        XCTAssertEqual(PhotoRecord.year(ofMoment: Int64.max), 9999, "clamped to year 9999")
        // The whole date, against gmtime, and the day of any second (rounding down, never overflowing).
        for moment in moments.prefix(20_000) where CatalogLimits.momentRange.contains(moment) {
            var time = time_t(moment)
            var parts = tm()
            XCTAssertNotNil(gmtime_r(&time, &parts))
            let date = CivilDate.of(days: CivilDate.day(ofSecond: moment))
            XCTAssertEqual([date.year, date.month, date.day],
                           [Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday)], "moment \(moment)")
        }
        for (second, day) in [(Int64(0), Int64(0)), (86_399, 0), (86_400, 1), (-1, -1), (-86_400, -1), (-86_401, -2),
                              (Int64.max, Int64.max / 86_400), (Int64.min, -(Int64.max / 86_400) - 1)] {
            XCTAssertEqual(CivilDate.day(ofSecond: second), day, "second \(second)")
        }
    }
}
