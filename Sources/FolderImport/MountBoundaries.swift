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

    /// Why the walk must not enter the mounted folder `path` (absolute, without a trailing "/"), or nil to walk
    /// it. Asked only at a mount point or a root: /proc/self/mountinfo is read each time.
    public static func reasonNotToWalk(_ path: String) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8),
              let type = fileSystemType(of: path, mountInfo: table) else { return nil }
        if pseudoFileSystems.contains(type) { return "the kernel's \(type), not photos" }
        if type == "fuse.photofs" {
            return "a photofs mount (its photos are a library's already; import the folders it shows instead)"
        }
        return nil
    }

    /// The type of the mount holding `path` (absolute, without a trailing "/") in a mountinfo table (proc(5)):
    /// the longest mount point that is `path` or above it; of two equal, the later line.
    static func fileSystemType(of path: String, mountInfo: String) -> String? {
        var best: (length: Int, type: String)?
        for line in mountInfo.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count > 5, let separator = fields.firstIndex(of: "-"), separator + 1 < fields.count else { continue }
            let point = unescaped(fields[4])
            let contains = point == "/" || path == point || path.hasPrefix(point + "/")
            guard contains, point.utf8.count >= best?.length ?? 0 else { continue }
            best = (point.utf8.count, String(fields[separator + 1]))
        }
        return best?.type
    }

    /// mountinfo writes a space, tab, newline and backslash in a path as \040, \011, \012, \134.
    static func unescaped(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
               let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
