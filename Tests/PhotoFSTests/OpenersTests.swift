// Which openers count for /recent: names from /proc of real processes, file managers and thumbnailers left out.
import Foundation
@testable import PhotoFS
import XCTest

final class OpenersTests: XCTestCase {
    func testFileManagersAndThumbnailersAreLeftOutByDefault() {
        let openers = UncountedOpeners()
        for name in ["pcmanfm", "pcmanfm-qt", "nautilus", "nemo", "caja", "thunar", "tumblerd", "dolphin",
                     "kioworker", "ffmpegthumbnailer", "rsync", "find"] {
            XCTAssertTrue(openers.contains(OpenerIdentity(names: [name])), name)
        }
        XCTAssertFalse(openers.contains(OpenerIdentity(names: ["eog", "eog"])))
        XCTAssertFalse(openers.contains(OpenerIdentity(names: ["cat"])))
    }

    func testThumbnailersAndBackupToolsAreToldApart() {
        for name in ["pcmanfm", "nautilus", "tumblerd", "gdk-pixbuf-thum", "kioworker"] {
            XCTAssertTrue(UncountedOpeners.isThumbnailing(OpenerIdentity(names: [name])), name)
            XCTAssertFalse(UncountedOpeners.isBackupOrSearch(OpenerIdentity(names: [name])), name)
        }
        for name in ["rsync", "find", "tar", "updatedb", "baloo_file"] {
            XCTAssertFalse(UncountedOpeners.isThumbnailing(OpenerIdentity(names: [name])), name)
            XCTAssertTrue(UncountedOpeners.isBackupOrSearch(OpenerIdentity(names: [name])), name)
        }
        XCTAssertTrue(UncountedOpeners.isThumbnailer(OpenerIdentity(names: ["tumblerd"])))
        XCTAssertFalse(UncountedOpeners.isThumbnailer(OpenerIdentity(names: ["pcmanfm"])), "a file manager also copies")
        XCTAssertTrue(UncountedOpeners.isFileManager(OpenerIdentity(names: ["pcmanfm"])))
        XCTAssertTrue(UncountedOpeners.isFileManager(OpenerIdentity(names: ["kioworker"])), "KIO's workers draw and copy")
        XCTAssertFalse(UncountedOpeners.isThumbnailer(OpenerIdentity(names: ["kioworker"])))
        for name in ["ls", "eog", "gio", "cat"] {
            XCTAssertFalse(UncountedOpeners.isThumbnailing(OpenerIdentity(names: [name])), name)
            XCTAssertFalse(UncountedOpeners.isBackupOrSearch(OpenerIdentity(names: [name])), name)
        }
    }

    func testOnlyProgramsThatDrawThumbnailsAreThumbnailListersUnlessTheMountAddsOne() {
        let listers = ThumbnailListers()
        for name in ["pcmanfm", "nautilus", "nemo", "caja", "Thunar", "dolphin", "kioworker", "tumblerd", "gdk-pixbuf-thum"] {
            XCTAssertTrue(listers.contains(OpenerIdentity(names: [name])), name)
        }
        // A worker thread's name does not matter: the thread group's command and executable are what count.
        XCTAssertTrue(listers.contains(OpenerIdentity(names: ["pcmanfm", "pcmanfm"], processID: 42)))
        for name in ["ls", "bash", "zsh", "find", "du", "tree", "python3", "rsync", "tar", "updatedb", "baloo_file",
                     "tracker-miner-fs-3", "gio", "eog", "cat", "gvfsd-metadata"] {
            XCTAssertFalse(listers.contains(OpenerIdentity(names: [name])), name)
        }
        let added = ThumbnailListers(adding: ["gthumb", " geeqie "])
        XCTAssertTrue(added.contains(OpenerIdentity(names: ["gthumb"])))
        XCTAssertTrue(added.contains(OpenerIdentity(names: ["geeqie"])))
        XCTAssertTrue(added.contains(OpenerIdentity(names: ["pcmanfm"])), "added to the defaults, not instead of them")
        XCTAssertFalse(added.contains(OpenerIdentity(names: ["ls"])))
    }

