// `photofs import folder --watch`: inotify on every imported folder, changes imported in batches.
import Foundation
import Logging

/// Watches the imported folders with inotify (every folder the walk would enter: recursive, left-out folders and
/// links to folders left out, new folders added as they appear) and runs `importBatch` when `WatchBatching` says
/// so. The events only decide when an import runs; each batch is a whole import, whose walk and reconciliation
/// find what changed (so a lost event queue, IN_Q_OVERFLOW, needs nothing more than a batch).
public final class FolderWatcher {
    private let roots: [String]
    private let logger: Logger
    private var batching: WatchBatching
    private let fd: Int32
    /// Watch descriptor → the folder it watches (a renamed folder keeps its descriptor; re-adding it under the
    /// new path updates the entry).
    private var folders: [Int32: String] = [:]
    /// Roots that could not be watched (missing, unmounted, deleted), tried again every `rootRetry` seconds.
    private var missingRoots: Set<String> = []
    private var nextRootRetry = 0.0
    private var limitWarned = false
    /// Folders moved away from a watched folder, by the rename's cookie, until the move's other half comes
    /// (a rename inside the tree) or the map is full (moved out of it).
    private var movedAway: [UInt32: String] = [:]
    /// Half a second: a followed folder deleted and made again (a card unplugged and back, a sync tool's
    /// rewrite) shows in a mount within the 2 s (with 5 s a trial saw it after ~5 s), for one `stat`
    /// of each missing root twice a second.
    static let rootRetry = 0.5
    static let retryAfterFailure = 5.0
    /// IN_CLOSE_WRITE ends a write; IN_MODIFY starts one; IN_CREATE a wait for the size to settle (a link is
    /// never written to); moves, deletions and attribute changes
    /// (a chmod changes who may read a photo; a touch its mtime) need an import; *_SELF say a folder went.
    static let mask: UInt32 = UInt32(IN_CLOSE_WRITE | IN_CREATE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE
        | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR) | dontFollow
    /// IN_DONTFOLLOW (a link to a folder is not watched, as the walk does not enter it); glibc's macro does
    /// not reach Swift.
    static let dontFollow: UInt32 = 0x0200_0000

    public init(roots: [String], logger: Logger, batching: WatchBatching = WatchBatching()) throws {
        self.roots = roots; self.logger = logger; self.batching = batching
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw FolderWatchError("inotify is not available: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// Watches until `shouldStop` says so (checked at least every `tick` seconds), calling `importBatch` with
    /// the files to leave for later whenever a batch is due. An import that throws is logged; watching goes on.
    /// The first import runs once the folders are watched, so a change during it is not missed.
    public func run(tick: Double = 1, shouldStop: () -> Bool = { false }, importBatch: (Set<String>) throws -> Void) {
        let started = now()
        syncWatches(now: started)
        do { try importBatch([]) } catch { logger.error("watched import failed: \(error)") }
        batching.imported(startedAt: started)
        while !shouldStop() {
            let current = now()
            for path in batching.filesToStat(at: current) { batching.stamped(path, stamp(path), at: current) }
            if current >= nextRootRetry, !missingRoots.isEmpty { syncWatches(now: current) }
            switch batching.decision(at: current) {
            case .importNow(let deferring):
                // New folders first, so a file written into one while the batch runs still has its events.
                syncWatches(now: current)
                var failed = false
                do { try importBatch(deferring) } catch {
                    logger.error("watched import failed, tried again in \(Int(FolderWatcher.retryAfterFailure)) s: \(error)")
                    failed = true
                }
                batching.imported(startedAt: current)
                // What the failed batch should have imported is still to import: a change is noted where the
                // retry is due (a library busy with another writer for longer than its 10 s timeout, a full disk).
                if failed { batching.changed(at: current + FolderWatcher.retryAfterFailure - batching.quiet) }
                continue
            case .wait(let until):
                waitForEvents(seconds: min(tick, max(0.01, until - current), untilRootRetry(current)))
            case .idle:
                waitForEvents(seconds: min(tick, untilRootRetry(current)))
            }
            readEvents()
        }
    }

    /// Seconds until the missing roots are looked for again (no limit when none is missing).
    private func untilRootRetry(_ current: Double) -> Double {
        missingRoots.isEmpty ? .infinity : max(0.01, nextRootRetry - current)
    }

    // MARK: inotify

    private func waitForEvents(seconds: Double) {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32((seconds * 1000).rounded(.up)))
    }

    /// Reads every queued event. Each is an `inotify_event` header and a NUL-padded name of `len` bytes; a
    /// length running past what was read (which the kernel never sends) ends the buffer rather than reading on.
    private func readEvents() {
        let headerSize = MemoryLayout<inotify_event>.size
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            var offset = 0
            while offset + headerSize <= count {
                let event = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                let nameLength = Int(event.len)
                guard nameLength <= count - offset - headerSize else { break }
                let nameBytes = buffer[(offset + headerSize)..<(offset + headerSize + nameLength)].prefix { $0 != 0 }
                handle(event, name: String(decoding: nameBytes, as: UTF8.self))
                offset += headerSize + nameLength
            }
        }
    }

