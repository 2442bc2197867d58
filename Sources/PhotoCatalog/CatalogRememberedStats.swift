// What an unchanged folder re-import compares with its walk, read from the catalog in one narrow pass.
import Foundation
import GRDB
import GRDBSQLite

/// One remembered file as a re-import compares it with the walk: its place and its stat.
public struct RememberedStat: Equatable, Sendable {
    public var path: String
    /// Index of its root in the roots `rememberedStats` was given.
    public var root: Int
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var mtimeNanos: Int64
    /// False for a file the last import could not hash (its row has an empty partial hash).
    public var hasPartialHash: Bool
    public init(path: String, root: Int, device: UInt64, inode: UInt64, size: Int64, mtimeNanos: Int64,
                hasPartialHash: Bool) {
        self.path = path; self.root = root; self.device = device; self.inode = inode; self.size = size
        self.mtimeNanos = mtimeNanos; self.hasPartialHash = hasPartialHash
    }
}

/// A remembered file whose photo other remembered files also hold (duplicates, in any folder).
public struct SharedRememberedFile: Equatable, Sendable {
    /// Index of its root in the roots asked for; nil for a root not asked for.
    public var root: Int?
    public var photoID: String
    public var hasPartialHash: Bool
    public init(root: Int?, photoID: String, hasPartialHash: Bool) {
        self.root = root; self.photoID = photoID; self.hasPartialHash = hasPartialHash
    }
}

/// Everything an unchanged re-import needs from the catalog: far less than `folderFiles` (no hashes, no
/// photo ids but the duplicates'), in the order the walk is merged in.
public struct RememberedStats: Sendable {
    /// The remembered files under the roots asked for, by path in byte order (SQLite's BINARY collation).
    public var files: [RememberedStat]
    /// Per root asked for: how many photos held by its files are shown from one of them (the photo's
    /// `file://` URL names a file of the same photo under that root).
    public var photosShownFromOwnFile: [Int]
    /// Every remembered file of a photo that more than one remembered file holds.
    public var sharedFiles: [SharedRememberedFile]
}

extension Catalog {
    /// The remembered files under `roots` with their stat, how many of their photos are shown from one of
    /// them, and the duplicates; nil when any `folder_file` row is not as an import writes it (a column of
    /// another type: `folderFiles` would leave it out, and the full reconciliation must decide).
    /// `pathOfURL` decodes a `file://` URL as the mount does; it is asked only for URLs holding escapes.
    /// 100,000 files: ~30 ms of CPU for the files (one scan of the primary key, columns read as stored, no
    /// `Row`), ~40 ms for the photos' URLs (one scan, each path found by its hash), where `folderFiles`,
    /// `localPhotoURLs` and their dictionaries took ~0.6 s.
    public func rememberedStats(roots: [String], pathOfURL: @escaping @Sendable (String) -> String?) throws -> RememberedStats? {
        try read { db in
            guard let (files, photoIDs) = try Catalog.rememberedFiles(db, roots: roots) else { return nil }
            let shown = try Catalog.photosShownFromOwnFile(db, files: files, photoIDs: photoIDs, roots: roots, pathOfURL: pathOfURL)
            var shared: [SharedRememberedFile] = []
            let sharedRows = try Row.fetchCursor(db, sql: """
                SELECT root, photo_id, partial_hash <> '' FROM folder_file
                WHERE photo_id IN (SELECT photo_id FROM folder_file GROUP BY photo_id HAVING count(*) > 1)
                """)
            while let row = try sharedRows.next() {
                guard let root = String.fromDatabaseValue(row[0]), let photoID = String.fromDatabaseValue(row[1]),
                      let hasPartial = Bool.fromDatabaseValue(row[2]) else { return nil }
                shared.append(SharedRememberedFile(root: roots.firstIndex(of: root), photoID: photoID, hasPartialHash: hasPartial))
            }
            return RememberedStats(files: files, photosShownFromOwnFile: shown, sharedFiles: shared)
        }
    }

    /// Per root: the photos whose `file://` URL names a file of theirs under it. One scan of the photos'
    /// ids and URLs, each URL's path looked up among `files` by a hash of its bytes: a join in SQL (a
    /// primary-key search of `folder_file` per photo, 100,000 of them) took 0.17 s of CPU, a binary search of
    /// `files` ~0.1 s (memcmp), this ~0.02 s.
    private static func photosShownFromOwnFile(_ db: Database, files: [RememberedStat], photoIDs: PhotoIDBytes,
                                               roots: [String], pathOfURL: (String) -> String?) throws -> [Int] {
        var shown = Array(repeating: 0, count: roots.count)
        let paths = PathIndex(files)
        let statement = try db.makeStatement(sql: "SELECT id, original_url FROM photo WHERE original_url GLOB 'file:///*'")
        let handle = statement.sqliteStatement
        let prefix = 7 // "file://"
        while true {
            guard try nextRow(handle, db) else { break }
            guard sqlite3_column_type(handle, 0) == SQLITE_TEXT, sqlite3_column_type(handle, 1) == SQLITE_TEXT,
                  let idText = sqlite3_column_text(handle, 0), let urlText = sqlite3_column_text(handle, 1) else { continue }
            let id = UnsafeRawBufferPointer(start: idText, count: Int(sqlite3_column_bytes(handle, 0)))
            let url = UnsafeRawBufferPointer(start: urlText, count: Int(sqlite3_column_bytes(handle, 1)))
            guard url.count > prefix else { continue }
            let found: Int?
            if url.contains(UInt8(ascii: "%")) {
                // Escapes: decoded as the mount decodes them.
                guard let path = pathOfURL(String(decoding: url, as: UTF8.self)) else { continue }
                found = path.utf8.withContiguousStorageIfAvailable { paths.index(of: UnsafeRawBufferPointer($0), in: files) } ?? nil
            } else {
                found = paths.index(of: UnsafeRawBufferPointer(rebasing: url[prefix...]), in: files)
            }
            if let found, photoIDs.bytes(at: found).withUnsafeBytes({ compare($0, id) == 0 }) { shown[files[found].root] += 1 }
        }
        return shown
    }

