// `photofs mount`: mounts a library read-only; returns once the mount is live, or stays with --foreground.
import ArgumentParser
import CommandLineOptions
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
            Returns as soon as the mount is live (the file system keeps running in the background and logs \
            to <cache-dir>/photofs.log), or fails with a message and a non-zero status. Unmount with \
            `fusermount3 -u MOUNTPOINT`, or stop the process (SIGINT/SIGTERM): both unmount cleanly.

            Example:
              photofs mount photos.sqlite ~/Photos
              photofs mount photos.sqlite /srv/photos --foreground -o allow_other
              photofs mount photos.sqlite ~/Thumbs --size square:256

            --size shows every photo smaller: `1024` scales each photo whose long edge exceeds 1024 px down \
            to fit 1024×1024 (aspect and format kept, smaller photos served unchanged); `square:256` shows \
            each as a 256×256 centre-cropped PNG (`.png` names). Sizes in `ls -l` are exact: a variant is \
            rendered the first time its size is asked for (a directory's photos in parallel), and its size \
            and square thumbnails are kept in the library, so later listings and remounts need no render.

            /events/<Year> holds each year's events (photos close in time and place) and /search answers \
            any name looked up in it with a search of titles, descriptions, tags, places, people, cameras and \
            dates (`ls "MNT/search/harbour 2019"`, `ls MNT/search/place:lisb`); `ls MNT/search` shows the \
            last 20, `rmdir MNT/search/<words>` forgets one. Nothing else can be changed through a mount.

            The mount point must be an empty directory: mounting over files would hide them until the \
            unmount. --allow-nonempty (-o allow_nonempty) mounts anyway.

            Mount options (-o LIST, comma-separated, repeatable): every option of this command also works \
            as -o name=value (or -o name for a flag), spelt with `_` or `-`: cache_dir=DIR, size=square:256, \
            jpeg_quality=N, max_pixels=N, cache_size=2G, max_downloads=N, prefetch=N, connect_timeout=S, \
            stall_timeout=S, backup_tools="rsync,tar" (double quotes keep the commas), \
            desktop_thumbnails=off, log_level=L, \
            allow_nonempty, foreground. A long option given on the command line wins over the same \
            option in -o; within -o the last one wins. \
            FUSE's options go to libfuse: allow_other, allow_root, auto_unmount, default_permissions, \
            noatime, nosuid, nodev, noexec, fsname=, subtype=, ... (see `man 8 fuse`). \
            Words only mount(8) and fstab mean are accepted and ignored: defaults, auto, noauto, user, \
            users, nouser, nofail, _netdev, x-systemd.*, comment=..., and rw (photos are always read-only; the kernel sees the mount as rw only so that `rmdir` works \
            under /search). \
            Anything else fails before mounting, naming it: unknown mount option "...".

            From mount(8) and /etc/fstab (`make install` installs mount-scripts/mount.photofs as \
            /sbin/mount.fuse.photofs):
              mount -t fuse.photofs lib.sqlite /mnt/photos -o size=square:256,allow_other
              # /etc/fstab:
              /srv/lib.sqlite  /srv/photos  fuse.photofs  noauto,nofail,size=1024  0 0
            """
    )

    @Argument(help: "The library file made by `photofs import`.")
    var library: String

    @Argument(help: "An existing, empty directory to mount on.")
    var mountpoint: String

    // Every option below is optional here (its default is MountSettings'), so that `-o` can set what the
    // command line did not: see MountSettings.resolve.
    @Option(help: "Where downloaded photos are kept (default: ~/.cache/photofs/<library>-<hash>). -o cache_dir=DIR.")
    var cacheDir: String?

    @Flag(help: "Stay in the foreground and log to standard error. -o foreground.")
    var foreground = false

    @Option(name: .customShort("o"), help: ArgumentHelp(
        "Mount options, name or name=value (comma lists, repeatable): any option of this command, FUSE's (allow_other, ...), fstab's.",
        valueName: "options"))
    var mountOptions: [String] = []

    @Option(help: ArgumentHelp("Seconds to wait for the origin to accept a connection before an open fails with EIO (default: 10). -o connect_timeout=S.",
                               valueName: "seconds"))
    var connectTimeout: String?

    @Option(help: ArgumentHelp("Seconds a download may stall (no bytes at all) before an open fails with EIO (default: 30). -o stall_timeout=S.",
                               valueName: "seconds"))
    var stallTimeout: String?

    @Option(help: ArgumentHelp("HTTP proxy for every request, e.g. a caching nginx that several mounts share so each photo leaves the origin once (http://proxy.home:3128, or none to ignore the environment). Without it the standard variables apply (http_proxy, https_proxy, all_proxy, no_proxy); a proxy needing a password goes there, not here (the command line is public). -o proxy=URL.",
                               valueName: "url"))
    var proxy: String?

    @Option(help: ArgumentHelp("Largest size of the photo cache (K, M, G suffixes); least recently used photos go first (default: 2G). -o cache_size=SIZE.",
                               valueName: "size"))
    var cacheSize: String?

    @Option(help: ArgumentHelp("Downloads running at once, 1 to 64 (default: 16). -o max_downloads=N.", valueName: "n"))
    var maxDownloads: String?

    @Option(help: ArgumentHelp("Photos after an opened one (in its directory's order) to download ahead; 0 turns it off (default: 3). -o prefetch=N.",
                               valueName: "n"))
    var prefetch: String?

    @Option(help: ArgumentHelp("Commands whose opens do not count as recent, a comma list replacing the default (backup and sync tools, indexers, file managers and thumbnailers: \(UncountedOpeners.defaults.joined(separator: ","))). -o backup_tools=\"a,b\".",
                               valueName: "names"))
    var backupTools: String?

    @Option(help: ArgumentHelp("on: before a file manager's (or thumbnailer's) listing of a folder is answered, write freedesktop thumbnails (128 and 256 px, made from each photo's small rendition, not its original) of its photos into $XDG_CACHE_HOME/thumbnails, so file managers show them without downloading originals (at most 1,200 fetched a minute); off: don't (default: on). -o desktop_thumbnails=off.",
                               valueName: "on|off"))
    var desktopThumbnails: String?

    @Option(help: ArgumentHelp("Commands whose folder listings also get desktop thumbnails written, a comma list added to the file managers and thumbnailers that always do (\(ThumbnailListers.defaults.joined(separator: ","))). Everyone else (ls, find, du, tree, scripts, backups) gets listings without any download or thumbnail file. -o thumbnail_listers=\"a,b\".",
                               valueName: "names"))
    var thumbnailListers: String?

    @Option(help: ArgumentHelp("Microseconds the thread that answered a request keeps looking for the next before it sleeps, 0 to 10000; 0 turns it off (default: 200). A program reading a folder sends one request after another: on a virtual machine, waking a sleeping thread for each costs more than the answer. Costs up to that much CPU after each burst of requests (up to five times that while requests keep coming just after it), none on an idle mount. -o busy_poll=N.",
                               valueName: "microseconds"))
    var busyPoll: String?

    @Option(help: ArgumentHelp("What each file shows: original, N (long edge at most N px), or square:N (N×N PNG thumbnail) (default: original). -o size=...",
                               valueName: "size"))
    var size: String?

    @Option(help: ArgumentHelp("JPEG quality (1–100) of resized JPEG variants (default: 85). -o jpeg_quality=N.", valueName: "n"))
    var jpegQuality: String?

    @Option(help: ArgumentHelp("Largest image (in megapixels, read from its header) a variant is rendered from; larger ones fail with EIO (default: \(RenderOptions.defaultMaxPixels / 1_000_000)). -o max_pixels=N.",
                               valueName: "megapixels"))
    var maxPixels: String?

    @Flag(help: "Mount even if the mount point holds files (they are hidden until unmount). -o allow_nonempty.")
    var allowNonempty = false

    @Option(help: .hidden)
    var readyFd: Int32?

    @OptionGroup var logging: LoggingOptions

    /// The long options given on the command line, for MountSettings.resolve.
    var commandLineOptions: [MountOption: String] {
        var given: [MountOption: String] = [:]
        given[.cacheDir] = cacheDir
        given[.connectTimeout] = connectTimeout
        given[.stallTimeout] = stallTimeout
        given[.proxy] = proxy
        given[.cacheSize] = cacheSize
        given[.maxDownloads] = maxDownloads
        given[.prefetch] = prefetch
        given[.backupTools] = backupTools
        given[.desktopThumbnails] = desktopThumbnails
        given[.thumbnailListers] = thumbnailListers
        given[.busyPoll] = busyPoll
        given[.size] = size
        given[.jpegQuality] = jpegQuality
        given[.maxPixels] = maxPixels
        given[.logLevel] = logging.logLevel
        if foreground { given[.foreground] = "" }
        if allowNonempty { given[.allowNonempty] = "" }
        return given
    }

    func run() throws {
        let library = Paths.absolute(self.library)
        let mountpoint = Paths.absolute(self.mountpoint)
        let settings: MountSettings
        let cacheDirectory: URL
        do {
            settings = try MountSettings.resolve(commandLine: commandLineOptions, optionLists: mountOptions)
            try MountCommand.checkPaths(library: library, mountpoint: mountpoint, allowNonempty: settings.allowNonempty)
            cacheDirectory = settings.cacheDirectory.map { URL(fileURLWithPath: Paths.absolute($0)) }
                ?? Paths.defaultCacheDirectory(forLibrary: library)
            // Before the log file goes there: a folder of the user's is refused untouched.
            try CacheDirectory.checkUsable(cacheDirectory.path)
        } catch {
            report(failure: "\(error)")
            throw CommandFailure("\(error)")
        }
        if !settings.foreground {
            try MountCommand.startInBackground(arguments: CommandLine.arguments, cacheDirectory: cacheDirectory)
            return
        }
        SignalMask.blockTerminationSignals()
        MemoryTuning.apply()
        let logger = logging.makeLogger("photofs.mount", level: settings.logLevel)
        if !settings.ignoredOptions.isEmpty {
            logger.info("mount options ignored (mount(8) and fstab words)", metadata: ["options": "\(settings.ignoredOptions.joined(separator: ","))"])
        }
        var http = HTTPConfiguration()
        http.connectTimeout = settings.connectTimeout
        http.stallTimeout = settings.stallTimeout
        http.proxy = settings.proxy
        // Immich keys travel as x-api-key headers to their own servers only (never in a URL or cache key).
        http.credentials = ImmichStore.requestCredentials(logger: logger)
        var options = FilesystemOptions()
        options.variant = settings.variant
        options.renderOptions = settings.renderOptions
        options.prefetchCount = settings.prefetch
        if let tools = settings.backupTools { options.uncountedOpeners = UncountedOpeners(tools) }
        options.thumbnailListers = ThumbnailListers(adding: settings.thumbnailListers)
        options.busyPollMicroseconds = settings.busyPoll
        if settings.desktopThumbnails {
            options.desktopThumbnails = DesktopThumbnails.options(mountpoint: mountpoint)
            if options.desktopThumbnails == nil {
                logger.warning("no thumbnail cache (neither XDG_CACHE_HOME nor HOME is set): desktop thumbnails are off")
            }
        }
        let session: FuseSession
        let filesystem: PhotoFilesystem
        do {
            (filesystem, session) = try MountCommand.makeSession(
                library: library, mountpoint: mountpoint, cacheDirectory: cacheDirectory, http: http,
                options: options, fuseOptions: settings.fuseOptions, cacheSize: settings.cacheSize,
                maxDownloads: settings.maxDownloads, logger: logger)
            try session.mount()
        } catch {
            report(failure: "\(error)")
            throw CommandFailure("\(error)")
        }
        logger.info("mounted", metadata: ["library": "\(library)", "mountpoint": "\(mountpoint)",
                                          "cache": "\(cacheDirectory.path)",
                                          "proxy": "\(ProxySetting.describe(configured: settings.proxy, environment: ProcessInfo.processInfo.environment))"])
        report(ready: true)
        filesystem.startWatchingCatalog()
        let status = session.run()
        filesystem.stopWatchingCatalog()
        filesystem.desktopThumbnails?.stop()
        filesystem.cache.saveStatistics()
        if status != 0 { throw ExitCode(status) }
    }

    /// `--size`, `--jpeg-quality` and `--max-pixels` as `photofs render` takes them, with mount's messages.
    static func parseSize(_ size: String, jpegQuality: Int, maxPixels: Int) throws -> (VariantSpec?, RenderOptions) {
        do {
            let settings = try MountSettings.resolve(
                commandLine: [.size: size, .jpegQuality: String(jpegQuality), .maxPixels: String(maxPixels)], optionLists: [])
            return (settings.variant, settings.renderOptions)
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    static func checkPaths(library: String, mountpoint: String, allowNonempty: Bool) throws {
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
        if !allowNonempty, let entry = firstEntry(of: mountpoint) {
            throw CommandFailure("mount point \(mountpoint) is not empty (it holds \"\(entry)\"): mounting would hide its files. "
                                 + "Use an empty directory, or pass --allow-nonempty (-o allow_nonempty) to mount over them")
        }
    }

    /// A name in the directory other than . and .., or nil if it is empty (or unreadable: then the mount
    /// itself says why).
    static func firstEntry(of directory: String) -> String? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { return name }
        }
        return nil
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
        // `arguments` is Swift's copy, made before SecretArguments scrubbed argv: a secret option goes to the
        // child in its environment variable, never on its command line (which `ps` shows for its whole life).
        let (publicArguments, secretEnvironment) = SecretArguments.withoutSecrets(arguments)
        let childArguments = [executable] + Array(publicArguments.dropFirst()) + ["--foreground", "--ready-fd", String(writeEnd)]
        var environment = ProcessInfo.processInfo.environment
        environment.merge(secretEnvironment) { $1 }
        let environmentStrings = environment.map { "\($0.key)=\($0.value)" }

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
        let envp = environmentStrings.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            throw CommandFailure("cannot start the mount process: \(String(cString: strerror(spawned)))")
        }
        // Up to "ok\n", not to EOF: a process the child starts may inherit the pipe and outlive the answer
        // (`-o auto_unmount` leaves fusermount3 running beside the mount for its life). An error is read
        // whole (it may span lines); the child exits after it, and fusermount3 with it.
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while answer != Data("ok\n".utf8) {
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

    /// The mount source (field after the " - " separator's file system type), e.g. "photofs:library.sqlite".
    static func source(of path: String) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 4, unescape(String(fields[4])) == path,
                  let separator = fields.firstIndex(of: "-"), separator + 2 < fields.count else { continue }
            return unescape(String(fields[separator + 2]))
        }
        return nil
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
