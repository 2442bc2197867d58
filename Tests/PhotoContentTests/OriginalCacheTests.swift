// The original cache against the loopback origin: verified downloads, single flight, retries, refusals.
import FlickrOrigin
import Logging
@testable import PhotoContent
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

    /// A refused connection is an "unreachable" error at once — not a wait for the connect timeout — and
    /// leaves nothing downloading in the background nor anything cached.
    func testUnreachableOriginFailsAtOnceAndLeavesNothingBehind() throws {
        var http = HTTPConfiguration()
        http.attempts = 1
        http.connectTimeout = 1
        cache = try OriginalCache(directory: directory, http: HTTPClient(configuration: http), logger: Logger(label: "test"))
        let source = ContentSource(photoID: "1", url: "http://127.0.0.1:1/x.jpg", expectedSize: 10, contentType: "image/jpeg")
        XCTAssertThrowsError(try cache.fetch(source)) { error in
            guard let error = error as? ContentError, case .unreachable(let message) = error.kind else {
                return XCTFail("not an unreachable origin: \(error)")
            }
            XCTAssertFalse(message.lowercased().contains("timed out") || message.lowercased().contains("timeout"),
                           "refused, not timed out: \(message)")
        }
        XCTAssertEqual(cache.engine.pendingCount, 0, "the failed download is forgotten: the next open starts afresh")
        XCTAssertNil(cache.cachedPath(for: source))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path)
            .filter { $0.hasSuffix(".part") }, [])
    }
}

final class StreamingCacheTests: XCTestCase {
    static let library = DemoLibrary.make(count: 6, scale: 1)
    var origin: FlickrOriginServer!
    var directory: URL!

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: StreamingCacheTests.library, apiKey: "k")
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("stream-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func makeCache(maxBytes: Int64 = OriginalCache.defaultMaxBytes) throws -> OriginalCache {
        var http = HTTPConfiguration()
        http.retryBaseDelay = 0.01
        return try OriginalCache(directory: directory, http: HTTPClient(configuration: http), maxBytes: maxBytes,
                                 logger: Logger(label: "test"))
    }

    func source(_ index: Int) -> ContentSource {
        let photo = StreamingCacheTests.library.photos[index]
        return ContentSource(photoID: photo.id, url: "http://127.0.0.1:\(origin.port)" + origin.imagePath(photoID: photo.id)!,
                             expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType)
    }

    func testFirstBytesAreReadBeforeTheDownloadEnds() throws {
        let cache = try makeCache()
        let photo = StreamingCacheTests.library.photos[2] // 1024×768, ~100 KB
        origin.setRate(photoID: photo.id, 40_000) // 2–3 s for the whole photo
        let handle = try cache.open(source(2))
        var buffer = [UInt8](repeating: 0, count: 1000)
        let count = try buffer.withUnsafeMutableBytes { try handle.read(into: $0, at: 0) }
        XCTAssertEqual(count, 1000)
        XCTAssertEqual(Data(buffer), photo.image.data.prefix(1000))
        XCTAssertNil(cache.cachedPath(for: source(2)), "the download should still be running")
        // A read past the bytes that arrived waits for them and returns exactly what was asked.
        var rest = [UInt8](repeating: 0, count: photo.image.data.count)
        let tail = try rest.withUnsafeMutableBytes { try handle.read(into: $0, at: 1000) }
        XCTAssertEqual(tail, photo.image.data.count - 1000)
        XCTAssertEqual(Data(rest.prefix(tail)), photo.image.data.dropFirst(1000))
        cache.release(handle)
    }

    func testADroppedConnectionResumesWithARange() throws {
        let cache = try makeCache()
        let photo = StreamingCacheTests.library.photos[1]
        origin.truncateNextAnswer(photoID: photo.id)
        let path = try cache.fetch(source(1))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), photo.image.data)
        XCTAssertEqual(origin.requestCount(method: "GET"), 2)
    }

    func testTheCacheStaysWithinItsBoundAndNeverEvictsAnOpenPhoto() throws {
        let sizes = StreamingCacheTests.library.photos.map { Int64($0.image.data.count) }
        let bound = sizes[0] + sizes[1] + 10
        let cache = try makeCache(maxBytes: bound)
        let held = try cache.open(source(0))
        var whole = [UInt8](repeating: 0, count: Int(sizes[0]))
        XCTAssertEqual(try whole.withUnsafeMutableBytes { try held.read(into: $0, at: 0) }, Int(sizes[0]))
        for index in 1..<6 { _ = try cache.fetch(source(index)) }
        XCTAssertNotNil(cache.cachedPath(for: source(0)), "an open photo was evicted")
        XCTAssertLessThanOrEqual(cache.currentBytes, bound + sizes.max()!)
        cache.release(held)
        XCTAssertLessThanOrEqual(cache.currentBytes, bound)
        XCTAssertGreaterThan(cache.currentStatistics.evictions, 0)
        // The bound holds after a restart too.
        let reopened = try makeCache(maxBytes: sizes[5])
        XCTAssertLessThanOrEqual(reopened.currentBytes, sizes[5])
    }

    /// An open that joins a download in its last instant (every byte stored, not yet renamed into place)
    /// must still find the bytes.
    func testOpeningAsADownloadFinishesFindsTheBytes() throws {
        let cache = try makeCache()
        // Hold the download in the instant after its last byte is stored and before its rename, open there.
        let stored = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        cache.engine.beforeFinish = { _ in stored.signal(); proceed.wait() }
        defer { proceed.signal() }
        let photo = StreamingCacheTests.library.photos[5]
        cache.prefetch(source(5))
        XCTAssertEqual(stored.wait(timeout: .now() + 10), .success)
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache.directory.path + "/originals/" + OriginalCache.key(for: source(5))))
        let handle = try cache.open(source(5))
        var bytes = [UInt8](repeating: 0, count: photo.image.data.count)
        XCTAssertEqual(try bytes.withUnsafeMutableBytes { try handle.read(into: $0, at: 0) }, bytes.count)
        XCTAssertEqual(Data(bytes), photo.image.data)
        cache.release(handle)
    }

    func testOpeningAPhotoBeingPrefetchedJoinsThatDownload() throws {
        let cache = try makeCache()
        origin.setDelay(photoID: StreamingCacheTests.library.photos[3].id, 0.3)
        cache.prefetch(source(3))
        let handle = try cache.open(source(3))
        var buffer = [UInt8](repeating: 0, count: 16)
        _ = try buffer.withUnsafeMutableBytes { try handle.read(into: $0, at: 0) }
        cache.release(handle)
        XCTAssertEqual(origin.requestCount(method: "GET"), 1)
    }
}
