// Rows no photofs would write (NULLs, wrong types, absurd numbers), put into a real library by another
// program: every query survives, leaves them out, and reports each once; imports still work and repair them.
import Foundation
import GRDB
import PhotoCatalog
import XCTest

final class HostileRowsTests: XCTestCase {
    var scratch: ScratchDirectory!
    var library: String { scratch.path("library.sqlite") }
    let reports = Reports()

    /// What `onBadRow` was told, in order.
    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    }

    /// Photos that are fine, and those whose only oddity is in text or optional metadata: all must be listed.
    let listed = ["1", "2", "3", "null-title", "blob-title", "text-latitude"]
    /// Photos whose rows cannot be used: none may be listed, each reported once.
    let leftOut = ["negative-size", "huge-size", "text-size", "real-size", "blob-size", "text-moment", "huge-moment",
                   "wrong-year", "null-year", "ancient", "huge-photographer", "text-region", "blob-type"]

    override func setUpWithError() throws {
        scratch = try ScratchDirectory("hostile")
        _ = try Catalog(path: library).applyImport(places: [], photos: [importedPhoto("1"), importedPhoto("2"),
                                                                       importedPhoto("3")])
        // Drop NOT NULL from the column definitions, as a hand-edited or damaged file may have them.
        // ("INTEGER NOT NULL"/"TEXT NOT NULL" only: `available`'s "IS NOT NULL" must stay.)
        try tamper(library, """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = replace(replace(sql, 'INTEGER NOT NULL', 'INTEGER'), 'TEXT NOT NULL', 'TEXT')
            WHERE type = 'table';
            PRAGMA writable_schema = OFF;
            """)
        // Every photo below is in region 1 and by photographer 1 unless it is about those columns; 2020 moments.
        let columns = "id, title, photographer_id, region_id, moment_at, moment_year, original_url, byte_size, content_type"
        try tamper(library, """
            INSERT INTO photo(\(columns), latitude) VALUES
              ('null-title', NULL, 1, 1, 1600000010, 2020, 'http://o/a.jpg', 100, 'image/jpeg', NULL),
              ('blob-title', x'ff00fe', 1, 1, 1600000011, 2020, 'http://o/b.jpg', 100, 'image/jpeg', NULL),
              ('text-latitude', 'Lat', 1, 1, 1600000012, 2020, 'http://o/c.jpg', 100, 'image/jpeg', 'north-ish'),
              ('negative-size', 'A', 1, 1, 1600000020, 2020, 'http://o/d.jpg', -5, 'image/jpeg', NULL),
              ('huge-size', 'A', 1, 1, 1600000021, 2020, 'http://o/e.jpg', 2199023255552, 'image/jpeg', NULL),
              ('text-size', 'A', 1, 1, 1600000022, 2020, 'http://o/f.jpg', 'abc', 'image/jpeg', NULL),
              ('real-size', 'A', 1, 1, 1600000023, 2020, 'http://o/g.jpg', 1.5, 'image/jpeg', NULL),
              ('blob-size', 'A', 1, 1, 1600000024, 2020, 'http://o/h.jpg', x'00ff', 'image/jpeg', NULL),
              ('text-moment', 'A', 1, 1, 'yesterday', 2020, 'http://o/i.jpg', 100, 'image/jpeg', NULL),
              ('huge-moment', 'A', 1, 1, 9223372036854775807, 2020, 'http://o/j.jpg', 100, 'image/jpeg', NULL),
              ('wrong-year', 'A', 1, 1, 1600000025, 1999, 'http://o/k.jpg', 100, 'image/jpeg', NULL),
              ('null-year', 'A', 1, 1, 1600000026, NULL, 'http://o/l.jpg', 100, 'image/jpeg', NULL),
              ('ancient', 'A', 1, 1, -70000000000, -249, 'http://o/m.jpg', 100, 'image/jpeg', NULL),
              ('huge-photographer', 'A', 1099511627776, 1, 1600000027, 2020, 'http://o/n.jpg', 100, 'image/jpeg', NULL),
              ('text-region', 'A', 1, 'north', 1600000028, 2020, 'http://o/o.jpg', 100, 'image/jpeg', NULL),
              ('blob-type', 'A', 1, 1, 1600000029, 2020, 'http://o/p.jpg', 100, x'01', NULL);
            INSERT INTO photo(seq, \(columns)) VALUES
              (-7, 'negative-seq', 'A', 1, 1, 1600000030, 2020, 'http://o/q.jpg', 100, 'image/jpeg'),
              (NULL, NULL, 'no id', 1, 1, 1600000031, 2020, 'http://o/r.jpg', 100, 'image/jpeg');
            """)
    }

    override func tearDown() { scratch = nil }

    func open() throws -> Catalog {
        let catalog = try Catalog(path: library, mode: .mounting)
        catalog.onBadRow = { [reports] in reports.append($0) }
        return catalog
    }

    func testListingsKeepGoodPhotosAndLeaveOutBadOnes() throws {
        let catalog = try open()
        XCTAssertEqual(try catalog.allPhotos().map(\.id), listed)
        XCTAssertEqual(try catalog.photos(inYear: 2020).map(\.id), listed)
        XCTAssertEqual(try catalog.photos(inRegion: 1, photographer: 1).map(\.id), listed)
        XCTAssertEqual(try catalog.photo(id: "null-title")?.title, "")
        XCTAssertEqual(try catalog.photo(id: "blob-title")?.title, "\u{FFFD}\u{0}\u{FFFD}", "lossy, never a trap")
        XCTAssertNil(try catalog.photo(id: "text-latitude")?.latitude)
        for id in leftOut { XCTAssertNil(try catalog.photo(id: id), id) }
        XCTAssertNil(try catalog.photo(seq: -7))
    }

    /// The mount's scan reads each value from the statement itself (`decodeEach`): the same rows, the same
    /// values as every listing query, and the same rows left out and reported.
    func testTheMountScanReadsWhatListingsRead() throws {
        // Titles besides the fixture's NULL and blob: text with a NUL, text that is not UTF-8, an empty blob.
        // (An integer or a real stored as a title becomes text: the column has TEXT affinity.)
        try tamper(library, """
            INSERT INTO photo(id, title, photographer_id, region_id, moment_at, moment_year, original_url, byte_size, content_type)
            VALUES ('nul-title', CAST(x'410042' AS TEXT), 1, 1, 1600000001, 2020, 'http://o/s.jpg', 100, 'image/jpeg'),
                   ('latin1-title', CAST(x'ff41' AS TEXT), 1, 1, 1600000002, 2020, 'http://o/t.jpg', 100, 'image/jpeg'),
                   ('empty-blob-title', x'', 1, 1, 1600000003, 2020, 'http://o/u.jpg', 100, 'image/jpeg');
            """)
        let catalog = try open()
        let scanned = try catalog.listingRowsOfAllPhotos(limit: 1000)
        let scanReports = reports.all
        let more = ["nul-title", "latin1-title", "empty-blob-title"]
        XCTAssertEqual(scanned.map(\.photo.id), listed + more)
        for id in leftOut { XCTAssertTrue(scanReports.contains { $0.contains("(id \(id))") }, "\(id) reported by the scan") }
        XCTAssertEqual(scanReports.count, leftOut.count + 2, scanReports.joined(separator: "\n")) // + seq -7, + NULL id
        let listing = try catalog.allPhotos()
        XCTAssertEqual(scanned.map(\.photo.title), listing.map(\.title), "NULL, blob and text titles read alike")
        XCTAssertEqual(scanned.map(\.photo.momentAt), listing.map(\.momentAt))
        XCTAssertEqual(scanned.map(\.photo.byteSize), listing.map(\.byteSize))
        XCTAssertEqual(scanned.map(\.storedYear), scanned.map { _ in 2020 })
        XCTAssertEqual(scanned.first { $0.photo.id == "text-latitude" }?.event.latitude, nil, "a text latitude is no place")
        XCTAssertEqual(scanned.first { $0.photo.id == "nul-title" }?.photo.title, "A", "text up to its NUL, as GRDB reads it")
        XCTAssertEqual(scanned.first { $0.photo.id == "latin1-title" }?.photo.title, "\u{FFFD}A", "invalid UTF-8 repaired")
        XCTAssertEqual(scanned.first { $0.photo.id == "empty-blob-title" }?.photo.title, "")
    }

    func testAggregatesCountOnlyUsablePhotos() throws {
        let catalog = try open()
        let years = try catalog.years()
        XCTAssertEqual(years.map(\.year), [2020], "no directory for 1999, -249 or a year of a text moment")
        XCTAssertEqual(years.first?.photoCount, listed.count)
        XCTAssertEqual(try catalog.newestMomentAt(), 1_600_000_012)
        let totals = try catalog.availableTotals()
        XCTAssertEqual(totals.files, Int64(listed.count))
        XCTAssertEqual(totals.bytes, Int64(listed.count) * 100)
    }

    func testEachBadRowIsReportedOnceWithoutItsRawValue() throws {
        let catalog = try open()
        for _ in 0..<3 {
            _ = try catalog.allPhotos()
            _ = try catalog.photos(inYear: 2020)
        }
        let lines = reports.all
        XCTAssertEqual(lines.count, leftOut.count + 2, lines.joined(separator: "\n")) // + seq -7, + NULL id
        XCTAssertEqual(Set(lines).count, lines.count, "reported once each")
        XCTAssertTrue(lines.contains { $0.contains("id negative-size") && $0.contains("byte_size is -5, outside 1...") },
                      lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.contains("seq -7") }, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.contains("id is NULL, not text") }, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.contains("moment_year is 1999, but moment_at 1600000025 falls in 2020") })
        XCTAssertFalse(lines.contains { $0.contains("yesterday") || $0.contains("north") }, "values are described, not quoted")
        // A second catalog (another mount) reports them again, once.
        _ = try open().allPhotos()
        XCTAssertEqual(reports.all.count, 2 * lines.count)
    }

    func testRegionsPhotographersAndCountsThatMakeNoSense() throws {
        try tamper(library, """
            INSERT INTO region(id, name, photo_count, photographer_count) VALUES
              (2, 'Negative', 5, -2), (3, 'Text', 'many', 1), (4, 'Enormous', 1099511627776, 1), (5, NULL, 1, 1),
              (1073741824, 'Beyond inodes', 1, 1);
            INSERT INTO photographer(id, owner, name) VALUES (2, NULL, 'Nobody');
            INSERT INTO photo(id, title, photographer_id, region_id, moment_at, moment_year, original_url, byte_size,
                              content_type)
            VALUES ('by-nobody', 'N', 2, 5, 1600000040, 2020, 'http://o/s.jpg', 100, 'image/jpeg'),
                   ('by-owner', 'O', 1, 5, 1600000041, 2020, 'http://o/t.jpg', 100, 'image/jpeg');
            """)
        let catalog = try open()
        XCTAssertEqual(try catalog.regions().map(\.id), [1, 5])
        XCTAssertEqual(try catalog.region(id: 5)?.name, "", "a NULL name shows as the tree's fallback name")
        XCTAssertEqual(try catalog.photographers(inRegion: 5).map(\.owner), ["owner"])
        let lines = reports.all.joined(separator: "\n")
        for problem in ["region id 2: photographer_count is -2", "region id 3: photo_count is text",
                        "region id 4: photo_count is 1099511627776", "region id 1073741824: id is 1073741824",
                        "photographer id 2: owner is NULL"] {
            XCTAssertTrue(lines.contains(problem), "\(problem) not in:\n\(lines)")
        }
    }

    func testRenditionsVariantsThumbnailsAndCountersThatMakeNoSense() throws {
        try tamper(library, """
            INSERT INTO rendition(photo_seq, label, url, width, height) VALUES
              (1, 'z', 'http://o/1_z.jpg', 640, 480), (1, 'o', 'http://o/1.jpg', 1099511627776, 2),
              (1, 'k', 'http://o/1_k.jpg', -1, 10), (1, 'h', NULL, 1600, 1200);
            INSERT INTO variant(spec, photo_seq, source_url, byte_size, width, height, content_type, unchanged) VALUES
              ('fit:64', 1, 'http://o/1_z.jpg', 'abc', 64, 48, 'image/jpeg', 0),
              ('fit:64', 2, 'http://o/2_z.jpg', 500, 64, 48, 'image/jpeg', 0),
              ('fit:64', 3, 'http://o/3_z.jpg', 500, 64, 48, 'image/jpeg', 7);
            INSERT INTO thumbnail(photo_seq, spec, data) VALUES (1, 'square:64', 'not a blob');
            INSERT INTO place(place_id, name, region_id) VALUES (NULL, 'nowhere', 1), ('pl', 'Textville', 'abc');
            UPDATE library_state SET generation = 'x', recent_generation = NULL;
            """)
        let catalog = try open()
        XCTAssertEqual(try catalog.renditions(seq: 1).map(\.label), ["z"])
        XCTAssertEqual(try catalog.variantSizes(spec: "fit:64"), [2: 500, 3: 500])
        XCTAssertNil(try catalog.variant(seq: 1, spec: "fit:64"))
        XCTAssertNil(try catalog.variant(seq: 3, spec: "fit:64"), "unchanged must be 0 or 1")
        XCTAssertNotNil(try catalog.variant(seq: 2, spec: "fit:64"))
        XCTAssertNil(try catalog.thumbnail(seq: 1, spec: "square:64"))
        XCTAssertEqual(try catalog.generation().photos, 0)
        XCTAssertEqual(try catalog.generation().recents, 0)
        XCTAssertEqual(try catalog.knownPlaceIDs(), ["pl"])
    }

    func testAnImportIntoAHostileLibraryWorksAndRepairsRows() throws {
        try tamper(library, "INSERT INTO place(place_id, name, region_id) VALUES ('pl', 'Textville', 'abc')")
        let catalog = try Catalog(path: library)
        let summary = try catalog.applyImport(places: [], photos: [importedPhoto("negative-size", size: 300),
                                                                   importedPhoto("4", place: "pl")])
        XCTAssertEqual(summary.updated + summary.added, 2)
        XCTAssertEqual(try catalog.photo(id: "negative-size")?.byteSize, 300)
        XCTAssertEqual(try catalog.photo(id: "4")?.regionID, 1, "a place whose region is not an id falls back")
    }
}
