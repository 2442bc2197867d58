// Degraded cache on real file systems: a small tmpfs mounted for each test, filled, remounted read-only or
// removed under the cache. Every photo is still read whole, nothing partial is cached, one line says so.
import FlickrOrigin
import Logging
@testable import PhotoContent
import TestRequirements
import XCTest

final class DegradedCacheTests: XCTestCase {
    /// 6 photos, the largest a PNG of about 1.3 MB; the tmpfs is 4 MiB.
    static let library = DemoLibrary.make(count: 6, scale: 1)
    var origin: FlickrOriginServer!
    var mountpoint: String!
    var directory: URL!
    var recorder: LogRecorder!
    var mounted = false

    override func setUpWithError() throws {
        try TestRequirement.root("to mount a 4 MiB tmpfs under the cache")
        mountpoint = "/tmp/photofs-degraded-\(UUID().uuidString.prefix(8))"
        XCTAssertEqual(mkdir(mountpoint, 0o700), 0)
        guard mount("tmpfs", mountpoint, "tmpfs", 0, "size=4m,mode=0700") == 0 else {
            let reason = String(cString: strerror(errno))
            rmdir(mountpoint)
            throw XCTSkip("needs CAP_SYS_ADMIN to mount a tmpfs (root in a container without it?): \(reason)")
        }
        mounted = true
        origin = FlickrOriginServer(library: DegradedCacheTests.library, apiKey: "k")
        try origin.start()
        directory = URL(fileURLWithPath: mountpoint + "/cache")
        recorder = LogRecorder()
    }

    override func tearDownWithError() throws {
        origin?.stop()
        if mounted {
            if umount(mountpoint) != 0 { umount2(mountpoint, Int32(MNT_DETACH)) }
            rmdir(mountpoint)
        }
    }

    func makeCache() throws -> OriginalCache {
        var http = HTTPConfiguration()
        http.retryBaseDelay = 0.01
        return try OriginalCache(directory: directory, http: HTTPClient(configuration: http, logger: recorder.logger()),
                                 logger: recorder.logger())
    }

    func source(_ index: Int) -> ContentSource {
        let photo = DegradedCacheTests.library.photos[index]
        return ContentSource(photoID: photo.id, url: "http://127.0.0.1:\(origin.port)" + origin.imagePath(photoID: photo.id)!,
                             expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType)
    }

    var freeBytes: Int64 {
        var info = statvfs()
        XCTAssertEqual(statvfs(mountpoint, &info), 0)
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Fills the tmpfs with a file outside the cache until `leaving` bytes are free (0: until ENOSPC).
    func fill(leaving: Int64 = 0) {
        let fd = open(mountpoint + "/filler-\(UUID().uuidString.prefix(8))", O_WRONLY | O_CREAT, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        while freeBytes > leaving {
            if write(fd, chunk, chunk.count) < 0 { XCTAssertEqual(errno, ENOSPC); return }
        }
    }

    func removeFillers() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: mountpoint) where name.hasPrefix("filler-") {
            unlink(mountpoint + "/" + name)
        }
    }

