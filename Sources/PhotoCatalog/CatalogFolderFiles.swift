// What folder imports remember of each file they imported: its place, stat and hashes, and which photo it is.
import Foundation
import GRDB

/// One `folder_file` row. Device and inode are stored as their 64-bit patterns (SQLite integers are signed).
public struct FolderFileRecord: Equatable, Sendable {
    public var path: String
    public var root: String
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var mtimeNanos: Int64
    public var partialHash: String
    public var fullHash: String?
    public var photoID: String
    public init(path: String, root: String, device: UInt64, inode: UInt64, size: Int64, mtimeNanos: Int64,
                partialHash: String, fullHash: String?, photoID: String) {
        self.path = path; self.root = root; self.device = device; self.inode = inode; self.size = size
        self.mtimeNanos = mtimeNanos; self.partialHash = partialHash; self.fullHash = fullHash; self.photoID = photoID
    }
}

/// What says a file is the one seen before: its device, inode, size and mtime.
public struct FileStat: Hashable, Sendable {
    public var device: UInt64, inode: UInt64, size: Int64, mtimeNanos: Int64
    public init(device: UInt64, inode: UInt64, size: Int64, mtimeNanos: Int64) {
        self.device = device; self.inode = inode; self.size = size; self.mtimeNanos = mtimeNanos
    }
}

/// One `folder_refused_file` row: a file an import refused for what it holds, as it was then (Schema's
/// `registerRefusedFilesMigration` says why).
public struct RefusedFolderFile: Hashable, Sendable {
    public var path: String
    public var root: String
    public var stat: FileStat
    /// What was wrong with it ("a truncated PNG (no IEND chunk at its end)").
    public var reason: String
    /// The version of the reader that refused it (`PhotoFileReader.version`): a later one reads it again.
    public var reader: Int
    public init(path: String, root: String, stat: FileStat, reason: String, reader: Int) {
        self.path = path; self.root = root; self.stat = stat; self.reason = reason; self.reader = reader
    }
}

/// Files and photos of one imported folder, for `photofs status`.
public struct FolderCounts: Equatable, Sendable {
    public var files: Int
    public var photos: Int
    /// Files whose bytes another file of the library also has (files − distinct photos, over all folders).
    public var duplicateFiles: Int
    /// Files the last imports refused as images (empty, corrupt, truncated).
    public var refusedFiles: Int
    public init(files: Int, photos: Int, duplicateFiles: Int, refusedFiles: Int = 0) {
        self.files = files; self.photos = photos; self.duplicateFiles = duplicateFiles; self.refusedFiles = refusedFiles
    }
}

