// Which photo each file of a folder walk is, against what the last import remembered: pure, no I/O.
import Foundation
import PhotoCatalog

/// What an import remembers of one file: the catalog's `folder_file` row itself (a second struct with the same
/// fields only added two field-by-field copies per file).
public typealias RememberedFile = FolderFileRecord

/// One image file the walk found, as `lstat`/`stat` saw it.
public struct WalkedFile: Equatable, Sendable {
    public var path: String
    public var root: String
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var mtimeNanos: Int64
    public var kind: ImageFileKind
    /// Whether other users may read it (the mount then shows it 0444, else 0400).
    public var readableByOthers: Bool
    /// Whether the walk reached it through a symbolic link (its fields are the target's).
    public var isLink: Bool
    public init(path: String, root: String, device: UInt64, inode: UInt64, size: Int64, mtimeNanos: Int64,
                kind: ImageFileKind, readableByOthers: Bool = true, isLink: Bool = false) {
        self.path = path; self.root = root; self.device = device; self.inode = inode; self.size = size
        self.mtimeNanos = mtimeNanos; self.kind = kind; self.readableByOthers = readableByOthers; self.isLink = isLink
    }

    /// Its device, inode, size and mtime.
    public var stat: FileStat { FileStat(device: device, inode: inode, size: size, mtimeNanos: mtimeNanos) }
}

/// How a walked file relates to the last import.
public enum FileChange: Equatable, Sendable {
    /// Same path, device, inode, size and mtime: nothing is read.
    case unchanged
    /// Same path, other bytes (size, mtime or inode differ: editors often write a new file and rename it).
    case edited
    /// Another path, same device and inode (`mv` inside a file system).
    case renamed
    /// Another path and inode, same size and partial hash as a file that is gone (copied elsewhere, then deleted).
    case moved
    case new
}

public enum FileReconciliation {
    /// Step 1, from `stat` alone: what each walked file is, and which need reading (metadata and partial hash).
    public struct Classification: Equatable, Sendable {
        /// Per walked path: its change and, for all but `.new`, the remembered file it continues.
        public var changes: [String: (FileChange, RememberedFile?)]
        /// Remembered files neither at their path nor renamed: deleted, or moved to a new inode (step 2 looks).
        public var vanished: [RememberedFile]

        public static func == (a: Classification, b: Classification) -> Bool {
            a.vanished == b.vanished && a.changes.keys == b.changes.keys
                && a.changes.allSatisfy { key, value in b.changes[key].map { $0.0 == value.0 && $0.1 == value.1 } ?? false }
        }

        /// Paths whose bytes must be read: everything but `.unchanged` (a renamed file is read again for its
        /// title, which may come from its name).
        public var pathsToRead: [String] { changes.filter { $0.value.0 != .unchanged }.map(\.key).sorted() }
    }

