// What a read costs the origin, through a real mount with default options: a header read and close stops the
// transfer and warms no other photo, a later whole read resumes with Range and has the origin's bytes, the
// prefix survives a remount, and a photo replaced at the origin loses its prefix.
import FlickrOrigin
import Foundation
import XCTest

final class ReadCostMountTests: MountedTestCase {
    /// 12 photos of about 3 MiB (JPEGs padded to a camera original's size; every 9th demo photo is a small PNG).
    static let library = DemoLibrary.cameraSized(DemoLibrary.make(count: 12, scale: 4), padding: 3 << 20)
    override class var originLibrary: OriginLibrary { ReadCostMountTests.library }
    override class var mountsInSetUp: Bool { false }

    var partialDirectory: String { harness.cacheDirectory + "/partial" }

    func partials() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: partialDirectory)) ?? []).sorted() }

    func sent(_ id: String) -> Int { harness.origin.bodyBytesSent(path: harness.origin.imagePath(photoID: id)!) }

    /// The big photos of the first year folder, in listing order, with their ids.
    func folder() throws -> [(path: String, id: String)] {
        let year = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: harness.path("moments")).sorted().first)
        let names = Shell.run("ls", ["-U", harness.path("moments/" + year)]).text.split(separator: "\n").map(String.init)
        return try names.map { harness.path("moments/\(year)/\($0)") }.compactMap { path in
            let id = try XCTUnwrap(try harness.photoID(ofInode: harness.inode(of: path)))
            return (harness.origin.imageBytes(photoID: id)?.count ?? 0) > 1 << 20 ? (path, id) : nil
        }
    }

    /// `head -c 65536` of a file: a header read in a process of its own, which closes the photo when done.
    func readHeader(_ path: String) -> Data { Shell.run("head", ["-c", "65536", path]).stdout }

    /// Waits until the photo's prefix is kept (its download parked).
    func waitForPartial(_ id: String) -> Bool { eventually(within: 10) { partials().contains { $0.hasPrefix(id + "-") } } }

    func testAHeaderReadThenCloseCostsItsFirstRequestAndWarmsNothing() throws {
        try harness.mount()
        let photos = try folder()
        XCTAssertGreaterThanOrEqual(photos.count, 2)
        let target = photos[0]
        let bytes = try XCTUnwrap(harness.origin.imageBytes(photoID: target.id))
        XCTAssertEqual(readHeader(target.path), bytes.prefix(65536))
        XCTAssertTrue(waitForPartial(target.id))
        XCTAssertEqual(sent(target.id), 256 << 10, "the first request (256 KiB) holds every read the header read caused")
        // Flush the prefetch queue: a whole read elsewhere warms its own neighbours, queued behind anything the
        // header read had queued; once those are cached, the header read's neighbours would be too.
        let year = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: harness.path("moments")).sorted().last)
        let other = Shell.run("ls", ["-U", harness.path("moments/" + year)]).text.split(separator: "\n").map { harness.path("moments/\(year)/\($0)") }
        XCTAssertGreaterThanOrEqual(other.count, 2)
        XCTAssertEqual(Shell.run("cat", [other[0]]).status, 0)
        let warmed = try XCTUnwrap(try harness.photoID(ofInode: harness.inode(of: other[1])))
        XCTAssertTrue(eventually(within: 10) {
            ((try? FileManager.default.contentsOfDirectory(atPath: harness.cacheDirectory + "/originals")) ?? [])
                .contains { $0.hasPrefix(warmed + "-") }
        }, "a whole read warms the next photo")
        for photo in photos.dropFirst() {
            XCTAssertEqual(harness.origin.requestCount(method: "GET", path: harness.origin.imagePath(photoID: photo.id)!), 0,
                           "a header read warmed its folder's next photo")
        }
        let stats = harness.photofs(["cache", "stats", harness.library, "--cache-dir", harness.cacheDirectory])
        XCTAssertTrue(stats.text.contains("partial: 1 "), stats.text)
    }

    func testAWholeReadAfterAScanResumesAndHasTheOriginsBytes() throws {
        try harness.mount()
        let target = try XCTUnwrap(try folder().first)
        let bytes = try XCTUnwrap(harness.origin.imageBytes(photoID: target.id))
        XCTAssertEqual(readHeader(target.path), bytes.prefix(65536))
        XCTAssertTrue(waitForPartial(target.id))
        let expected = harness.root.appendingPathComponent("expected").path
        XCTAssertTrue(FileManager.default.createFile(atPath: expected, contents: bytes))
        let compared = Shell.run("cmp", [target.path, expected])
        XCTAssertEqual(compared.status, 0, compared.text + compared.stderr)
        XCTAssertEqual(sent(target.id), bytes.count, "the prefix and then the rest: every byte once")
        XCTAssertGreaterThan(harness.origin.requestCount(method: "GET", path: harness.origin.imagePath(photoID: target.id)!), 1,
                             "the rest came with a request of its own (Range)")
        XCTAssertEqual(partials(), [], "the whole photo replaced its prefix")
    }

    func testAPrefixSurvivesARemount() throws {
        try harness.mount()
        let target = try XCTUnwrap(try folder().first)
        let bytes = try XCTUnwrap(harness.origin.imageBytes(photoID: target.id))
        XCTAssertEqual(readHeader(target.path), bytes.prefix(65536))
        XCTAssertTrue(waitForPartial(target.id))
        XCTAssertEqual(harness.unmount(), 0)
        harness.origin.resetCounters()

        try harness.mount()
        XCTAssertEqual(readHeader(target.path), bytes.prefix(65536))
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0, "the header came from the kept prefix")
        XCTAssertEqual(Shell.run("cat", [target.path]).stdout, bytes)
        XCTAssertEqual(sent(target.id), bytes.count - (256 << 10), "resumed where the prefix ends")
    }

    func testAPhotoReplacedAtTheOriginLosesItsPrefix() throws {
        try harness.mount()
        let target = try XCTUnwrap(try folder().first)
        let old = try XCTUnwrap(harness.origin.imageBytes(photoID: target.id))
        XCTAssertEqual(readHeader(target.path), old.prefix(65536))
        XCTAssertTrue(waitForPartial(target.id))
        let oldPrefix = try XCTUnwrap(partials().first)
        // Replaced as Flickr does: new bytes (so a new ETag) under a new secret (so new URLs), then imported.
        var library = OriginLibrary(photos: harness.origin.photos, places: Array(DemoLibrary.places))
        let index = try XCTUnwrap(library.photos.firstIndex { $0.id == target.id })
        var new = old
        for position in 0..<4096 { new[position + 1000] ^= 0x5A }
        library.photos[index].image.data = new
        library.photos[index].secret = "replaced1"
        harness.origin.replaceLibrary(library)
        let imported = harness.importLibrary()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(eventually(within: 15) { !partials().contains(oldPrefix) }, "the old version's prefix was freed")
        XCTAssertTrue(eventually(within: 15) { Shell.run("cat", [target.path]).stdout == new })
    }
}
