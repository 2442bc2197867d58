// What the account tests share: a member signed in with the built binary (the code copied from the origin's
// authorize page, as a user would), `photofs import flickr --user me` runs, and the mounted tree as find(1)
// prints it (inode, links, mode, size, path), with each file's photo id.
import FlickrOrigin
import Foundation
import GRDB
import PhotoContent
import XCTest

/// One regular file of the mount as `find -printf` showed it.
struct MountedFile: Equatable {
    var inode: UInt64
    var links: Int
    /// Permission bits (0444, 0400).
    var mode: Int
    var size: Int64
    /// Relative to the mountpoint ("albums/Family/New house.jpg").
    var path: String
    var name: String { String(path.split(separator: "/").last ?? "") }
    var tree: String { String(path.split(separator: "/").first ?? "") }
}

extension MountHarness {
    var configHome: String { root.appendingPathComponent("config").path }
    /// The environment of every command of a signed-in member: its own config directory, no display.
    var accountEnvironment: [String: String] { ["XDG_CONFIG_HOME": configHome, "DISPLAY": "", "WAYLAND_DISPLAY": ""] }

    struct LoginRun {
        var status: Int32
        var stdout: String
        var stderr: String
        /// /proc/PID/cmdline while the command waited for the code (nil: it never got that far).
        var commandLine: String?
    }

