// The cache directory's bytes are hostile: garbage counters and limits, absurd sizes and times, odd names,
// special files where small files should be. The cache starts, counts without trapping, and serves photos.
import FlickrOrigin
import Logging
@testable import PhotoContent
import XCTest

final class HostileCacheDirectoryTests: XCTestCase {
    static let library = DemoLibrary.make(count: 2, scale: 8)
    var origin: FlickrOriginServer!
    var directory: URL!

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: HostileCacheDirectoryTests.library, apiKey: "k")
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
        _ = try makeCache() // claims and lays out the directory
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func makeCache(maxBytes: Int64 = OriginalCache.defaultMaxBytes) throws -> OriginalCache {
        try OriginalCache(directory: directory, http: HTTPClient(), maxBytes: maxBytes, logger: Logger(label: "test"))
    }

    func source(_ index: Int) -> ContentSource {
        let photo = HostileCacheDirectoryTests.library.photos[index]
        return ContentSource(photoID: photo.id, url: "http://127.0.0.1:\(origin.port)" + origin.imagePath(photoID: photo.id)!,
                             expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType)
    }

    func path(_ relative: String) -> String { directory.appendingPathComponent(relative).path }

    func assertServes(_ cache: OriginalCache, file: StaticString = #filePath, line: UInt = #line) {
        let photo = HostileCacheDirectoryTests.library.photos[0]
        XCTAssertEqual(try cache.fetchBytes(source(0)), photo.image.data, file: file, line: line)
        let handle = try? cache.open(source(1))
        XCTAssertNotNil(handle, file: file, line: line)
        if let handle { cache.release(handle) }
    }

    func testGarbageStatisticsAndLimitFiles() throws {
        let garbage: [Data] = [
            Data([0xff, 0xfe, 0x00, 0x7b]), Data("{\"hits\": 1e400}".utf8), Data("{\"hits\": -5, \"misses\": \"x\"}".utf8),
            Data("[1,2,3]".utf8), Data("{\"hits\": 9223372036854775807, \"misses\": 9223372036854775807, \"downloadedBytes\": 9223372036854775807, \"evictions\": 9223372036854775807}".utf8),
            Data(repeating: 0x5b, count: 100_000), Data(),
        ]
        for data in garbage {
            try data.write(to: URL(fileURLWithPath: path("statistics.json")))
            try data.write(to: URL(fileURLWithPath: path("limit")))
            let cache = try makeCache()
            XCTAssertGreaterThanOrEqual(cache.currentStatistics.hits, 0)
            assertServes(cache) // counters at Int.max saturate instead of trapping
            cache.saveStatistics()
            try? FileManager.default.removeItem(atPath: path("originals"))
        }
        try garbage[4].write(to: URL(fileURLWithPath: path("statistics.json")))
        let cache = try makeCache()
        assertServes(cache)
        XCTAssertEqual(cache.currentStatistics.misses, Int.max)
        XCTAssertEqual(cache.currentStatistics.hits, Int.max)
    }

    func testSpecialFilesWhereSmallFilesShouldBe() throws {
        // /dev/zero behind statistics.json would be an endless read; a FIFO would block the start forever.
        try FileManager.default.createSymbolicLink(atPath: path("statistics.json"), withDestinationPath: "/dev/zero")
        try FileManager.default.removeItem(atPath: path("limit"))
        XCTAssertEqual(mkfifo(path("limit"), 0o600), 0)
        try FileManager.default.removeItem(atPath: path("CACHEDIR.TAG"))
        try FileManager.default.createSymbolicLink(atPath: path("CACHEDIR.TAG"), withDestinationPath: "/dev/zero")
        // The tag is not ours any more (a symlink): the directory holds a foreign name and is refused.
        XCTAssertThrowsError(try makeCache())
        try FileManager.default.removeItem(atPath: path("CACHEDIR.TAG"))
        try Data((CacheDirectory.signature + "\n").utf8).write(to: URL(fileURLWithPath: path("CACHEDIR.TAG")))
        let cache = try makeCache()
        assertServes(cache)
        cache.saveStatistics()
        XCTAssertEqual((try? FileManager.default.destinationOfSymbolicLink(atPath: path("statistics.json"))), nil,
                       "statistics.json should have been replaced, not written through")
    }

    func testAbsurdSizesTimesAndNames() throws {
        // Sparse files claiming the largest size this file system allows (ext4: 16 TiB, tmpfs: 8 EiB), under
        // names photofs would write.
        for name in ["a-1", "b-2", "c-3"] {
            let fd = open(path("originals/\(name)"), O_WRONLY | O_CREAT, 0o600)
            XCTAssertGreaterThanOrEqual(fd, 0)
            let sizes: [Int64] = [.max, .max / 2, 1 << 60, 1 << 50, 1 << 44 - 4096, 1 << 40]
            XCTAssertNotNil(sizes.first { ftruncate(fd, off_t($0)) == 0 })
            close(fd)
        }
        // Times at the ends of what the file system takes.
        for (name, seconds) in [("d-4", Int.max / 4), ("e-5", Int.min / 4), ("f-6", 0)] {
            XCTAssertTrue(FileManager.default.createFile(atPath: path("originals/\(name)"), contents: Data("x".utf8)))
            var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, path("originals/\(name)"), &times, 0) // the kernel may clamp or refuse: either is fine
        }
        // Names that are not UTF-8, or hold control characters and newlines.
        for raw: [UInt8] in [[0xff, 0xfe, 0x2d, 0x31], [0x61, 0x0a, 0x2d, 0x31], [0x1b, 0x5b, 0x2d, 0x31], [0xc3, 0x2d, 0x31]] {
            let name = String(decoding: [UInt8]("originals/".utf8), as: UTF8.self)
            let full = Array(path(name).utf8) + raw + [0]
            let fd = full.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self),
                                                         O_WRONLY | O_CREAT, 0o600) }
            XCTAssertGreaterThanOrEqual(fd, 0)
            close(fd)
        }
        let cache = try makeCache(maxBytes: 1 << 20)
        // On tmpfs the three sparse files sum past Int64.max: the total saturates. Eviction removes them (they
        // are named as photofs's own).
        XCTAssertLessThanOrEqual(cache.currentBytes, 1 << 20)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("originals/a-1")))
        assertServes(cache)
    }

    func testHostileCatalogSizesNeverTrap() throws {
        let cache = try makeCache()
        let photo = HostileCacheDirectoryTests.library.photos[0]
        for size in [Int64.max, Int64.max - 1, Int64.min, -1, 0, Int64(photo.image.data.count) - 1] {
            var hostile = source(0)
            hostile.expectedSize = size
            if let handle = try? cache.open(hostile) {
                var buffer = [UInt8](repeating: 0, count: 4096)
                for offset in [Int64.min, -1, 0, Int64.max - 10, Int64.max] {
                    _ = try? buffer.withUnsafeMutableBytes { try handle.read(into: $0, at: offset) }
                    let done = expectation(description: "resumed")
                    handle.whenReadable(count: Int.max, at: offset) { _ in done.fulfill() }
                    wait(for: [done], timeout: 10)
                }
                cache.release(handle)
            }
            _ = try? cache.fetch(hostile)
            _ = try? cache.fetchBytes(hostile)
        }
        assertServes(cache)
    }

    /// `photofs cache stats` (CacheReport): counters at Int.max and below 0, limits out of Int64's range or
    /// negative, a FIFO for a file and sparse files past Int64.max in all print without trapping or blocking.
    func testCacheStatsOfHostileFilesNeverTrap() throws {
        let counters = "{\"hits\": 9223372036854775807, \"misses\": 9223372036854775807, "
            + "\"downloadedBytes\": 9223372036854775807, \"evictions\": 9223372036854775807}"
        try Data(counters.utf8).write(to: URL(fileURLWithPath: path("statistics.json")))
        try Data("9223372036854775807\n".utf8).write(to: URL(fileURLWithPath: path("limit")))
        for name in ["a-1", "b-2", "c-3"] {
            let fd = open(path("originals/\(name)"), O_WRONLY | O_CREAT, 0o600)
            XCTAssertGreaterThanOrEqual(fd, 0)
            let sizes: [Int64] = [.max, .max / 2, 1 << 60, 1 << 50, 1 << 44 - 4096, 1 << 40]
            XCTAssertNotNil(sizes.first { ftruncate(fd, off_t($0)) == 0 })
            close(fd)
        }
        var report = CacheReport.read(directory: directory.path)
        XCTAssertEqual(report.photos, 3)
        XCTAssertGreaterThan(report.bytes, 0, "sizes add without wrapping round to negative")
        XCTAssertEqual(report.limit, .max)
        XCTAssertEqual(report.statistics?.opens, Int.max, "Int.max + Int.max saturates")
        XCTAssertEqual(report.statistics?.hitRate, 50)
        XCTAssertTrue(report.lines.contains { $0.hasPrefix("opens: 9223372036854775807, hit rate: 50.0%") }, "\(report.lines)")

        // Negative counters read as 0 (no opens: no rate), a negative limit as none, text as none.
        try Data("{\"hits\": -9223372036854775808, \"misses\": -1, \"evictions\": -5}".utf8)
            .write(to: URL(fileURLWithPath: path("statistics.json")))
        for limit in ["-9223372036854775808", "-1", "9223372036854775808", "lots", String(repeating: "9", count: 100)] {
            try Data(limit.utf8).write(to: URL(fileURLWithPath: path("limit")))
            report = CacheReport.read(directory: directory.path)
            XCTAssertNil(report.limit, limit)
            XCTAssertEqual(report.statistics?.opens, 0)
            XCTAssertNil(report.statistics?.hitRate)
            XCTAssertTrue(report.lines.contains("opens: 0, hit rate: n/a, downloaded: 0 bytes, evictions: 0"), "\(report.lines)")
        }
        // Counters set in code rather than decoded are clamped the same way.
        var statistics = CacheStatistics()
        statistics.hits = .min
        statistics.misses = .max
        XCTAssertEqual(statistics.opens, .max)
        XCTAssertEqual(statistics.hitRate, 0)

        // A FIFO for a file would block a plain read forever; /dev/zero behind a symlink would never end.
        try FileManager.default.removeItem(atPath: path("limit"))
        XCTAssertEqual(mkfifo(path("limit"), 0o600), 0)
        try FileManager.default.removeItem(atPath: path("statistics.json"))
        try FileManager.default.createSymbolicLink(atPath: path("statistics.json"), withDestinationPath: "/dev/zero")
        report = CacheReport.read(directory: directory.path)
        XCTAssertNil(report.limit)
        XCTAssertNil(report.statistics)
        XCTAssertEqual(report.lines.count, 4, "cache, photos, partial, bytes: \(report.lines)")
    }
}
