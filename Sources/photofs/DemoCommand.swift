// `photofs demo`: starts the built-in origins (Flickr and Immich format), imports both into one library and
// mounts it at ./mnt until Ctrl-C.
import ArgumentParser
import FlickrImport
import FlickrOrigin
import FuseAdapter
import ImmichImport
import ImmichOrigin
import Logging
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoFS
import PhotoSources

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Import the built-in demo library and mount it at ./mnt (Ctrl-C unmounts).",
        discussion: """
            Starts a Flickr-format origin on 127.0.0.1 with 240 generated photos (12 photographers, 6 regions, \
            6 years, odd titles) and an Immich-format server with 40 more (albums with odd names, people, \
            favourites, a partner's photos, videos left out), imports both into demo/library.sqlite, mounts it \
            on ./mnt in the foreground and prints what to try. Ctrl-C unmounts and exits.

            A demo already running (on the same --directory, or mounted on the same --mountpoint) is left \
            alone: this one stops before importing anything and says where that one is. A mount left by a \
            demo that was killed is cleaned up.
            """
    )

    @Option(help: "Where the demo library and cache live.")
    var directory = "demo"

    @Option(help: "Mount point (created if missing).")
    var mountpoint = "mnt"

    @Option(help: "TCP port of the demo origin on 127.0.0.1 (0 picks a free one; the photos' URLs include it).")
    var port: UInt16 = 18080

    @Option(help: "TCP port of the demo's Immich-format server on 127.0.0.1 (0 picks a free one).")
    var immichPort: UInt16 = 18081

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        // Before any thread starts: see SignalMask.
        SignalMask.blockTerminationSignals()
        MemoryTuning.apply()
        let logger = logging.makeLogger("photofs.demo")
        let directory = URL(fileURLWithPath: Paths.absolute(self.directory))
        let mountpoint = Paths.absolute(self.mountpoint)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Held until this process ends (the kernel drops the lock with it, however it ends).
        let lock = try DemoLock.acquire(directory: directory, mountpoint: mountpoint)
        defer { lock.release() }
        try DemoCommand.prepareMountpoint(mountpoint)

        print("photofs demo: generating 240 photos and starting the origin…")
        let origin = FlickrOriginServer(library: DemoLibrary.account(), apiKey: "demo", logger: logger)
        do { try origin.start(port: port) } catch {
            logger.notice("port \(port) busy; using a free one")
            try origin.start(port: 0)
        }
        defer { origin.stop() }

        let library = directory.appendingPathComponent("library.sqlite").path
        let catalog = try Catalog(path: library)
        var options = FlickrSourceOptions()
        options.endpoint = origin.endpoint
        let source = FlickrSource(options: options, credentials: .apiKey("demo"), http: HTTPConfiguration(), logger: logger)
        let report = try LibraryImporter(catalog: catalog, source: source, progress: TerminalProgress(logger: logger),
                                         logger: logger).run()
        print(ImportCommand.describe(report))

        // Then what a Flickr member does with their own account: sign in (OAuth, as `photofs login flickr`),
        // and import it with its private photos and albums (as `import flickr --user me`).
        let account = try DemoCommand.signIn(origin: origin, store: directory.appendingPathComponent("config"), logger: logger)
        var accountOptions = account.sourceOptions
        accountOptions.user = "me"
        let accountSource = FlickrSource(options: accountOptions, credentials: account.credentials, logger: logger)
        let accountReport = try LibraryImporter(catalog: catalog, source: accountSource,
                                                progress: TerminalProgress(logger: logger), logger: logger).run()
        print(ImportCommand.describe(accountReport))

        // Beside it, an Immich library, as `photofs login immich` and `import immich` bring one in: its key goes
        // to that server only, as a header, for the import and the mount's downloads and renditions.
        print("photofs demo: starting an Immich-format server with 40 photos…")
        let immichKey = "demo-immich-key"
        let immich = ImmichOriginServer(library: .generated(count: 40), keys: [immichKey: ["all"]])
        do { try immich.start(port: immichPort) } catch {
            logger.notice("port \(immichPort) busy; using a free one")
            try immich.start(port: 0)
        }
        defer { immich.stop() }
        let signIn = try ImmichSignIn.check(server: immich.baseURL, apiKey: immichKey, http: HTTPConfiguration(), logger: logger)
        guard let client = ImmichClient(server: signIn.account.server, apiKey: immichKey, http: HTTPConfiguration(), logger: logger) else {
            throw CommandFailure("the demo's Immich server \(immich.baseURL) is not usable")
        }
        let immichReport = try ImmichImporter(catalog: catalog, source: ImmichSource(client: client, logger: logger),
                                              options: LibraryImportOptions(), progress: TerminalProgress(logger: logger),
                                              logger: logger).run()
        print(ImportCommand.describe(immichReport.library))
        print("\(immichReport.favorites) favourite(s), \(immichReport.people) named people from \(signIn.account.userName)'s Immich")
        var http = HTTPConfiguration()
        http.credentials.add(prefix: signIn.account.server + "/api/", name: "x-api-key", value: immichKey)

        try MountCommand.checkPaths(library: library, mountpoint: mountpoint, allowNonempty: false)
        var demoOptions = FilesystemOptions()
        demoOptions.desktopThumbnails = DesktopThumbnails.options(mountpoint: mountpoint)
        let (filesystem, session) = try MountCommand.makeSession(
            library: library, mountpoint: mountpoint, cacheDirectory: directory.appendingPathComponent("cache"),
            http: http, options: demoOptions, fuseOptions: [], logger: logger)
        try session.mount()
        filesystem.startWatchingCatalog()
        let shown = self.mountpoint
        print("""

            Mounted on \(mountpoint). In another terminal, try:
              ls \(shown)/regions
              ls -l "\(shown)/regions/California/Ansel Adams"
              ls \(shown)/moments/2021 | head
              xdg-open "$(find \(shown)/regions -name '*.jpg' | head -1)"   # or: file, identify, cmp
              ls \(shown)/recent
              gio info -a thumbnail::path,thumbnail::is-valid "$(ls -d \(shown)/moments/2021/* | head -1)"   # written at listing
              pcmanfm \(shown)/moments/2021 &      # a file manager shows thumbnails, downloading no original
              ls -l "\(shown)/albums/Family"         # \(account.username)'s albums; private photos are 0400
              stat -c '%i %h %n' "\(shown)"/albums/*/* | sort | head   # one inode per photo, a link per album
              ls \(shown)/people \(shown)/favorites        # \(signIn.account.userName)'s Immich: named people, favourites
              ls "\(shown)/regions/California/\(signIn.account.userName)"   # Immich photos beside Flickr's
              \(CommandLine.arguments[0]) status \(library)
              rsync -a \(shown)/ backup/      # a second run copies nothing and downloads nothing
            and a second mount of the same library as 256×256 thumbnails, sharing the cache:
              mkdir -p thumbs && \(CommandLine.arguments[0]) mount \(library) thumbs --size square:256 --cache-dir \(directory.appendingPathComponent("cache").path)
              ls -l thumbs/moments/2021 | head; fusermount3 -u thumbs
            Press Ctrl-C here to unmount.
            """)
        fflush(stdout)
        let status = session.run()
        filesystem.stopWatchingCatalog()
        filesystem.desktopThumbnails?.stop()
        filesystem.cache.saveStatistics()
        print("unmounted \(mountpoint)")
        if status != 0 { throw ExitCode(status) }
    }

    /// Signs in to the demo origin as a member would: the authorize page is fetched (a browser would show
    /// it) and its code typed back. The account is kept in the demo's own directory, not the user's
    /// ~/.config/photofs, so a demo never mixes with real accounts.
    static func signIn(origin: FlickrOriginServer, store directory: URL, logger: Logger) throws -> FlickrAccount {
        let login = FlickrLogin(endpoints: try FlickrEndpoints(rest: origin.endpoint), consumerKey: origin.apiKey,
                                consumerSecret: origin.apiSecret, logger: logger)
        let authorization = try login.start()
        let page = String(decoding: try HTTPClient(logger: logger).get(authorization.url).body, as: UTF8.self)
        guard let code = page.range(of: #"[0-9]{3}-[0-9]{3}-[0-9]{3}"#, options: .regularExpression).map({ String(page[$0]) }) else {
            throw CommandFailure("the demo origin's authorize page shows no code")
        }
        let account = try login.finish(authorization, verifier: code)
        let store = FlickrAccountStore(directory: directory.path)
        try store.save(account)
        print("signed in to the demo origin as \(account.username) (\(account.nsid)); token kept in \(store.path) (mode 0600)")
        return account
    }

    /// Before anything is imported: a live mount on the mount point is refused (another demo, or anything
    /// else: it is not ours to unmount); a dead one (its process was killed: ENOTCONN) is cleaned up; the
    /// directory is created, and must be empty.
    static func prepareMountpoint(_ mountpoint: String) throws {
        if MountTable.isMounted(mountpoint) {
            var info = stat()
            guard stat(mountpoint, &info) != 0 && errno == ENOTCONN else {
                let source = MountTable.source(of: mountpoint).map { " (\($0))" } ?? ""
                throw CommandFailure("\(mountpoint) is already mounted\(source), perhaps by a demo running from another "
                                     + "directory; stop that demo with Ctrl-C in its terminal, or unmount it with "
                                     + "`fusermount3 -u \(mountpoint)`, or pass another --mountpoint")
            }
            print("unmounting a dead mount on \(mountpoint) (its process ended without unmounting)")
            _ = DemoCommand.shell(["fusermount3", "-u", mountpoint])
        }
        try? FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        if let entry = MountCommand.firstEntry(of: mountpoint) {
            throw CommandFailure("mount point \(mountpoint) is not empty (it holds \"\(entry)\"): mounting would hide its "
                                 + "files. Empty it or pass another --mountpoint")
        }
    }

    static func shell(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// An exclusive `flock` on <demo directory>/demo.lock for the demo's lifetime, so that a second demo on the
/// same directory stops before it re-imports (and rewrites) the running demo's library. The file holds the
/// running demo's pid and mount point, for the message. flock, not a pid file: the kernel releases it when
/// the process dies, even by SIGKILL, so a killed demo never blocks the next one.
struct DemoLock {
    let descriptor: Int32

    static func acquire(directory: URL, mountpoint: String) throws -> DemoLock {
        let path = directory.appendingPathComponent("demo.lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            let holder = DemoLock.read(descriptor)
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw CommandFailure("cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            let pid = holder.first.map { " (pid \($0))" } ?? ""
            let place = holder.count > 1 ? "mounted on \(holder[1])" : "using \(directory.path)"
            let stop = holder.first.map { "Ctrl-C in its terminal or `kill -INT \($0)`" } ?? "Ctrl-C in its terminal"
            throw CommandFailure("a demo is already running\(pid), \(place), with its library in \(directory.path); "
                                 + "stop it first (\(stop)), or run this one with another --directory and --mountpoint")
        }
        // pid, newline, mount point: read back only for the message above.
        let text = "\(getpid())\n\(mountpoint)\n"
        _ = ftruncate(descriptor, 0)
        _ = text.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        return DemoLock(descriptor: descriptor)
    }

    /// The holder's lines, at most 4 KiB of them (the file is ours, but anyone could have written it).
    private static func read(_ descriptor: Int32) -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return [] }
        return String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func release() {
        _ = ftruncate(descriptor, 0)
        close(descriptor)
    }
}
