// What must not crash the daemon: a library overwritten or truncated underneath a live mount, and a cache
// disk that is full.
import FlickrOrigin
import Foundation
import XCTest

final class HostileConditionsTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 12, scale: 1) }
    override class var mountsInSetUp: Bool { false }

    override func tearDown() {
        Shell.run("umount", [harness.cacheDirectory]) // the small tmpfs, if a test made one
        super.tearDown()
    }

    func testALibraryOverwrittenUnderTheMountGivesEIONotACrash() throws {
        try harness.mount()
        XCTAssertEqual(Shell.run("ls", [harness.path("regions")]).status, 0)
        // Garbage over the first pages, then truncated to nothing, while mounted. What the daemon still has in
        // memory it may serve; anything it must read fails with EIO — never garbage names, never a crash.
        Shell.run("dd", ["if=/dev/urandom", "of=" + harness.library, "bs=4096", "count=4", "conv=notrunc"])
        Shell.run("truncate", ["-s", "0", harness.library])
        for listing in [Shell.run("ls", ["-lR", harness.mountpoint]), Shell.run("find", [harness.mountpoint])] {
            let problems = listing.stderr.split(separator: "\n").filter { !$0.contains("Input/output error") }
            XCTAssertEqual(problems, [], listing.stderr)
        }
        XCTAssertTrue(harness.daemon!.isRunning, "the daemon died: \(harness.daemonLog)")
        kill(harness.daemon!.processIdentifier, SIGTERM)
        XCTAssertEqual(harness.waitForDaemon(), 0)
    }

    /// A photo larger than the free space is still served whole (from memory, uncached), as is every other.
    func testAFullCacheDiskStillServesEveryPhotoWhole() throws {
        try FileManager.default.createDirectory(atPath: harness.cacheDirectory, withIntermediateDirectories: true)
        // 64 KiB: room for the small photos of this library, not for the large ones.
        XCTAssertEqual(Shell.run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", harness.cacheDirectory]).status, 0)
        try harness.mount(extra: ["--prefetch", "0"])
        let photos = harness.origin.photos.sorted { $0.image.data.count < $1.image.data.count }
        let files = harness.files(under: "regions")
        func file(_ id: String) throws -> String {
            try XCTUnwrap(files.first { (try? harness.photoID(ofInode: harness.inode(of: $0))) == id })
        }
        let large = try XCTUnwrap(photos.last)
        XCTAssertGreaterThan(large.image.data.count, 64 << 10)
        XCTAssertEqual(Shell.run("cat", [try file(large.id)]).stdout, large.image.data)
        XCTAssertTrue(harness.daemonLog.contains("cache degraded"), harness.daemonLog)
        let small = try XCTUnwrap(photos.first)
        XCTAssertEqual(Shell.run("cat", [try file(small.id)]).stdout, small.image.data)
        XCTAssertTrue(harness.daemon!.isRunning)
    }

    /// A sized mount renders from originals it cannot cache: each file still reads exactly its stat size.
    func testASizedMountOnAFullCacheDiskStillRendersEveryPhoto() throws {
        try FileManager.default.createDirectory(atPath: harness.cacheDirectory, withIntermediateDirectories: true)
        XCTAssertEqual(Shell.run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", harness.cacheDirectory]).status, 0)
        try harness.mount(extra: ["--prefetch", "0", "--size", "40"])
        let files = harness.files(under: "moments")
        XCTAssertEqual(files.count, harness.origin.photos.count)
        for file in files {
            var info = stat()
            XCTAssertEqual(stat(file, &info), 0, file)
            let read = Shell.run("cat", [file])
            XCTAssertEqual(read.status, 0, "\(file): \(read.stderr)")
            XCTAssertEqual(read.stdout.count, Int(info.st_size), file)
        }
        XCTAssertTrue(harness.daemonLog.contains("cache degraded"), "the originals did not fit: \(harness.daemonLog)")
        XCTAssertTrue(harness.daemon!.isRunning)
    }
}
