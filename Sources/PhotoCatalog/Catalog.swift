// The photo catalog: one SQLite file in WAL mode, shared by mounts (readers) and imports (one writer at a time).
import Foundation
import GRDB

/// Errors from the catalog carry the library path so a log line or CLI message names the file.
public struct CatalogError: Error, CustomStringConvertible {
    /// What went wrong, for callers that act on it (a mount keeps `/recent` in memory on `.readOnly`; the CLI
    /// picks its words and exit status).
    public enum Reason: Sendable, Equatable {
        /// Missing, empty, not SQLite, or a damaged SQLite file (`mounting` needs an existing library).
        case notALibrary
        /// A SQLite database with tables photofs did not make, or another application's `application_id`.
        case foreignDatabase
        /// Made by a newer photofs: a schema version or migration this one does not know.
        case newerLibrary
        /// The library cannot be written (its mode, its directory, a read-only disk), or was opened read-only.
        case readOnly
        /// The file cannot be looked at (permissions, I/O error).
        case unreadable
        /// A query or a write failed; `underlying` has SQLite's error.
        case failed
    }

    public var path: String
    /// For `.failed` and `.unreadable`, what failed ("cannot read the photo library"); for the others a
    /// predicate about the file ("is not a photofs library: not a SQLite database").
    public var message: String
    public var underlying: Error?
    public var reason: Reason = .failed

    public var description: String {
        switch reason {
        case .failed, .unreadable:
            if let underlying { return "\(path): \(message): \(underlying)" }
            return "\(path): \(message)"
        case .notALibrary, .foreignDatabase, .newerLibrary, .readOnly:
            return "\(path) \(message)"
        }
    }
}

public final class Catalog: @unchecked Sendable {
    /// How a library is opened: what may be created, migrated and written.
    public enum OpenMode: Sendable {
        /// For `photofs import` and anything else that writes photos: creates a library when the file is missing,
        /// is empty (0 bytes) or is a SQLite database without tables; upgrades an older library; refuses a
        /// library it cannot write.
        case importing
        /// For `photofs mount`: the file must already be a photofs library. One that cannot be written (mode
        /// 0444, a directory where `-wal`/`-shm` cannot be created, a read-only disk) opens read-only:
        /// no migration, no writes (`isReadOnly`); writes then throw `CatalogError` with reason `.readOnly`.
        case mounting
    }

    public let path: String
    /// True when the library was opened read-only (`.mounting` a library that cannot be written): nothing is
    /// migrated or written, and every write method throws `CatalogError(reason: .readOnly)`.
    public let isReadOnly: Bool
    private let pool: DatabasePool

    /// Rows the catalog left out, reported once each (dedupe key: table and row key) for the lifetime of
    /// this `Catalog`.
    private let badRowLock = NSLock()
    private var reportedBadRows = Set<String>()
    private var badRowHandler: (@Sendable (String) -> Void)?

    /// Called once per library row that the catalog leaves out because it cannot be used (a NULL, a wrong type
    /// or an absurd value in a column the tree depends on: byte_size ≤ 0 or above 1 TiB, moment_at outside
    /// years 1–9999, moment_year not its year, negative counts, ids the inode numbers cannot hold). The text
    /// names the table, the row and the problem, never the raw value; a mount logs it as one warning. Such a
    /// photo is treated as unavailable: it is in no listing and `photo(seq:)` / `photo(id:)` return nil.
    /// Called on the thread that read the row, outside any catalog lock; set it before the mount starts.
    public var onBadRow: (@Sendable (String) -> Void)? {
        get { badRowLock.lock(); defer { badRowLock.unlock() }; return badRowHandler }
        set { badRowLock.lock(); badRowHandler = newValue; badRowLock.unlock() }
    }

