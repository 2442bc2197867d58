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
    /// What is there but could not be looked at (permissions, an I/O error, a share gone stale): the paths'
    /// bytes of folders that could not be opened and of entries that could not be `stat`ed (which may be
    /// folders: a folder of mode 644 lists its entries but stats none). Photos imported from them, or from
    /// inside them, are kept as they were, not removed as gone: a `chmod` or a network hiccup must not empty part
    /// of the library (and bring it back as new photos with new inodes). Only what no longer exists (ENOENT,
    /// ENOTDIR) is gone. Bytes, not `String`s: two spellings of "é" (NFC, NFD) are two paths.
    public var unreadable: Set<[UInt8]> = []
    /// Image files left out for their names (not UTF-8, or one text with a sibling's in another Unicode form).
    public var skippedForTheirNames = 0
    /// Links whose target cannot be reached (gone, or unreadable): skipped, and counted so, at every import.
    public var brokenLinks = 0

    public init(walkedRoots: Set<String> = []) { self.walkedRoots = walkedRoots }

    /// Whether `path` is, or is inside, something the walk could not look at: its ancestors looked up one by one
    /// (a folder of 20,000 entries that cannot be stat'ed must not make each remembered file a linear search).
    public func isUnreadable(_ path: String) -> Bool {
        guard !unreadable.isEmpty else { return false }
        var bytes = Array(path.utf8)
        while true {
            if unreadable.contains(bytes) { return true }
            guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), slash > 0 else { return false }
            bytes.removeSubrange(slash...)
        }
    }
}

public enum FolderWalk {
    /// Walks every root recursively: entries in the byte order of their paths, symlinks to folders not followed (a link to a file
    /// is its target), what `isLeftOut` says left out, a folder that vanishes or cannot be read one warning.
    /// Roots are absolute paths without a trailing "/".
    public static func walk(roots: [String]) -> FolderWalkResult {
        var result = FolderWalkResult()
        // Roots in the byte order of their paths, each walked in that order too: the files come out sorted as
        // the catalog keeps them, so a re-import merges the two without sorting or hashing (UnchangedReimport).
        for root in roots.sorted(by: { PathOrder.precedes($0 + "/", $1 + "/") }) {
            var info = stat()
            guard stat(root, &info) == 0 else {
                result.warnings.append("folder not imported: \(root): \(lastError(or: "cannot be read"))")
                continue
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                // errno is not this stat's (it succeeded): say what the root is not.
                result.warnings.append("folder not imported: \(root): not a folder")
                continue
            }
            if let reason = MountBoundaries.reasonNotToWalk(device: UInt64(info.st_dev)) {
                result.warnings.append("folder not imported: \(root): \(reason)")
                continue
            }
            guard let handle = opendir(root) else {
                result.warnings.append("folder not imported: \(root): \(lastError(or: "cannot be read"))")
                continue
            }
            closedir(handle)
            result.walkedRoots.insert(root)
            walkFolder(root, root: root, othersMayEnter: othersMayEnter(root), into: &result)
        }
        return result
    }

    /// One directory entry as the walk needs it (two whole `stat`s per entry made sorting a folder of 1,000
    /// files move 300 KB).
    private struct Entry {
        /// `failed`: a warning, and whether the entry is there still (not ENOENT): then it is `unreadable`.
        enum Kind { case folder, file, linkToFolder, special, failed(String, present: Bool), brokenLink(String, present: Bool) }
        var name: String
        /// The name, with "/" after it for a folder: sorting siblings by it sorts their paths by bytes.
        var sortKey: String
        var kind: Kind
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var size: Int64 = 0
        var mtimeNanos: Int64 = 0
        /// A file: others may read it; a folder: others may pass through it (each on its own mode alone).
        var readableByOthers = false
        /// Reached through a symbolic link (the other fields are its target's).
        var isLink = false
        /// Its name is not UTF-8 (`name` shows it with its other bytes escaped).
        var notUTF8 = false

        /// Whether an import would take it: a folder it walks, an image file.
        var isTaken: Bool {
            switch kind {
            case .folder: return !FolderWalk.isLeftOut(folderNamed: name)
            case .file: return !FolderWalk.isLeftOut(fileNamed: name) && ImageFileKind.fromName(name).isImage
            case .linkToFolder, .special, .failed, .brokenLink: return false
            }
        }
    }

    /// Whether users other than the owner may reach what is inside `folder`: it and every folder above it let
    /// others through (the x bit for others). A file readable by all inside a 0700 home folder is not readable
    /// by others, and a mount with `allow_other` must not show it 0444.
    public static func othersMayEnter(_ folder: String) -> Bool {
        var path = folder
        while true {
            var info = stat()
            guard stat(path.isEmpty ? "/" : path, &info) == 0, info.st_mode & S_IXOTH != 0 else { return false }
            guard !path.isEmpty, let slash = path.lastIndex(of: "/") else { return true }
            path = String(path[..<slash])
        }
    }

