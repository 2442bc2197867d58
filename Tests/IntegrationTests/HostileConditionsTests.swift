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

    func testAFullCacheDiskGivesENOSPCAndOtherPhotosStillWork() throws {
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
        let failed = Shell.run("cat", [try file(large.id)])
        XCTAssertNotEqual(failed.status, 0)
        XCTAssertTrue(failed.stderr.contains("No space left on device") || failed.stderr.contains("Input/output error"),
                      failed.stderr)
        XCTAssertTrue(harness.daemonLog.contains("no space left"), harness.daemonLog)
        let small = try XCTUnwrap(photos.first)
        XCTAssertEqual(Shell.run("cat", [try file(small.id)]).stdout, small.image.data)
        XCTAssertTrue(harness.daemon!.isRunning)
    }
}