    func readWhole(_ handle: ContentHandle) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: Int(handle.size))
        var offset = 0
        while offset < bytes.count {
            let count = try bytes.withUnsafeMutableBytes { buffer in
                try handle.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<min(offset + 8191, buffer.count)]),
                                at: Int64(offset))
            }
            guard count > 0 else { break }
            offset += count
        }
        return Data(bytes.prefix(offset))
    }

    func contents(_ subdirectory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(subdirectory).path)) ?? []).sorted()
    }

    func testAFullDiskServesEveryPhotoFromMemoryAndCachesNothing() throws {
        let cache = try makeCache()
        fill(leaving: 8192) // smaller than any photo
        let photos = DegradedCacheTests.library.photos
        // One photo arrives slowly: a deferred reply (no thread held) must be resumed from memory too.
        origin.setRate(photoID: photos[0].id, 100_000)
        let slow = try cache.open(source(0))
        XCTAssertTrue(slow.isInMemory)
        let resumed = expectation(description: "deferred read resumed")
        slow.whenReadable(count: photos[0].image.data.count, at: 0) { error in
            XCTAssertNil(error)
            resumed.fulfill()
        }
        wait(for: [resumed], timeout: 20)
        XCTAssertEqual(try readWhole(slow), photos[0].image.data)
        origin.setRate(photoID: photos[0].id, nil)

        for index in 1..<photos.count {
            let handle = try cache.open(source(index))
            XCTAssertTrue(handle.isInMemory)
            XCTAssertEqual(try readWhole(handle), photos[index].image.data, "photo \(index)")
            cache.release(handle)
        }
        // A second open while the first still holds the bytes shares them: no second download.
        origin.resetCounters()
        let again = try cache.open(source(0))
        XCTAssertEqual(try readWhole(again), photos[0].image.data)
        XCTAssertEqual(origin.requestCount(method: "GET"), 0)
        cache.release(again)
        cache.release(slow)

        XCTAssertEqual(contents("originals"), [])
        XCTAssertEqual(contents("tmp"), [])
        XCTAssertEqual(cache.currentBytes, 0)
        XCTAssertNotNil(cache.degradation)
        XCTAssertEqual(recorder.count(containing: "cache degraded"), 1, recorder.lines.joined(separator: "\n"))
        XCTAssertThrowsError(try cache.fetch(source(1))) { error in XCTAssertEqual((error as? ContentError)?.kind, .noSpace) }
        XCTAssertEqual(try cache.fetchBytes(source(1)), photos[1].image.data)

        // Space comes back: the next download is cached, and one line says so.
        try removeFillers()
        let path = try cache.fetch(source(2))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), photos[2].image.data)
        XCTAssertNil(cache.degradation)
        XCTAssertEqual(recorder.count(containing: "cache resumed"), 1)
        XCTAssertEqual(recorder.count(containing: "cache degraded"), 1)
    }

    func testTheDiskFillingDuringADownloadMovesItToMemoryWithItsBytes() throws {
        let cache = try makeCache()
        let photo = DegradedCacheTests.library.photos.max { $0.image.data.count < $1.image.data.count }!
        let index = DegradedCacheTests.library.photos.firstIndex { $0.id == photo.id }!
        origin.setRate(photoID: photo.id, photo.image.data.count / 3) // 3 s for the photo
        let handle = try cache.open(source(index))
        var first = [UInt8](repeating: 0, count: 20_000)
        XCTAssertEqual(try first.withUnsafeMutableBytes { try handle.read(into: $0, at: 0) }, first.count)
        XCTAssertFalse(handle.isInMemory, "the download should have started on disk")
        XCTAssertEqual(contents("tmp").count, 1)
        // A reader already waiting for the end, as a deferred FUSE reply would.
        let resumed = expectation(description: "deferred read resumed")
        handle.whenReadable(count: 4096, at: Int64(photo.image.data.count - 4096)) { error in
            XCTAssertNil(error)
            resumed.fulfill()
        }
        fill()
        wait(for: [resumed], timeout: 30)
        XCTAssertEqual(try readWhole(handle), photo.image.data)
        XCTAssertTrue(handle.isInMemory, "the download should have moved to memory")
        XCTAssertNil(try handle.download!.waitUntilEnded())
        cache.release(handle)
        XCTAssertEqual(contents("tmp"), [], "the partial file was left behind")
        XCTAssertEqual(contents("originals"), [])
        // The origin counts a chunk after its write returns: the client may have read the last byte before.
        let path = origin.imagePath(photoID: photo.id)!
        let deadline = Date().addingTimeInterval(10)
        while origin.bodyBytesSent(path: path) < photo.image.data.count && Date() < deadline { usleep(2_000) }
        XCTAssertEqual(origin.bodyBytesSent(path: path), photo.image.data.count,
                       "the bytes received before the disk filled were fetched again")
        XCTAssertEqual(recorder.count(containing: "cache degraded"), 1, recorder.lines.joined(separator: "\n"))
    }

    func testARemovedCacheDirectoryIsRecreatedOnTheNextDownload() throws {
        let cache = try makeCache()
        _ = try cache.fetch(source(0))
        try FileManager.default.removeItem(at: directory)
        let handle = try cache.open(source(1))
        XCTAssertEqual(try readWhole(handle), DegradedCacheTests.library.photos[1].image.data)
        cache.release(handle)
        XCTAssertNotNil(try cache.fetch(source(1)))
        XCTAssertTrue(CacheDirectory.isTagged(directory.path))
        var info = stat()
        for path in [directory.path, directory.path + "/originals", directory.path + "/tmp"] {
            XCTAssertEqual(stat(path, &info), 0)
            XCTAssertEqual(info.st_mode & 0o777, 0o700, path)
        }
        XCTAssertNil(cache.cachedPath(for: source(0)))
        XCTAssertEqual(try cache.fetchBytes(source(0)), DegradedCacheTests.library.photos[0].image.data)
        XCTAssertEqual(cache.currentBytes, Int64(DegradedCacheTests.library.photos[0...1].map(\.image.data.count).reduce(0, +)))
        XCTAssertEqual(recorder.count(containing: "cache directory re-created"), 1)
        XCTAssertEqual(recorder.count(containing: "cache degraded"), 0)
    }

    func testADirectoryRemovedDuringADownloadStillServesItWhole() throws {
        let cache = try makeCache()
        let photo = DegradedCacheTests.library.photos[2]
        origin.setRate(photoID: photo.id, 50_000)
        let handle = try cache.open(source(2))
        var first = [UInt8](repeating: 0, count: 1000)
        XCTAssertEqual(try first.withUnsafeMutableBytes { try handle.read(into: $0, at: 0) }, first.count)
        try FileManager.default.removeItem(at: directory)
        XCTAssertEqual(try readWhole(handle), photo.image.data)
        XCTAssertNil(try handle.download!.waitUntilEnded(), "nothing can be cached in a removed directory")
        cache.release(handle)
        XCTAssertEqual(recorder.count(containing: "cache degraded"), 1)
        // The next download re-creates the directory and is cached.
        XCTAssertNotNil(try cache.fetch(source(3)))
        XCTAssertEqual(recorder.count(containing: "cache resumed"), 1)
        XCTAssertEqual(contents("tmp"), [])
    }

    func testAFileWhereTheDirectoryWasServesFromMemory() throws {
        let cache = try makeCache()
        try FileManager.default.removeItem(at: directory)
        XCTAssertTrue(FileManager.default.createFile(atPath: directory.path, contents: Data("not a directory".utf8)))
        for index in 0..<3 {
            let handle = try cache.open(source(index))
            XCTAssertTrue(handle.isInMemory)
            XCTAssertEqual(try readWhole(handle), DegradedCacheTests.library.photos[index].image.data)
            cache.release(handle)
        }
        XCTAssertEqual(try String(contentsOf: directory, encoding: .utf8), "not a directory")
        XCTAssertEqual(recorder.count(containing: "cache degraded"), 1)
    }

    func testAReadOnlyCacheServesFromMemoryUntilItIsWritableAgain() throws {
        let cache = try makeCache()
        XCTAssertEqual(mount("tmpfs", mountpoint, "tmpfs", UInt(MS_REMOUNT | MS_RDONLY), "size=4m"), 0)
        for index in 0..<3 {
            let handle = try cache.open(source(index))
            XCTAssertTrue(handle.isInMemory)
            XCTAssertEqual(try readWhole(handle), DegradedCacheTests.library.photos[index].image.data)
            cache.release(handle)
        }
        XCTAssertEqual(recorder.count(containing: "cache degraded"), 1)
        XCTAssertTrue(recorder.lines.contains { $0.contains("cache degraded") && $0.contains("Read-only") },
                      recorder.lines.joined(separator: "\n"))
        XCTAssertEqual(mount("tmpfs", mountpoint, "tmpfs", UInt(MS_REMOUNT), "size=4m"), 0)
        XCTAssertNotNil(try cache.fetch(source(4)))
        XCTAssertEqual(recorder.count(containing: "cache resumed"), 1)
    }

    func testStoringAVariantOnAFullDiskFailsAndLeavesNothing() throws {
        let cache = try makeCache()
        fill()
        let key = OriginalCache.key(for: ContentSource(photoID: "variant-1", url: "fit", expectedSize: 0, contentType: "x"))
        XCTAssertThrowsError(try cache.store(Data(repeating: 7, count: 200_000), key: key)) { error in
            XCTAssertEqual((error as? ContentError)?.kind, .noSpace)
        }
        XCTAssertEqual(contents("tmp"), [])
        XCTAssertEqual(contents("originals"), [])
        XCTAssertNil(cache.storedData(key: key))
    }
}