    func testACommandNameCutTo15BytesMatchesTheLongName() {
        let openers = UncountedOpeners()
        XCTAssertTrue(openers.contains(OpenerIdentity(names: ["gdk-pixbuf-thum"])))
        XCTAssertTrue(openers.contains(OpenerIdentity(names: ["ffmpegthumbnail"])))
        XCTAssertFalse(openers.contains(OpenerIdentity(names: ["gdk-pixbuf"])), "only a 15-byte name was cut")
        XCTAssertTrue(UncountedOpeners(["viewer"]).contains(OpenerIdentity(names: ["viewer"])))
    }

    /// A real process named like a file manager, read from /proc as the adapter does for each open.
    func testAProcessIsKnownByItsCommandAndItsExecutable() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("openers-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = directory.appendingPathComponent("pcmanfm")
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: fake.path)
        let process = Process()
        process.executableURL = fake
        process.arguments = ["30"]
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }
        let identity = try XCTUnwrap(OpenerIdentity(thread: process.processIdentifier))
        XCTAssertEqual(identity.names, ["pcmanfm", "pcmanfm"])
        XCTAssertTrue(UncountedOpeners().contains(identity))
    }

    /// FUSE reports the opening thread; its own name is a worker's, the process's is what counts.
    func testAThreadIsKnownByItsProcess() throws {
        let ready = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var tid: Int32 = 0 }
        let box = Box()
        let thread = Thread {
            // "/proc/thread-self" links to "<pid>/task/<tid>".
            let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
            box.tid = Int32(link.split(separator: "/").last ?? "") ?? 0
            ready.signal()
            done.wait()
        }
        thread.name = "pool-worker"
        thread.start()
        ready.wait()
        defer { done.signal() }
        let identity = try XCTUnwrap(OpenerIdentity(thread: box.tid))
        let processName = try String(contentsOfFile: "/proc/self/comm", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(identity.names.first, processName)
        XCTAssertFalse(identity.names.contains("pool-worker"))
        XCTAssertNil(OpenerIdentity(thread: 0))
    }
}

/// The short memory of openers: one /proc lookup per thread per two seconds.
final class RecentOpenersTests: XCTestCase {
    func testAThreadIsLookedUpOnceWithinItsLifetimeAndAgainAfter() {
        var openers = RecentOpeners()
        var lookups = 0
        let lookUp: (Int32) -> OpenerIdentity? = { _ in lookups += 1; return OpenerIdentity(names: ["eog"]) }
        XCTAssertEqual(openers.identity(of: 42, now: 100, lookUp: lookUp)?.names, ["eog"])
        XCTAssertEqual(openers.identity(of: 42, now: 101.9, lookUp: lookUp)?.names, ["eog"])
        XCTAssertEqual(lookups, 1)
        _ = openers.identity(of: 42, now: 102.1, lookUp: lookUp)
        XCTAssertEqual(lookups, 2, "a thread id may be another process's after a while")
        _ = openers.identity(of: 43, now: 102.2, lookUp: lookUp)
        XCTAssertEqual(lookups, 3)
    }

    func testItStaysBoundedWhenManyThreadsOpen() {
        var openers = RecentOpeners()
        var lookups = 0
        for tid in 1...Int32(RecentOpeners.capacity * 3) {
            _ = openers.identity(of: tid, now: 5, lookUp: { _ in lookups += 1; return nil })
        }
        XCTAssertEqual(lookups, RecentOpeners.capacity * 3)
        _ = openers.identity(of: 1, now: 5.5, lookUp: { _ in lookups += 1; return nil })
        XCTAssertEqual(lookups, RecentOpeners.capacity * 3 + 1, "the oldest were forgotten to stay bounded")
    }
}
