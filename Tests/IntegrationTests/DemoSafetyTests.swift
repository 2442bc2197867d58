// `photofs demo` next to a running demo: the second one stops before importing anything and says where the
// first is mounted; the first keeps running untouched. A mount left by a killed demo is still cleaned up.
import FlickrOrigin
import Foundation
import XCTest

final class DemoSafetyTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 2, scale: 4) }
    override class var mountsInSetUp: Bool { false }

    var demos: [Process] = []

    override func tearDown() {
        // SIGKILL leaves a dead mount at worst; the harness unmounts it.
        for demo in demos where demo.isRunning {
            kill(demo.processIdentifier, SIGKILL)
            demo.waitUntilExit()
        }
        super.tearDown()
    }

    /// `photofs demo` in the background, its output in <root>/<name>.out.
    func startDemo(directory: String, mountpoint: String, name: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: MountHarness.binary)
        process.arguments = ["demo", "--directory", directory, "--mountpoint", mountpoint, "--port", "0"]
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": harness.xdgCacheHome]) { $1 }
        let output = harness.root.appendingPathComponent("\(name).out").path
        FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: output))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        demos.append(process)
        return process
    }

    func isMounted(_ path: String) -> Bool {
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first.map(String.init) == path }
    }

    /// Polls until `condition` holds; false at the deadline or if `process` ends first.
    func wait(for process: Process, timeout: TimeInterval, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if !process.isRunning || Date() > deadline { return condition() }
            usleep(100_000)
        }
        return true
    }

    func libraryBytes(_ directory: String) -> [Data?] {
        ["library.sqlite", "library.sqlite-wal"].map { FileManager.default.contents(atPath: directory + "/" + $0) }
    }

    func testASecondDemoLeavesARunningDemoAlone() throws {
        let directory = harness.root.appendingPathComponent("demo").path
        let mountpoint = harness.mountpoint
        let first = try startDemo(directory: directory, mountpoint: mountpoint, name: "first")
        // 240 generated photos and their import: tens of seconds in a debug build on a shared machine.
        XCTAssertTrue(wait(for: first, timeout: 300) { isMounted(mountpoint) }, "the first demo never mounted")
        // A mount settles its events once, just after it is mounted (one write, beside its listing scan); a
        // listing of /events is answered once that is done. Only then is the library as it will stay.
        XCTAssertEqual(Shell.run("ls", [mountpoint + "/events"]).status, 0)
        let before = libraryBytes(directory)
        XCTAssertNotNil(before[0])

        // Same directory, another mount point: the lock says who holds it.
        let otherMountpoint = harness.root.appendingPathComponent("mnt2").path
        let sameDirectory = harness.photofs(["demo", "--directory", directory, "--mountpoint", otherMountpoint, "--port", "0"])
        defer { if isMounted(otherMountpoint) { Shell.run("fusermount3", ["-uz", otherMountpoint]) } }
        XCTAssertNotEqual(sameDirectory.status, 0)
        XCTAssertTrue(sameDirectory.stderr.contains("a demo is already running (pid \(first.processIdentifier)), mounted on \(mountpoint)"),
                      sameDirectory.stderr)
        XCTAssertTrue(sameDirectory.stderr.contains("kill -INT \(first.processIdentifier)"), sameDirectory.stderr)
        XCTAssertFalse(sameDirectory.text.contains("generating"), "stopped before anything was generated or imported")
        XCTAssertFalse(isMounted(otherMountpoint))

        // Another directory, the same mount point: refused before importing anything there.
        let otherDirectory = harness.root.appendingPathComponent("demo2").path
        let sameMountpoint = harness.photofs(["demo", "--directory", otherDirectory, "--mountpoint", mountpoint, "--port", "0"])
        XCTAssertNotEqual(sameMountpoint.status, 0)
        XCTAssertTrue(sameMountpoint.stderr.contains("\(mountpoint) is already mounted"), sameMountpoint.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: otherDirectory + "/library.sqlite"))

        // The first demo is as it was: mounted, serving, its library not rewritten.
        XCTAssertTrue(first.isRunning)
        XCTAssertTrue(isMounted(mountpoint))
        XCTAssertEqual(libraryBytes(directory), before, "the running demo's library was written to")
        XCTAssertEqual(Shell.run("ls", [mountpoint + "/regions"]).status, 0)

        kill(first.processIdentifier, SIGINT)
        XCTAssertTrue(wait(for: first, timeout: 30) { !first.isRunning }, "the first demo did not stop on SIGINT")
        first.waitUntilExit()
        XCTAssertEqual(first.terminationStatus, 0)
        XCTAssertFalse(isMounted(mountpoint))
    }

    func testAMountLeftByAKilledProcessIsCleanedUp() throws {
        // A dead mount on the demo's mount point: a photofs (of the library set-up imported) killed with SIGKILL.
        try harness.mount()
        kill(harness.daemon!.processIdentifier, SIGKILL)
        XCTAssertNotNil(harness.waitForDaemon())
        var info = stat()
        XCTAssertEqual(stat(harness.mountpoint, &info), -1)
        XCTAssertEqual(errno, ENOTCONN)

        let demo = try startDemo(directory: harness.root.appendingPathComponent("demo").path, mountpoint: harness.mountpoint,
                                 name: "demo")
        // The dead mount goes before the demo generates its photos (which takes far longer).
        XCTAssertTrue(wait(for: demo, timeout: 60) { !isMounted(harness.mountpoint) }, "the dead mount is still there")
        XCTAssertTrue(demo.isRunning, "the demo went on")
        XCTAssertEqual(stat(harness.mountpoint, &info), 0)
    }
}