    /// Opens the library at `path` for `mode` (see `OpenMode`). Before anything is written, the file is
    /// inspected read-only and refused, unchanged, when it is not SQLite, holds another application's tables,
    /// or was made by a newer photofs. A library made by the previous photofs (application_id 0, exactly our
    /// tables) is adopted: migrated and marked.
    /// A mount and an import may open the same file at once: WAL lets readers go on while the importer writes,
    /// and the busy timeout (10 s) makes two writers wait for each other instead of failing.
    public init(path: String, mode: OpenMode = .importing) throws {
        self.path = path
        let identity = try LibraryInspector.inspect(path: path)
        func refuse(_ reason: CatalogError.Reason, _ message: String) -> CatalogError {
            CatalogError(path: path, message: message, reason: reason)
        }
        var writable = true
        switch identity {
        case .directory:
            throw refuse(.notALibrary, "is not a photofs library: it is a directory")
        case .notSQLite(let looksLikeText):
            throw refuse(.notALibrary, "is not a photofs library: not a SQLite database"
                         + (looksLikeText ? " (it looks like a text file)" : ""))
        case .foreign(let tables, let applicationID):
            var what: [String] = []
            if applicationID != 0 { what.append("application_id \(Self.hex(applicationID))") }
            if !tables.isEmpty { what.append("tables: " + Self.list(tables)) }
            throw refuse(.foreignDatabase, "is not a photofs library: a SQLite database of another application ("
                         + what.joined(separator: ", ") + ")")
        case .libraryWithForeignTables(let tables):
            throw refuse(.foreignDatabase, "is a photofs library that also holds tables photofs did not make "
                         + "(tables: \(Self.list(tables))); photofs leaves it alone")
        case .newer(let version, let unknownMigrations):
            if version > Schema.version {
                throw refuse(.newerLibrary, "was made by a newer photofs (library version \(version), this one "
                             + "reads up to \(Schema.version)); upgrade photofs")
            }
            throw refuse(.newerLibrary, "was made by a newer photofs (schema changes this one does not know: "
                         + "\(Self.list(unknownMigrations))); upgrade photofs")
        case .absent, .emptyFile, .emptyDatabase:
            guard mode == .importing else {
                let what = identity == .absent ? "the file does not exist"
                    : identity == .emptyFile ? "the file is empty" : "an empty SQLite database"
                throw refuse(.notALibrary, "is not a photofs library: \(what)")
            }
            let blocker = identity == .absent ? LibraryInspector.createBlocker(path: path)
                                              : LibraryInspector.writeBlocker(path: path)
            if let blocker { throw refuse(.readOnly, "cannot become a photofs library: \(blocker)") }
        case .library(let needsMigration, _):
            if let blocker = LibraryInspector.writeBlocker(path: path) {
                switch mode {
                case .importing:
                    throw refuse(.readOnly, "is read-only (\(blocker)): cannot import into it")
                case .mounting where needsMigration:
                    throw refuse(.readOnly, "was made by an older photofs and must be upgraded before it can be "
                                 + "mounted, but it is read-only (\(blocker))")
                case .mounting:
                    writable = false
                }
            }
        }
        isReadOnly = !writable
        pool = writable ? try Self.openWritable(path: path) : try Self.openReadOnly(path: path)
    }

    private static func configuration(readonly: Bool) -> Configuration {
        var config = Configuration()
        config.readonly = readonly
        config.busyMode = .timeout(10)
        config.foreignKeysEnabled = true
        config.label = "photofs.catalog"
        // Listings of big directories happen on several FUSE threads at once; 2 cores, so 4 readers suffice.
        config.maximumReaderCount = 4
        config.prepareDatabase { db in
            // 16 MiB of pages per connection instead of SQLite's 2 MiB: a 100k-photo `ls -lR` otherwise
            // re-read pages through 794,000 pread calls. mmap (mmap_size) was 0.4 s faster still on that
            // listing (4.45 vs 4.87 s) but turns a library truncated by another program into SIGBUS; a
            // file system must not crash, so it stays off.
            try db.execute(sql: "PRAGMA cache_size = -16384")
        }
        return config
    }

    /// Opens (creating if needed) in WAL mode, runs the migrations and marks the file as a library.
    private static func openWritable(path: String) throws -> DatabasePool {
        do {
            let pool = try DatabasePool(path: path, configuration: configuration(readonly: false))
            try Schema.migrator.migrate(pool)
            // Not a migration: an index changes no row, and a library on read-only media must not be refused as
            // "older" for lacking it (only writers recount regions, so only they need it). Nor may it fail an
            // open (a full disk; a hostile library with something else of that name): recounts are then slower.
            try? pool.write { db in try db.execute(sql: Schema.regionCountIndex) }
            try pool.write { db in
                // Adopts a library of the previous photofs (application_id 0, user_version 0); a no-op otherwise.
                if try Int64.fetchOne(db, sql: "PRAGMA application_id") != Int64(Schema.applicationID) {
                    try db.execute(sql: "PRAGMA application_id = \(Schema.applicationID)")
                }
                if try Int64.fetchOne(db, sql: "PRAGMA user_version") != Int64(Schema.version) {
                    try db.execute(sql: "PRAGMA user_version = \(Schema.version)")
                }
            }
            return pool
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY {
            throw CatalogError(path: path, message: "is read-only (SQLite could not write it): cannot import into it",
                               reason: .readOnly)
        } catch {
            throw CatalogError(path: path, message: "cannot open the photo library", underlying: error)
        }
    }

    /// Opens a library that cannot be written. With a `-wal` file present (a writer may be at work, or left
    /// pages in it) SQLite reads it through the existing `-shm`, read-only, and sees later imports. Without one
    /// the whole library is in the main file; a plain read-only connection would then need to create `-wal`
    /// and `-shm` ("unable to open database file" on a read-only disk; left behind elsewhere), so the file is
    /// opened `immutable=1`: read as it is, no locks. Changes made to it later (only possible through another,
    /// writable path to it) are then not seen until the next mount.
    private static func openReadOnly(path: String) throws -> DatabasePool {
        func open(_ location: String) throws -> DatabasePool {
            let pool = try DatabasePool(path: location, configuration: configuration(readonly: true))
            // Opening is lazy; one read proves the connection works.
            _ = try pool.read { db in try Int64.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            return pool
        }
        do {
            if FileManager.default.fileExists(atPath: path + "-wal"), let pool = try? open(path) { return pool }
            return try open(LibraryInspector.immutableURI(path))
        } catch {
            throw CatalogError(path: path, message: "cannot open the photo library read-only", underlying: error)
        }
    }

    private static func hex(_ value: Int32) -> String { "0x" + String(UInt32(bitPattern: value), radix: 16) }

    /// Names for a message: printable, at most 10 of them.
    private static func list(_ names: [String]) -> String {
        let shown = names.prefix(10).map(ColumnReader.printable)
        return shown.joined(separator: ", ") + (names.count > 10 ? " and \(names.count - 10) more" : "")
    }

    /// Leaves a bad row out, telling `onBadRow` the first time this catalog meets it.
    private func report(_ bad: BadRow) {
        badRowLock.lock()
        let first = reportedBadRows.insert(bad.table + " " + bad.key).inserted
        let handler = badRowHandler
        badRowLock.unlock()
        if first { handler?(bad.description) }
    }

    /// Runs `sql` and decodes each row with a reader of the statement itself (`ColumnReader(current:of:table:)`);
    /// rows `decode` rejects (`BadRow`) are reported and left out. For scans of every photo: 40–50 ms less of
    /// a mount's 200–280 ms scan of 100,000 photos than `decodeAll` (three runs each, release build).
    func decodeEach<T>(_ db: Database, sql: String, arguments: StatementArguments = [], table: String,
                       reservingCapacity capacity: Int = 0, _ decode: (inout ColumnReader) throws -> T) throws -> [T] {
        let statement = try db.makeStatement(sql: sql)
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        var result: [T] = []
        result.reserveCapacity(capacity)
        while let row = try rows.next() {
            var reader = ColumnReader(current: row, of: statement, table: table)
            do { result.append(try decode(&reader)) } catch let bad as BadRow { report(bad) }
        }
        return result
    }

    /// Decodes each row, leaving out (and reporting) those that throw `BadRow`.
    func decodeAll<T>(_ rows: RowCursor, reservingCapacity capacity: Int = 0, _ decode: (Row) throws -> T) throws -> [T] {
        var result: [T] = []
        result.reserveCapacity(capacity)
        while let row = try rows.next() {
            do { result.append(try decode(row)) } catch let bad as BadRow { report(bad) }
        }
        return result
    }

    // MARK: - Change detection

    /// Change counters that mounts poll to drop cached listings: `photos` moves with every import or delete,
    /// `recents` with every recorded open (kept apart so a `cat` does not invalidate every listing).
    public struct Generation: Equatable, Sendable {
        public var photos: Int64
        public var recents: Int64
    }

    public func generation() throws -> Generation {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT generation, recent_generation FROM library_state") else {
                return Generation(photos: 0, recents: 0)
            }
            // A counter that is not an integer reads as 0: polling still compares equal values, never traps.
            let reader = ColumnReader(row, table: "library_state")
            return Generation(photos: reader.lenientInteger(0) ?? 0, recents: reader.lenientInteger(1) ?? 0)
        }
    }

