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

/// Files and photos of one imported folder, for `photofs status`.
public struct FolderCounts: Equatable, Sendable {
    public var files: Int
    public var photos: Int
    /// Files whose bytes another file of the library also has (files − distinct photos, over all folders).
    public var duplicateFiles: Int
    public init(files: Int, photos: Int, duplicateFiles: Int) {
        self.files = files; self.photos = photos; self.duplicateFiles = duplicateFiles
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
            return counts
        }
    }
}
