// /recent follows what people open (not backups) and survives a remount; an import under a live mount
// shows up within seconds without renaming anything that was there.
import FlickrOrigin
import Foundation
import XCTest

final class RecentAndLiveCatalogTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 20, scale: 4) }

    func recent() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: harness.path("recent"))) ?? []).sorted()
    }

    func testOpenedPhotosAppearInRecentAndSurviveARemount() throws {
        let files = harness.files(under: "moments/2020")
        XCTAssertGreaterThanOrEqual(files.count, 2)
        Shell.run("rsync", ["-a", files[0], harness.root.path + "/copy.jpg"])
        Shell.run("cat", [files[1]])
        let expected = try harness.catalog().photo(seq: Int64(harness.inode(of: files[1]) & ((1 << 56) - 1)))!
        XCTAssertTrue(eventually(within: 5) { recent().count == 1 }, "\(recent())")
        XCTAssertTrue(recent()[0].hasPrefix(expected.title), "\(recent()) vs \(expected.title)")
        let inRecent = harness.path("recent/" + recent()[0])
        XCTAssertEqual(harness.inode(of: inRecent), harness.inode(of: files[1]))
        XCTAssertEqual(Shell.run("stat", ["-c", "%h", files[1]]).text, "4\n", "regions, moments, events, recent")

        XCTAssertEqual(harness.unmount(), 0)
        try harness.mount()
        XCTAssertEqual(recent().count, 1)
    }

    func testImportUnderALiveMountShowsUpWithoutRenames() throws {
        let before = harness.files()
        harness.origin.replaceLibrary(DemoLibrary.make(count: 32, scale: 4))
        let result = harness.importLibrary()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(eventually(within: 6) { harness.files(under: "moments").count == 32 }, "\(harness.files(under: "moments").count)")
        let after = Set(harness.files())
        for path in before { XCTAssertTrue(after.contains(path), "renamed or lost: \(path)") }
    }

    func testDeletedPhotosDisappearAndOpenFilesKeepTheirBytes() throws {
        let file = try XCTUnwrap(harness.files(under: "regions").first)
        let id = try XCTUnwrap(try harness.photoID(ofInode: harness.inode(of: file)))
        let bytes = try XCTUnwrap(harness.origin.imageBytes(photoID: id))
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: file))
        let head = try XCTUnwrap(try handle.read(upToCount: 100))
        try harness.catalog().removePhotos(ids: [id])
        XCTAssertTrue(eventually(within: 6) { !FileManager.default.fileExists(atPath: file) })
        // fstat and read on the open descriptor still work, as for an unlinked file on a disk.
        let rest = try handle.readToEnd() ?? Data()
        try handle.close()
        XCTAssertEqual(head + rest, bytes)
    }
}
