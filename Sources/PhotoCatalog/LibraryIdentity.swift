// What a file at a library path is (nothing, empty, not SQLite, another application's database, a photofs
// library of which version) and whether it can be written, found out before anything writes to it.
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What is at a library path, as far as photofs cares.
enum LibraryIdentity: Equatable {
    case absent
    case emptyFile
    case directory
    case notSQLite(looksLikeText: Bool)
    /// SQLite, no tables: what `sqlite3 file.sqlite ""` or another tool leaves; it may become a library.
    case emptyDatabase
    /// Ours, or the previous photofs's (application_id 0, exactly our tables). `needsMigration`: some
    /// migration is still to run; `needsMarking`: application_id or user_version are not yet set.
    case library(needsMigration: Bool, needsMarking: Bool)
    case foreign(tables: [String], applicationID: Int32)
    /// A photofs library with tables this photofs does not know, though its version is one it reads.
    case libraryWithForeignTables([String])
    case newer(version: Int32, unknownMigrations: [String])
}

/// What the read-only inspection saw; `classify` turns it into a `LibraryIdentity` with no I/O.
struct LibraryInspection: Equatable {
    var applicationID: Int32
    var userVersion: Int32
    /// Table names, without SQLite's own (`sqlite_sequence`, `sqlite_stat1`).
    var tables: [String]
    /// grdb_migrations identifiers, nil without that table.
    var migrations: [String]?

    func classify() -> LibraryIdentity {
        let tables = Set(self.tables)
        let unknownTables = tables.subtracting(Schema.knownTables).sorted()
        let unknownMigrations = (migrations ?? []).filter { !Schema.migrationIdentifiers.contains($0) }.sorted()
        let missingMigrations = Schema.migrationIdentifiers.contains { !(migrations ?? []).contains($0) }
        let marked = applicationID == Schema.applicationID && userVersion == Schema.version

        if applicationID != 0 && applicationID != Schema.applicationID {
            return .foreign(tables: tables.sorted(), applicationID: applicationID)
        }
        if applicationID == Schema.applicationID {
            if userVersion > Schema.version || !unknownMigrations.isEmpty {
                return .newer(version: userVersion, unknownMigrations: unknownMigrations)
            }
            if tables.isEmpty { return .emptyDatabase }
            if !unknownTables.isEmpty { return .libraryWithForeignTables(unknownTables) }
            return .library(needsMigration: missingMigrations, needsMarking: !marked)
        }
        // application_id 0: an empty database, the previous photofs's library, or another application's.
        if tables.isEmpty { return userVersion == 0 ? .emptyDatabase : .foreign(tables: [], applicationID: 0) }
        // The previous photofs wrote exactly our tables with GRDB's migration table; an application that
        // happens to have a table called "photo" has no grdb_migrations naming ours.
        let previousPhotofs = tables.contains("grdb_migrations") && tables.contains("photo")
            && unknownTables.isEmpty && (migrations ?? []).contains(Schema.migrationIdentifiers[0])
        guard previousPhotofs else { return .foreign(tables: tables.sorted(), applicationID: 0) }
        if !unknownMigrations.isEmpty { return .newer(version: userVersion, unknownMigrations: unknownMigrations) }
        return .library(needsMigration: missingMigrations, needsMarking: true)
    }
}

