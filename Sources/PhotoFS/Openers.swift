// Who opened a photo, and whether that open makes it "recent": backups, indexers, file managers and
// thumbnailers read every file they see, so their opens say nothing about what a person looked at.
import Foundation

/// The names a process goes by: its thread group's command name (`comm`, cut to 15 bytes by the kernel) and
/// its executable's file name (whole, but an interpreter's for scripts). FUSE reports the opening *thread*,
/// whose own name is often a worker's ("pool-pcmanfm", "gmain"), so the thread group leader is asked.
public struct OpenerIdentity: Equatable, Sendable {
    public var names: [String]
    public init(names: [String]) { self.names = names.filter { !$0.isEmpty } }

    /// Reads /proc for the thread `tid`; nil when the process is gone (it may exit right after its open).
    public init?(thread tid: Int32) {
        guard tid > 0 else { return nil }
        let processID = OpenerIdentity.threadGroup(of: tid) ?? tid
        var names: [String] = []
        if let comm = try? String(contentsOfFile: "/proc/\(processID)/comm", encoding: .utf8) {
            names.append(comm.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(processID)/exe") {
            // A replaced binary reads "/usr/bin/thunar (deleted)".
            let base = (exe as NSString).lastPathComponent
            names.append(base.hasSuffix(" (deleted)") ? String(base.dropLast(10)) : base)
        }
        guard !names.isEmpty else { return nil }
        self.init(names: names)
    }

    private static func threadGroup(of tid: Int32) -> Int32? {
        guard let status = try? String(contentsOfFile: "/proc/\(tid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Tgid:") {
            return Int32(line.dropFirst(5).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}

/// Commands whose opens do not count as recent.
public struct UncountedOpeners: Sendable, Equatable {
    /// Backup and sync tools, indexers, file managers and thumbnailers (pcmanfm reading 20 photos to draw
    /// thumbnails made them the whole of /recent; Thunar's tumblerd did the same).
    public static let defaults: [String] = [
        // backup, sync, search
        "rsync", "tar", "borg", "restic", "rclone", "kopia", "duplicity", "rdiff-backup", "updatedb", "plocate",
        "find", "locate", "baloo_file", "baloo_file_extractor", "tracker-extract", "tracker-extract-3",
        "localsearch-extractor", "tracker-miner-fs", "tracker-miner-fs-3",
        // file managers
        "pcmanfm", "pcmanfm-qt", "nautilus", "nemo", "nemo-desktop", "caja", "thunar", "Thunar", "dolphin",
        "konqueror", "krusader", "spacefm", "doublecmd", "pantheon-files", "io.elementary.files", "peony",
        "dde-file-manager", "xfdesktop", "gvfsd-metadata",
        // thumbnailers
        "tumblerd", "kioworker", "kioslave5", "kioworker5", "thumbnail.so", "gnome-thumbnail-factory",
        "gdk-pixbuf-thumbnailer", "gnome-desktop-thumbnailer", "evince-thumbnailer", "totem-video-thumbnailer",
        "ffmpegthumbnailer", "glycin-image-rs", "glycin-loaders", "xdg-thumbnailer", "raw-thumbnailer",
        "gnome-raw-thumbnailer", "webp-thumbnailer", "heif-thumbnailer",
    ]

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
