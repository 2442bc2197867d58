// Who opened a photo, and whether that open makes it "recent": backups, indexers, file managers and
// thumbnailers read every file they see, so their opens say nothing about what a person looked at.
import Foundation

/// The names a process goes by: its thread group's command name (`comm`, cut to 15 bytes by the kernel) and
/// its executable's file name (whole, but an interpreter's for scripts). FUSE reports the opening *thread*,
/// whose own name is often a worker's ("pool-pcmanfm", "gmain"), so the thread group leader is asked.
public struct OpenerIdentity: Equatable, Sendable {
    public var names: [String]
    /// The thread group (process) id; 0 when not known.
    public var processID: Int32
    public init(names: [String], processID: Int32 = 0) {
        self.names = names.filter { !$0.isEmpty }
        self.processID = processID
    }

    /// Reads /proc for the thread `tid`; nil when the process is gone (it may exit right after its open).
    /// Plain POSIX reads into a stack buffer: Foundation's file reading stats and decodes, and the three
    /// reads cost 25 µs per open that way (of a cached photo's whole open+close, ~100 µs), 8 µs this way.
    public init?(thread tid: Int32) {
        guard tid > 0 else { return nil }
        let processID = OpenerIdentity.threadGroup(of: tid) ?? tid
        var names: [String] = []
        if let comm = OpenerIdentity.readSmallFile("/proc/\(processID)/comm") {
            names.append(comm.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var target = [CChar](repeating: 0, count: 4097)
        let length = readlink("/proc/\(processID)/exe", &target, 4096)
        if length > 0 {
            // A replaced binary reads "/usr/bin/thunar (deleted)".
            let path = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let base = path.split(separator: "/").last.map(String.init) ?? path
            names.append(base.hasSuffix(" (deleted)") ? String(base.dropLast(10)) : base)
        }
        guard !names.isEmpty else { return nil }
        self.init(names: names, processID: processID)
    }

    private static func threadGroup(of tid: Int32) -> Int32? {
        guard let status = readSmallFile("/proc/\(tid)/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Tgid:") {
            return Int32(line.dropFirst(5).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// The first 4 KiB of a /proc file (status is ~1.4 KB, comm 16 bytes).
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer in
            let count = read(fd, buffer.baseAddress, buffer.count)
            return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
        }
    }
}

/// Who opened recently, by thread id, for a short while: a viewer, a file manager or rsync opens many photos
/// from the same threads, and each lookup is three reads of /proc. Two seconds is far shorter than it takes
/// Linux to hand a thread id out again (ids count up to pid_max, 4,194,304 on 64-bit, before wrapping).
struct RecentOpeners {
    static let lifetime: TimeInterval = 2
    static let capacity = 256
    private var entries: [Int32: (identity: OpenerIdentity?, at: TimeInterval)] = [:]

    /// The identity of `tid`, from memory when looked up less than `lifetime` ago (`now`: monotonic seconds).
    mutating func identity(of tid: Int32, now: TimeInterval, lookUp: (Int32) -> OpenerIdentity?) -> OpenerIdentity? {
        if let entry = entries[tid], now - entry.at < RecentOpeners.lifetime { return entry.identity }
        if entries.count >= RecentOpeners.capacity {
            entries = entries.filter { now - $0.value.at < RecentOpeners.lifetime }
            if entries.count >= RecentOpeners.capacity { entries.removeAll(keepingCapacity: true) }
        }
        let identity = lookUp(tid)
        entries[tid] = (identity, now)
        return identity
    }
}

/// Commands whose opens do not count as recent.
public struct UncountedOpeners: Sendable, Equatable {
    /// Backup and sync tools, indexers, file managers and thumbnailers (pcmanfm reading 20 photos to draw
    /// thumbnails made them the whole of /recent; Thunar's tumblerd did the same).
    public static let defaults: [String] = backupAndSearchTools + fileManagers + ["gvfsd-metadata"] + thumbnailers

    static let backupAndSearchTools = [
        "rsync", "tar", "borg", "restic", "rclone", "kopia", "duplicity", "rdiff-backup", "updatedb", "plocate",
        "find", "locate", "baloo_file", "baloo_file_extractor", "tracker-extract", "tracker-extract-3",
        "localsearch-extractor", "tracker-miner-fs", "tracker-miner-fs-3",
    ]
    static let fileManagers = [
        "pcmanfm", "pcmanfm-qt", "nautilus", "nemo", "nemo-desktop", "caja", "thunar", "Thunar", "dolphin",
        "konqueror", "krusader", "spacefm", "doublecmd", "pantheon-files", "io.elementary.files", "peony",
        "dde-file-manager", "xfdesktop",
    ]
    static let thumbnailers = [
        "tumblerd", "kioworker", "kioslave5", "kioworker5", "thumbnail.so", "gnome-thumbnail-factory",
        "gdk-pixbuf-thumbnailer", "gnome-desktop-thumbnailer", "evince-thumbnailer", "totem-video-thumbnailer",
        "ffmpegthumbnailer", "glycin-image-rs", "glycin-loaders", "xdg-thumbnailer", "raw-thumbnailer",
        "gnome-raw-thumbnailer", "webp-thumbnailer", "heif-thumbnailer",
    ]

    /// Whether the process reads trees for backup, sync or search: nobody looks at its listings, so they get
    /// no desktop thumbnails (an `rsync` of a 100,000-photo mount must not fetch 100,000 renditions).
    public static func isBackupOrSearch(_ opener: OpenerIdentity) -> Bool { backupAndSearch.contains(opener) }
    private static let backupAndSearch = UncountedOpeners(backupAndSearchTools)

    /// Processes that exist to draw thumbnails (tumblerd, GNOME's thumbnailers; KIO's workers draw Dolphin's
    /// but also copy, see `isFileManager`). Their downloads go behind everyone else's, a few at a time per
    /// process (`DownloadEngine.perRequesterLimit`), whatever `--backup-tools` says about /recent.
    public static func isThumbnailer(_ opener: OpenerIdentity) -> Bool { dedicatedThumbnailers.contains(opener) }
    private static let kioWorkers = ["kioworker", "kioslave5", "kioworker5"]
    private static let dedicatedThumbnailers = UncountedOpeners(thumbnailers.filter { !kioWorkers.contains($0) })

    /// File managers (and KIO's workers): they open a photo to draw its thumbnail when they find none, but
    /// also to copy it where a person dragged it. So their opens count as thumbnailing only for photos whose
    /// desktop thumbnails the mount has not written (see PhotoFilesystem.open).
    public static func isFileManager(_ opener: OpenerIdentity) -> Bool { fileManagersAndKIO.contains(opener) }
    private static let fileManagersAndKIO = UncountedOpeners(fileManagers + kioWorkers)

    /// Whether the opener may draw thumbnails: a thumbnailer or a file manager.
    public static func isThumbnailing(_ opener: OpenerIdentity) -> Bool { isThumbnailer(opener) || isFileManager(opener) }
    static let thumbnailDrawers = fileManagers + kioWorkers + thumbnailers

    /// The kernel keeps 15 bytes of a command name (TASK_COMM_LEN 16 with its NUL).
    static let commandNameLimit = 15

    public let names: Set<String>
    public init(_ names: some Sequence<String> = UncountedOpeners.defaults) {
        self.names = Set(names.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }

    /// Whether any of the opener's names is one of ours; a 15-byte name also matches the longer name it was
    /// cut from ("gdk-pixbuf-thum" is gdk-pixbuf-thumbnailer).
    public func contains(_ opener: OpenerIdentity) -> Bool {
        opener.names.contains { name in
            if names.contains(name) { return true }
            guard name.utf8.count == UncountedOpeners.commandNameLimit else { return false }
            return names.contains { $0.utf8.count > UncountedOpeners.commandNameLimit && $0.hasPrefix(name) }
        }
    }
}

/// The processes whose directory listings get desktop thumbnails written: those that draw thumbnails (file
/// managers, KIO's workers, thumbnailers), plus the names a mount adds (`-o thumbnail_listers=`). Everyone
/// else — shells, `ls`, `find`, `du`, `tree`, scripts, backup and indexing tools, a process already gone —
/// gets its listing at once and causes no request and no file: an `ls -lR` of a fresh 20,000-photo mount
/// made 2,101 rendition requests and 7,665 thumbnail files while thumbnails were written for every lister.
public struct ThumbnailListers: Sendable, Equatable {
    public static let defaults: [String] = UncountedOpeners.thumbnailDrawers
    private let names: UncountedOpeners

    /// The default list plus `adding` (names as `comm` or the executable's file name show them).
    public init(adding extra: [String] = []) {
        names = UncountedOpeners(ThumbnailListers.defaults + extra)
    }

    public func contains(_ lister: OpenerIdentity) -> Bool { names.contains(lister) }
}
