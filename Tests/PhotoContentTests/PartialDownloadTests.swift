// Downloads that serve their readers and stop when none is left, against the loopback origin: a header read
// costs its first request, the prefix is kept and resumed with Range (in this run and the next), a damaged or
// outdated prefix is never served, a whole-photo want still completes, partial entries are evicted like whole ones.
import FlickrOrigin
import Logging
@testable import PhotoContent
import TestRequirements
import XCTest

final class PartialDownloadTests: XCTestCase {
    /// Six JPEGs of about 3 MiB (a small camera original): larger than a first request and a lookahead, and
    /// past the 2 MiB where a reader reads whole.
    static let library = DemoLibrary.cameraSized(DemoLibrary.make(count: 8, scale: 8), padding: 3 << 20)
    var origin: FlickrOriginServer!
    var directory: URL!
    var recorder: LogRecorder!

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: Self.library, apiKey: "k")
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("partial-cache-\(UUID().uuidString)")
        recorder = LogRecorder()
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func makeCache(maxBytes: Int64 = OriginalCache.defaultMaxBytes,
                   demand: DownloadDemand.Tuning = DownloadDemand.Tuning()) throws -> OriginalCache {
        var http = HTTPConfiguration()
        http.retryBaseDelay = 0.01
        return try OriginalCache(directory: directory, http: HTTPClient(configuration: http, logger: recorder.logger()),
                                 maxBytes: maxBytes, demand: demand, logger: recorder.logger())
    }

    /// The JPEGs (the 9th demo photo is a PNG, left small).
    var photos: [OriginPhoto] { Self.library.photos.filter { $0.image.contentType == "image/jpeg" } }

    func source(_ photo: OriginPhoto, etag: String? = nil) -> ContentSource {
        ContentSource(photoID: photo.id, url: "http://127.0.0.1:\(origin.port)" + origin.imagePath(photoID: photo.id)!,
                      expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType,
                      etag: etag ?? photo.image.etag)
    }

    func sent(_ photo: OriginPhoto) -> Int { origin.bodyBytesSent(path: origin.imagePath(photoID: photo.id)!) }

    /// What the origin sent for `photo` once it counted `expected` bytes, or after 10 s: the origin counts a
    /// chunk after its write returns, so a client that has read the last byte may look before the count does
    /// (a fresh clone's run saw 1 MiB of 2.9 MB). More than `expected` is returned at once.
    func sent(_ photo: OriginPhoto, reaching expected: Int) -> Int {
        let deadline = Date().addingTimeInterval(10)
        while sent(photo) < expected && Date() < deadline { usleep(2_000) }
        return sent(photo)
    }

    func partials() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("partial").path)) ?? []).sorted()
    }

    /// `count` bytes at `offset` through a handle, as a FUSE read would get them.
    func read(_ handle: ContentHandle, _ count: Int, at offset: Int64 = 0) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try handle.read(into: $0, at: offset) }
        return Data(bytes.prefix(got))
    }

    func readWhole(_ handle: ContentHandle) throws -> Data {
        var data = Data()
        while Int64(data.count) < handle.size { data += try read(handle, 1 << 20, at: Int64(data.count)) }
        return data
    }

    /// Waits until the photo's download has ended (parked or complete): nothing of it is in flight.
    func settled(_ cache: OriginalCache, _ photo: OriginPhoto) -> Bool {
        let key = OriginalCache.key(for: source(photo))
        let deadline = Date().addingTimeInterval(10)
        while cache.engine.isInFlight(key) && Date() < deadline { usleep(5_000) }
        return !cache.engine.isInFlight(key)
    }

    func testAHeaderReadCostsItsFirstRequestAndLeavesAPrefix() throws {
        let cache = try makeCache()
        let photo = photos[0]
        let handle = try cache.open(source(photo))
        XCTAssertEqual(try read(handle, 64 << 10), photo.image.data.prefix(64 << 10))
        cache.release(handle)
        XCTAssertTrue(settled(cache, photo))
        XCTAssertEqual(sent(photo, reaching: 256 << 10), 256 << 10, "the first request, 256 KiB, and nothing after it")
        XCTAssertEqual(partials(), [OriginalCache.key(for: source(photo))])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path), [])
        XCTAssertEqual(cache.currentBytes, Int64((256 << 10) + PartialEntry.fixedLength + photo.image.etag.utf8.count),
                       "the prefix counts against the bound")
        XCTAssertEqual(cache.currentStatistics.downloadedBytes, 256 << 10)
    }

    func testAPrefixIsResumedWithRangeAndTheWholePhotoIsRight() throws {
        let cache = try makeCache()
        let photo = photos[1]
        let first = try cache.open(source(photo))
        _ = try read(first, 4096)
        cache.release(first)
        XCTAssertTrue(settled(cache, photo))
        origin.resetCounters()
        let second = try cache.open(source(photo))
        XCTAssertEqual(origin.requestCount(method: "GET"), 0, "the prefix holds the header: no request")
        XCTAssertEqual(try read(second, 200_000), photo.image.data.prefix(200_000))
        XCTAssertEqual(origin.requestCount(method: "GET"), 0)
        XCTAssertEqual(try readWhole(second), photo.image.data)
        cache.release(second)
        XCTAssertTrue(settled(cache, photo))
        XCTAssertEqual(sent(photo, reaching: photo.image.data.count - (256 << 10)), photo.image.data.count - (256 << 10),
                       "only what the prefix did not hold")
        XCTAssertNotNil(cache.cachedPath(for: source(photo)))
        XCTAssertEqual(partials(), [], "the whole photo supersedes its prefix")
    }

    func testAPrefixSurvivesANewCacheAndItsVersionIsChecked() throws {
        let photo = photos[2]
        do {
            let cache = try makeCache()
            let handle = try cache.open(source(photo))
            _ = try read(handle, 1000)
            cache.release(handle)
            XCTAssertTrue(settled(cache, photo))
        }
        origin.resetCounters()
        let cache = try makeCache()
        XCTAssertEqual(cache.currentBytes, Int64((256 << 10) + PartialEntry.fixedLength + photo.image.etag.utf8.count))
        let handle = try cache.open(source(photo))
        XCTAssertEqual(try readWhole(handle), photo.image.data)
        cache.release(handle)
        XCTAssertEqual(sent(photo, reaching: photo.image.data.count - (256 << 10)), photo.image.data.count - (256 << 10),
                       "resumed after a restart")
    }

    func testAPrefixOfAnotherVersionOrDamagedIsNeverServed() throws {
        let photo = photos[3]
        do {
            let cache = try makeCache()
            let handle = try cache.open(source(photo))
            _ = try read(handle, 1000)
            cache.release(handle)
            XCTAssertTrue(settled(cache, photo))
        }
        let key = OriginalCache.key(for: source(photo))
        let path = directory.appendingPathComponent("partial/" + key).path
        // One byte of the prefix changed on disk.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 5000)
        try handle.write(contentsOf: Data([photo.image.data[5000] ^ 0xff]))
        try handle.close()
        origin.resetCounters()
        let cache = try makeCache()
        let opened = try cache.open(source(photo))
        XCTAssertEqual(try read(opened, 10_000), photo.image.data.prefix(10_000), "fetched again, not the damaged bytes")
        XCTAssertEqual(origin.requestCount(method: "GET"), 1)
        XCTAssertEqual(recorder.count(containing: "partial cache entry discarded"), 1)
        cache.release(opened)
        XCTAssertTrue(settled(cache, photo))
        XCTAssertEqual(partials(), [key], "a fresh prefix in its place")
    }

    func testAPhotoChangedAtTheOriginDiscardsItsPrefix() throws {
        let cache = try makeCache()
        let photo = photos[4]
        // A catalog that recorded no ETag: the prefix's version is the first answer's.
        let untagged = ContentSource(photoID: photo.id, url: source(photo).url, expectedSize: source(photo).expectedSize,
                                     contentType: "image/jpeg", etag: nil)
        let first = try cache.open(untagged)
        _ = try read(first, 1000)
        cache.release(first)
        XCTAssertTrue(settled(cache, photo))
        XCTAssertEqual(partials().count, 1)
        // Same URL and size, other bytes (and so another ETag).
        var changed = photo.image
        changed.data = Data(changed.data.reversed())
        var library = Self.library
        library.photos[library.photos.firstIndex { $0.id == photo.id }!].image = changed
        origin.replaceLibrary(library)
        let second = try cache.open(untagged)
        XCTAssertEqual(try read(second, 1000), photo.image.data.prefix(1000), "the prefix is served while it is all that is read")
        XCTAssertThrowsError(try read(second, 1000, at: 1 << 20), "If-Range did not match: the other version is refused") { error in
            guard case .changedAtOrigin = (error as? ContentError)?.kind else { return XCTFail("\(error)") }
        }
        cache.release(second)
        XCTAssertEqual(partials(), [], "the prefix of the old version is gone")
        let third = try cache.open(untagged)
        XCTAssertEqual(try readWhole(third), changed.data, "the next open starts over, on the new version")
        cache.release(third)
    }

    func testAWholeReaderLeavingCutsTheTransferAndKeepsWhatCame() throws {
        // A whole reader from 1 MiB on, so that 2 MiB of a 3 MiB photo are left when it leaves (more than the
        // 1 MiB a request nobody wants is finished for).
        var tuning = DownloadDemand.Tuning()
        tuning.wholeReader = 1 << 20
        let cache = try makeCache(demand: tuning)
        let photo = photos[5]
        let size = photo.image.data.count
        origin.setRate(photoID: photo.id, 2 << 20) // 2 MiB/s: the rest would take about a second
        let handle = try cache.open(source(photo))
        XCTAssertEqual(try read(handle, (1 << 20) + 4096), photo.image.data.prefix((1 << 20) + 4096), "a whole reader")
        cache.release(handle)
        XCTAssertTrue(settled(cache, photo))
        let kept = try XCTUnwrap(partials().first)
        let onDisk = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("partial/" + kept).path)[.size] as? Int)
        let prefix = onDisk - PartialEntry.fixedLength - photo.image.etag.utf8.count
        XCTAssertGreaterThanOrEqual(prefix, (1 << 20) + 4096)
        XCTAssertLessThan(sent(photo), size, "the rest of the photo was not sent")
        XCTAssertLessThanOrEqual(sent(photo), prefix + (1 << 20), "it stopped within a few of the origin's writes")
    }

    func testAWholeWantCompletesThoughItsReadersLeave() throws {
        let cache = try makeCache()
        let photo = photos[0]
        let handle = try cache.open(source(photo))
        _ = try read(handle, 1000)
        cache.prefetch(source(photo))
        cache.release(handle)
        XCTAssertTrue(settled(cache, photo))
        XCTAssertNotNil(cache.cachedPath(for: source(photo)), "the prefetch wanted it whole")
        XCTAssertEqual(partials(), [])
        XCTAssertEqual(sent(photo), photo.image.data.count, "every byte once")
    }

    func testPartialEntriesAreEvictedLikeWholeOnes() throws {
        let prefixBytes = Int64((256 << 10) + PartialEntry.fixedLength + 18)
        let cache = try makeCache(maxBytes: 2 * prefixBytes + 100)
        for photo in photos.prefix(3) {
            let handle = try cache.open(source(photo))
            _ = try read(handle, 1000)
            cache.release(handle)
            XCTAssertTrue(settled(cache, photo))
        }
        XCTAssertEqual(partials().count, 2, "the oldest prefix went to keep the bound")
        XCTAssertFalse(partials().contains(OriginalCache.key(for: source(photos[0]))))
        XCTAssertLessThanOrEqual(cache.currentBytes, 2 * prefixBytes + 100)
        XCTAssertEqual(cache.currentStatistics.evictions, 1)
    }
}
