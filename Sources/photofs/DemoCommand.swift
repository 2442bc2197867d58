// `photofs demo`: starts the built-in origin, imports its library and mounts it at ./mnt until Ctrl-C.
import ArgumentParser
import FlickrImport
import FlickrOrigin
import FuseAdapter
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoFS

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Import the built-in demo library and mount it at ./mnt (Ctrl-C unmounts).",
        discussion: """
            Starts a Flickr-format origin on 127.0.0.1 with 240 generated photos (12 photographers, 6 regions,
            6 years, odd titles), imports it into demo/library.sqlite, mounts it on ./mnt in the foreground and
            prints what to try. Ctrl-C unmounts and exits.
            """
    )

    @Option(help: "Where the demo library and cache live.")
    var directory = "demo"

    @Option(help: "Mount point (created if missing).")
    var mountpoint = "mnt"

    @Option(help: "TCP port of the demo origin on 127.0.0.1 (0 picks a free one; the photos' URLs include it).")
    var port: UInt16 = 18080

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        // Before any thread starts: see SignalMask.
        SignalMask.blockTerminationSignals()
        MemoryTuning.apply()
        let logger = logging.makeLogger("photofs.demo")
        let directory = URL(fileURLWithPath: Paths.absolute(self.directory))
        let mountpoint = Paths.absolute(self.mountpoint)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        print("photofs demo: generating 240 photos and starting the origin…")
        let origin = FlickrOriginServer(library: DemoLibrary.make(), apiKey: "demo", logger: logger)
        do { try origin.start(port: port) } catch {
            logger.notice("port \(port) busy; using a free one")
            try origin.start(port: 0)
        }
        defer { origin.stop() }

        let library = directory.appendingPathComponent("library.sqlite").path
        let catalog = try Catalog(path: library)
        var options = ImportOptions(apiKey: "demo")
        options.endpoint = origin.endpoint
        let report = try FlickrImporter(catalog: catalog, http: HTTPClient(logger: logger), options: options,
                                        progress: TerminalProgress(logger: logger), logger: logger).run()
        print(ImportCommand.describe(report))

        if MountTable.isMounted(mountpoint) {
            print("unmounting a previous mount on \(mountpoint)")
            _ = DemoCommand.shell(["fusermount3", "-u", mountpoint])
        }
        try? FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        try MountCommand.checkPaths(library: library, mountpoint: mountpoint)
        let (filesystem, session) = try MountCommand.makeSession(
            library: library, mountpoint: mountpoint, cacheDirectory: directory.appendingPathComponent("cache"),
            http: HTTPConfiguration(), options: FilesystemOptions(), fuseOptions: [], logger: logger)
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
              rsync -a \(shown)/ backup/      # a second run copies nothing and downloads nothing
            and a second mount of the same library as 256×256 thumbnails, sharing the cache:
              mkdir -p thumbs && \(CommandLine.arguments[0]) mount \(library) thumbs --size square:256 --cache-dir \(directory.appendingPathComponent("cache").path)
              ls -l thumbs/moments/2021 | head; fusermount3 -u thumbs
            Press Ctrl-C here to unmount.
            """)
        fflush(stdout)
        let status = session.run()
        filesystem.stopWatchingCatalog()
        filesystem.cache.saveStatistics()
        print("unmounted \(mountpoint)")
        if status != 0 { throw ExitCode(status) }
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
