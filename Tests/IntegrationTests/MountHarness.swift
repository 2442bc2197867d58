// Test harness: a loopback Flickr-format origin in this process, and the built `photofs` binary importing
// and mounting in separate processes, checked with real clients (ls, stat, cat, find, rsync).
import FlickrOrigin
import Foundation
import PhotoCatalog
import XCTest

struct CommandResult {
    var status: Int32
    var stdout: Data
    var stderr: String
    var text: String { String(decoding: stdout, as: UTF8.self) }
}

enum Shell {
    /// Runs a program with arguments (no shell), capturing both streams.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil) -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : "/usr/bin/env")
        process.arguments = program.hasPrefix("/") ? arguments : [program] + arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return CommandResult(status: -1, stdout: Data(), stderr: "\(error)") }
        // Drain stderr on another thread so neither pipe can fill up and block the child.
        var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, stdout: outData, stderr: String(decoding: errData, as: UTF8.self))
    }

    static func sh(_ script: String) -> CommandResult { run("/bin/sh", ["-c", script]) }
}

final class MountHarness {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// In a release test build (`make test`: .build-tests/<triple>/release), the photofs built beside this
    /// test program; otherwise the binary `make build` produces, and a plain `swift test` falls back to the
    /// debug build.
    static var binary: String {
        if let program = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let directory = URL(fileURLWithPath: program).deletingLastPathComponent()
            let beside = directory.appendingPathComponent("photofs").path
            if directory.lastPathComponent == "release" && FileManager.default.isExecutableFile(atPath: beside) { return beside }
        }
        for configuration in ["release", "debug"] {
            let path = packageRoot.appendingPathComponent(".build/\(configuration)/photofs").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return packageRoot.appendingPathComponent(".build/release/photofs").path
    }

    let root: URL
    let origin: FlickrOriginServer
    let library: String
    let mountpoint: String
    let cacheDirectory: String
    let logPath: String
    /// The mounting user's XDG cache for this test: desktop thumbnails go to `thumbnails/` inside it.
    let xdgCacheHome: String
    /// Whether mounts write desktop thumbnails (photofs's default); off unless a test is about them, so that
    /// other tests' origin request counts see only what they are about.
    var desktopThumbnails = false
    private(set) var daemon: Process?

    init(library originLibrary: OriginLibrary, apiKey: String = "test-key") throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("photofs-it-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("mnt"), withIntermediateDirectories: true)
        origin = FlickrOriginServer(library: originLibrary, apiKey: apiKey)
        try origin.start()
        library = root.appendingPathComponent("library.sqlite").path
        mountpoint = root.appendingPathComponent("mnt").path
        cacheDirectory = root.appendingPathComponent("cache").path
        logPath = root.appendingPathComponent("daemon.log").path
        xdgCacheHome = root.appendingPathComponent("xdg-cache").path
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: MountHarness.binary),
                      "build photofs first (make build): \(MountHarness.binary)")
    }

    /// `photofs ARGS...`
    @discardableResult
    /// The test's own XDG cache: a mount started this way writes its desktop thumbnails there.
    func photofs(_ arguments: [String], environment: [String: String]? = nil) -> CommandResult {
        Shell.run(MountHarness.binary, arguments, environment: ["XDG_CACHE_HOME": xdgCacheHome].merging(environment ?? [:]) { $1 })
    }

    @discardableResult
    func importLibrary(key: String? = nil, extra: [String] = []) -> CommandResult {
        photofs(["import", "flickr", library, "--endpoint", origin.endpoint, "--api-key", key ?? origin.apiKey] + extra)
    }

    /// Mounts in the foreground as a child process (so the test knows its pid and exit status) and waits
    /// until the kernel shows the mount.
    /// `launcher`: a program and its arguments that run photofs (`taskset -c 0`).
    func mount(extra: [String] = [], environment: [String: String] = [:], launcher: [String] = []) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher.first ?? MountHarness.binary)
        process.arguments = Array(launcher.dropFirst()) + (launcher.isEmpty ? [] : [MountHarness.binary])
            + ["mount", library, mountpoint, "--cache-dir", cacheDirectory, "--foreground",
               "--log-level", "debug"] + (desktopThumbnails ? [] : ["--desktop-thumbnails", "off"]) + extra
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CACHE_HOME": xdgCacheHome]) { $1 }
            .merging(environment) { $1 }
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)!
        log.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        daemon = process
        let deadline = Date().addingTimeInterval(20)
        while !isMounted {
            if !process.isRunning { throw HarnessError("mount exited early: \(daemonLog)") }
            if Date() > deadline { throw HarnessError("mount not live after 20 s: \(daemonLog)") }
            usleep(50_000)
        }
    }

    var isMounted: Bool {
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first.map(String.init) == mountpoint }
    }

    var daemonLog: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits for the daemon to exit and returns its status (nil if it did not within `timeout`).
    func waitForDaemon(timeout: TimeInterval = 10) -> Int32? {
        guard let daemon else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while daemon.isRunning && Date() < deadline { usleep(50_000) }
        return daemon.isRunning ? nil : daemon.terminationStatus
    }

    func unmount() -> Int32? {
        if isMounted { Shell.run("fusermount3", ["-u", mountpoint]) }
        return waitForDaemon()
    }

    /// Never leaves a mount behind, and never deletes through one. After a failed test the daemon's
    /// warnings and errors are printed, so CI output says what the file system saw.
    func tearDown(failed: Bool = false) {
        if failed {
            let lines = daemonLog.split(separator: "\n").filter { $0.contains(" warning ") || $0.contains(" error ") }
            print("--- photofs daemon log (warnings and errors) ---\n" + lines.suffix(40).joined(separator: "\n"))
        }
        if isMounted {
            if Shell.run("fusermount3", ["-u", mountpoint]).status != 0 { Shell.run("fusermount3", ["-uz", mountpoint]) }
        }
        if let daemon, daemon.isRunning {
            if waitForDaemon(timeout: 5) == nil { kill(daemon.processIdentifier, SIGKILL) }
        }
        origin.stop()
        if !isMounted { try? FileManager.default.removeItem(at: root) }
    }

    func path(_ relative: String) -> String { mountpoint + "/" + relative }

    /// Every regular file under a directory of the mount, via find(1).
    func files(under relative: String = "") -> [String] {
        let result = Shell.run("find", [path(relative), "-type", "f", "-print0"])
        return result.stdout.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    func catalog() throws -> Catalog { try Catalog(path: library) }

    /// The photo id behind a mounted file, from its inode (the low bits are the catalog's seq).
    func photoID(ofInode inode: UInt64) throws -> String? {
        try catalog().photo(seq: Int64(inode & ((1 << 56) - 1)))?.id
    }

    func inode(of path: String) -> UInt64 {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, path)
        return UInt64(info.st_ino)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` every 50 ms until it holds or `timeout` passes; the last evaluation decides.
func eventually(within timeout: TimeInterval, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}
