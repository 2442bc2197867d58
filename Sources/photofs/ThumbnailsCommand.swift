// `photofs thumbnails LIBRARY MOUNTPOINT`: writes the desktop thumbnails of a whole mount ahead of time.
import ArgumentParser
import CommandLineOptions
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoFS

struct ThumbnailsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails",
        abstract: "Write file managers' thumbnails for every photo of a mount ahead of time.",
        discussion: """
            A mount writes the freedesktop thumbnails (128 and 256 px) of a folder's photos when the folder \
            is listed; this writes them for every folder at once, with a progress bar, so even the first \
            look at any folder is instant. They go to $XDG_CACHE_HOME/thumbnails (else ~/.cache/thumbnails) \
            of the user running it, under the paths the photos have below MOUNTPOINT, which need not be \
            mounted now. Each photo's small rendition is fetched once and kept in the library, so a later \
            mount writes thumbnails without the network; an original is used only when it is cached \
            already or the photo has no smaller size.

            Example:
              photofs thumbnails photos.sqlite ~/Photos
              photofs thumbnails photos.sqlite ~/Thumbs --size square:256
            """
    )

    @Argument(help: "The library file made by `photofs import`.")
    var library: String

    @Argument(help: "Where the library is (or will be) mounted: thumbnails are named by the files' paths there.")
    var mountpoint: String

    @Option(help: "The cache directory, if not the default for this library (a cached original is used instead of a fetch).")
    var cacheDir: String?

    @Option(help: ArgumentHelp("The --size the mount uses (original, N or square:N), so names and sizes match it.",
                               valueName: "size"))
    var size = "original"

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        let library = Paths.absolute(self.library)
        let mountpoint = Paths.absolute(self.mountpoint)
        let logger = logging.makeLogger("photofs.thumbnails", level: nil)
        let (variant, renderOptions) = try MountCommand.parseSize(size, jpegQuality: 85, maxPixels: 100)
        guard FileManager.default.fileExists(atPath: library) else {
            throw CommandFailure("no library at \(library): create one with `photofs import flickr \(library) ...`")
        }
        // Asked for by name: every thumbnail, without the mount's ceiling on fetches a minute.
        guard var desktop = DesktopThumbnails.options(mountpoint: mountpoint) else {
            throw CommandFailure("no thumbnail cache: set XDG_CACHE_HOME or HOME")
        }
        let cacheDirectory = cacheDir.map { URL(fileURLWithPath: Paths.absolute($0)) }
            ?? Paths.defaultCacheDirectory(forLibrary: library)
        let filesystem: PhotoFilesystem
        do {
            let catalog = try Catalog(path: library, mode: .mounting)
            let http = HTTPClient(logger: logger)
            let cache = try OriginalCache(directory: cacheDirectory, http: http, logger: logger)
            var options = FilesystemOptions()
            options.variant = variant
            options.renderOptions = renderOptions
            desktop.fetchCeiling = nil
            options.desktopThumbnails = desktop
            filesystem = PhotoFilesystem(catalog: catalog, cache: cache, http: http, options: options,
                                         persistentRecents: false, logger: logger)
        } catch {
            throw CommandFailure("\(error)")
        }
        let progress = TerminalProgress(logger: logger)
        var total = 0
        do {
            try filesystem.writeAllDesktopThumbnails { done, all in
                total = all
                progress.update(stage: "thumbnails", done: done, total: all)
            }
        } catch {
            progress.finish()
            throw CommandFailure("\(error)")
        }
        progress.finish()
        filesystem.desktopThumbnails?.stop()
        print("thumbnails of \(total) file(s) below \(mountpoint) are in \(desktop.store.root.path)")
    }
}

/// Where the mounting user's thumbnails go, for a mount at `mountpoint` (its real path: file managers name
/// files by it).
enum DesktopThumbnails {
    static func options(mountpoint: String) -> DesktopThumbnailOptions? {
        guard let root = DesktopThumbnailStore.defaultRoot(environment: ProcessInfo.processInfo.environment) else { return nil }
        let resolved = realpath(mountpoint, nil).map { pointer -> String in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? mountpoint
        return DesktopThumbnailOptions(store: DesktopThumbnailStore(root: root), mountpoint: resolved)
    }
}