    // MARK: - Queries for the tree
    // Every query below leaves out rows that cannot be used and reports them through `onBadRow`; aggregates
    // count only rows that pass the same rules (`CatalogLimits.usablePhotoSQL`).

    /// The photo, or nil when there is none or its row cannot be used.
    public func photo(seq: Int64) throws -> PhotoRecord? {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: "SELECT \(PhotoRecord.columns) FROM photo WHERE seq = ?",
                                          arguments: [seq]), PhotoRecord.decode(row:)).first
        }
    }

    /// The photo, or nil when there is none or its row cannot be used.
    public func photo(id: String) throws -> PhotoRecord? {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: "SELECT \(PhotoRecord.columns) FROM photo WHERE id = ?",
                                          arguments: [id]), PhotoRecord.decode(row:)).first
        }
    }

    /// The photos of these ids the catalog holds, by id, in one read: an import asks for every photo of a page
    /// (`photo(id:)` per photo was a read transaction and a statement compiled per photo).
    public func photos(ids: [String]) throws -> [String: PhotoRecord] {
        try read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(PhotoRecord.columns) FROM photo WHERE id = ?")
            var found: [String: PhotoRecord] = [:]
            for id in ids where found[id] == nil {
                if let photo = try decodeAll(Row.fetchCursor(statement, arguments: [id]), PhotoRecord.decode(row:)).first {
                    found[id] = photo
                }
            }
            return found
        }
    }

    /// Every photo, available or not (for `photofs` tooling and tests); rows that cannot be used are left out.
    public func allPhotos() throws -> [PhotoRecord] {
        try read { db in
            try Catalog.photos(self, db, sql: "SELECT \(PhotoRecord.columns) FROM photo ORDER BY seq")
        }
    }

    /// Regions with at least one available photo, with their stored counts.
    public func regions() throws -> [RegionRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT r.id, r.name, r.photo_count, r.photographer_count,
                       (SELECT max(p.moment_at) FROM photo p
                        WHERE p.region_id = r.id AND \(CatalogLimits.usablePhotoSQL("p"))) AS newest,
                       (SELECT max(\(CatalogLimits.isPublicSQL("p"))) FROM photo p
                        WHERE p.region_id = r.id AND \(CatalogLimits.usablePhotoSQL("p"))) AS public
                FROM region r WHERE r.photo_count > 0 ORDER BY r.id
                """)) { try Catalog.region($0, aggregates: true) }
        }
    }

    /// The regions `regions()` lists, without the two aggregates over their photos (newest moment, any
    /// public photo; left 0 and false): a mount's scan of every photo computes those itself.
    public func regionsWithoutAggregates() throws -> [RegionRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT id, name, photo_count, photographer_count FROM region WHERE photo_count > 0 ORDER BY id
                """)) { try Catalog.region($0, aggregates: false) }
        }
    }

    /// Every photographer as `photographers(inRegion:)` decodes them (newest moment 0, not public: a
    /// mount's scan fills those per region), by id.
    public func photographersWithoutAggregates() throws -> [Int64: PhotographerRecord] {
        try read { db in
            let rows = try decodeAll(Row.fetchCursor(db, sql: "SELECT id, owner, name FROM photographer")) {
                try Catalog.photographer($0, aggregates: false)
            }
            return Dictionary(rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// A region row: id, name, photo_count, photographer_count, then with `aggregates` its newest moment and
    /// whether it holds a public photo (else 0 and false).
    static func region(_ row: Row, aggregates: Bool) throws -> RegionRecord {
        var reader = ColumnReader(row, table: "region")
        reader.key = "id \(ColumnReader.keyText(reader.value(0)))"
        let id = try reader.integer(0, "id", in: CatalogLimits.directoryIDRange)
        reader.key = "id \(id)"
        return RegionRecord(
            id: id, name: reader.displayText(1),
            photoCount: Int(try reader.integer(2, "photo_count", in: CatalogLimits.countRange)),
            photographerCount: Int(try reader.integer(3, "photographer_count", in: CatalogLimits.countRange)),
            newestMomentAt: aggregates ? reader.lenientInteger(4) ?? 0 : 0,
            hasPublicPhotos: aggregates && (reader.lenientInteger(5) ?? 0) != 0)
    }

    /// A photographer row: id, owner, name, then with `aggregates` the newest moment and whether a public
    /// photo is among those counted (else 0 and false).
    static func photographer(_ row: Row, aggregates: Bool) throws -> PhotographerRecord {
        var reader = ColumnReader(row, table: "photographer")
        reader.key = "id \(ColumnReader.keyText(reader.value(0)))"
        let id = try reader.integer(0, "id", in: CatalogLimits.directoryIDRange)
        reader.key = "id \(id)"
        return PhotographerRecord(id: id, owner: try reader.text(1, "owner"), name: reader.displayText(2),
                                  newestMomentAt: aggregates ? reader.lenientInteger(3) ?? 0 : 0,
                                  hasPublicPhotos: aggregates && (reader.lenientInteger(4) ?? 0) != 0)
    }

    public func region(id: Int64) throws -> RegionRecord? {
        try regions().first { $0.id == id }
    }

    /// Photographers with at least one available photo in the region.
    public func photographers(inRegion regionID: Int64) throws -> [PhotographerRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT g.id, g.owner, g.name, max(p.moment_at) AS newest, max(\(CatalogLimits.isPublicSQL("p"))) AS public
                FROM photo p JOIN photographer g ON g.id = p.photographer_id
                WHERE p.region_id = ? AND \(CatalogLimits.usablePhotoSQL("p"))
                GROUP BY g.id ORDER BY g.id
                """, arguments: [regionID])) { try Catalog.photographer($0, aggregates: true) }
        }
    }

    /// Listing rows (`PhotoRecord.listingColumns` filled; description and URLs empty) of a photographer's
    /// photos in a region.
    public func photos(inRegion regionID: Int64, photographer photographerID: Int64) throws -> [PhotoRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT \(PhotoRecord.listingColumns) FROM photo
                WHERE region_id = ? AND photographer_id = ? AND available ORDER BY seq
                """, arguments: [regionID, photographerID]), PhotoRecord.decode(listingRow:))
        }
    }

    /// Years with at least one usable photo (years 1–9999 only, by `CatalogLimits.usablePhotoSQL`).
    public func years() throws -> [YearRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT moment_year, count(*) AS n, max(moment_at) AS newest, max(\(CatalogLimits.isPublicSQL(""))) AS public FROM photo
                WHERE \(CatalogLimits.usablePhotoSQL("")) GROUP BY moment_year ORDER BY moment_year
                """)) { row in
                var reader = ColumnReader(row, table: "photo")
                reader.key = "year \(ColumnReader.keyText(reader.value(0)))"
                let yearRange = Int64(CatalogLimits.yearRange.lowerBound) ... Int64(CatalogLimits.yearRange.upperBound)
                return YearRecord(year: Int(try reader.integer(0, "moment_year", in: yearRange)),
                                  photoCount: Int(try reader.integer(1, "count", in: 0 ... Int64(Int.max))),
                                  newestMomentAt: reader.lenientInteger(2) ?? 0,
                                  hasPublicPhotos: (reader.lenientInteger(3) ?? 0) != 0)
            }
        }
    }

    /// Listing rows (`PhotoRecord.listingColumns` filled; description and URLs empty) of a year's photos.
    public func photos(inYear year: Int) throws -> [PhotoRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT \(PhotoRecord.listingColumns) FROM photo WHERE moment_year = ? AND available ORDER BY seq
                """, arguments: [year]), PhotoRecord.decode(listingRow:))
        }
    }

    /// Every available photo's listing row with its stored `moment_year` and its place for event clustering,
    /// in seq order: one scan of the table in its own order (no index lookups, no sort) that a mount groups
    /// into all its year and photographer listings at once (`photos(inYear:)` and `photos(inRegion:photographer:)`
    /// select by the stored year) and clusters into events (`eventPhotos()` would read every photo again, with
    /// a place and a region lookup each: 0.15–0.18 s of a 20,000-photo mount). At most `limit` rows.
    public func listingRowsOfAllPhotos(limit: Int) throws -> [ScannedPhoto] {
        try read { db in
            let names = try Catalog.eventPlaceNames(db)
            let more = PhotoRecord.listingColumnCount
            // The array sized once from the table's row count (SQLite counts an index's entries without
            // reading rows: 0.03 ms for 100,000 photos; with `WHERE available` 14–17 ms): grown by doubling,
            // its last copy held room for 131,072 rows of ~425 bytes while 100,000 were read, 56 MB of the
            // 100,000-photo daemon's 122 MB peak heap (heaptrack). Unavailable photos, counted too, are few.
            let count = try Catalog.integer(db, sql: "SELECT count(*) FROM photo", arguments: []) ?? 0
            return try decodeEach(db, sql: """
                SELECT \(PhotoRecord.listingColumns), moment_year, place_id, latitude, longitude
                FROM photo WHERE available ORDER BY seq LIMIT ?
                """, arguments: [limit], table: "photo",
                reservingCapacity: Int(clamping: min(max(count, 0), Int64(limit)))) { reader in
                // The checked fields kept as they are: a whole `PhotoRecord` made of each row first, then copied
                // (with its strings retained and released), was more of the scan than its checks.
                let fields = try PhotoRecord.listingFields(&reader)
                // INTEGER affinity stores an integral real as an integer, so an integer is the only value
                // `moment_year = ?` with a year can match.
                return ScannedPhoto(fields, storedYear: reader.lenientInteger(more),
                                    latitude: reader.lenientReal(more + 2), longitude: reader.lenientReal(more + 3),
                                    placeName: reader.lenientText(more + 1).flatMap { names.places[$0] },
                                    regionName: names.regions[fields.regionID])
            }
        }
    }

    /// The most recently opened available photos, newest first.
    public func recentPhotos(limit: Int) throws -> [PhotoRecord] {
        try read { db in
            try Catalog.photos(self, db, sql: """
                SELECT \(PhotoRecord.columns(of: "p"))
                FROM recent r JOIN photo p ON p.seq = r.photo_seq
                WHERE p.available ORDER BY r.opened_at DESC, r.photo_seq DESC LIMIT ?
                """, arguments: [limit])
        }
    }

    /// Newest moment over every usable photo (mtime of the root, /regions and /moments). Read from the moment
    /// index (`photo_by_moment`) backwards, stopping at the first usable photo: a usable photo's `moment_year`
    /// is its moment's year, so (year, moment) orders usable photos as their moments do. `max(moment_at)` read
    /// every row: 70–150 ms for 100,000 photos, and right after mount, beside the mount's scan, the root's first
    /// `stat` waited 170–220 ms for it; now < 1 ms. Rows at the index's end that the rules leave out (photos
    /// whose size is not measured yet, hostile rows) are skipped one by one; a library without the index is
    /// read whole and sorted, as before.
    public func newestMomentAt() throws -> Int64 {
        try read { db in
            let value = try DatabaseValue.fetchOne(db, sql: Catalog.newestMomentSQL)
            if case .int64(let newest)? = value?.storage { return newest }
            return 0
        }
    }

    static let newestMomentSQL = """
        SELECT moment_at FROM photo WHERE \(CatalogLimits.usablePhotoSQL("", choosingNoIndex: true))
        ORDER BY moment_year DESC, moment_at DESC LIMIT 1
        """

    /// Bytes and number of every usable photo (what `df` shows), in one scan. Each size is at most 1 TiB, so
    /// the sum of 2^23 of them still fits an Int64; SQLite's `total` is a float and cannot overflow, and the
    /// result is clamped to 0...Int64.max.
    public func availableTotals() throws -> (bytes: Int64, files: Int64) {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT total(byte_size), count(*) FROM photo WHERE \(CatalogLimits.usablePhotoSQL(""))
                """) else { return (0, 0) }
            let reader = ColumnReader(row, table: "photo")
            let bytes = reader.lenientReal(0) ?? 0
            let clamped: Int64 = bytes.isNaN || bytes <= 0 ? 0 : bytes >= 9.2e18 ? Int64.max : Int64(bytes)
            return (clamped, reader.lenientInteger(1) ?? 0)
        }
    }

    // MARK: - Writes

    /// Records that photos were opened (one transaction for a batch); keeps the newest `keep` rows so the
    /// table stays small.
    public func recordOpens(_ opens: [(seq: Int64, at: Date)], keep: Int = 100) throws {
        guard !opens.isEmpty else { return }
        // Cached statements: compiling these three for every batch of opens (GRDB's authorizer walks each
        // statement it compiles) was 3.3 of the 3.5 % of the daemon's CPU spent recording opens in a warm
        // re-read of 255 photos, and 7 % while a reader opened 400 local photos in turn (perf).
        try write { db in
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO recent(photo_seq, opened_at) SELECT seq, ? FROM photo WHERE seq = ?
                """)
            for open in opens {
                // A photo deleted meanwhile is skipped rather than failing the batch (foreign key).
                try insert.execute(arguments: [open.at.timeIntervalSince1970, open.seq])
            }
            try db.cachedStatement(sql: """
                DELETE FROM recent WHERE photo_seq NOT IN (SELECT photo_seq FROM recent ORDER BY opened_at DESC LIMIT ?)
                """).execute(arguments: [keep])
            try db.cachedStatement(sql: "UPDATE library_state SET recent_generation = recent_generation + 1").execute()
        }
    }

    public func recordOpen(seq: Int64, at date: Date = Date(), keep: Int = 100) throws {
        try recordOpens([(seq, date)], keep: keep)
    }

    /// Place ids the catalog already resolved (an import asks Flickr only for the others).
    public func knownPlaceIDs() throws -> Set<String> {
        try read { db in
            // A NULL or non-text place_id (TEXT PRIMARY KEY allows NULL in SQLite) is no known place.
            Set(try DatabaseValue.fetchAll(db, sql: "SELECT place_id FROM place").compactMap {
                if case .string(let id) = $0.storage { return id } else { return nil }
            })
        }
    }

    /// Writes one import (or one page of it) in a single transaction: either all of it lands or none of it
    /// does. `state`, when given, is written in the same transaction (an import's resume point moves with the
    /// photos it committed).
    public func applyImport(places: [PlaceResolution], photos: [ImportedPhoto], state: SyncState? = nil) throws -> ImportSummary {
        try write { db in
            if let state { try Catalog.writeSyncState(state, db) }
            var summary = ImportSummary()
            for place in places {
                let regionID = try Catalog.regionID(named: place.regionName, db)
                try db.execute(sql: """
                    INSERT INTO place(place_id, name, region_id) VALUES (?, ?, ?)
                    ON CONFLICT(place_id) DO UPDATE SET name = excluded.name, region_id = excluded.region_id
                    """, arguments: [place.placeID, place.placeName, regionID])
            }
            let fallbackRegionID = try Catalog.regionID(named: Schema.fallbackRegion, db)
            var photographerIDs: [String: Int64] = [:]
            for imported in photos {
                var photo = imported.photo
                if let known = photographerIDs[imported.owner] {
                    photo.photographerID = known
                } else {
                    try db.cachedStatement(sql: """
                        INSERT INTO photographer(owner, name) VALUES (?, ?)
                        ON CONFLICT(owner) DO UPDATE SET name = excluded.name WHERE name IS NOT excluded.name
                        """).execute(arguments: [imported.owner, imported.ownerName])
                    guard let id = try Catalog.integer(db, sql: "SELECT id FROM photographer WHERE owner = ?",
                                                       arguments: [imported.owner]) else {
                        throw BadRow(table: "photographer", key: "owner \(ColumnReader.printable(imported.owner))",
                                     problem: "its id is not an integer")
                    }
                    photographerIDs[imported.owner] = id
                    photo.photographerID = id
                }
                if let placeID = photo.placeID,
                   let regionID = try Catalog.integer(db, sql: "SELECT region_id FROM place WHERE place_id = ?",
                                                      arguments: [placeID]) {
                    photo.regionID = regionID
                } else {
                    photo.regionID = fallbackRegionID
                }
                let existed = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM photo WHERE id = ?"),
                                                arguments: [photo.id]) ?? false
                let before = db.totalChangesCount
                try Catalog.upsert(photo, db)
                try db.cachedStatement(sql: "UPDATE photo SET camera = ? WHERE id = ? AND camera IS NOT ?")
                    .execute(arguments: [imported.camera, photo.id, imported.camera])
                let renditionsChanged = try Catalog.replaceRenditions(of: photo.id, with: imported.renditions, db)
                let changed = db.totalChangesCount != before || renditionsChanged
                // Views move with every visit: kept, but not a change a mount must rebuild listings for.
                try db.cachedStatement(sql: "UPDATE photo SET views = ? WHERE id = ? AND views IS NOT ?")
                    .execute(arguments: [photo.views, photo.id, photo.views])
                if !existed { summary.added += 1 }
                else if changed { summary.updated += 1 }
                else { summary.unchanged += 1 }
            }
            try Catalog.recountRegions(db)
            summary.regions = try Int.fetchOne(db, sql: "SELECT count(*) FROM region WHERE photo_count > 0") ?? 0
            if summary.added + summary.updated > 0 || !places.isEmpty { try Catalog.bumpGeneration(db) }
            return summary
        }
    }

    // MARK: - Renditions and variants

    /// Every size the origin offers for a photo, smallest first.
    public func renditions(seq: Int64) throws -> [Rendition] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: "SELECT label, url, width, height FROM rendition WHERE photo_seq = ?",
                                          arguments: [seq])) { try Catalog.rendition($0, seq: seq) }
                // Widths and heights are at most 10^6 (`CatalogLimits.dimensionRange`): the area cannot overflow.
                .sorted { ($0.width * $0.height, $0.label) < ($1.width * $1.height, $1.label) }
        }
    }

    /// Sizes of every variant rendered at `spec`, by photo seq: one query when a sized mount starts listing.
    public func variantSizes(spec: String) throws -> [Int64: Int64] {
        try read { db in
            let sizes = try decodeAll(Row.fetchCursor(db, sql: "SELECT photo_seq, byte_size FROM variant WHERE spec = ?",
                                                      arguments: [spec])) { row -> (Int64, Int64) in
                var reader = ColumnReader(row, table: "variant")
                reader.key = "\(ColumnReader.printable(spec)) of seq \(ColumnReader.keyText(reader.value(0)))"
                return (try reader.integer(0, "photo_seq", in: CatalogLimits.seqRange),
                        try reader.integer(1, "byte_size", in: 1 ... CatalogLimits.maxByteSize))
            }
            return Dictionary(sizes, uniquingKeysWith: { first, _ in first })
        }
    }

    public func variant(seq: Int64, spec: String) throws -> VariantRecord? {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT source_url, byte_size, width, height, content_type, unchanged FROM variant
                WHERE spec = ? AND photo_seq = ?
                """, arguments: [spec, seq])) { row in
                var reader = ColumnReader(row, table: "variant")
                reader.key = "\(ColumnReader.printable(spec)) of seq \(seq)"
                return VariantRecord(
                    seq: seq, spec: spec, sourceURL: try reader.text(0, "source_url"),
                    byteSize: try reader.integer(1, "byte_size", in: 1 ... CatalogLimits.maxByteSize),
                    width: Int(try reader.integer(2, "width", in: CatalogLimits.dimensionRange)),
                    height: Int(try reader.integer(3, "height", in: CatalogLimits.dimensionRange)),
                    contentType: try reader.text(4, "content_type"),
                    unchanged: try reader.integer(5, "unchanged", in: 0 ... 1) == 1)
            }.first
        }
    }

    /// A square thumbnail's bytes, kept in the catalog.
    public func thumbnail(seq: Int64, spec: String) throws -> Data? {
        try read { db in
            // Only a blob is a thumbnail; anything else stored there reads as none (and is rendered again).
            let value = try DatabaseValue.fetchOne(db, sql: "SELECT data FROM thumbnail WHERE photo_seq = ? AND spec = ?",
                                                   arguments: [seq, spec])
            if case .blob(let data)? = value?.storage { return data }
            return nil
        }
    }

    /// Records rendered variants in one transaction (with the thumbnail bytes for those that have them).
    /// Does not move the change counters: a variant is derived data that every mount of the same size would
    /// render identically, so no listing needs rebuilding. Each is saved only if its photo still has the
    /// original it was rendered from (`from`, the photo row as read before rendering): an import may have
    /// replaced it while the variant waited to be written, and its trigger would not have seen this row.
    public func saveVariants(_ variants: [(record: VariantRecord, thumbnail: Data?, from: PhotoRecord)]) throws {
        guard !variants.isEmpty else { return }
        try write { db in
            for (record, thumbnail, photo) in variants {
                guard try Bool.fetchOne(db, sql: """
                    SELECT 1 FROM photo WHERE seq = ? AND original_url = ? AND byte_size IS ? AND content_type IS ?
                                          AND etag IS ?
                    """, arguments: [record.seq, photo.originalURL, photo.byteSize, photo.contentType, photo.etag]) == true
                else { continue }
                try db.execute(sql: """
                    INSERT OR REPLACE INTO variant(spec, photo_seq, source_url, byte_size, width, height, content_type,
                                                   unchanged)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [record.spec, record.seq, record.sourceURL, record.byteSize, record.width,
                                     record.height, record.contentType, record.unchanged])
                if let thumbnail {
                    try db.execute(sql: "INSERT OR REPLACE INTO thumbnail(photo_seq, spec, data) VALUES (?, ?, ?)",
                                   arguments: [record.seq, record.spec, thumbnail])
                }
            }
        }
    }

    // MARK: - Internals

    /// Replaces a photo's renditions when they differ from the stored ones; then its variants, made from the
    /// old set, are dropped too (a re-render might pick another source and come out a different size).
    private static func replaceRenditions(of photoID: String, with renditions: [Rendition], _ db: Database) throws -> Bool {
        guard let seq = try integer(db, sql: "SELECT seq FROM photo WHERE id = ?", arguments: [photoID]) else {
            return false
        }
        // A stored row that cannot be read makes the sets differ, so the import replaces it.
        let stored = Set(try Row.fetchAll(db.cachedStatement(sql: "SELECT label, url, width, height FROM rendition WHERE photo_seq = ?"),
                                          arguments: [seq]).map { try? rendition($0, seq: seq) })
        guard stored != Set(renditions.map(Optional.some)) else { return false }
        try db.cachedStatement(sql: "DELETE FROM rendition WHERE photo_seq = ?").execute(arguments: [seq])
        let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO rendition(photo_seq, label, url, width, height) VALUES (?, ?, ?, ?, ?)")
        for rendition in renditions {
            try insert.execute(arguments: [seq, rendition.label, rendition.url, rendition.width, rendition.height])
        }
        if !stored.isEmpty {
            try db.execute(sql: "DELETE FROM variant WHERE photo_seq = ?", arguments: [seq])
            try db.execute(sql: "DELETE FROM thumbnail WHERE photo_seq = ?", arguments: [seq])
        }
        return true
    }

    /// Photos of a query selecting `PhotoRecord.columns`, through a cursor: rows are decoded in place, not
    /// copied first.
    private static func photos(_ catalog: Catalog, _ db: Database, sql: String,
                               arguments: StatementArguments = []) throws -> [PhotoRecord] {
        try catalog.decodeAll(Row.fetchCursor(db, sql: sql, arguments: arguments), PhotoRecord.decode(row:))
    }

    /// One rendition row, checked: non-empty label and URL, width and height within `CatalogLimits.dimensionRange`.
    private static func rendition(_ row: Row, seq: Int64) throws -> Rendition {
        var reader = ColumnReader(row, table: "rendition")
        reader.key = "of seq \(seq)"
        let label = try reader.text(0, "label")
        reader.key = "\(ColumnReader.printable(label)) of seq \(seq)"
        return Rendition(label: label, url: try reader.text(1, "url"),
                         width: Int(try reader.integer(2, "width", in: CatalogLimits.dimensionRange)),
                         height: Int(try reader.integer(3, "height", in: CatalogLimits.dimensionRange)))
    }

    /// The first column of the first row when it is an INTEGER; nil for no row, NULL or another type (GRDB's
    /// `Int64.fetchOne` would read the text "abc" as 0).
    /// The statement is cached: imports run these per photo.
    static func integer(_ db: Database, sql: String, arguments: StatementArguments) throws -> Int64? {
        if case .int64(let value)? = try DatabaseValue.fetchOne(db.cachedStatement(sql: sql), arguments: arguments)?.storage {
            return value
        }
        return nil
    }

    private static func upsert(_ p: PhotoRecord, _ db: Database) throws {
        // The WHERE on DO UPDATE makes an unchanged re-import a no-op, so it does not count as a change.
        // Cached: compiling it (GRDB's authorizer walks every column) was a fifth of an import's CPU.
        try db.cachedStatement(sql: """
            INSERT INTO photo(id, title, description, photographer_id, region_id, place_id, date_taken, moment_at,
                              moment_year, uploaded_at, original_url, thumbnail_url, byte_size, content_type, etag,
                              last_modified, latitude, longitude, visibility, tags, last_update)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET
                title = excluded.title, description = excluded.description,
                photographer_id = excluded.photographer_id, region_id = excluded.region_id,
                place_id = excluded.place_id, date_taken = excluded.date_taken, moment_at = excluded.moment_at,
                moment_year = excluded.moment_year, uploaded_at = excluded.uploaded_at,
                original_url = excluded.original_url, thumbnail_url = excluded.thumbnail_url,
                byte_size = excluded.byte_size, content_type = excluded.content_type, etag = excluded.etag,
                last_modified = excluded.last_modified, latitude = excluded.latitude, longitude = excluded.longitude,
                visibility = excluded.visibility, tags = excluded.tags, last_update = excluded.last_update
            WHERE (title, description, photographer_id, region_id, place_id, date_taken, moment_at, uploaded_at,
                   original_url, thumbnail_url, byte_size, content_type, etag, last_modified, latitude, longitude,
                   visibility, tags, last_update)
                  IS NOT
                  (excluded.title, excluded.description, excluded.photographer_id, excluded.region_id,
                   excluded.place_id, excluded.date_taken, excluded.moment_at, excluded.uploaded_at,
                   excluded.original_url, excluded.thumbnail_url, excluded.byte_size, excluded.content_type,
                   excluded.etag, excluded.last_modified, excluded.latitude, excluded.longitude,
                   excluded.visibility, excluded.tags, excluded.last_update)
            """).execute(arguments: [p.id, p.title, p.description, p.photographerID, p.regionID, p.placeID, p.dateTaken,
                             p.momentAt, p.momentYear, p.uploadedAt, p.originalURL, p.thumbnailURL, p.byteSize,
                             p.contentType, p.etag, p.lastModified, p.latitude, p.longitude, p.visibility.rawValue,
                             p.tags.joined(separator: " "), p.lastUpdate])
    }

    private static func regionID(named name: String, _ db: Database) throws -> Int64 {
        try db.execute(sql: "INSERT INTO region(name) VALUES (?) ON CONFLICT(name) DO NOTHING", arguments: [name])
        guard let id = try integer(db, sql: "SELECT id FROM region WHERE name = ?", arguments: [name]) else {
            throw BadRow(table: "region", key: "name \(ColumnReader.printable(name))", problem: "its id is not an integer")
        }
        return id
    }

    /// Every region's counts from its available photos: stored, not computed per listing; every write that
    /// moves photos calls this, an import after every page. Both counts come from `Schema.regionCountIndex`
    /// alone (`available = 1`, not `available`, lets SQLite seek on it).
    static func recountRegions(_ db: Database) throws {
        try db.execute(sql: recountRegionsSQL)
    }

    static let recountRegionsSQL = """
        UPDATE region SET
            photo_count = (SELECT count(*) FROM photo WHERE region_id = region.id AND available = 1),
            photographer_count = (SELECT count(DISTINCT photographer_id) FROM photo
                                  WHERE region_id = region.id AND available = 1)
        """

    static func bumpGeneration(_ db: Database) throws {
        try db.execute(sql: "UPDATE library_state SET generation = generation + 1")
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try pool.read(body) } catch {
            throw CatalogError(path: path, message: "cannot read the photo library", underlying: error)
        }
    }

    func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard !isReadOnly else {
            throw CatalogError(path: path, message: "is open read-only: nothing was written", reason: .readOnly)
        }
        do {
            return try pool.write { db in
                let result = try body(db)
                // The photos this transaction changed get their search rows before it commits (SchemaSearch.swift).
                try SearchIndex.indexQueued(db)
                return result
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY {
            throw CatalogError(path: path, message: "is read-only (SQLite could not write it): nothing was written",
                               reason: .readOnly)
        } catch {
            throw CatalogError(path: path, message: "cannot write the photo library", underlying: error)
        }
    }
}
