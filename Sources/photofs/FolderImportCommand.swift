// `photofs import folder LIBRARY DIR...`: your own photo folders into a library, files followed across renames.
import ArgumentParser
import FolderImport
import Foundation
import Logging
import PhotoCatalog
import PhotoSources

struct FolderImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folder",
        abstract: "Import your own photo folders (JPEG, PNG, HEIC) into a library.",
        discussion: """
            Walks each folder recursively (links to folders are not followed; hidden files and folders, a NAS's \
            @eaDir and recycle bins, a card's $RECYCLE.BIN, photofs mounts and /proc and /sys are left out) and \
            imports JPEG (.jpg, .jpeg, .jfif), PNG \
            and HEIC/HEIF files (each as what its bytes say: a HEIC named .jpg is a HEIC). The date taken is EXIF's DateTimeOriginal (with OffsetTimeOriginal), else DateTimeDigitized, \
            else DateTime, else a date in the file name (IMG_20240714_093012.jpg, PXL_20240714_093012345.jpg, \
            2024-07-14 09.30.12.jpg, 20240714_093012.jpg, macOS screenshots, Signal, Windows Camera, DJI; \
            WhatsApp's IMG-20240714-WA0001.jpg gives the day), else the file's modification time; names and years \
            show the local time it was taken, never converted to UTC. The place comes from GPS and the nearest \
            city of Debian's GeoNames data, the photographer from Artist (else Make and Model), the title from \
            ImageDescription (else the file name). Videos, raw files and anything else are counted and left \
            out; a file that cannot be read is skipped with a warning naming it (an empty or corrupt one is then \
            skipped unread by later imports until it changes). The mount reads the files where \
            they are: nothing is copied.

            Import again after changing the folders: a renamed or moved file keeps its photo (same inode in the \
            mount, same user.photofs.id), an edited file is the same photo with new bytes, identical files are \
            one photo, and a deleted file's photo is removed; a folder that cannot be read keeps its photos. \
            Unchanged files are not read again. A file changed after the import and not imported again fails to \
            open in a mount (EIO; the mount's log, photofs.log in its cache folder, says to import again). \
            photofs status shows each folder's files, photos, duplicate files and files refused as images.

            With --watch, photofs keeps running after the import and imports again whenever a file is added, \
            changed, moved or deleted under the folders (inotify; a burst of changes is one import, a file is \
            imported once it is written completely), so a mount of the library shows it within about 2 s.

            A folder that is not there keeps its photos (it may be a disk not plugged in). To stop following a \
            folder (deleted, renamed, or imported by mistake), --forget it: its photos leave the library, except \
            those with a copy in another imported folder, and a --watch following it stops importing it. A folder \
            inside one the library follows is imported with it, not on its own.

            Examples:
              photofs import folder photos.sqlite ~/Pictures
              photofs import folder photos.sqlite ~/Pictures /media/card/DCIM
              photofs import folder --watch photos.sqlite ~/Pictures
              photofs import folder --forget photos.sqlite ~/Downloads
            """
    )

    @Argument(help: "The library file (SQLite); created if missing.")
    var library: String

    @Argument(help: "The folders to import.")
    var folders: [String] = []

    @Flag(help: "Keep running, importing each change to the folders as it happens (Ctrl-C ends).")
    var watch = false

    @Flag(help: "Stop following the folders (they need not exist any more): their photos leave the library.")
    var forget = false

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard !folders.isEmpty else { throw ValidationError("name at least one folder to import") }
        guard !(forget && watch) else { throw ValidationError("--forget and --watch cannot be used together") }
    }

    func run() throws {
        let logger = logging.makeLogger("photofs.import")
        if forget { return try forgetFolders(logger: logger) }
        let progress = TerminalProgress(logger: logger)
        // Canonical paths: the same folder named two ways is one source, and file:// URIs are absolute.
        var roots: [String] = []
        for folder in folders {
            guard let resolved = realpath(folder, nil) else {
                logger.warning("folder not imported: \(folder): \(String(cString: strerror(errno)))")
                continue
            }
            let path = String(cString: resolved)
            free(resolved)
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
                logger.warning("folder not imported: \(folder): not a folder (name the folder that holds it)")
                continue
            }
            if !roots.contains(path) { roots.append(path) }
        }
        guard !roots.isEmpty else { throw CommandFailure("none of the folders can be imported") }
        let catalog: Catalog
        do { catalog = try Catalog(path: library) } catch { throw CommandFailure("\(error)") }
        let followed = try FolderImporter.followedRoots(catalog: catalog)
        let onOneFileSystem = { (one: String, other: String) -> Bool in
            var first = stat(), second = stat()
            return stat(one, &first) == 0 && stat(other, &second) == 0 && first.st_dev == second.st_dev
        }
        if let nested = FolderImporter.nestedRoot(roots, followed: followed, onOneFileSystem: onOneFileSystem) {
            throw CommandFailure("\(nested.root) is inside \(nested.holder), which "
                                 + (followed.contains(nested.holder) ? "this library follows" : "is named too")
                                 + ": its photos are imported with it (photofs import folder \(library) \(nested.holder))")
        }
        if watch { return try watchFolders(roots, catalog: catalog, logger: logger, progress: progress) }
        let importer = FolderImporter(catalog: catalog, roots: roots, logger: logger, progress: progress)
        do {
            let report = try importer.run { ImportEvents.settleAged(catalog, logger: logger) }
            // An import that wrote nothing ran no library importer, which ends the bar: the summary must not
            // continue its line.
            progress.finish()
            // Every folder named was refused by the walk (unreadable, a photofs mount, /proc: its warning says
            // which), as a missing one is above.
            guard !report.walkedRoots.isEmpty else { throw CommandFailure("none of the folders can be imported") }
            // Unchanged photos make the same events: clustering 100,000 photos again (0.7 s) would take an
            // unchanged re-import from 1.6× `find`'s time to several times it. Events that aged past 48 hours
            // meanwhile settle before the next import that changes something writes, or at the next mount.
            if !report.changedNothing { ImportEvents.settle(catalog, logger: logger) }
            print(FolderImportCommand.describe(report))
        } catch let stopped as ImportStopped {
            throw CommandFailure(ImportCommand.explain(stopped))
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("import stopped: \(error)")
        }
    }

    /// `--forget`: each folder as the library names it (its canonical path when it still exists, else the path
    /// as given, made absolute), refused when the library does not follow it.
    private func forgetFolders(logger: Logger) throws {
        guard FileManager.default.fileExists(atPath: library) else { throw CommandFailure("no library at \(library)") }
        let catalog: Catalog
        do { catalog = try Catalog(path: library) } catch { throw CommandFailure("\(error)") }
        let followed = try FolderImporter.followedRoots(catalog: catalog).union(try catalog.folderFiles().map(\.root))
        var roots: [String] = []
        for folder in folders {
            let path = realpath(folder, nil).map { resolved in defer { free(resolved) }; return String(cString: resolved) }
                ?? URL(fileURLWithPath: folder).standardizedFileURL.path
            guard followed.contains(path) else {
                throw CommandFailure("the library does not follow \(path); it follows: "
                                     + (followed.isEmpty ? "no folder" : followed.sorted().joined(separator: ", ")))
            }
            if !roots.contains(path) { roots.append(path) }
        }
        // A followed folder inside another (or holding one) shares its files' photos: forgotten alone, it took the
        // other's photos with it (back only at its next import, with new inodes).
        for root in roots {
            for other in followed.subtracting(roots).sorted() where other.hasPrefix(root + "/") || root.hasPrefix(other + "/") {
                throw CommandFailure("\(root) cannot be forgotten alone: the library also follows \(other), "
                                     + (other.hasPrefix(root + "/") ? "inside it" : "which holds it")
                                     + "; forget both together (photofs import folder --forget \(library) \(root) \(other))")
            }
        }
        let report: FolderImportReport
        do { report = try FolderImporter.forget(catalog: catalog, roots: roots, logger: logger) } catch {
            throw CommandFailure("forgetting stopped: \(error)")
        }
        ImportEvents.settle(catalog, logger: logger)
        print("\(roots.count) folder(s) forgotten: \(report.counts.removed) photo(s) removed")
    }

    /// The first import with its progress and summary, then one import per batch of changes, each summary
    /// printed when it changed something. Runs until killed (an import stopped midway loses nothing: its pages
    /// are transactions and the files are recorded last).
    private func watchFolders(_ roots: [String], catalog: Catalog, logger: Logger, progress: TerminalProgress) throws {
        let watcher: FolderWatcher
        do { watcher = try FolderWatcher(roots: roots, logger: logger) } catch { throw CommandFailure("\(error)") }
        // The cities are loaded once (0.1 s), at the first photo with GPS.
        var cities: NearestCity?
        let loadCities = { () -> NearestCity in
            if let cities { return cities }
            let loaded = NearestCity(cities: GeonamesCities.all)
            cities = loaded
            return loaded
        }
        var first = true
        // A folder forgotten meanwhile (`--forget` from another shell) is no longer imported: the next change in
        // it brought back every photo just removed, as new inodes. The watcher stops once none is left.
        var following = roots
        watcher.run(shouldStop: { following.isEmpty }) { deferring in
            if !first {
                let forgotten = try FolderImporter.forgottenRoots(following, catalog: catalog)
                for root in forgotten {
                    logger.warning("\(root) was forgotten (photofs import folder --forget): no longer watched")
                }
                following.removeAll { forgotten.contains($0) }
                if following.isEmpty {
                    print("every watched folder was forgotten: stopping")
                    fflush(stdout)
                    return
                }
            }
            let importer = FolderImporter(catalog: catalog, roots: following, logger: logger, progress: first ? progress : nil,
                                          cities: loadCities, deferred: deferring)
            let report = try importer.run { ImportEvents.settleAged(catalog, logger: logger) }
            if first { progress.finish() }
            if first || FolderImportCommand.changedSomething(report) {
                ImportEvents.settle(catalog, logger: logger)
                print(FolderImportCommand.describe(report))
                fflush(stdout)
            }
            if first { logger.info("watching \(roots.count) folder(s) for changes") }
            first = false
        }
    }

    /// Whether an import changed a file's photo or a photo: a file new, edited, moved or gone, or a photo
    /// written (shown from another of its files once the one it was shown from is gone).
    static func changedSomething(_ report: FolderImportReport) -> Bool {
        let counts = report.counts
        return counts.new + counts.edited + counts.renamedOrMoved + counts.removed + report.written.added
            + report.written.updated > 0
    }

    static func describe(_ report: FolderImportReport) -> String {
        let counts = report.counts
        var lines = ["\(counts.imageFiles) image file(s) in \(report.roots.count) folder(s): \(counts.new) new, "
            + "\(counts.unchanged) unchanged, \(counts.edited) edited, \(counts.renamedOrMoved) renamed or moved"]
        if !changedSomething(report) { lines.append("nothing new") }
        if counts.duplicateFiles > 0 {
            lines.append("\(counts.duplicateFiles) duplicate file(s): identical files are one photo")
        }
        if counts.removed > 0 { lines.append("\(counts.removed) photo(s) removed (their files are gone)") }
        if !counts.skipped.isEmpty {
            let kinds = counts.skipped.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            lines.append("skipped: " + kinds.joined(separator: ", "))
        }
        lines.append("photos written: \(report.written.added) new, \(report.written.updated) updated; "
                     + "\(counts.filesRead) file(s) read")
        if counts.warnings > 0 { lines.append("\(counts.warnings) warning(s) above") }
        return lines.joined(separator: "\n")
    }
}
