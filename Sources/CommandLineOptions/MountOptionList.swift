// The `-o a,b=c,...` lists of fstab and mount(8): split, and each item sorted into photofs's own options,
// FUSE's, words only mount(8) and fstab mean, or an error that names it.
import Foundation

public enum MountOptionList {
    /// What one `-o` item is.
    public enum Kind: Equatable {
        case photofs(MountOption, String)
        case fuse
        case ignored
    }

    /// Flags libfuse 3.14's `fuse_session_new` accepts (its `fuse_mount_opts` and `fuse_ll_opts` tables;
    /// each was tried against the installed libfuse). `rw` is left out on purpose: see `mountOnly`.
    public static let fuseFlags: Set<String> = [
        "allow_other", "allow_root", "auto_unmount", "default_permissions", "ro", "suid", "nosuid", "dev",
        "nodev", "exec", "noexec", "async", "sync", "dirsync", "atime", "noatime", "debug",
    ]
    /// FUSE options with a value. `blksize=` and `blkdev` are left out: they are for `fuseblk` file
    /// systems backed by a block device, which photofs is not.
    /// `max_read=` is left out too: libfuse 3.14 then ends the session at INIT unless the file system's
    /// init() asks for the same size ("init() and fuse_session_new() requested different maximum read
    /// size"), and photofs reads whatever size the kernel asks.
    public static let fuseValued: Set<String> = ["fsname", "subtype", "context", "fscontext", "defcontext", "rootcontext"]

    /// Words mount(8), fstab and systemd use for themselves, accepted and dropped. `rw`: mount(8) adds it
    /// by itself unless `ro` is given, and the mount is read-only whatever is asked. The atime policies
    /// (relatime, strictatime, ...): libfuse 3.14 refuses them, and no atime is ever written on a
    /// read-only mount (a file's atime is its date taken).
    public static let mountOnly: Set<String> = [
        "rw", "defaults", "auto", "noauto", "user", "users", "nouser", "owner", "group", "_netdev", "nofail",
        "silent", "loud", "relatime", "norelatime", "strictatime", "nostrictatime", "diratime", "nodiratime",
        "lazytime", "nolazytime", "iversion", "noiversion",
    ]
    /// Prefixes of mount(8)'s own options: `x-systemd.automount`, `x-gvfs-show`, `comment=...`,
    /// `user=NAME` and `uhelper=` (what mount(8) records for a user mount).
    public static let mountOnlyPrefixes = ["x-", "comment=", "user=", "uhelper="]

    /// Splits "a,b=c" into items. A value in double quotes may hold commas (`backup_tools="rsync,tar"`), as
    /// libmount allows in fstab; the quotes are dropped. Empty items (",,", a trailing comma) are skipped.
    public static func split(_ list: String) -> [String] {
        var items: [String] = []
        var current = ""
        var quoted = false
        for character in list {
            switch character {
            case "\"": quoted.toggle()
            case "," where !quoted:
                if !current.isEmpty { items.append(current) }
                current = ""
            default: current.append(character)
            }
        }
        if !current.isEmpty { items.append(current) }
        return items
    }

    public static func classify(_ item: String) throws -> Kind {
        let name: String
        let value: String?
        if let equals = item.firstIndex(of: "=") {
            name = String(item[..<equals])
            value = String(item[item.index(after: equals)...])
        } else {
            name = item
            value = nil
        }
        if let option = MountOption.named(name) {
            if option.isFlag {
                guard value == nil else { throw OptionError("-o \(option.mountOptionName) takes no value (write \(name), not \(item))") }
                return .photofs(option, "")
            }
            guard let value else {
                throw OptionError("-o \(option.mountOptionName) needs a value: \(option.mountOptionName)=\(example(option))")
            }
            return .photofs(option, value)
        }
        if fuseFlags.contains(name) {
            guard value == nil else { throw OptionError("-o \(name) takes no value (write \(name), not \(item))") }
            return .fuse
        }
        if fuseValued.contains(name) {
            guard let value, !value.isEmpty else { throw OptionError("-o \(name) needs a value: \(name)=...") }
            // Our own list goes to libfuse as one comma-joined -o, so a comma would split the value.
            guard !value.contains(",") else { throw OptionError("-o \(name) cannot contain a comma: \"\(value)\"") }
            return .fuse
        }
        if mountOnly.contains(item) || mountOnlyPrefixes.contains(where: { item.hasPrefix($0) }) { return .ignored }
        if name == "blkdev" || name == "blksize" {
            throw OptionError("mount option \"\(item)\" is for file systems on a block device; photofs has none")
        }
        if name == "max_read" {
            throw OptionError("mount option \"\(item)\" is not supported: photofs answers reads of any size the kernel asks")
        }
        throw OptionError(unknownMessage(item))
    }

    static func unknownMessage(_ item: String) -> String {
        let own = MountOption.allCases.map { $0.isFlag ? $0.mountOptionName : $0.mountOptionName + "=" }
        let fuse = fuseFlags.sorted() + fuseValued.sorted().map { $0 + "=" }
        return "unknown mount option \"\(item)\". photofs's own (as in `photofs mount --help`): "
            + own.joined(separator: ", ") + ". FUSE's (see `man 8 fuse`): " + fuse.joined(separator: ", ")
            + ". fstab words (defaults, noauto, nofail, _netdev, x-systemd.*, comment=...) are ignored."
    }

    static func example(_ option: MountOption) -> String {
        switch option {
        case .cacheDir: return "/var/cache/photofs"
        case .size: return "square:256"
        case .jpegQuality: return "85"
        case .maxPixels: return "100"
        case .cacheSize: return "2G"
        case .maxDownloads: return "16"
        case .prefetch: return "3"
        case .connectTimeout: return "10"
        case .stallTimeout: return "30"
        case .proxy: return "http://proxy.home:3128"
        case .backupTools: return "\"rsync,tar\""
        case .desktopThumbnails: return "off"
        case .thumbnailListers: return "\"gthumb,geeqie\""
        case .busyPoll: return "0"
        case .logLevel: return "debug"
        case .allowNonempty, .foreground: return ""
        }
    }
}