    /// `othersMayEnter`: whether other users may reach `folder` (`othersMayEnter(_:)`), so whether a file in it
    /// readable by them on its own is.
    private static func walkFolder(_ folder: String, root: String, othersMayEnter: Bool, into result: inout FolderWalkResult) {
        guard let handle = opendir(folder) else {
            let gone = isGone(errno)
            result.warnings.append("folder skipped: \(folder): \(lastError(or: "cannot be read"))"
                                   + (gone ? "" : " (photos imported from it are kept)"))
            if !gone { result.unreadable.insert(Array(folder.utf8)) }
            return
        }
        // Each entry is stat'ed relative to the open folder (fstatat), as find(1) does: a stat by absolute path
        // walks every component again, which made the walk of 100,000 files several times find's.
        let folderFD = dirfd(handle)
        var folderInfo = stat()
        let folderDevice = fstat(folderFD, &folderInfo) == 0 ? UInt64(folderInfo.st_dev) : nil
        var entries: [Entry] = []
        while let entry = readdir(handle) {
            var notUTF8 = false
            let read: Entry? = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
                let length = strnlen(base, raw.count)
                if length == 1 && base[0] == 0x2E || length == 2 && base[0] == 0x2E && base[1] == 0x2E { return nil }
                let bytes = UnsafeRawBufferPointer(start: base, count: length)
                // A name that is not UTF-8 (Latin-1 from an old Windows or FAT disk) has no path a photo can be
                // read at again: decoded, its bytes are replaced. Said so below, not "No such file or directory".
                let valid = String(validating: bytes, as: UTF8.self)
                let name = valid ?? escaped(bytes)
                notUTF8 = valid == nil
                var link = stat()
                guard fstatat(folderFD, base, &link, AT_SYMLINK_NOFOLLOW) == 0 else {
                    // Gone since the listing (a file deleted during the walk) or unreadable.
                    let present = !isGone(errno)
                    return Entry(name: name, sortKey: name,
                                 kind: .failed("entry skipped: \(folder)/\(name): \(lastError(or: "vanished"))", present: present))
                }
                var info = link
                // A link's file is read where it is: others reach it through its own folders, not the link's.
                var reachable = othersMayEnter
                if (link.st_mode & S_IFMT) == S_IFLNK {
                    guard fstatat(folderFD, base, &info, 0) == 0 else {
                        let present = !isGone(errno)
                        return Entry(name: name, sortKey: name,
                                     kind: .brokenLink("link skipped: \(folder)/\(name): \(lastError(or: "broken"))", present: present))
                    }
                    // Links to folders are not followed.
                    if (info.st_mode & S_IFMT) == S_IFDIR { return Entry(name: name, sortKey: name, kind: .linkToFolder) }
                    if let target = realpath(folder + "/" + name, nil) {
                        reachable = FolderWalk.othersMayEnter((String(cString: target) as NSString).deletingLastPathComponent)
                        free(target)
                    } else {
                        reachable = false
                    }
                }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    return Entry(name: name, sortKey: name + "/", kind: .folder, device: UInt64(info.st_dev),
                                 readableByOthers: info.st_mode & S_IXOTH != 0)
                case S_IFREG:
                    return Entry(
                        name: name, sortKey: name, kind: .file, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                        size: Int64(info.st_size),
                        mtimeNanos: Int64(info.st_mtim.tv_sec).multipliedReportingOverflow(by: 1_000_000_000).partialValue
                            &+ Int64(info.st_mtim.tv_nsec),
                        readableByOthers: reachable && info.st_mode & S_IROTH != 0,
                        isLink: (link.st_mode & S_IFMT) == S_IFLNK)
                default:
                    return Entry(name: name, sortKey: name, kind: .special) // sockets, pipes, devices
                }
            }
            if var read {
                read.notUTF8 = notUTF8
                entries.append(read)
            }
        }
        closedir(handle)
        entries.sort { PathOrder.precedes($0.sortKey, $1.sortKey) }
        // Two names that are one text in two Unicode forms (NFC "café" beside NFD "café", a folder synced from a
        // Mac beside one made here) are two files, but one name to Swift's `String` comparison, which every
        // path dictionary of an import uses: they became one photo and the other was lost from the library.
        // The later one is left out, with a warning.
        // Both only for what the import would take: a Latin-1 PDF or video is counted as before, and warns of
        // nothing at every import.
        // A folder of ASCII names has neither (and is most folders: the check hashed every name of an unchanged
        // re-import of 100,000 files).
        var seen: [String: String] = [:]
        let plainASCII = !entries.contains { $0.notUTF8 || !$0.name.utf8.allSatisfy { $0 < 0x80 } }
        for index in entries.indices where !plainASCII && entries[index].isTaken {
            let name = entries[index].name
            if entries[index].notUTF8 {
                if case .file = entries[index].kind { result.skippedForTheirNames += 1 }
                entries[index].kind = .failed("entry skipped: \(folder)/\(name): its name is not UTF-8; rename it to import it",
                                              present: true)
                continue
            }
            guard let first = seen[name] else {
                seen[name] = name
                continue
            }
            if case .file = entries[index].kind { result.skippedForTheirNames += 1 }
            entries[index].kind = .failed("entry skipped: \(folder)/\(name): the same name as \(first) in another "
                                          + "Unicode form (NFC, NFD); rename one of them to import both", present: true)
        }
        for entry in entries {
            let name = entry.name
            switch entry.kind {
            case .failed(let warning, let present):
                result.warnings.append(warning)
                if present { result.unreadable.insert(Array((folder + "/" + name).utf8)) }
            case .brokenLink(let warning, let present):
                // Only a link an import would take if it led somewhere: Emacs's `.#notes.txt` locks and other
                // links to nothing are no photo, and warned of at every import they were noise.
                if !isLeftOut(fileNamed: name) && ImageFileKind.fromName(name).isImage {
                    result.warnings.append(warning)
                    result.brokenLinks += 1
                } else {
                    result.skipped[root, default: [:]][.other, default: 0] += 1
                }
                if present { result.unreadable.insert(Array((folder + "/" + name).utf8)) }
            case .linkToFolder:
                continue
            case .folder:
                guard !isLeftOut(folderNamed: name) else { continue }
                // A mount point (another device than this folder's): not a photofs mount or the kernel's.
                if let reason = MountBoundaries.reasonNotToEnter(device: entry.device, from: folderDevice) {
                    result.warnings.append("folder skipped: \(folder)/\(name): \(reason)")
                    continue
                }
                walkFolder(folder + "/" + name, root: root, othersMayEnter: othersMayEnter && entry.readableByOthers,
                           into: &result)
            case .special:
                result.skipped[root, default: [:]][.other, default: 0] += 1
            case .file:
                guard !isLeftOut(fileNamed: name) else { result.skipped[root, default: [:]][.other, default: 0] += 1; continue }
                let kind = ImageFileKind.fromName(name)
                guard kind.isImage else { result.skipped[root, default: [:]][kind, default: 0] += 1; continue }
                result.images.append(WalkedFile(
                    path: folder + "/" + name, root: root, device: entry.device, inode: entry.inode, size: entry.size,
                    mtimeNanos: entry.mtimeNanos, kind: kind, readableByOthers: entry.readableByOthers, isLink: entry.isLink))
            }
        }
    }

    /// Folders that hold no photos of the person's, only copies or leftovers: hidden ones (".thumbnails", ".git",
    /// ".Trash-1000"), the metadata a NAS keeps beside the photos it shares (Synology's "@eaDir" thumbnails,
    /// "#recycle" and "#snapshot", QNAP's "@Recycle"), a card's "$RECYCLE.BIN" and "System Volume Information",
    /// and "lost+found" (root's only: a warning at every import), which would import as duplicates or as photos
    /// deleted long ago. Hidden
    /// files are left out too (counted as other files): macOS writes a "._IMG_0001.JPG" of metadata beside
    /// each photo on exFAT cards and shares, which is no image.
    public static func isLeftOut(folderNamed name: String) -> Bool {
        name.hasPrefix(".") || leftOutFolders.contains(name)
    }

    /// A name's bytes for a warning: UTF-8 where it is, each other byte as \xHH.
    static func escaped(_ bytes: UnsafeRawBufferPointer) -> String {
        var text = ""
        var index = 0
        while index < bytes.count {
            // The longest valid UTF-8 sequence starting here (1–4 bytes), else one escaped byte.
            var taken = false
            for length in stride(from: min(4, bytes.count - index), through: 1, by: -1) {
                if let piece = String(validating: UnsafeRawBufferPointer(rebasing: bytes[index..<index + length]), as: UTF8.self) {
                    text += piece
                    index += length
                    taken = true
                    break
                }
            }
            if !taken {
                text += "\\x" + String(format: "%02X", bytes[index])
                index += 1
            }
        }
        return text
    }

    /// Hidden files: macOS's "._IMG_0001.JPG" metadata beside each photo, Android's ".pending-…" half-written.
    public static func isLeftOut(fileNamed name: String) -> Bool { name.hasPrefix(".") }

    /// Synology's, QNAP's, Windows' (on exFAT and NTFS cards) and ext4's own folders beside the photos.
    private static let leftOutFolders: Set<String> = [
        "@eaDir", "#recycle", "#snapshot", "@Recycle", "@Recently-Snapshot", "$RECYCLE.BIN", "System Volume Information",
        "lost+found",
    ]

    /// An error that says the entry no longer exists (deleted, or a folder replaced by a file), not that it
    /// could not be looked at.
    private static func isGone(_ code: Int32) -> Bool { code == ENOENT || code == ENOTDIR }

    static func lastError(or fallback: String) -> String {
        let code = errno
        return code == 0 ? fallback : String(cString: strerror(code))
    }
}