    /// Runs `photofs login flickr ...`; when it prints the authorize URL, fetches that page as a browser would,
    /// copies the code it shows and types it into the command's standard input.
    func login(_ extra: [String]) throws -> LoginRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: MountHarness.binary)
        process.arguments = ["login", "flickr", "--endpoint", origin.endpoint, "--no-browser"] + extra
        process.environment = ProcessInfo.processInfo.environment.merging(accountEnvironment) { $1 }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var errorData = Data()
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { errorData = errors.fileHandleForReading.readDataToEndOfFile(); drained.signal() }

        var printed = Data()
        var commandLine: String?
        // Reads standard output until the URL line; EOF first means the command failed before it.
        while !String(decoding: printed, as: UTF8.self).contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        let firstLine = String(decoding: printed, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        if firstLine.hasPrefix("http") {
            let raw = FileManager.default.contents(atPath: "/proc/\(process.processIdentifier)/cmdline") ?? Data()
            commandLine = String(decoding: raw.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            let page = String(decoding: try HTTPClient().get(firstLine).body, as: UTF8.self)
            let code = try XCTUnwrap(page.range(of: #"[0-9]{3}-[0-9]{3}-[0-9]{3}"#, options: .regularExpression).map { String(page[$0]) },
                                     page)
            input.fileHandleForWriting.write(Data("\(code)\n".utf8))
        }
        try input.fileHandleForWriting.close()
        printed.append(output.fileHandleForReading.readDataToEndOfFile())
        XCTAssertEqual(drained.wait(timeout: .now() + 60), .success, "photofs login did not finish")
        process.waitUntilExit()
        return LoginRun(status: process.terminationStatus, stdout: String(decoding: printed, as: UTF8.self),
                        stderr: String(decoding: errorData, as: UTF8.self), commandLine: commandLine)
    }

    /// Signs in as the origin's member with the app's key and secret on the command line (see `login`).
    func signIn(file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try login(["--api-key", origin.apiKey, "--api-secret", origin.apiSecret])
        guard run.status == 0, run.stdout.contains("Signed in to Flickr as ansel (10000001@N01).") else {
            throw HarnessError("login failed (\(run.status)): \(run.stdout) \(run.stderr)")
        }
    }

    /// The arguments of `photofs import flickr LIB --user me` against the origin (the signed-in account's key).
    func accountImportArguments(_ extra: [String]) -> [String] {
        ["import", "flickr", library, "--user", "me", "--endpoint", origin.endpoint] + extra
    }

    @discardableResult
    func importAccount(_ extra: [String] = []) -> CommandResult {
        photofs(accountImportArguments(extra), environment: accountEnvironment)
    }

    /// Every regular file under the mount with its inode, link count, mode and size, from find(1).
    func mountedFiles(under relative: String = "") -> [MountedFile] {
        let result = Shell.run("find", [path(relative), "-type", "f", "-printf", "%i\t%n\t%m\t%s\t%P\\0"])
        let prefix = relative.isEmpty ? "" : relative + "/"
        return result.stdout.split(separator: 0).compactMap { record -> MountedFile? in
            let fields = String(decoding: record, as: UTF8.self).split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5, let inode = UInt64(fields[0]), let links = Int(fields[1]),
                  let mode = Int(fields[2], radix: 8), let size = Int64(fields[3]) else { return nil }
            return MountedFile(inode: inode, links: links, mode: mode, size: size, path: prefix + fields[4])
        }.sorted { $0.path < $1.path }
    }

    /// Mounted files by the photo id behind them (from the catalog, by inode).
    func mountedFilesByPhotoID(under relative: String = "") throws -> [String: [MountedFile]] {
        let files = mountedFiles(under: relative)
        let ids = try photoIDs(ofInodes: Set(files.map(\.inode)))
        return Dictionary(grouping: files) { ids[$0.inode] ?? "?inode \($0.inode)" }
    }

    /// The photo ids behind inodes (the low 56 bits are the catalog's seq), read through one read-only
    /// connection: `photoID(ofInode:)` opens the library for writing (migrations, a write transaction) each
    /// time, and tests that poll with it compete with the mount's own writes of /recent.
    func photoIDs(ofInodes inodes: Set<UInt64>) throws -> [UInt64: String] {
        var configuration = Configuration()
        configuration.readonly = true
        let database = try DatabaseQueue(path: library, configuration: configuration)
        defer { try? database.close() }
        return try database.read { db in
            var ids: [UInt64: String] = [:]
            for inode in inodes {
                ids[inode] = try String.fetchOne(db, sql: "SELECT id FROM photo WHERE seq = ?", arguments: [Int64(inode & ((1 << 56) - 1))])
            }
            return ids
        }
    }

    /// The photo id behind one mounted path.
    func photoID(at relative: String) throws -> String? {
        try photoIDs(ofInodes: [inode(of: path(relative))]).values.first
    }

    /// The entries of a directory in the order readdir gives them (`ls -U`), so an album's order shows.
    func directoryOrder(_ relative: String) -> [String] {
        Shell.run("ls", ["-U1", "--quoting-style=literal", path(relative)]).text.split(separator: "\n").map(String.init)
    }

    /// `cmp` of a mounted file against bytes the origin serves: true when they are the same.
    func sameBytes(_ relative: String, as expected: Data) throws -> Bool {
        let copy = root.appendingPathComponent("expected-\(UUID().uuidString.prefix(8))")
        try expected.write(to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        return Shell.run("cmp", [path(relative), copy.path]).status == 0
    }

    /// Cache files of a photo's bytes: `<cache-dir>/originals/<id, non-alphanumerics as _>-<hash>`.
    func cachedOriginals(of photoID: String) -> [String] {
        let prefix = String(photoID.unicodeScalars.map { $0.isASCII && CharacterSet.alphanumerics.contains($0) ? Character($0) : "_" }) + "-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory + "/originals")) ?? []
        return names.filter { $0.hasPrefix(prefix) }.sorted()
    }
}

extension DemoLibrary {
    /// The account's photostream in Flickr's order (newest upload first); its videos too when asked.
    static func stream(of origin: FlickrOriginServer, videos: Bool = false) -> [OriginPhoto] {
        origin.photos.filter { $0.owner == account.nsid && (videos || !$0.isVideo) }
            .sorted { ($0.dateUpload, $0.id) > ($1.dateUpload, $1.id) }
    }
}
