// The original cache against the loopback origin: verified downloads, single flight, retries, refusals.
import FlickrOrigin
import Logging
import PhotoContent
import XCTest

final class OriginalCacheTests: XCTestCase {
    static let library = DemoLibrary.make(count: 6, scale: 4)
    var origin: FlickrOriginServer!
    var directory: URL!
    var cache: OriginalCache!

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: OriginalCacheTests.library, apiKey: "k")
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cache-\(UUID().uuidString)")
        var http = HTTPConfiguration()
        http.retryBaseDelay = 0.01
        cache = try OriginalCache(directory: directory, http: HTTPClient(configuration: http), logger: Logger(label: "test"))
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func source(_ index: Int) -> ContentSource {
        let photo = OriginalCacheTests.library.photos[index]
        return ContentSource(photoID: photo.id, url: origin.endpoint.replacingOccurrences(of: "/services/rest/", with: "")
                                 + origin.imagePath(photoID: photo.id)!,
                             expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType)
    }

    func testDownloadsOnceThenServesFromDisk() throws {
        let path = try cache.fetch(source(0))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), OriginalCacheTests.library.photos[0].image.data)
        _ = try cache.fetch(source(0))
        XCTAssertEqual(origin.requestCount(method: "GET"), 1)
        var info = stat()
        XCTAssertEqual(stat(directory.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
    }

    func testConcurrentOpenersShareOneDownload() throws {
        let source = self.source(1)
        let cache = self.cache!
        // A slow answer makes every opener arrive while the first download is still running.
        origin.setDelay(photoID: OriginalCacheTests.library.photos[1].id, 0.5)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do { _ = try cache.fetch(source) } catch { XCTFail("\(error)") }
        }
        XCTAssertEqual(origin.requestCount(method: "GET"), 1)
    }

    func testServerErrorsAreRetriedButNotFoundIsNot() throws {
        origin.scriptStatuses(photoID: OriginalCacheTests.library.photos[2].id, [500, 503])
        XCTAssertNoThrow(try cache.fetch(source(2)))
        XCTAssertEqual(origin.requestCount(method: "GET"), 3)

        origin.resetCounters()
        origin.setMissing(photoID: OriginalCacheTests.library.photos[3].id)
        XCTAssertThrowsError(try cache.fetch(source(3))) { error in
            XCTAssertEqual((error as? ContentError)?.kind, .httpStatus(404))
            XCTAssertTrue("\(error)".contains(OriginalCacheTests.library.photos[3].id))
        }
        XCTAssertEqual(origin.requestCount(method: "GET"), 1)
    }

    func testTruncatedOrWrongDownloadsAreNeverCached() throws {
        var http = HTTPConfiguration()
        http.attempts = 1
        cache = try OriginalCache(directory: directory, http: HTTPClient(configuration: http), logger: Logger(label: "test"))
        let photo = OriginalCacheTests.library.photos[4]
        origin.setTruncated(photoID: photo.id)
        XCTAssertThrowsError(try cache.fetch(source(4)))
        XCTAssertNil(cache.cachedPath(for: source(4)))
        origin.setTruncated(photoID: photo.id, false)

        origin.overrideContentType(photoID: photo.id, "text/html")
        XCTAssertThrowsError(try cache.fetch(source(4))) { error in
            XCTAssertEqual((error as? ContentError)?.kind, .wrongContentType("text/html"))
        }
        origin.overrideContentType(photoID: photo.id, nil)

        var wrongSize = source(4)
        wrongSize.expectedSize -= 1
        XCTAssertThrowsError(try cache.fetch(wrongSize))
        XCTAssertNil(cache.cachedPath(for: wrongSize))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path), [])

        XCTAssertNoThrow(try cache.fetch(source(4)))
    }

    func testAChangedCatalogEntryIsNotServedFromOldBytes() throws {
        _ = try cache.fetch(source(5))
        var changed = source(5)
        changed.etag = "\"new\""
        XCTAssertNil(cache.cachedPath(for: changed))
        XCTAssertNotEqual(OriginalCache.key(for: changed), OriginalCache.key(for: source(5)))
    }

    func testLeftoversOfAnInterruptedDownloadAreRemovedAtStart() throws {
        let leftover = directory.appendingPathComponent("tmp/partial.part")
        FileManager.default.createFile(atPath: leftover.path, contents: Data("half".utf8))
        _ = try OriginalCache(directory: directory, http: HTTPClient(), logger: Logger(label: "test"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover.path))
    }

    func testUnreachableOriginFailsWithinTheTimeout() throws {
        var http = HTTPConfiguration()
        http.attempts = 1
        http.connectTimeout = 1
        cache = try OriginalCache(directory: directory, http: HTTPClient(configuration: http), logger: Logger(label: "test"))
        let started = Date()
        XCTAssertThrowsError(try cache.fetch(ContentSource(photoID: "1", url: "http://127.0.0.1:1/x.jpg",
                                                           expectedSize: 10, contentType: "image/jpeg")))
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }
}
