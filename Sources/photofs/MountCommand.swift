// `photofs mount`: mounts a library read-only; returns once the mount is live, or stays with --foreground.
import ArgumentParser
import FuseAdapter
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoFS

struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount a library as a read-only file system.",
        discussion: """
            Returns as soon as the mount is live (the file system keeps running in the background and logs
            to <cache-dir>/photofs.log), or fails with a message and a non-zero status. Unmount with
            `fusermount3 -u MOUNTPOINT`, or stop the process (SIGINT/SIGTERM): both unmount cleanly.

            Example:
              photofs mount photos.sqlite ~/Photos
              photofs mount photos.sqlite /srv/photos --foreground -o allow_other
              photofs mount photos.sqlite ~/Thumbs --size square:256

            --size shows every photo smaller: `1024` scales each photo whose long edge exceeds 1024 px down
            to fit 1024×1024 (aspect and format kept, smaller photos served unchanged); `square:256` shows
            each as a 256×256 centre-cropped PNG (`.png` names). Sizes in `ls -l` are exact: a variant is
            rendered the first time its size is asked for (a directory's photos in parallel), and its size
            and square thumbnails are kept in the library, so later listings and remounts need no render.
            """
    )

    @Argument(help: "The library file made by `photofs import`.")
    var library: String

    @Argument(help: "An existing, empty directory to mount on.")
    var mountpoint: String

    @Option(help: "Where downloaded photos are kept (default: ~/.cache/photofs/<library>-<hash>).")
    var cacheDir: String?

    @Flag(help: "Stay in the foreground and log to standard error.")
    var foreground = false

    @Option(name: .customShort("o"), help: "A FUSE mount option, e.g. allow_other (repeatable; comma lists allowed).")
    var fuseOptions: [String] = []

    @Option(help: "Seconds to wait for the origin to accept a connection before an open fails with EIO.")
    var connectTimeout: Double = 10

    @Option(help: "Seconds a download may stall (no bytes at all) before an open fails with EIO.")
    var stallTimeout: Double = 30

    @Option(help: "Largest size of the photo cache (K, M, G suffixes); least recently used photos go first.")
    var cacheSize = "2G"

    @Option(help: "Downloads running at once.")
    var maxDownloads = 16

    @Option(help: "Photos after an opened one (in its directory's order) to download ahead; 0 turns it off.")
    var prefetch = 3

    @Option(help: "Commands whose opens do not count as recent (comma list; default: backup tools, indexers, file managers and thumbnailers).")
    var backupTools = UncountedOpeners.defaults.joined(separator: ",")

    @Option(help: "What each file shows: original, N (long edge at most N px), or square:N (N×N PNG thumbnail).")
    var size = "original"

    @Option(help: "JPEG quality (1–100) of resized JPEG variants.")
    var jpegQuality = 85

    @Option(help: "Largest image (in megapixels, read from its header) a variant is rendered from; larger ones fail with EIO.")
    var maxPixels = 100

    @Option(help: .hidden)
    var readyFd: Int32?

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        let library = Paths.absolute(self.library)
        let mountpoint = Paths.absolute(self.mountpoint)
        let cacheDirectory = cacheDir.map { URL(fileURLWithPath: Paths.absolute($0)) }
            ?? Paths.defaultCacheDirectory(forLibrary: library)
        let sizes: (VariantSpec?, RenderOptions)
        do {
            try MountCommand.checkPaths(library: library, mountpoint: mountpoint)
            sizes = try MountCommand.parseSize(size, jpegQuality: jpegQuality, maxPixels: maxPixels)
        } catch {
            report(failure: "\(error)")
            throw error
        }
        if !foreground {
            try MountCommand.startInBackground(arguments: CommandLine.arguments, cacheDirectory: cacheDirectory)
            return
        }
        SignalMask.blockTerminationSignals()
        MemoryTuning.apply()
        let logger = logging.makeLogger("photofs.mount")
        var http = HTTPConfiguration()
        http.connectTimeout = connectTimeout
        http.stallTimeout = stallTimeout
        var options = FilesystemOptions()
        (options.variant, options.renderOptions) = sizes
        options.prefetchCount = max(0, prefetch)
        options.uncountedOpeners = UncountedOpeners(backupTools.split(separator: ",").map(String.init))
        let session: FuseSession
        let filesystem: PhotoFilesystem
        do {
            guard let maxBytes = ByteSize.parse(cacheSize) else {
                throw CommandFailure("--cache-size takes a size like 500M or 2G, not \"\(cacheSize)\"")
            }
            (filesystem, session) = try MountCommand.makeSession(
                library: library, mountpoint: mountpoint, cacheDirectory: cacheDirectory, http: http,
                options: options, fuseOptions: fuseOptions, cacheSize: maxBytes, maxDownloads: maxDownloads,
                logger: logger)
            try session.mount()
        } catch {
            report(failure: "\(error)")
            throw CommandFailure("\(error)")
        }
        logger.info("mounted", metadata: ["library": "\(library)", "mountpoint": "\(mountpoint)",
                                          "cache": "\(cacheDirectory.path)"])
        report(ready: true)
        filesystem.startWatchingCatalog()
        let status = session.run()
        filesystem.stopWatchingCatalog()
        filesystem.cache.saveStatistics()
        if status != 0 { throw ExitCode(status) }
    }

    /// `--size`, `--jpeg-quality` and `--max-pixels`, checked before anything is mounted.
    static func parseSize(_ size: String, jpegQuality: Int, maxPixels: Int) throws -> (VariantSpec?, RenderOptions) {
        guard (1...100).contains(jpegQuality) else { throw CommandFailure("--jpeg-quality takes 1 to 100, not \(jpegQuality)") }
        guard (1...10_000).contains(maxPixels) else { throw CommandFailure("--max-pixels takes 1 to 10000 (megapixels), not \(maxPixels)") }
        let options = RenderOptions(jpegQuality: jpegQuality, maxPixels: maxPixels * 1_000_000)
        if size == "original" { return (nil, options) }
        guard let spec = VariantSpec(argument: size) else {
            throw CommandFailure("--size takes original, a number of pixels (1024) or square:N (square:256), not \"\(size)\"")
        }
        return (spec, options)
    }

    static func checkPaths(library: String, mountpoint: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: library, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw CommandFailure("no library at \(library): create one with `photofs import flickr \(library) ...`")
        }
        var info = stat()
        if stat(mountpoint, &info) != 0 {
            if errno == ENOTCONN {
                throw CommandFailure("\(mountpoint) is a dead mount (its file system process ended); run `fusermount3 -u \(mountpoint)` first")
            }
            throw CommandFailure("mount point \(mountpoint) does not exist: create the directory first")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw CommandFailure("mount point \(mountpoint) is not a directory") }
        if MountTable.isMounted(mountpoint) {
            throw CommandFailure("something is already mounted on \(mountpoint); unmount it first (`fusermount3 -u \(mountpoint)`)")
        }
    }

    static func makeSession(library: String, mountpoint: String, cacheDirectory: URL, http: HTTPConfiguration,
                            options: FilesystemOptions, fuseOptions: [String],
                            cacheSize: Int64 = OriginalCache.defaultMaxBytes, maxDownloads: Int = 16,
                            logger: Logger) throws -> (PhotoFilesystem, FuseSession) {
        let catalog = try Catalog(path: library, mode: .mounting)
        if catalog.isReadOnly {
            logger.warning("the library cannot be written: mounted read-only, /recent is kept in memory for this mount",
                           metadata: ["library": "\(library)"])
        }
        let client = HTTPClient(configuration: http, logger: logger)
        let cache = try OriginalCache(directory: cacheDirectory, http: client, maxBytes: cacheSize,
                                      maxTransfers: maxDownloads, logger: logger)
        let filesystem = PhotoFilesystem(catalog: catalog, cache: cache, http: client, options: options,
                                         persistentRecents: !catalog.isReadOnly, logger: logger)
        let name = "photofs:" + URL(fileURLWithPath: library).lastPathComponent
        let session = FuseSession(filesystem: filesystem, mountpoint: mountpoint, fsName: name, options: fuseOptions,
                                  logger: logger)
        return (filesystem, session)
    }

    /// Tells a waiting parent (see startInBackground) how the mount went.
    private func report(ready: Bool = false, failure: String? = nil) {
        guard let fd = readyFd else { return }
        let message = failure.map { "error: \($0)\n" } ?? "ok\n"
        _ = message.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    /// Re-runs this command with --foreground in a new session (detached from the terminal), its log going
    /// to <cache>/photofs.log, and waits on a pipe until the child says the mount is live or why it is not.
    static func startInBackground(arguments: [String], cacheDirectory: URL) throws {
        try FileManager.default.createDirectory(at: cacheDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let logPath = cacheDirectory.appendingPathComponent("photofs.log").path
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw CommandFailure("cannot create a pipe: \(String(cString: strerror(errno)))") }
        let (readEnd, writeEnd) = (pipeFDs[0], pipeFDs[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        // Whatever else this process inherited (a caller's pipes) must not live on in the daemon: a caller
        // reading our output until EOF would wait for the daemon's whole life.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2, fd != writeEnd { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? arguments[0]
        let childArguments = [executable] + Array(arguments.dropFirst()) + ["--foreground", "--ready-fd", String(writeEnd)]

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (glibc ≥ 2.26) is 0x80; Swift does not see it because it needs _GNU_SOURCE.
        posix_spawnattr_setflags(&attributes, 0x80)
        var pid: pid_t = 0
        let argv = childArguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            throw CommandFailure("cannot start the mount process: \(String(cString: strerror(spawned)))")
        }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(readEnd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            answer.append(contentsOf: buffer[0..<n])
        }
        close(readEnd)
        let text = String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text == "ok" { return }
        if text.hasPrefix("error: ") { throw CommandFailure(String(text.dropFirst(7))) }
        throw CommandFailure("the mount process ended before the mount was live; see \(logPath)")
    }
}

/// Reads /proc/self/mountinfo to tell whether a path is a mount point.
enum MountTable {
    static func isMounted(_ path: String) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return false }
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            // Field 5 is the mount point, with spaces and other specials octal-escaped (\040).
            return fields.count > 4 && unescape(String(fields[4])) == path
        }
    }

    static func unescape(_ field: String) -> String {
        var bytes: [UInt8] = []
        var scalars = Array(field.utf8)[...]
        while let byte = scalars.popFirst() {
            if byte == UInt8(ascii: "\\"), scalars.count >= 3,
               let value = UInt8(String(decoding: scalars.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                scalars = scalars.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// "500M", "2G", "1048576" → bytes (binary units, as `du -h` prints them).
enum ByteSize {
    static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = trimmed
        var multiplier: Int64 = 1
        if trimmed.hasSuffix("IB") { digits.removeLast(2) } else if trimmed.hasSuffix("B") { digits.removeLast() }
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits.removeLast()
        }
        guard let value = Double(digits), value >= 0 else { return nil }
        return Int64(value * Double(multiplier))
    }
}
