// The cache directory is claimed with CACHEDIR.TAG; a user's folder is refused untouched, and inside the
// cache only names photofs writes are read, counted, evicted or removed; planted symlinks are not served.
import FlickrOrigin
import Logging
@testable import PhotoContent
import XCTest

final class CacheDirectoryOwnershipTests: XCTestCase {
    static let library = DemoLibrary.make(count: 4, scale: 4)
    var origin: FlickrOriginServer!
    var root: URL!

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: CacheDirectoryOwnershipTests.library, apiKey: "k")
        try origin.start()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("ownership-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func makeCache(_ directory: URL, maxBytes: Int64 = OriginalCache.defaultMaxBytes) throws -> OriginalCache {
        try OriginalCache(directory: directory, http: HTTPClient(), maxBytes: maxBytes, logger: Logger(label: "test"))
    }

    func source(_ index: Int) -> ContentSource {
        let photo = CacheDirectoryOwnershipTests.library.photos[index]
        return ContentSource(photoID: photo.id, url: "http://127.0.0.1:\(origin.port)" + origin.imagePath(photoID: photo.id)!,
                             expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType)
    }

    func write(_ text: String, _ path: URL) throws {
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: path)
    }

    func mode(_ path: URL) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path.path, &info), 0, path.path)
        return info.st_mode & 0o7777
    }

    func tag(of directory: URL) -> String? {
        try? String(contentsOf: directory.appendingPathComponent("CACHEDIR.TAG"), encoding: .utf8)
    }

    func testAMissingOrEmptyDirectoryIsClaimedWithACacheDirTag() throws {
        let missing = root.appendingPathComponent("new/cache")
        _ = try makeCache(missing)
        let empty = root.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        _ = try makeCache(empty)
        for directory in [missing, empty] {
            let tag = try XCTUnwrap(tag(of: directory))
            XCTAssertTrue(tag.hasPrefix("Signature: 8a477f597d28d172789f06886806bc55\n"), tag)
            XCTAssertTrue(tag.contains("photofs"))
            XCTAssertEqual(mode(directory), 0o700)
            XCTAssertEqual(mode(directory.appendingPathComponent("originals")), 0o700)
            XCTAssertEqual(mode(directory.appendingPathComponent("tmp")), 0o700)
        }
        // A second start finds its own tag and is content.
        XCTAssertNoThrow(try makeCache(missing))
    }

    func testAUsersFolderIsRefusedAndLeftExactlyAsItWas() throws {
        let folder = root.appendingPathComponent("Pictures")
        try write("my holiday", folder.appendingPathComponent("holiday.jpg"))
        try write("notes", folder.appendingPathComponent("tmp/notes.part"))
        try write("keep", folder.appendingPathComponent("originals/x-1"))
        chmod(folder.path, 0o755)
        let before = try snapshot(folder)
        // The check a CLI makes before writing its log there: same refusal, nothing created.
        XCTAssertThrowsError(try CacheDirectory.checkUsable(folder.path)) { error in
            XCTAssertTrue("\(error)".contains("is not empty and is not a photofs cache"), "\(error)")
        }
        XCTAssertNoThrow(try CacheDirectory.checkUsable(root.appendingPathComponent("missing").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("missing").path))
        XCTAssertThrowsError(try makeCache(folder)) { error in
            let message = "\(error)"
            XCTAssertTrue(error is CacheDirectoryError, message)
            XCTAssertTrue(message.contains("is not empty and is not a photofs cache"), message)
            XCTAssertTrue(message.contains("holiday.jpg"), message)
            XCTAssertTrue(message.contains("--cache-dir"), message)
        }
        XCTAssertEqual(try snapshot(folder), before)
        XCTAssertEqual(mode(folder), 0o755)
        XCTAssertNil(tag(of: folder))
        // A regular file is not a directory either.
        XCTAssertThrowsError(try makeCache(folder.appendingPathComponent("holiday.jpg")))
        // A foreign CACHEDIR.TAG (another program's cache) is not ours.
        let otherCache = root.appendingPathComponent("other")
        try write("Signature: 8a477f597d28d172789f06886806bc55\n# someone else", otherCache.appendingPathComponent("CACHEDIR.TAG"))
        try write("x", otherCache.appendingPathComponent("blob"))
        // ...but a valid signature means "a cache": it is accepted, and its foreign file is still left alone.
        _ = try makeCache(otherCache)
        XCTAssertEqual(try String(contentsOf: otherCache.appendingPathComponent("blob"), encoding: .utf8), "x")
    }

    func testAnUntaggedCacheOfAnEarlierPhotofsIsAdopted() throws {
        let old = root.appendingPathComponent("old-cache")
        for name in ["statistics.json", "limit", "photofs.log"] { try write("{}", old.appendingPathComponent(name)) }
        let entry = OriginalCache.key(for: source(0))
        try CacheDirectoryOwnershipTests.library.photos[0].image.data.write(to: old.appendingPathComponent("originals/\(entry)").creatingParent())
        let cache = try makeCache(old)
        XCTAssertNotNil(tag(of: old))
        XCTAssertNotNil(cache.cachedPath(for: source(0)))
        XCTAssertEqual(cache.currentBytes, Int64(CacheDirectoryOwnershipTests.library.photos[0].image.data.count))
    }

    /// Files that are not photofs's, inside a tagged cache: never counted, evicted or removed.
    func testOnlyPhotofsNamesAreCountedEvictedOrRemoved() throws {
        let directory = root.appendingPathComponent("cache")
        _ = try makeCache(directory)
        let foreign = ["originals/IMG_0001.JPG", "originals/notes.txt", "originals/a-B12", "originals/.hidden-1",
                       "originals/x-1234567890abcdef0", "tmp/keep.txt", "tmp/part", "readme.md"]
        for name in foreign { try write(String(repeating: "x", count: 50_000), directory.appendingPathComponent(name)) }
        try write("half", directory.appendingPathComponent("tmp/photo-1.12.part"))
        let sizes = CacheDirectoryOwnershipTests.library.photos.map { Int64($0.image.data.count) }
        let cache = try makeCache(directory, maxBytes: sizes[0] + sizes[1])
        XCTAssertEqual(cache.currentBytes, 0, "foreign files were counted")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("tmp/photo-1.12.part").path))
        for index in 0..<4 { _ = try cache.fetch(source(index)) }
        XCTAssertGreaterThan(cache.currentStatistics.evictions, 0)
        XCTAssertLessThanOrEqual(cache.currentBytes, sizes[0] + sizes[1])
        for name in foreign {
            XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent(name)).count, 50_000, name)
        }
        // store() and storedData() take only keys: no path can be smuggled in.
        XCTAssertThrowsError(try cache.store(Data("x".utf8), key: "../readme.md"))
        XCTAssertThrowsError(try cache.store(Data("x".utf8), key: "notes.txt"))
        XCTAssertNil(cache.storedData(key: "notes.txt"))
        XCTAssertNil(cache.storedData(key: "../readme.md"))
    }

    func testAPlantedSymlinkOrOddFileIsNotServed() throws {
        let directory = root.appendingPathComponent("cache")
        let cache = try makeCache(directory)
        let photo = CacheDirectoryOwnershipTests.library.photos[0]
        // A file elsewhere with the right size but other bytes, linked in under the photo's key.
        let outside = root.appendingPathComponent("outside.jpg")
        let impostor = Data(repeating: 0x41, count: photo.image.data.count)
        try impostor.write(to: outside)
        let entry = directory.appendingPathComponent("originals/\(OriginalCache.key(for: source(0)))")
        try FileManager.default.createSymbolicLink(at: entry, withDestinationURL: outside)
        XCTAssertNil(cache.cachedPath(for: source(0)))
        let handle = try cache.open(source(0))
        var bytes = [UInt8](repeating: 0, count: photo.image.data.count)
        XCTAssertEqual(try bytes.withUnsafeMutableBytes { try handle.read(into: $0, at: 0) }, bytes.count)
        XCTAssertEqual(Data(bytes), photo.image.data)
        cache.release(handle)
        XCTAssertEqual(origin.requestCount(method: "GET"), 1)
        XCTAssertEqual(try Data(contentsOf: outside), impostor, "the symlink's target was written")
        // A symlinked variant is not read back either.
        let variantKey = OriginalCache.key(for: ContentSource(photoID: "variant-1", url: "fit", expectedSize: 0, contentType: "x"))
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("originals/\(variantKey)"),
                                                   withDestinationURL: outside)
        XCTAssertNil(cache.storedData(key: variantKey))
        // A FIFO under a key is neither served nor waited on.
        XCTAssertEqual(mkfifo(directory.appendingPathComponent("originals/\(OriginalCache.key(for: source(1)))").path, 0o600), 0)
        XCTAssertNil(cache.cachedPath(for: source(1)))
        XCTAssertNoThrow(try cache.fetch(source(1)))
        // A wrong-size file is not served, and removed.
        let wrongSize = directory.appendingPathComponent("originals/\(OriginalCache.key(for: source(2)))")
        try Data("short".utf8).write(to: wrongSize)
        XCTAssertNil(cache.cachedPath(for: source(2)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: wrongSize.path))
    }

    func testOriginalsBeingASymlinkIsRefused() throws {
        let directory = root.appendingPathComponent("cache")
        _ = try makeCache(directory)
        let elsewhere = root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("originals"))
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("originals"), withDestinationURL: elsewhere)
        XCTAssertThrowsError(try makeCache(directory)) { error in
            XCTAssertTrue("\(error)".contains("is not a directory"), "\(error)")
        }
    }

    func testEntryNamePattern() {
        XCTAssertTrue(CacheDirectory.isEntryName(OriginalCache.key(for: source(0))))
        XCTAssertTrue(CacheDirectory.isEntryName("variant_52000000000-0"))
        XCTAssertTrue(CacheDirectory.isEntryName("-abc"))
        for name in ["", "-", "a-", "a-G", "a-ABC", "a b-1", "a-12345678901234567", "../a-1", "a-1.part", "é-1",
                     String(repeating: "a", count: 65) + "-1"] {
            XCTAssertFalse(CacheDirectory.isEntryName(name), name)
        }
    }

    /// Every file under `directory`: relative path → bytes (nil for a directory).
    func snapshot(_ directory: URL) throws -> [String: Data?] {
        var result: [String: Data?] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory.path)!
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            FileManager.default.fileExists(atPath: directory.appendingPathComponent(relative).path, isDirectory: &isDirectory)
            result.updateValue(isDirectory.boolValue ? nil : try Data(contentsOf: directory.appendingPathComponent(relative)),
                               forKey: relative)
        }
        return result
    }
}

extension URL {
    /// This URL, after creating its parent directory.
    func creatingParent() throws -> URL {
        try FileManager.default.createDirectory(at: deletingLastPathComponent(), withIntermediateDirectories: true)
        return self
    }
}
