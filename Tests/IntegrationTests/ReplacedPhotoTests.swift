// A photo replaced at the origin with new bytes of the same size: new opens read the new bytes through the
// kernel's page cache, a reader that holds the old version keeps it whole, and no read sees a mix.
import FlickrOrigin
import Foundation
import XCTest

final class ReplacedPhotoTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 6, scale: 4) }

    /// Replaces a photo at the origin as Flickr does (new secret, so new URLs) with bytes of the same size,
    /// then imports; returns the new bytes.
    private func replaceAtOrigin(_ id: String) throws -> Data {
        var library = OriginLibrary(photos: harness.origin.photos, places: Array(DemoLibrary.places))
        let index = try XCTUnwrap(library.photos.firstIndex { $0.id == id })
        var bytes = library.photos[index].image.data
        for position in (bytes.count / 3)..<(bytes.count / 3 + 256) { bytes[position] ^= 0x5A }
        library.photos[index].image.data = bytes
        library.photos[index].secret = "replaced1"
        harness.origin.replaceLibrary(library)
        let imported = harness.importLibrary()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        return bytes
    }

    private func cat(_ path: String) -> Data { Shell.run("cat", [path]).stdout }

    func testANewOpenReadsTheNewBytesAfterThePageCacheHeldTheOld() throws {
        let file = try XCTUnwrap(harness.files(under: "moments").first)
        let id = try XCTUnwrap(try harness.photoID(ofInode: harness.inode(of: file)))
        let old = try XCTUnwrap(harness.origin.imageBytes(photoID: id))
        XCTAssertEqual(cat(file), old)
        XCTAssertEqual(cat(file), old, "served again from the page cache")
        let new = try replaceAtOrigin(id)
        XCTAssertEqual(new.count, old.count)
        // The mount notices the import within its poll interval; until then it may serve the old version —
        // but always one version whole.
        let deadline = Date().addingTimeInterval(15)
        var seen = cat(file)
        while seen != new && Date() < deadline {
            XCTAssertEqual(seen, old, "a read that is neither version")
            usleep(100_000)
            seen = cat(file)
        }
        XCTAssertEqual(seen, new, "still the old bytes \(Date().timeIntervalSince(deadline) + 15) s after the import")
        XCTAssertEqual(cat(file), new)
        XCTAssertEqual(try XCTUnwrap(try? Data(contentsOf: URL(fileURLWithPath: file))), new)
    }

    /// The old version's reader is in the middle of a slow download (its pages locked in the kernel) when the
    /// change lands: the new version is read at once (no data invalidation waits on those pages), and the
    /// old reader still reads its version whole.
    func testAReaderHoldingTheOldVersionKeepsItWhileNewOpensReadTheNew() throws {
        let file = try XCTUnwrap(harness.files(under: "moments").first)
        let id = try XCTUnwrap(try harness.photoID(ofInode: harness.inode(of: file)))
        let old = try XCTUnwrap(harness.origin.imageBytes(photoID: id))
        let oldPath = try XCTUnwrap(harness.origin.imagePath(photoID: id))
        harness.origin.setRate(photoID: id, max(1000, old.count / 4)) // about 4 s for the whole photo
        let output = harness.root.appendingPathComponent("reader.out").path
        // Opens the photo, reads 100 bytes, then waits for a line on stdin before reading the rest.
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/bash")
        reader.arguments = ["-c", "exec 3<\"$1\"; dd bs=100 count=1 status=none <&3 >\"$2\"; echo opened; read _; cat <&3 >>\"$2\"",
                            "reader", file, output]
        let input = Pipe(), said = Pipe()
        reader.standardInput = input
        reader.standardOutput = said
        try reader.run()
        defer { if reader.isRunning { reader.terminate() } }
        let deadline = Date().addingTimeInterval(15)
        while harness.origin.requestCount(method: "GET", path: oldPath) == 0 && Date() < deadline { usleep(20_000) }
        XCTAssertGreaterThan(harness.origin.requestCount(method: "GET", path: oldPath), 0, "the reader's download began")

        let new = try replaceAtOrigin(id)
        var seen = cat(file)
        while seen != new && Date() < deadline {
            XCTAssertTrue(seen == old || seen == new, "a read that is neither version")
            usleep(100_000)
            seen = cat(file)
        }
        XCTAssertEqual(seen, new)
        XCTAssertTrue(reader.isRunning, "the old version's reader still holds its descriptor")
        XCTAssertEqual(String(decoding: said.fileHandleForReading.availableData, as: UTF8.self), "opened\n")
        input.fileHandleForWriting.write(Data("go\n".utf8))
        reader.waitUntilExit()
        XCTAssertEqual(reader.terminationStatus, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)), old, "the old reader got its version whole")
        XCTAssertEqual(cat(file), new)
    }
}
