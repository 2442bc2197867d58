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
        library.photos[index].image = image(of: index, version: 2)
        origin.replaceLibrary(library)
        return library.photos[index].image.data
    }

    /// Version 1 is the demo photo; version 2 has bytes flipped in its second half, the same size.
    func image(of index: Int, version: Int) -> OriginImage {
        var image = ContentIdentityTests.library.photos[index].image
        guard version == 2 else { return image }
        for offset in stride(from: image.data.count / 2, to: image.data.count - 2, by: 97) { image.data[offset] ^= 0x5a }
        return image
    }

    /// The catalog's view of a version: its URL and the ETag the origin sends with its bytes.
    func source(_ index: Int, version: Int) -> ContentSource {
        let photo = ContentIdentityTests.library.photos[index]
        return ContentSource(photoID: photo.id,
                             url: "http://127.0.0.1:\(origin.port)\(origin.imagePath(photoID: photo.id)!)?secret=v\(version)",
                             expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType,
                             etag: image(of: index, version: version).etag)
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
        etagOnly.etag = source(0, version: 2).etag
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

    /// The bytes change at the same URL after the first answer broke off halfway: the resume (If-Range with
    /// the catalog's ETag, or with the first answer's when the catalog has none) gets the new version whole,
    /// and the download fails rather than serve the new bytes after the old ones. A reader gets the old
    /// bytes whole or an error after a prefix of them, never a mix; nothing is cached.
    func testBytesChangingAtTheSameURLMidDownloadNeverReachAReaderMixed() throws {
        for catalogKnowsTheETag in [true, false] {
            origin.replaceLibrary(ContentIdentityTests.library)
            let photo = ContentIdentityTests.library.photos[catalogKnowsTheETag ? 0 : 1]
            let index = catalogKnowsTheETag ? 0 : 1
            let old = photo.image.data
            var source = self.source(index, version: 1)
            source.url += "&case=\(catalogKnowsTheETag)"
            if !catalogKnowsTheETag { source.etag = nil }
            origin.resetCounters()
            origin.truncateNextAnswer(photoID: photo.id)
            origin.replaceImageAfterNextAnswer(photoID: photo.id, with: image(of: index, version: 2))

            var read = Data()
            var buffer = [UInt8](repeating: 0, count: 4099)
            var handle: ContentHandle?
            do {
                // The open may itself report the failure, if the download ended before it returned.
                let opened = try cache.open(source)
                handle = opened
                while true {
                    let count = try buffer.withUnsafeMutableBytes { try opened.read(into: $0, at: Int64(read.count)) }
                    if count == 0 { break }
                    read.append(contentsOf: buffer.prefix(count))
                }
                XCTAssertEqual(read, old, "a whole read must be the old version")
            } catch let error as ContentError {
                guard case .changedAtOrigin = error.kind else { XCTFail("\(error)"); continue }
                XCTAssertEqual(read, old.prefix(read.count), "the bytes read before the error are the old version's")
            }
            if let handle { cache.release(handle) }
            XCTAssertGreaterThanOrEqual(origin.requestCount(method: "GET"), 2, "the resume was asked for")
            XCTAssertNil(cache.cachedPath(for: source), "nothing of a mixed download is cached")
        }
    }
}
