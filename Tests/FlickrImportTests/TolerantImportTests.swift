// Imports from the loopback origin whose answers hold hostile records: the import succeeds, skips each
// unusable record with one warning, keeps the rest exactly; a page that is not JSON still fails whole.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoSources
import XCTest

final class TolerantImportTests: XCTestCase {
    var origin: FlickrOriginServer!
    var directory: URL!
    var catalog: Catalog!
    let log = CapturedLog()

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: DemoLibrary.make(count: 20, scale: 8), apiKey: "k")
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tolerant-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func runImport() throws -> ImportReport {
        var options = FlickrSourceOptions()
        options.endpoint = origin.endpoint
        options.perPage = 7
        let source = FlickrSource(options: options, credentials: .apiKey("k"), logger: log.logger())
        return try LibraryImporter(catalog: catalog, source: source, progress: nil, logger: log.logger()).run()
    }

    func url(_ photo: OriginPhoto) -> String {
        "http://127.0.0.1:\(origin.port)\(origin.imagePath(photoID: photo.id)!)"
    }

    func testHostileRecordsAreSkippedOrRepairedAndTheRestImported() throws {
        let photos = origin.photos
        // Skipped: no id, an id with "/", not an object, no usable URL.
        origin.setRawRecord(photoID: photos[0].id, json: #"{"title": "no id", "url_o": "\#(url(photos[0]))"}"#)
        origin.setRawRecord(photoID: photos[1].id, json: #"{"id": "1/2", "url_o": "\#(url(photos[1]))"}"#)
        origin.setRawRecord(photoID: photos[2].id, json: #""just a string""#)
        origin.setRawRecord(photoID: photos[3].id, json: #"{"id": "\#(photos[3].id)", "url_o": "javascript:1"}"#)
        // Repaired: what JSONSerialization refused and what trapped before.
        origin.setRawRecord(photoID: photos[4].id, json: #"""
            {"id": \#(photos[4].id), "owner": "own/er\u0000", "title": "lone \ud800 surrogate \u202e", "dateupload": -5,
             "datetaken": "0000-00-00 00:00:00", "latitude": 1e400, "longitude": "x", "width_o": 9223372036854775807,
             "height_o": 99999999999999999999, "url_o": "\#(url(photos[4]))"}
            """#)
        origin.setRawRecord(photoID: photos[5].id, json: #"""
            {"id": "\#(photos[5].id)", "title": ["array"], "dateupload": "1700000000", "datetaken": "12019-05-04 12:33:10",
             "url_o": {"_content": "\#(url(photos[5]))"}, "width_o": "-1", "height_o": 1e308}
            """#)

        let report = try runImport()
        XCTAssertEqual(report.skipped.count, 4, "\(report.skipped)")
        XCTAssertEqual(report.skippedByField, ["id": 2, "record": 1, "url": 1])
        XCTAssertEqual(report.photosListed, 16)
        XCTAssertEqual(report.summary.added, 16)
        XCTAssertTrue(report.unavailable.isEmpty, "\(report.unavailable)")

        let repaired = try XCTUnwrap(try catalog.photo(id: photos[4].id))
        XCTAssertEqual(repaired.title, "lone \u{FFFD} surrogate \u{202E}")
        XCTAssertNil(repaired.uploadedAt)
        XCTAssertNil(repaired.dateTaken)
        XCTAssertEqual(repaired.momentAt, 0)
        XCTAssertNil(repaired.latitude)
        XCTAssertEqual(repaired.byteSize, Int64(photos[4].image.data.count))
        let late = try XCTUnwrap(try catalog.photo(id: photos[5].id))
        XCTAssertEqual(late.title, "Unknown")
        XCTAssertEqual(late.momentAt, 1_700_000_000, "a five-digit year is unknown: the upload date stands in")

        // One warning per skipped record, each naming the id (when there is one) and the field.
        let warnings = log.text.split(separator: "\n").filter { $0.contains("flickr record skipped") }
        XCTAssertEqual(warnings.count, 4, log.text)
        XCTAssertTrue(warnings.contains { $0.contains("field=id") && $0.contains("photo=1/2") }, "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.contains("field=url") && $0.contains("photo=\(photos[3].id)") }, "\(warnings)")
    }

    func testAPageThatIsNotJSONStillFailsAndLeavesTheLibraryUnchanged() throws {
        _ = try runImport()
        let before = try catalog.allPhotos()
        // The third page breaks off mid-record: the first two were fine, nothing may land.
        origin.setRawRecord(photoID: origin.photos[15].id, json: #"{"id": "1", "title": "\"#)
        XCTAssertThrowsError(try runImport()) { XCTAssertTrue("\($0)".contains("malformed JSON"), "\($0)") }
        XCTAssertEqual(try catalog.allPhotos(), before)
    }
}