extension Catalog {
    /// Every remembered file; a row with a column of the wrong type is left out (its file then reads as new,
    /// and is matched to its photo again by content).
    public func folderFiles() throws -> [FolderFileRecord] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT path, root, device, inode, size, mtime_ns, partial_hash, full_hash, photo_id FROM folder_file
                ORDER BY path
                """).compactMap { row -> FolderFileRecord? in
                let reader = ColumnReader(row, table: "folder_file")
                guard let path = reader.lenientText(0), let root = reader.lenientText(1),
                      let device = reader.lenientInteger(2), let inode = reader.lenientInteger(3),
                      let size = reader.lenientInteger(4), let mtime = reader.lenientInteger(5),
                      let partial = reader.lenientText(6), let photoID = reader.lenientText(8) else { return nil }
                return FolderFileRecord(path: path, root: root, device: UInt64(bitPattern: device),
                                        inode: UInt64(bitPattern: inode), size: size, mtimeNanos: mtime,
                                        partialHash: partial, fullHash: reader.lenientText(7), photoID: photoID)
            }
        }
    }

    /// Replaces what is remembered of the files under `roots` with `files`, in one transaction.
    public func replaceFolderFiles(roots: Set<String>, with files: [FolderFileRecord]) throws {
        try write { db in
            for root in roots { try db.execute(sql: "DELETE FROM folder_file WHERE root = ?", arguments: [root]) }
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO folder_file(path, root, device, inode, size, mtime_ns, partial_hash, full_hash, photo_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for file in files {
                try insert.execute(arguments: [file.path, file.root, Int64(bitPattern: file.device),
                                               Int64(bitPattern: file.inode), file.size, file.mtimeNanos,
                                               file.partialHash, file.fullHash, file.photoID])
            }
        }
    }

    /// Brings what is remembered of the files under `roots` from `previous` (what `folderFiles` read before the
    /// import) to `files`, writing only the rows that changed: an unchanged re-import of 100,000 files wrote
    /// all 100,000 again (9 s of a 22 s re-import, most of it the WAL's fsync), now nothing. Rows `folderFiles`
    /// could not read are not in `previous`: they are found by path and replaced or deleted like any other.
    public func updateFolderFiles(roots: Set<String>, previous: [FolderFileRecord], to files: [FolderFileRecord]) throws {
        let before = Dictionary(previous.filter { roots.contains($0.root) }.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        let kept = Set(files.map(\.path))
        let changed = files.filter { before[$0.path] != $0 }
        let stored = try read { db in
            try roots.flatMap { root in try String.fetchAll(db, sql: "SELECT path FROM folder_file WHERE root = ?", arguments: [root]) }
        }
        let gone = stored.filter { !kept.contains($0) }
        let unreadable = stored.count - before.count // rows `folderFiles` left out: rewritten below if still there
        guard !changed.isEmpty || !gone.isEmpty || unreadable != 0 else { return }
        if unreadable != 0 { return try replaceFolderFiles(roots: roots, with: files) }
        try write { db in
            let delete = try db.cachedStatement(sql: "DELETE FROM folder_file WHERE path = ?")
            for path in gone { try delete.execute(arguments: [path]) }
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO folder_file(path, root, device, inode, size, mtime_ns, partial_hash, full_hash, photo_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for file in changed {
                try insert.execute(arguments: [file.path, file.root, Int64(bitPattern: file.device),
                                               Int64(bitPattern: file.inode), file.size, file.mtimeNanos,
                                               file.partialHash, file.fullHash, file.photoID])
            }
        }
    }

    /// The `file://` URL of every photo that has one, by photo id: one scan, where looking 100,000 photos up
    /// one by one (`photos(ids:)`, whole records) took seconds of an unchanged re-import.
    public func localPhotoURLs() throws -> [String: String] {
        try read { db in
            var urls: [String: String] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT id, original_url FROM photo WHERE original_url LIKE 'file:%'")
            while let row = try rows.next() {
                let reader = ColumnReader(row, table: "photo")
                if let id = reader.lenientText(0), let url = reader.lenientText(1) { urls[id] = url }
            }
            return urls
        }
    }

    /// Per imported folder: its files, its photos and its files that duplicate another file's bytes.
    public func folderCounts() throws -> [String: FolderCounts] {
        try read { db in
            var counts: [String: FolderCounts] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT root, count(*), count(DISTINCT photo_id),
                       (SELECT count(*) FROM folder_file f2 WHERE f2.root = f.root
                          AND EXISTS (SELECT 1 FROM folder_file f3 WHERE f3.photo_id = f2.photo_id AND f3.path < f2.path))
                FROM folder_file f GROUP BY root ORDER BY root
                """) {
                let reader = ColumnReader(row, table: "folder_file")
                guard let root = reader.lenientText(0) else { continue }
                counts[root] = FolderCounts(files: Int(reader.lenientInteger(1) ?? 0), photos: Int(reader.lenientInteger(2) ?? 0),
                                            duplicateFiles: Int(reader.lenientInteger(3) ?? 0))
            }
            for row in try Row.fetchAll(db, sql: "SELECT root, count(*) FROM folder_refused_file GROUP BY root") {
                let reader = ColumnReader(row, table: "folder_refused_file")
                guard let root = reader.lenientText(0) else { continue }
                counts[root, default: FolderCounts(files: 0, photos: 0, duplicateFiles: 0)].refusedFiles =
                    Int(clamping: reader.lenientInteger(1) ?? 0)
            }
            return counts
        }
    }

    /// The refused files remembered under `roots`; a row with a column of the wrong type is left out (its file
    /// is then read again).
    public func refusedFolderFiles(roots: Set<String>) throws -> [RefusedFolderFile] {
        try read { db in
            try roots.sorted().flatMap { root in
                try Row.fetchAll(db, sql: """
                    SELECT path, root, device, inode, size, mtime_ns, reason, reader FROM folder_refused_file WHERE root = ?
                    """, arguments: [root]).compactMap { row -> RefusedFolderFile? in
                    let reader = ColumnReader(row, table: "folder_refused_file")
                    guard let path = reader.lenientText(0), let root = reader.lenientText(1),
                          let device = reader.lenientInteger(2), let inode = reader.lenientInteger(3),
                          let size = reader.lenientInteger(4), let mtime = reader.lenientInteger(5),
                          let version = reader.lenientInteger(7) else { return nil }
                    let stat = FileStat(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode), size: size,
                                        mtimeNanos: mtime)
                    return RefusedFolderFile(path: path, root: root, stat: stat, reason: reader.lenientText(6) ?? "",
                                             reader: Int(truncatingIfNeeded: version))
                }
            }
        }
    }

    /// Replaces the refused files remembered under `roots` with `files`, in one transaction.
    public func replaceRefusedFolderFiles(roots: Set<String>, with files: [RefusedFolderFile]) throws {
        try write { db in
            for root in roots { try db.execute(sql: "DELETE FROM folder_refused_file WHERE root = ?", arguments: [root]) }
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO folder_refused_file(path, root, device, inode, size, mtime_ns, reason, reader)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for file in files {
                try insert.execute(arguments: [file.path, file.root, Int64(bitPattern: file.stat.device),
                                               Int64(bitPattern: file.stat.inode), file.stat.size, file.stat.mtimeNanos,
                                               file.reason, file.reader])
            }
        }
    }
}
