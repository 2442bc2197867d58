// Mounting and unmounting as a user does it: background mount returns when live, clear errors, clean exits.
import FlickrOrigin
import Foundation
import XCTest

final class LifecycleTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 8, scale: 4) }
    override class var mountsInSetUp: Bool { false }

    func testBackgroundMountReturnsOnceLiveAndFusermountEndsIt() throws {
        let result = harness.photofs(["mount", harness.library, harness.mountpoint, "--cache-dir", harness.cacheDirectory])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(harness.isMounted, "mount returned before the mount was live")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: harness.mountpoint).sorted(),
                       ["albums", "events", "favorites", "moments", "people", "recent", "regions", "search"])
        // This mount's daemon, not another photofs running on the machine: its command line names our mount point.
        let found = Shell.run("pgrep", ["-f", "--", "\(harness.mountpoint) .*--ready-fd"]).text.split(separator: "\n")
        XCTAssertEqual(found.count, 1, "one daemon for this mount point: \(found)")
        let pid = found.first.map(String.init) ?? ""
        XCTAssertEqual(Shell.run("fusermount3", ["-u", harness.mountpoint]).status, 0)
        XCTAssertFalse(harness.isMounted)
        // The background process is gone too.
        if let pid = Int32(pid) {
            let deadline = Date().addingTimeInterval(5)
            while kill(pid, 0) == 0 && Date() < deadline { usleep(50_000) }
            XCTAssertNotEqual(kill(pid, 0), 0, "daemon \(pid) still running after unmount")
        }
        XCTAssertTrue((try? String(contentsOfFile: harness.cacheDirectory + "/photofs.log", encoding: .utf8))?
            .contains("unmounted") ?? false)
    }

    func testMountErrorsAreClearAndNonZero() throws {
        let noDir = harness.photofs(["mount", harness.library, harness.root.path + "/missing"])
        XCTAssertNotEqual(noDir.status, 0)
        XCTAssertTrue(noDir.stderr.contains("does not exist"), noDir.stderr)
        let noLibrary = harness.photofs(["mount", harness.root.path + "/none.sqlite", harness.mountpoint])
        XCTAssertNotEqual(noLibrary.status, 0)
        XCTAssertTrue(noLibrary.stderr.contains("no library"), noLibrary.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: harness.root.path + "/none.sqlite"))
        try harness.mount()
        let twice = harness.photofs(["mount", harness.library, harness.mountpoint, "--cache-dir", harness.cacheDirectory])
        XCTAssertNotEqual(twice.status, 0)
        XCTAssertTrue(twice.stderr.contains("already mounted"), twice.stderr)
    }

    func testSIGTERMUnmountsCleanly() throws {
        try harness.mount()
        kill(harness.daemon!.processIdentifier, SIGTERM)
        XCTAssertEqual(harness.waitForDaemon(), 0)
        XCTAssertFalse(harness.isMounted)
    }

    func testSIGINTUnmountsCleanly() throws {
        try harness.mount()
        kill(harness.daemon!.processIdentifier, SIGINT)
        XCTAssertEqual(harness.waitForDaemon(), 0)
        XCTAssertFalse(harness.isMounted)
    }

    func testUnmountWithAFileOpen() throws {
        try harness.mount()
        let file = try XCTUnwrap(harness.files(under: "regions").first)
        // A reader holding the file open: a plain unmount is refused (as on any disk) and the mount stays usable.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 3<\"$0\"; sleep 30", file]
        try holder.run()
        defer { holder.terminate() }
        let descriptor = "/proc/\(holder.processIdentifier)/fd/3"
        let deadline = Date().addingTimeInterval(10)
        while (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptor)) != file && Date() < deadline {
            usleep(20_000)
        }
        XCTAssertEqual(try? FileManager.default.destinationOfSymbolicLink(atPath: descriptor), file, "the holder has it open")
        let busy = Shell.run("fusermount3", ["-u", harness.mountpoint])
        XCTAssertNotEqual(busy.status, 0)
        XCTAssertTrue(busy.stderr.contains("busy"), busy.stderr)
        XCTAssertTrue(harness.isMounted)
        XCTAssertEqual(Shell.run("cat", [file]).status, 0)
        // SIGTERM still ends it: a lazy unmount, the daemon exits 0.
        kill(harness.daemon!.processIdentifier, SIGTERM)
        XCTAssertEqual(harness.waitForDaemon(), 0)
        XCTAssertFalse(harness.isMounted)
    }

    func testMountHelperForMountAndFstab() throws {
        let helper = MountHarness.packageRoot.appendingPathComponent("mount-scripts/mount.photofs").path
        let result = Shell.run(helper, [harness.library, harness.mountpoint, "-o", "ro,nodev,noauto,cache_dir=\(harness.cacheDirectory)"],
                               environment: ["PHOTOFS": MountHarness.binary])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(harness.isMounted)
        XCTAssertEqual(harness.files(under: "moments").count, 8)
        XCTAssertEqual(Shell.run("fusermount3", ["-u", harness.mountpoint]).status, 0)
    }

    func testHelpExplainsEachCommand() {
        for command in [[], ["import", "flickr"], ["mount"], ["demo"], ["cache"]] {
            let help = harness.photofs(command + ["--help"])
            XCTAssertEqual(help.status, 0)
            XCTAssertTrue(help.text.contains("USAGE"), help.text)
        }
        XCTAssertTrue(harness.photofs(["mount", "--help"]).text.contains("fusermount3 -u"))
    }
}
