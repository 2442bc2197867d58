// Mounts the folder walk does not enter: photofs's own (its photos are a library's already) and the kernel's.
import Foundation

/// A folder on another file system than its parent is a mount point. Most are photos (a NAS share, a card, an
/// sshfs), but two kinds are not: a photofs mount inside an imported folder (`~/Photos` mounted, then `~`
/// imported) made every photo a duplicate of itself read through FUSE, kept a deleted photo alive through its
/// copies in the mount, and fed the mount's /recent back into each import; and the kernel's own (/proc, /sys:
/// 650,000 warnings for `import folder LIB /`).
public enum MountBoundaries {
    /// The kernel's pseudo file systems (their types in /proc/self/mountinfo), none of which holds photos.
    static let pseudoFileSystems: Set<String> = [
        "proc", "sysfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs", "pstore", "bpf",
        "configfs", "fusectl", "mqueue", "binfmt_misc", "nsfs", "efivarfs", "hugetlbfs", "rpc_pipefs",
    ]

    /// Why the walk must not enter a folder on the file system `device` (its `st_dev`), or nil to walk it.
    /// Asked only at a mount point or a root: /proc/self/mountinfo is read each time. By device, not by path:
    /// a path through a symlink or a bind mount, or "//proc" under the root "/", names no mount point.
    public static func reasonNotToWalk(device: UInt64) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8),
              let type = fileSystemType(ofDevice: device, mountInfo: table) else { return nil }
        if pseudoFileSystems.contains(type) { return "the kernel's \(type), not photos" }
        if type == "fuse.photofs" {
            return "a photofs mount (its photos are a library's already; import the folders it shows instead)"
        }
        return nil
    }

    /// Why the walk (and the watcher) must not enter a subfolder on `device` from its folder on `parent`: nil
    /// on the folder's own file system (no mount point between them, mountinfo not read), else
    /// `reasonNotToWalk(device:)`.
    public static func reasonNotToEnter(device: UInt64, from parent: UInt64?) -> String? {
        device == parent ? nil : reasonNotToWalk(device: device)
    }

    /// The type of the file system with device number `device` in a mountinfo table (proc(5): the third field
    /// is "major:minor", the type follows the "-" field), nil when no line has it.
    static func fileSystemType(ofDevice device: UInt64, mountInfo: String) -> String? {
        // glibc's dev_t encoding (gnu_dev_major, gnu_dev_minor).
        let major = (device >> 8) & 0xFFF | (device >> 32) & ~UInt64(0xFFF)
        let minor = device & 0xFF | (device >> 12) & ~UInt64(0xFF)
        let wanted = "\(major):\(minor)"
        for line in mountInfo.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count > 5, fields[2] == wanted, let separator = fields.firstIndex(of: "-"),
                  separator + 1 < fields.count else { continue }
            return String(fields[separator + 1])
        }
        return nil
    }
}
