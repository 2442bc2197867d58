// The importer against the loopback Flickr-format origin: paging, regions, re-import, and failures that
// must leave the library untouched.
@testable import FlickrImport
import FlickrOrigin
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources
import XCTest

final class ImporterTests: XCTestCase {
    static let library = DemoLibrary.make(count: 30, scale: 8)
    var origin: FlickrOriginServer!
    var directory: URL!
    var catalog: Catalog!

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: ImporterTests.library, apiKey: "test-key")
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A Flickr source driven into the catalog by the library importer, as `photofs import flickr` does.
    func importer(key: String = "test-key", perPage: Int = 100, endpoint: String? = nil,
                  http: HTTPConfiguration = ImporterTests.fastRetries) -> LibraryImporter {
        var options = FlickrSourceOptions()
        options.endpoint = endpoint ?? origin.endpoint
        options.perPage = perPage
        let source = FlickrSource(options: options, credentials: .apiKey(key), http: http, logger: Logger(label: "test"))
        return LibraryImporter(catalog: catalog, source: source, progress: nil, logger: Logger(label: "test"))
    }

    static var fastRetries: HTTPConfiguration {
        var http = HTTPConfiguration()
        http.retryBaseDelay = 0.01
        return http
    }

    func testImportsEveryPageAndMergesPlacesIntoRegions() throws {
        let report = try importer(perPage: 7).run()
        XCTAssertEqual(report.pages, 5)
        XCTAssertEqual(report.summary.added, 30)
        XCTAssertEqual(report.placesResolved, 7)
        XCTAssertEqual(Set(try catalog.regions().map(\.name)),
                       ["California", "Bayern", "Île-de-France", "Hokkaidō", "New South Wales", "Iceland"])
        // Exact sizes and types from HEAD, before anything is downloaded.
        for photo in try catalog.allPhotos() {
            let bytes = origin.imageBytes(photoID: photo.id)!
            XCTAssertEqual(photo.byteSize, Int64(bytes.count), photo.id)
            XCTAssertNotNil(photo.contentType)
        }
        XCTAssertEqual(origin.requestCount(method: "GET"), 0, "import must not download originals")
    }

    func testReimportAddsNothingAndAsksNothingTwice() throws {
        _ = try importer().run()
        origin.resetCounters()
        let again = try importer().run()
        XCTAssertEqual(again.summary.added, 0)
        XCTAssertEqual(again.summary.updated, 0)
        XCTAssertEqual(again.placesResolved, 0)
        XCTAssertEqual(origin.requestCount(method: "HEAD"), 0)
        XCTAssertEqual(try catalog.allPhotos().count, 30)
    }

    func testBadKeyFailsWithFlickrsMessageAndLeavesTheLibraryAsItWas() throws {
        _ = try importer().run()
        let before = try catalog.allPhotos()
        XCTAssertThrowsError(try importer(key: "wrong").run()) { error in
            XCTAssertTrue("\(error)".contains("Invalid API Key"), "\(error)")
            XCTAssertFalse("\(error)".contains("wrong"), "the key must not be printed: \(error)")
        }
        XCTAssertEqual(try catalog.allPhotos(), before)
    }

    func testMalformedAnswerFailsAndWritesNothing() throws {
        origin.malformedAnswers = true
        XCTAssertThrowsError(try importer().run()) { error in
            XCTAssertTrue("\(error)".contains("malformed JSON"), "\(error)")
            XCTAssertEqual((error as? ImportStopped)?.pagesCommitted, 0)
        }
        XCTAssertEqual(try catalog.allPhotos().count, 0)
    }

    func testAnOriginalThatCannotBeMeasuredIsHiddenNotGuessed() throws {
        let missing = ImporterTests.library.photos[3].id
        origin.setMissing(photoID: missing)
        let report = try importer().run()
        XCTAssertEqual(report.unavailable.map(\.id), [missing])
        XCTAssertTrue(report.unavailable[0].reason.contains("404"))
        XCTAssertNil(try catalog.photo(id: missing)?.byteSize)
        XCTAssertEqual(try catalog.years().reduce(0) { $0 + $1.photoCount }, 29)
        // Once the origin has it again, the next import measures it.
        origin.setMissing(photoID: missing, false)
        _ = try importer().run()
        XCTAssertNotNil(try catalog.photo(id: missing)?.byteSize)
    }

    func testUnreachableEndpointFailsWithTheCause() throws {
        var http = HTTPConfiguration()
        http.attempts = 1
        let unreachable = importer(key: "k", endpoint: "http://127.0.0.1:1/services/rest/", http: http)
        XCTAssertThrowsError(try unreachable.run()) { error in
            XCTAssertTrue("\(error)".contains("Couldn't connect") || "\(error)".contains("connect"), "\(error)")
        }
    }
}