    /// Identity follows the file, then the path: a walked file at its remembered path with its remembered
    /// device and inode is that file (unchanged, or edited in place); one with the device, inode, size and mtime
    /// a remembered file had is that file renamed, wherever it was (a path is often reused: a photo archived and
    /// the next card's `IMG_0001.JPG` in its place, files renumbered or two names swapped); what is left at a
    /// remembered path is that file edited (an editor's save writes a new inode and renames it over the old);
    /// the rest is new. Matching the path first gave the archived photo's identity (inode, id, thumbnails) to
    /// the new card's. A rename keeps size and mtime; an inode alone is no identity: ext4 hands a freed inode to
    /// the next new file (a photo deleted, another saved), and a card's or a share's inode numbers change when
    /// it is mounted again.
    public static func classify(remembered: [RememberedFile], walked: [WalkedFile]) -> Classification {
        var byPath: [String: Int] = [:]
        for (index, file) in remembered.enumerated() { byPath[file.path] = index }
        var claimed = [Bool](repeating: false, count: remembered.count)
        var changes: [String: (FileChange, RememberedFile?)] = [:]
        let inOrder = walked.sorted { $0.path < $1.path }
        // 1. Same path, same file.
        var left: [WalkedFile] = []
        for file in inOrder {
            if let index = byPath[file.path], remembered[index].device == file.device, remembered[index].inode == file.inode {
                let known = remembered[index]
                claimed[index] = true
                changes[file.path] = (known.size == file.size && known.mtimeNanos == file.mtimeNanos ? .unchanged : .edited, known)
            } else {
                left.append(file)
            }
        }
        // 2. The same file, unchanged, at another path (renamed or moved inside a file system). Only when some file is not
        // where it was: an unchanged re-import of 100,000 files hashes no inode.
        if !left.isEmpty {
            var byInode: [InodeKey: [Int]] = [:]
            for (index, file) in remembered.enumerated().sorted(by: { $0.element.path < $1.element.path }) where !claimed[index] {
                byInode[InodeKey(device: file.device, inode: file.inode), default: []].append(index)
            }
            var stillLeft: [WalkedFile] = []
            for file in left {
                let key = InodeKey(device: file.device, inode: file.inode)
                if let index = byInode[key]?.first(where: {
                    !claimed[$0] && remembered[$0].size == file.size && remembered[$0].mtimeNanos == file.mtimeNanos
                }) {
                    claimed[index] = true
                    changes[file.path] = (.renamed, remembered[index])
                } else {
                    stillLeft.append(file)
                }
            }
            left = stillLeft
        }
        // 3. Another file at a remembered path whose file went: edited. 4. The rest: new.
        for file in left {
            if let index = byPath[file.path], !claimed[index] {
                claimed[index] = true
                changes[file.path] = (.edited, remembered[index])
            } else {
                changes[file.path] = (.new, nil)
            }
        }
        let vanished = remembered.indices.filter { !claimed[$0] }.map { remembered[$0] }.sorted { $0.path < $1.path }
        return Classification(changes: changes, vanished: vanished)
    }

    /// A walked file after step 1 and, when it was read, its partial hash.
    public struct Candidate: Equatable, Sendable {
        public var file: WalkedFile
        public var change: FileChange
        public var previous: RememberedFile?
        public var partialHash: String
        public init(file: WalkedFile, change: FileChange, previous: RememberedFile?, partialHash: String) {
            self.file = file; self.change = change; self.previous = previous; self.partialHash = partialHash
        }
    }

    /// Step 2's answer: every file's photo, the photos no file holds any more, and the duplicates.
    public struct Resolution: Equatable, Sendable {
        /// Every current file with its photo id and hashes, as the next import will remember it.
        public var files: [RememberedFile]
        /// Per current file path, how it changed (`.moved` is decided here).
        public var changes: [String: FileChange]
        /// Photos that were held by remembered files and are held by none now.
        public var removedPhotoIDs: [String]
        /// Files beyond the first of each set of identical files.
        public var duplicateFiles: Int
        /// Each photo's file: the one it was shown from before when still there, else the first path.
        public var representative: [String: String]
        /// Photos to write: new, or one of its files changed, or its representative moved.
        public var photosToWrite: Set<String>
    }

