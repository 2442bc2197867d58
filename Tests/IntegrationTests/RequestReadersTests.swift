// One thread reads the mount's requests at a time (CFuseSessionIO's request_readers.c): opens held by the origin
// must not hold anyone else's requests, with the default busy-polling reader and with libfuse's own loop.
import FlickrOrigin
import Foundation
import XCTest

final class RequestReadersTests: MountedTestCase {
    static let library = DemoLibrary.make(count: 8, scale: 1)
    override class var originLibrary: OriginLibrary { RequestReadersTests.library }
    override class var mountsInSetUp: Bool { false }

    static let oneCPUNotice = "without busy-polling: this process may use one CPU"

    func testOpensWaitingOnTheOriginHoldNoOtherRequest() throws {
        try harness.mount(extra: ["--prefetch", "0"])
        try checkOthersAreServedWhileOpensWait()
        XCTAssertFalse(harness.daemonLog.contains(RequestReadersTests.oneCPUNotice) && allowedCPUs().count > 1)
    }

    /// On one CPU a polling reader would keep the waiting program from running: the mount reads with libfuse's
    /// loop, says so, and still serves everyone while opens wait.
    func testAMountOnOneCPUDoesNotPoll() throws {
        let cpu = try XCTUnwrap(allowedCPUs().first)
        try harness.mount(extra: ["--prefetch", "0"], launcher: ["/usr/bin/taskset", "-c", "\(cpu)"])
        XCTAssertTrue(eventually(within: 5) { harness.daemonLog.contains(RequestReadersTests.oneCPUNotice) }, harness.daemonLog)
        try checkOthersAreServedWhileOpensWait()
    }

    /// The CPUs this process may run on (`Cpus_allowed_list` in /proc/self/status: "0-3,8").
    private func allowedCPUs() -> [Int] {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return [] }
        return line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces).split(separator: ",").flatMap { range -> [Int] in
            let ends = range.split(separator: "-").compactMap { Int($0) }
            guard let low = ends.first else { return [] }
            return Array(low...(ends.last ?? low))
        }
    }

    func testTheSameWithLibfusesOwnLoop() throws {
        try harness.mount(extra: ["--prefetch", "0", "-o", "busy_poll=0"])
        try checkOthersAreServedWhileOpensWait()
    }

    /// Three readers whose opens wait for the origin (each holds a daemon thread until its download's first
    /// bytes); meanwhile a whole `ls -lR`, a `stat` and another photo's whole read are answered.
    private func checkOthersAreServedWhileOpensWait() throws {
        let photos = RequestReadersTests.library.photos
        let heldPhotos = Array(photos.prefix(3))
        let heldPaths = Set(heldPhotos.compactMap { harness.origin.imagePath(photoID: $0.id) })
        XCTAssertEqual(heldPaths.count, 3)
        let held = harness.origin.hold(OriginRequestMatch { $0.method == "GET" && heldPaths.contains($0.path) })
        defer { held.release() }
        let files = harness.files(under: "regions")
        func file(of photo: OriginPhoto) throws -> String {
            try XCTUnwrap(files.first { (try? harness.photoID(ofInode: harness.inode(of: $0))) == photo.id })
        }

        var readers: [(Process, Pipe)] = []
        for photo in heldPhotos {
            let reader = Process()
            reader.executableURL = URL(fileURLWithPath: "/bin/cat")
            reader.arguments = [try file(of: photo)]
            let output = Pipe()
            reader.standardOutput = output
            try reader.run()
            readers.append((reader, output))
        }
        XCTAssertTrue(eventually(within: 20) { held.arrivals >= 3 }, "the three downloads started: \(held.arrivals)")

        // Everything else is answered while the three opens wait.
        let listing = Shell.run("ls", ["-lR", harness.mountpoint])
        XCTAssertEqual(listing.status, 0)
        XCTAssertEqual(String(decoding: listing.stdout, as: UTF8.self).components(separatedBy: "\n").filter { $0.hasPrefix("-r") }.count,
                       Shell.run("find", [harness.mountpoint, "-type", "f"]).stdout.split(separator: 10).count)
        let other = photos[5]
        XCTAssertEqual(Shell.run("stat", ["-c", "%s", try file(of: other)]).stdout,
                       Data("\(other.image.data.count)\n".utf8))
        XCTAssertEqual(Shell.run("cat", [try file(of: other)]).stdout, other.image.data)
        XCTAssertTrue(readers.allSatisfy { $0.0.isRunning }, "the held readers were still waiting")

        held.release()
        for ((reader, output), photo) in zip(readers, heldPhotos) {
            let bytes = output.fileHandleForReading.readDataToEndOfFile()
            reader.waitUntilExit()
            XCTAssertEqual(reader.terminationStatus, 0)
            XCTAssertEqual(bytes, photo.image.data)
        }
    }
}