    private func handle(_ event: inotify_event, name: String) {
        let current = now()
        let mask = event.mask
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost: the next batch's walk sees everything anyway; folders may have appeared.
            logger.info("too many changes at once for inotify: the next import looks at every folder")
            batching.changed(at: current)
            syncWatches(now: current)
            return
        }
        guard let folder = folders[event.wd] else { return }
        if mask & UInt32(IN_IGNORED) != 0 {
            folders[event.wd] = nil
            if roots.contains(folder), !missingRoots.contains(folder) {
                logger.warning("watched folder vanished: \(folder); its photos stay until it is back")
                missingRoots.insert(folder)
            }
            batching.changed(at: current)
            return
        }
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 { batching.changed(at: current); return }
        let path = folder + "/" + name
        if mask & UInt32(IN_ISDIR) != 0 {
            guard !FolderWalk.isLeftOut(folderNamed: name) else { return } // as the walk leaves them out
            if mask & UInt32(IN_MOVED_FROM) != 0 {
                if movedAway.count >= 256 { movedAway.removeAll() }
                movedAway[event.cookie] = path
            }
            if mask & UInt32(IN_MOVED_TO) != 0, let old = movedAway.removeValue(forKey: event.cookie) {
                addFolder(path, movedFrom: old, now: current)
            } else if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                addFolder(path, movedIn: mask & UInt32(IN_MOVED_TO) != 0, now: current)
            }
            batching.changed(at: current)
            return
        }
        // Only image files the walk takes matter (not a browser's ".part", a video, a hidden file) until they
        // are renamed to one.
        guard !FolderWalk.isLeftOut(fileNamed: name), ImageFileKind.fromName(name).isImage else { return }
        if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE) != 0 {
            batching.finished(path, at: current)
        } else if mask & UInt32(IN_CREATE) != 0 {
            // A link (`ln -s`, `ln`) is made whole and never written: no close comes, and waiting for one held a
            // new link 30 s (`closeTimeout`). A symbolic link is complete; any other new file is judged by its
            // size from now on, unless a write follows (then its close is waited for).
            var info = stat()
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                batching.finished(path, at: current)
            } else {
                batching.created(path, at: current, stamp: stamp(path))
            }
        } else if mask & UInt32(IN_MODIFY) != 0 {
            batching.writing(path, at: current)
        } else {
            batching.changed(at: current)
        }
    }

    /// Watches every folder under every root (again: adding a watched folder only refreshes its path). A root
    /// that cannot be watched is a warning once, and tried again later.
    private func syncWatches(now current: Double) {
        nextRootRetry = current + FolderWatcher.rootRetry
        for root in roots {
            var info = stat()
            guard stat(root, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, watch(root) else {
                if missingRoots.insert(root).inserted {
                    logger.warning("watched folder vanished: \(root); its photos stay until it is back")
                }
                continue
            }
            if missingRoots.remove(root) != nil {
                logger.info("watched folder is back: \(root)")
                batching.changed(at: current)
            }
            for folder in FolderWatcher.subfolders(of: root) { _ = watch(folder) }
        }
    }

    /// A folder that appeared (created, or moved in with its files: `movedIn`): watched with everything under
    /// it, and its image files modified in the last second judged as being written until their sizes settle
    /// (their events came before the watch; `WatchBatching.appeared`); older ones are complete.
    /// `movedFrom`: the folder's path before a rename inside the watched folders, whose files' writes were
    /// seen: each is complete unless it was still being written (then it still is, under its new path). Judged
    /// by size instead, a folder made, filled and renamed at once showed 3.1–3.3 s after the rename.
    private func addFolder(_ path: String, movedFrom: String? = nil, movedIn: Bool = false, now current: Double) {
        guard watch(path) else { return }
        for folder in FolderWatcher.subfolders(of: path) { _ = watch(folder) }
        if let movedFrom {
            for file in FolderWalk.walk(roots: [path]).images where file.path.hasPrefix(path + "/") {
                batching.moved(from: movedFrom + file.path.dropFirst(path.count), to: file.path, at: current)
            }
            return
        }
        let wallClock = Date().timeIntervalSince1970
        for file in FolderWalk.walk(roots: [path]).images {
            // A future mtime (another machine's clock) gives a negative age: judged by its size, as before.
            batching.appeared(file.path, at: current, modifiedAgo: wallClock - Double(file.mtimeNanos) / 1e9,
                              stamp: WatchBatching.FileStamp(size: file.size, mtimeNanos: file.mtimeNanos), movedIn: movedIn)
        }
    }

    private func watch(_ folder: String) -> Bool {
        let wd = inotify_add_watch(fd, folder, FolderWatcher.mask)
        guard wd >= 0 else {
            if errno == ENOSPC && !limitWarned {
                limitWarned = true
                logger.warning("""
                    inotify watch limit reached at \(folder): folders beyond it are imported only when another \
                    change comes (raise fs.inotify.max_user_watches)
                    """)
            }
            return false
        }
        folders[wd] = folder
        return true
    }

    /// Every folder under `root` the walk would enter (not hidden, not through a link, not a photofs mount or
    /// the kernel's: `MountBoundaries`), depth first. A watch on each folder of a mount would take inotify's
    /// limit from the real ones.
    static func subfolders(of root: String) -> [String] {
        var found: [String] = []
        var pending = [root]
        while let folder = pending.popLast() {
            guard let handle = opendir(folder) else { continue }
            var folderInfo = stat()
            guard fstat(dirfd(handle), &folderInfo) == 0 else { closedir(handle); continue }
            while let entry = readdir(handle) {
                guard entry.pointee.d_type == UInt8(DT_DIR) || entry.pointee.d_type == UInt8(DT_UNKNOWN) else { continue }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                guard !FolderWalk.isLeftOut(folderNamed: name) else { continue }
                let path = folder + "/" + name
                var info = stat()
                guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { continue }
                if MountBoundaries.reasonNotToEnter(device: UInt64(info.st_dev), from: UInt64(folderInfo.st_dev)) != nil { continue }
                found.append(path)
                pending.append(path)
            }
            closedir(handle)
        }
        return found
    }

    private func stamp(_ path: String) -> WatchBatching.FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return WatchBatching.FileStamp(size: Int64(info.st_size),
                                       mtimeNanos: Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec))
    }

    private func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}

public struct FolderWatchError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
