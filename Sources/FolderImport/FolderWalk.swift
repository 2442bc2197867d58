// Walks imported folders: image files with their stat, everything else counted, problems as warnings.
import Foundation

public struct FolderWalkResult: Sendable {
    public var images: [WalkedFile] = []
    /// Files left out, per root, by kind (video, raw, other).
    public var skipped: [String: [ImageFileKind: Int]] = [:]
    /// One line per folder or file that could not be looked at; the walk goes on.
    public var warnings: [String] = []
    /// Roots that could be walked (a root that is missing or unreadable keeps its remembered files untouched).
    public var walkedRoots: Set<String> = []
}

public enum FolderWalk {
    /// Walks every root recursively: entries sorted by name, symlinks to folders not followed (a link to a file
    /// is its target), hidden folders (".thumbnails", ".git") left out, a folder that vanishes or cannot be
    /// read one warning. Roots are absolute paths without a trailing "/".
    public static func walk(roots: [String]) -> FolderWalkResult {
        var result = FolderWalkResult()
        for root in roots {
            var info = stat()
            guard stat(root, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                result.warnings.append("folder not imported: \(root): \(lastError(or: "not a folder"))")
                continue
            }
            guard let handle = opendir(root) else {
                result.warnings.append("folder not imported: \(root): \(lastError(or: "cannot be read"))")
                continue
            }
            closedir(handle)
            result.walkedRoots.insert(root)
            walkFolder(root, root: root, into: &result)
        }
        return result
    }

    private static func walkFolder(_ folder: String, root: String, into result: inout FolderWalkResult) {
        guard let handle = opendir(folder) else {
            result.warnings.append("folder skipped: \(folder): \(lastError(or: "cannot be read"))")
            return
        }
        // Each entry is stat'ed relative to the open folder (fstatat), as find(1) does: a stat by absolute path
        // walks every component again, which made the walk of 100,000 files several times find's.
        let folderFD = dirfd(handle)
        var entries: [(name: String, link: stat, info: stat?, error: String?)] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name != "." && name != ".." else { continue }
            var link = stat()
            guard fstatat(folderFD, name, &link, AT_SYMLINK_NOFOLLOW) == 0 else {
                // Gone since the listing (a file deleted during the walk) or unreadable.
                entries.append((name, link, nil, "file skipped: \(folder)/\(name): \(lastError(or: "vanished"))"))
                continue
            }
            var info = link
            if (link.st_mode & S_IFMT) == S_IFLNK, fstatat(folderFD, name, &info, 0) != 0 {
                entries.append((name, link, nil, "link skipped: \(folder)/\(name): \(lastError(or: "broken"))"))
                continue
            }
            entries.append((name, link, info, nil))
        }
        closedir(handle)
        for entry in entries.sorted(by: { $0.name < $1.name }) {
            let name = entry.name
            let path = folder + "/" + name
            guard let info = entry.info else {
                if let error = entry.error { result.warnings.append(error) }
                continue
            }
            // Links to folders are not followed.
            if (entry.link.st_mode & S_IFMT) == S_IFLNK && (info.st_mode & S_IFMT) == S_IFDIR { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                if !name.hasPrefix(".") { walkFolder(path, root: root, into: &result) }
            case S_IFREG:
                let kind = ImageFileKind.fromName(name)
                guard kind.isImage else { result.skipped[root, default: [:]][kind, default: 0] += 1; continue }
                result.images.append(WalkedFile(
                    path: path, root: root, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                    size: Int64(info.st_size),
                    mtimeNanos: Int64(info.st_mtim.tv_sec).multipliedReportingOverflow(by: 1_000_000_000).partialValue
                        &+ Int64(info.st_mtim.tv_nsec),
                    kind: kind, readableByOthers: info.st_mode & S_IROTH != 0))
            default:
                result.skipped[root, default: [:]][.other, default: 0] += 1 // sockets, pipes, devices
            }
        }
    }

    static func lastError(or fallback: String) -> String {
        let code = errno
        return code == 0 ? fallback : String(cString: strerror(code))
    }
}
