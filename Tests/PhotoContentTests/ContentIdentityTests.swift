// Content identity: a photo replaced at the origin with new bytes of the same size gets a new cache key, is
// downloaded again, and a handle opened on the old version keeps reading the old bytes whole.
import FlickrOrigin
import Logging
@testable import PhotoContent
import XCTest

final class ContentIdentityTests: XCTestCase {
    static let library = DemoLibrary.make(count: 3, scale: 2)
    var origin: FlickrOriginServer!
    var directory: URL!
    var cache: OriginalCache!

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: ContentIdentityTests.library, apiKey: "k")
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("identity-\(UUID().uuidString)")
        cache = try OriginalCache(directory: directory, http: HTTPClient(), logger: Logger(label: "test"))
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The origin now serves different bytes of the same size for photo `index` (as Flickr does for a
    /// replaced photo: a new secret in the URL and a new ETag, the catalog's size unchanged here).
    func replaceBytes(of index: Int) -> Data {
        var library = ContentIdentityTests.library
        var bytes = library.photos[index].image.data
        for offset in stride(from: bytes.count / 2, to: bytes.count - 2, by: 97) { bytes[offset] ^= 0x5a }
        library.photos[index].image.data = bytes
        origin.replaceLibrary(library)
        return bytes
    }

    func source(_ index: Int, version: Int) -> ContentSource {
        let photo = ContentIdentityTests.library.photos[index]
        return ContentSource(photoID: photo.id,
                             url: "http://127.0.0.1:\(origin.port)\(origin.imagePath(photoID: photo.id)!)?secret=v\(version)",
                             expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType,
                             etag: "\"v\(version)\"")
    }

    func readWhole(_ handle: ContentHandle) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: Int(handle.size) + 10)
        // Odd-sized reads, as the kernel's are not aligned to anything the download wrote.
        var offset = 0
        while true {
            let count = try bytes.withUnsafeMutableBytes { buffer in
                try handle.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<min(offset + 4099, buffer.count)]),
                                at: Int64(offset))
            }
            if count == 0 { break }
            offset += count
        }
        return Data(bytes.prefix(offset))
    }

    func testAReplacedPhotoOfTheSameSizeGetsANewKeyAndIsDownloadedAgain() throws {
        let old = ContentIdentityTests.library.photos[0].image.data
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: try cache.fetch(source(0, version: 1)))), old)
        let new = replaceBytes(of: 0)
        XCTAssertEqual(new.count, old.count)
        XCTAssertNotEqual(new, old)

        let oldKey = OriginalCache.key(for: source(0, version: 1))
        XCTAssertNotEqual(OriginalCache.key(for: source(0, version: 2)), oldKey)
        // The URL alone, or the ETag alone, changes the key too.
        var urlOnly = source(0, version: 1)
        urlOnly.url = source(0, version: 2).url
        var etagOnly = source(0, version: 1)
        etagOnly.etag = "\"v2\""
        XCTAssertEqual(Set([oldKey, OriginalCache.key(for: urlOnly), OriginalCache.key(for: etagOnly)]).count, 3)

        XCTAssertNil(cache.cachedPath(for: source(0, version: 2)))
        let handle = try cache.open(source(0, version: 2))
        XCTAssertEqual(try readWhole(handle), new)
        cache.release(handle)
        XCTAssertEqual(origin.requestCount(method: "GET"), 2)
        // The reader may have had every byte before the download was renamed into place: wait for that.
        let deadline = Date().addingTimeInterval(10)
        while cache.cachedPath(for: source(0, version: 2)) == nil && Date() < deadline { usleep(1_000) }
        let path = try XCTUnwrap(cache.cachedPath(for: source(0, version: 2)), "the new version was cached")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), new)
    }

    /// The old version is open (read halfway) while the new one is downloaded and cached; the old handle
    /// still reads the old bytes whole, never a mix.
    func testAHandleOnTheOldVersionKeepsReadingItWhole() throws {
        let old = ContentIdentityTests.library.photos[1].image.data
        _ = try cache.fetch(source(1, version: 1))
        let oldHandle = try cache.open(source(1, version: 1))
        var half = [UInt8](repeating: 0, count: old.count / 2)
        XCTAssertEqual(try half.withUnsafeMutableBytes { try oldHandle.read(into: $0, at: 0) }, half.count)

        let new = replaceBytes(of: 1)
        let newHandle = try cache.open(source(1, version: 2))
        XCTAssertEqual(try readWhole(newHandle), new)
        XCTAssertEqual(try readWhole(oldHandle), old)
        cache.release(newHandle)
        cache.release(oldHandle)
    }

    /// Same while the old version is itself still downloading (streamed to its handle).
    func testAHandleOnAnOldVersionStillDownloadingReadsItWhole() throws {
        let photo = ContentIdentityTests.library.photos[2]
        let old = photo.image.data
        origin.setRate(photoID: photo.id, 60_000)
        let oldHandle = try cache.open(source(2, version: 1))
        var first = [UInt8](repeating: 0, count: 1000)
        XCTAssertEqual(try first.withUnsafeMutableBytes { try oldHandle.read(into: $0, at: 0) }, 1000)
        // The slow answer already under way keeps sending the old bytes; the new version comes at full speed.
        origin.setRate(photoID: photo.id, nil)
        let new = replaceBytes(of: 2)
        XCTAssertFalse(oldHandle.download!.isComplete, "the old version should still be downloading")
        let newHandle = try cache.open(source(2, version: 2))
        XCTAssertEqual(try readWhole(newHandle), new)
        XCTAssertEqual(try readWhole(oldHandle), old)
        cache.release(newHandle)
        cache.release(oldHandle)
    }
}