enum LibraryInspector {
    /// Looks at `path` without writing anything: the 100-byte header read directly, then a read-only SQLite
    /// connection. A plain read-only connection to a WAL database creates `-wal` and `-shm` files and, being
    /// read-only, cannot remove them on close (tried on SQLite 3.40.1); so when no `-wal` or `-journal` file
    /// exists (the database is fully in the main file) it is opened `immutable=1`, which touches nothing.
    static func inspect(path: String) throws -> LibraryIdentity {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return .absent }
            throw CatalogError(path: path, message: "cannot look at the file (\(String(cString: strerror(errno))))",
                               reason: .unreadable)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { return .directory }
        if info.st_size == 0 { return .emptyFile }
        let header = try readHeader(path)
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            return .notSQLite(looksLikeText: looksLikeText(header))
        }
        let sidecarsExist = FileManager.default.fileExists(atPath: path + "-wal")
            || FileManager.default.fileExists(atPath: path + "-journal")
        let inspection: LibraryInspection
        do {
            inspection = try readSchema(path: sidecarsExist ? path : immutableURI(path))
        } catch let error as DatabaseError {
            throw CatalogError(path: path, message: "is not a photofs library: a damaged or unreadable SQLite file "
                               + "(\(error.message ?? "\(error.resultCode)"))", reason: .notALibrary)
        }
        return inspection.classify()
    }

    /// A URI that opens `path` read-only and immutable: no locks, no journal, nothing created.
    /// Needs SQLite built with URI file names (SQLITE_USE_URI), as Debian, Ubuntu and Fedora build it; GRDB
    /// gives no way to pass SQLITE_OPEN_URI.
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "/-._~")
        let escaped = absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute
        return "file:" + escaped + "?mode=ro&immutable=1"
    }

    private static func readSchema(path: String) throws -> LibraryInspection {
        var config = Configuration()
        config.readonly = true
        config.label = "photofs.inspection"
        let queue = try DatabaseQueue(path: path, configuration: config)
        defer { try? queue.close() }
        return try queue.read { db in
            let applicationID = try Int64.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            let userVersion = try Int64.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            let tables = try DatabaseValue.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                """).map(text(of:))
            var migrations: [String]?
            if tables.contains("grdb_migrations") {
                // A foreign grdb_migrations may lack the column; then it is no migration table of ours.
                migrations = (try? DatabaseValue.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))?
                    .map(text(of:)) ?? []
            }
            return LibraryInspection(applicationID: Int32(truncatingIfNeeded: applicationID),
                                     userVersion: Int32(truncatingIfNeeded: userVersion),
                                     tables: tables, migrations: migrations)
        }
    }

    private static func text(of value: DatabaseValue) -> String {
        switch value.storage {
        case .string(let text): return text
        default: return "\(value)"
        }
    }

    private static func readHeader(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw CatalogError(path: path, message: "cannot read the file (\(String(cString: strerror(errno))))",
                               reason: .unreadable)
        }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 100)
        var filled = 0
        while filled < header.count {
            let got = header.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.read(fd, base + filled, buffer.count - filled)
            }
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { break }
            filled += got
        }
        return Array(header.prefix(filled))
    }

    /// Valid UTF-8 without NUL or control characters other than tab, CR and LF (a partial last character,
    /// cut by the 100-byte read, is forgiven).
    private static func looksLikeText(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return false }
        for cut in 0...min(3, bytes.count - 1) {
            let prefix = bytes.dropLast(cut)
            guard let text = String(validating: prefix, as: UTF8.self) else { continue }
            return !text.unicodeScalars.contains { $0.value < 0x20 && ![0x09, 0x0A, 0x0D].contains($0.value) }
        }
        return false
    }

    /// Why the library at `path` cannot be written, or nil when it can. Root passes every permission check,
    /// so write bits that are all off count too: they say the owner wants the file left alone.
    static func writeBlocker(path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o222 == 0 {
            return "the file's mode is \(String(info.st_mode & 0o777, radix: 8)), no one may write it"
        }
        if access(path, W_OK) != 0 {
            return errno == EROFS ? "it is on a read-only file system" : "you may not write it (\(String(cString: strerror(errno))))"
        }
        let directory = (path as NSString).deletingLastPathComponent
        if access(directory.isEmpty ? "." : directory, W_OK) != 0 {
            if errno == EROFS { return "it is on a read-only file system" }
            return "its directory is not writable, and SQLite must create the -wal and -shm files there"
        }
        return nil
    }

    /// Why a new library cannot be created at `path`, or nil when it can.
    static func createBlocker(path: String) -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        if access(directory.isEmpty ? "." : directory, W_OK) != 0 {
            return errno == EROFS ? "its directory is on a read-only file system"
                                  : "its directory is missing or not writable (\(String(cString: strerror(errno))))"
        }
        return nil
    }
}