    /// Step 2: moves by content among vanished files, duplicates (size, then partial hash, then `fullHash`,
    /// asked only for files agreeing on both), photo ids (kept; new ones from `newID`, made unique), and what
    /// to write or remove. `others` are remembered files of folders not walked now: they keep their photos and
    /// can be duplicates of walked files. `previousRepresentative` is each photo's file before this import.
    public static func resolve(candidates: [Candidate], vanished: [RememberedFile], others: [RememberedFile],
                               previousRepresentative: [String: String],
                               newID: (Candidate) -> String, takenIDs: Set<String>,
                               fullHash: (String) -> String?) -> Resolution {
        var changes: [String: FileChange] = [:]
        var photoOf: [String: String] = [:]
        var fullHashes: [String: String] = [:]
        // Moves by content: a new file with the size and partial hash of a vanished one continues its photo.
        var vanishedByContent: [ContentKey: [RememberedFile]] = [:]
        for file in vanished { vanishedByContent[ContentKey(size: file.size, partial: file.partialHash), default: []].append(file) }
        var used = Set(others.map(\.photoID))
        for candidate in candidates where candidate.change != .new {
            if let previous = candidate.previous { photoOf[candidate.file.path] = previous.photoID; used.insert(previous.photoID) }
            changes[candidate.file.path] = candidate.change
            if candidate.change == .unchanged, let full = candidate.previous?.fullHash { fullHashes[candidate.file.path] = full }
        }
        var taken = takenIDs.union(used)
        for candidate in candidates where candidate.change == .new {
            let key = ContentKey(size: candidate.file.size, partial: candidate.partialHash)
            if var matches = vanishedByContent[key], !matches.isEmpty {
                let previous = matches.removeFirst()
                vanishedByContent[key] = matches
                photoOf[candidate.file.path] = previous.photoID
                changes[candidate.file.path] = .moved
                taken.insert(previous.photoID)
                continue
            }
            var id = newID(candidate)
            if taken.contains(id) {
                var suffix = 2
                while taken.contains("\(id)-\(suffix)") { suffix += 1 }
                id = "\(id)-\(suffix)"
            }
            taken.insert(id)
            photoOf[candidate.file.path] = id
            changes[candidate.file.path] = .new
        }

        // Duplicates: same size, same partial hash, then (for files longer than the partial hash covers) the
        // same full hash. Files of other folders take part with their remembered hashes.
        struct Entry { var path: String; var size: Int64; var partial: String; var photoID: String; var isOther: Bool }
        var entries = candidates.map { Entry(path: $0.file.path, size: $0.file.size, partial: $0.partialHash,
                                             photoID: photoOf[$0.file.path] ?? "", isOther: false) }
        entries += others.map { Entry(path: $0.path, size: $0.size, partial: $0.partialHash, photoID: $0.photoID, isOther: true) }
        for other in others { if let full = other.fullHash { fullHashes[other.path] = full } }
        var groups: [ContentKey: [Int]] = [:]
        for (index, entry) in entries.enumerated() where !entry.partial.isEmpty {
            groups[ContentKey(size: entry.size, partial: entry.partial), default: []].append(index)
        }
        var duplicateFiles = 0
        for key in groups.keys.sorted(by: { ($0.size, $0.partial) < ($1.size, $1.partial) }) {
            guard let members = groups[key], members.count > 1 else { continue }
            var sets: [[Int]]
            if key.size <= Int64(ContentHash.prefixBytes) {
                sets = [members] // the partial hash covered every byte
            } else {
                var byFull: [String: [Int]] = [:]
                for index in members {
                    let path = entries[index].path
                    if fullHashes[path] == nil { fullHashes[path] = fullHash(path) }
                    guard let full = fullHashes[path] else { continue } // unreadable now: not a duplicate
                    byFull[full, default: []].append(index)
                }
                sets = byFull.keys.sorted().compactMap { byFull[$0] }.filter { $0.count > 1 }
            }
            for set in sets {
                // Only sets with a file of the walked folders: another folder's own copies are its news.
                if set.contains(where: { !entries[$0].isOther }) { duplicateFiles += set.count - 1 }
                // One photo: the id held before by any of them (the smallest, so the choice is the same every
                // run); a file of another folder keeps its photo, so its id wins.
                let otherIDs = set.filter { entries[$0].isOther }.map { entries[$0].photoID }
                let keptIDs = set.compactMap { index -> String? in
                    let path = entries[index].path
                    let change = changes[path]
                    return change == .new ? nil : entries[index].photoID
                }
                let id = otherIDs.min() ?? keptIDs.min() ?? set.map { entries[$0].photoID }.min() ?? ""
                for index in set where !entries[index].isOther { photoOf[entries[index].path] = id }
            }
        }

        // Files that share a photo id must share their bytes: a duplicate edited on its own (or a file edited
        // to differ from its copies) leaves the set and becomes a photo of its own. The part holding the
        // photo's previous file keeps the id.
        var holders: [String: [FileReconciliation.Candidate]] = [:]
        for candidate in candidates { if let id = photoOf[candidate.file.path] { holders[id, default: []].append(candidate) } }
        for (id, group) in holders where group.count > 1 {
            var parts: [String: [FileReconciliation.Candidate]] = [:]
            for candidate in group {
                let key = "\(candidate.file.size) \(candidate.partialHash) \(fullHashes[candidate.file.path] ?? "")"
                parts[key, default: []].append(candidate)
            }
            guard parts.count > 1 else { continue }
            let keeper = parts.first { $0.value.contains { $0.file.path == previousRepresentative[id] } }?.key
                ?? parts.keys.min { (parts[$0]?.map(\.file.path).min() ?? "") < (parts[$1]?.map(\.file.path).min() ?? "") }
            for (key, part) in parts where key != keeper {
                var newOne = newID(part[0])
                if taken.contains(newOne) {
                    var suffix = 2
                    while taken.contains("\(newOne)-\(suffix)") { suffix += 1 }
                    newOne = "\(newOne)-\(suffix)"
                }
                taken.insert(newOne)
                for candidate in part { photoOf[candidate.file.path] = newOne }
            }
        }

        var files: [RememberedFile] = []
        var members: [String: [String]] = [:]
        for candidate in candidates {
            guard let id = photoOf[candidate.file.path] else { continue }
            let file = candidate.file
            files.append(RememberedFile(path: file.path, root: file.root, device: file.device, inode: file.inode,
                                        size: file.size, mtimeNanos: file.mtimeNanos, partialHash: candidate.partialHash,
                                        fullHash: fullHashes[file.path], photoID: id))
            members[id, default: []].append(file.path)
        }
        // A photo also held by a file of another folder may be shown from there: it stays where it was.
        for other in others where members[other.photoID] != nil { members[other.photoID, default: []].append(other.path) }
        // A photo shown from a file of this folder that is gone, and held now only by another folder's copies,
        // is shown from one of those: it kept pointing at the deleted file (EIO on open) until that other
        // folder was imported, and importing this one again, as the log said, changed nothing.
        let vanishedPaths = Set(vanished.map(\.path))
        let shownFromVanished = Set(others.map(\.photoID).filter { id in
            members[id] == nil && previousRepresentative[id].map(vanishedPaths.contains) == true
        })
        for other in others where shownFromVanished.contains(other.photoID) {
            members[other.photoID, default: []].append(other.path)
        }
        let stillHeld = Set(files.map(\.photoID)).union(others.map(\.photoID))
        let before = Set(candidates.compactMap(\.previous?.photoID)).union(vanished.map(\.photoID))
        let removed = before.subtracting(stillHeld).sorted()

        var representative: [String: String] = [:]
        var photosToWrite = Set<String>()
        // A photo is shown from a file of its own, not from a link to it, when it has one: a link's name would
        // title it ("best", of a "Favourites" folder, sorted before "trip/…") and its URL would break with it.
        let links = Set(candidates.filter(\.file.isLink).map(\.file.path))
        for (id, paths) in members {
            let sorted = paths.sorted()
            let files = sorted.filter { !links.contains($0) }
            let previous = previousRepresentative[id].flatMap { sorted.contains($0) ? $0 : nil }
            let chosen = previous.flatMap { links.contains($0) && !files.isEmpty ? nil : $0 } ?? files.first ?? sorted[0]
            representative[id] = chosen
            // A new copy of a photo shown from an unchanged file changes nothing the photo shows.
            if chosen != previousRepresentative[id] || (changes[chosen] ?? .unchanged) != .unchanged {
                photosToWrite.insert(id)
            }
        }
        return Resolution(files: files.sorted { $0.path < $1.path }, changes: changes, removedPhotoIDs: removed,
                          duplicateFiles: duplicateFiles, representative: representative, photosToWrite: photosToWrite)
    }

    struct InodeKey: Hashable { var device: UInt64; var inode: UInt64 }
    struct ContentKey: Hashable { var size: Int64; var partial: String }
}