    /// memcmp order, as SQLite's BINARY collation.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let order = memcmp(left, right, common)
            if order != 0 { return Int(order) }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// One pass over `folder_file` in path order, columns read straight from the statement: nil at the first
    /// row with a column of an unexpected type.
    private static func rememberedFiles(_ db: Database, roots: [String]) throws -> ([RememberedStat], PhotoIDBytes)? {
        let statement = try db.makeStatement(sql: """
            SELECT path, root, device, inode, size, mtime_ns, partial_hash, photo_id FROM folder_file ORDER BY path
            """)
        let handle = statement.sqliteStatement
        let rootBytes = roots.map { Array($0.utf8) }
        var files: [RememberedStat] = []
        var photoIDs = PhotoIDBytes()
        var lastRoot: (bytes: [UInt8], index: Int?)?
        while true {
            guard try nextRow(handle, db) else { break }
            guard sqlite3_column_type(handle, 0) == SQLITE_TEXT, sqlite3_column_type(handle, 1) == SQLITE_TEXT,
                  sqlite3_column_type(handle, 2) == SQLITE_INTEGER, sqlite3_column_type(handle, 3) == SQLITE_INTEGER,
                  sqlite3_column_type(handle, 4) == SQLITE_INTEGER, sqlite3_column_type(handle, 5) == SQLITE_INTEGER,
                  sqlite3_column_type(handle, 6) == SQLITE_TEXT, sqlite3_column_type(handle, 7) == SQLITE_TEXT else { return nil }
            // Rows come in path order, so the same root repeats: compared as bytes with the last one.
            let root: Int?
            let rootLength = Int(sqlite3_column_bytes(handle, 1))
            let rootText = UnsafeRawBufferPointer(start: sqlite3_column_text(handle, 1), count: rootLength)
            if let lastRoot, lastRoot.bytes.elementsEqual(rootText) {
                root = lastRoot.index
            } else {
                root = rootBytes.firstIndex { $0.elementsEqual(rootText) }
                lastRoot = (Array(rootText), root)
            }
            guard let root else { continue }
            guard let pathText = sqlite3_column_text(handle, 0) else { return nil }
            let path = String(decoding: UnsafeBufferPointer(start: pathText, count: Int(sqlite3_column_bytes(handle, 0))),
                              as: UTF8.self)
            files.append(RememberedStat(
                path: path, root: root, device: UInt64(bitPattern: sqlite3_column_int64(handle, 2)),
                inode: UInt64(bitPattern: sqlite3_column_int64(handle, 3)), size: sqlite3_column_int64(handle, 4),
                mtimeNanos: sqlite3_column_int64(handle, 5), hasPartialHash: sqlite3_column_bytes(handle, 6) > 0))
            photoIDs.append(UnsafeRawBufferPointer(start: sqlite3_column_text(handle, 7), count: Int(sqlite3_column_bytes(handle, 7))))
        }
        return (files, photoIDs)
    }
}

/// The photo ids of the files read, one after the other in one buffer (100,000 ids as Strings were 100,000
/// allocations, for a comparison of bytes).
struct PhotoIDBytes {
    private var bytes: [UInt8] = []
    private var ends: [Int] = []

    mutating func append(_ id: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: id)
        ends.append(bytes.count)
    }

    func bytes(at index: Int) -> ArraySlice<UInt8> {
        guard ends.indices.contains(index) else { return [] }
        return bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
    }
}

/// The files' paths by an FNV-1a hash of their bytes, open addressing.
struct PathIndex {
    private var slots: [Int]
    private let mask: Int
    private let shift: UInt64

    init(_ files: [RememberedStat]) {
        var capacity = 16
        var bits: UInt64 = 4
        while capacity < files.count * 2 { capacity <<= 1; bits += 1 }
        slots = Array(repeating: -1, count: capacity)
        mask = capacity - 1
        shift = 64 - bits
        for (index, file) in files.enumerated() {
            guard let hash = file.path.utf8.withContiguousStorageIfAvailable({ PathIndex.hash(UnsafeRawBufferPointer($0)) }) else { continue }
            var slot = self.slot(hash)
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = index
        }
    }

    func index(of path: UnsafeRawBufferPointer, in files: [RememberedStat]) -> Int? {
        var slot = self.slot(PathIndex.hash(path))
        while slots[slot] >= 0 {
            let index = slots[slot]
            let same = files[index].path.utf8.withContiguousStorageIfAvailable { Catalog.compare(UnsafeRawBufferPointer($0), path) == 0 }
            if same == true { return index }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// The slot from the hash's high bits, mixed (Fibonacci hashing): FNV-1a's low bits depend only on the low
    /// bits of the bytes, and paths that differ in a digit or two piled up in long runs of slots (the lookups
    /// of 100,000 paths took 0.1 s, mostly memcmp of the probes).
    private func slot(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: (hash &* 0x9E37_79B9_7F4A_7C15) >> shift) & mask
    }

    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}

/// Steps a statement read column by column: true at a row, false at its end, and SQLite's error otherwise.
private func nextRow(_ handle: OpaquePointer?, _ db: Database) throws -> Bool {
    let step = sqlite3_step(handle)
    if step == SQLITE_DONE { return false }
    guard step == SQLITE_ROW else {
        throw DatabaseError(resultCode: ResultCode(rawValue: step), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }
    return true
}
