// `photofs mount` options through the built binary: -o spellings of photofs's own options, unknown options
// named before anything is mounted, the mount(8) helper, and non-empty mount points.
import FlickrOrigin
import Foundation
import PhotoContent
import XCTest

final class MountOptionTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 6, scale: 4) }
    override class var mountsInSetUp: Bool { false }

    func momentFiles() -> [String] { harness.files(under: "moments") }

    func testSizeAsAMountOptionShowsSquarePNGs() throws {
        try harness.mount(extra: ["-o", "size=square:256,noatime"])
        let files = momentFiles()
        XCTAssertEqual(files.count, 6)
        for file in files { XCTAssertTrue(file.hasSuffix(".png"), file) }
        let file = try XCTUnwrap(files.first)
        let image = try ImageCodec.decodePNG(Shell.run("cat", [file]).stdout)
        XCTAssertEqual([image.width, image.height], [256, 256])
    }

    func testALongOptionWinsOverTheSameMountOption() throws {
        try harness.mount(extra: ["--size", "square:32", "-o", "size=original"])
        let file = try XCTUnwrap(momentFiles().first)
        XCTAssertTrue(file.hasSuffix(".png"), file)
        XCTAssertEqual(try ImageCodec.decodePNG(Shell.run("cat", [file]).stdout).width, 32)
    }

    func testAnUnknownMountOptionIsNamedAndNothingIsMounted() {
        let result = harness.photofs(["mount", harness.library, harness.mountpoint, "--cache-dir", harness.cacheDirectory,
                                      "-o", "allow_other,frobnicate,size=512"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("unknown mount option \"frobnicate\""), result.stderr)
        XCTAssertTrue(result.stderr.contains("photofs mount --help"), result.stderr)
        XCTAssertFalse(result.stderr.contains("libfuse rejected"), result.stderr)
        XCTAssertFalse(harness.isMounted)
        // Refused before the daemon was started: it would have created its log in the cache directory.
        XCTAssertFalse(FileManager.default.fileExists(atPath: harness.cacheDirectory + "/photofs.log"))
    }

    func testBadValuesInMountOptionsAreNamedBeforeMounting() {
        for (list, message) in [("jpeg_quality=0", "-o jpeg_quality takes 1 to 100, not \"0\""),
                                ("size=banana", "-o size takes original"),
                                ("cache-size=lots", "-o cache_size takes a size like 500M or 2G"),
                                ("max_downloads=0", "-o max_downloads takes 1 to 64"),
                                ("connect_timeout=inf", "-o connect_timeout takes seconds"),
                                ("log_level=loud", "-o log_level takes trace"),
                                ("allow_nonempty=yes", "-o allow_nonempty takes no value")] {
            let result = harness.photofs(["mount", harness.library, harness.mountpoint, "-o", list])
            XCTAssertNotEqual(result.status, 0, list)
            XCTAssertTrue(result.stderr.contains(message), "\(list): \(result.stderr)")
            XCTAssertFalse(harness.isMounted, list)
        }
    }

    /// mount(8) runs /sbin/mount.fuse.photofs LIBRARY MOUNTPOINT -o LIST: photofs options, FUSE's, fstab
    /// words and a quoted comma list all reach `photofs mount` whole.
    func testTheMountHelperPassesEveryKindOfOption() throws {
        let helper = MountHarness.packageRoot.appendingPathComponent("mount-scripts/mount.photofs").path
        let list = "rw,noauto,nofail,x-systemd.automount,size=square:256,allow_other,auto_unmount,"
            + "backup_tools=\"rsync,tar\",cache_dir=\(harness.cacheDirectory)"
        let result = Shell.run(helper, [harness.library, harness.mountpoint, "-o", list, "-n"],
                               environment: ["PHOTOFS": MountHarness.binary])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(harness.isMounted)
        let files = momentFiles()
        XCTAssertEqual(files.count, 6)
        XCTAssertTrue(files.allSatisfy { $0.hasSuffix(".png") }, "\(files)")
        // The kernel got allow_other. The mount itself is not `ro` (rmdir must reach /search); the daemon
        // refuses every write with EROFS (ReadOnlyTests).
        let line = try XCTUnwrap(mountinfoLine())
        XCTAssertTrue(line.contains("allow_other"), line)
        XCTAssertTrue(line.split(separator: " ")[5].hasPrefix("rw"), line)
        let touch = Shell.run("touch", [harness.mountpoint + "/moments/new.jpg"])
        XCTAssertTrue(touch.stderr.contains("Read-only file system"), touch.stderr)
        // The daemon's command line is the helper's, plus the two flags of the re-execution: nothing added.
        let daemon = try XCTUnwrap(daemonCommandLine())
        XCTAssertEqual(Array(daemon.dropFirst().dropLast()),
                       ["mount", harness.library, harness.mountpoint, "-o", list, "--foreground", "--ready-fd"])
        XCTAssertEqual(Shell.run("fusermount3", ["-u", harness.mountpoint]).status, 0)
        let unknown = Shell.run(helper, [harness.library, harness.mountpoint, "-o", "noauto,frobnicate"],
                                environment: ["PHOTOFS": MountHarness.binary])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.contains("unknown mount option \"frobnicate\""), unknown.stderr)
    }

    /// `-o ro` (an fstab line's) makes the kernel's mount read-only too: statvfs says so, and rmdir under
    /// /search is refused by the kernel before photofs sees it.
    func testROMakesTheKernelsMountReadOnly() throws {
        try harness.mount(extra: ["-o", "ro"])
        let line = try XCTUnwrap(mountinfoLine())
        XCTAssertTrue(line.split(separator: " ")[5].hasPrefix("ro"), line)
        var info = statvfs()
        XCTAssertEqual(statvfs(harness.mountpoint, &info), 0)
        XCTAssertNotEqual(info.f_flag & UInt(ST_RDONLY), 0)
        XCTAssertEqual(momentFiles().count, 6)
        let search = harness.mountpoint + "/search/photo"
        XCTAssertTrue(FileManager.default.fileExists(atPath: search))
        let removed = Shell.run("rmdir", [search])
        XCTAssertTrue(removed.stderr.contains("Read-only file system"), removed.stderr)
    }

    func testANonEmptyMountPointIsRefusedUnlessAllowed() throws {
        let keep = harness.mountpoint + "/notes.txt"
        try "mine".write(toFile: keep, atomically: true, encoding: .utf8)
        let refused = harness.photofs(["mount", harness.library, harness.mountpoint, "--cache-dir", harness.cacheDirectory])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("mount point \(harness.mountpoint) is not empty"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--allow-nonempty"), refused.stderr)
        XCTAssertFalse(harness.isMounted)

        try harness.mount(extra: ["--allow-nonempty"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: keep), "hidden under the mount")
        XCTAssertEqual(momentFiles().count, 6)
        XCTAssertEqual(harness.unmount(), 0)

        // The same through -o (and FUSE 2's spelling, which fstab lines written for it carry).
        for list in ["allow_nonempty", "nonempty"] {
            let mounted = harness.photofs(["mount", harness.library, harness.mountpoint, "--cache-dir", harness.cacheDirectory,
                                           "-o", list])
            XCTAssertEqual(mounted.status, 0, mounted.stderr)
            XCTAssertTrue(harness.isMounted, list)
            XCTAssertEqual(Shell.run("fusermount3", ["-u", harness.mountpoint]).status, 0)
        }
        XCTAssertEqual(try String(contentsOfFile: keep, encoding: .utf8), "mine", "the files are back after the unmount")
    }

    func mountinfoLine() -> String? {
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").map(String.init).first { $0.split(separator: " ").dropFirst(4).first.map(String.init) == harness.mountpoint }
    }

    /// The background daemon of this test's mount point (other tests' daemons may run at the same time).
    func daemonCommandLine() -> [String]? {
        for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(pid) != nil {
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
            let arguments = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            if arguments.contains(harness.mountpoint) && arguments.contains("--ready-fd") {
                return arguments.last == "" ? Array(arguments.dropLast()) : arguments
            }
        }
        return nil
    }
}
