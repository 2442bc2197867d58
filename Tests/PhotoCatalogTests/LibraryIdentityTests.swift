// The library file knows it is one: marked when made or adopted; text files, other applications' databases and
// libraries of a newer photofs refused before anything is written, and left byte for byte as they were.
import Foundation
import GRDB
@testable import PhotoCatalog
import XCTest

final class LibraryIdentityTests: XCTestCase {
    var scratch: ScratchDirectory!
    var library: String { scratch.path("library.sqlite") }

    override func setUpWithError() throws { scratch = try ScratchDirectory("identity") }
    override func tearDown() { scratch = nil }

    func testANewLibraryIsMarkedAndHoldsExactlyTheKnownTables() throws {
        _ = try Catalog(path: library)
        XCTAssertEqual(try pragma(library, "application_id"), 0x5048_4653, "ASCII PHFS")
        XCTAssertEqual(try pragma(library, "user_version"), Int64(Schema.version))
        XCTAssertEqual(Schema.version, 13, "v1–v5, favourites and people, events, search, mark counts, count difference, camera and people searched, open events, refused files")
        let queue = try DatabaseQueue(path: library)
        let tables = try queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        }
        XCTAssertEqual(Set(tables), Schema.knownTables, "a migration added a table: add it to Schema.knownTables")
    }

    func testATextFileIsRefusedAndLeftAlone() throws {
        try "photo,title\n1,Sunset\n".write(toFile: library, atomically: true, encoding: .utf8)
        let before = FileSnapshot(library)
        for mode in [Catalog.OpenMode.importing, .mounting] {
            let error = catalogError(try Catalog(path: library, mode: mode))
            XCTAssertEqual(error?.reason, .notALibrary)
            XCTAssertEqual(error?.description,
                           "\(library) is not a photofs library: not a SQLite database (it looks like a text file)")
        }
        XCTAssertEqual(FileSnapshot(library), before)
    }

    func testABinaryFileIsRefused() throws {
        try Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: library))
        let before = FileSnapshot(library)
        let error = catalogError(try Catalog(path: library))
        XCTAssertEqual(error?.description, "\(library) is not a photofs library: not a SQLite database")
        XCTAssertEqual(FileSnapshot(library), before)
    }

    func testAnotherApplicationsDatabaseIsRefusedUnchangedInEitherJournalMode() throws {
        for walMode in [false, true] {
            try? FileManager.default.removeItem(atPath: library)
            let queue = try DatabaseQueue(path: library)
            try queue.writeWithoutTransaction { db in
                if walMode { try db.execute(sql: "PRAGMA journal_mode = WAL") }
                try db.execute(sql: """
                    CREATE TABLE contacts(id INTEGER PRIMARY KEY, name TEXT);
                    CREATE TABLE messages(id INTEGER PRIMARY KEY, body TEXT);
                    CREATE TABLE photo(id INTEGER PRIMARY KEY, path TEXT);
                    INSERT INTO contacts(name) VALUES ('Ada');
                    """)
            }
            try queue.close()
            let before = FileSnapshot(library)
            XCTAssertFalse(before.neighbours.contains { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") })
            for mode in [Catalog.OpenMode.importing, .mounting] {
                let error = catalogError(try Catalog(path: library, mode: mode))
                XCTAssertEqual(error?.reason, .foreignDatabase)
                XCTAssertEqual(error?.description, "\(library) is not a photofs library: a SQLite database of another "
                               + "application (tables: contacts, messages, photo)")
            }
            XCTAssertEqual(FileSnapshot(library), before, walMode ? "WAL" : "rollback journal")
        }
    }

    func testADatabaseWithOnlyAPhotoTableButNoMigrationsIsAnotherApplications() throws {
        try tamper(library, "CREATE TABLE photo(id TEXT, title TEXT)")
        let error = catalogError(try Catalog(path: library))
        XCTAssertEqual(error?.reason, .foreignDatabase)
        XCTAssertTrue(error?.description.hasSuffix("(tables: photo)") == true, error?.description ?? "")
    }

    func testAnotherApplicationsMarkIsRefusedEvenWithoutTables() throws {
        try tamper(library, "PRAGMA application_id = 252006674") // Fossil's 0x0F055112
        let before = FileSnapshot(library)
        let error = catalogError(try Catalog(path: library))
        XCTAssertEqual(error?.description,
                       "\(library) is not a photofs library: a SQLite database of another application (application_id 0xf055112)")
        XCTAssertEqual(FileSnapshot(library), before)
    }

    func testALibraryOfANewerPhotofsIsRefusedUnchanged() throws {
        _ = try Catalog(path: library).applyImport(places: [], photos: [importedPhoto("1")])
        try tamper(library, "PRAGMA user_version = 999")
        let before = FileSnapshot(library)
        for mode in [Catalog.OpenMode.importing, .mounting] {
            let error = catalogError(try Catalog(path: library, mode: mode))
            XCTAssertEqual(error?.reason, .newerLibrary)
            XCTAssertEqual(error?.description, "\(library) was made by a newer photofs (library version 999, this one "
                           + "reads up to \(Schema.version)); upgrade photofs")
        }
        XCTAssertEqual(FileSnapshot(library), before)
    }

    func testAnUnknownMigrationMeansANewerPhotofs() throws {
        _ = try Catalog(path: library)
        try tamper(library, "INSERT INTO grdb_migrations VALUES ('v4: moments'); CREATE TABLE moment(id INTEGER)")
        let before = FileSnapshot(library)
        let error = catalogError(try Catalog(path: library, mode: .mounting))
        XCTAssertEqual(error?.reason, .newerLibrary)
        XCTAssertEqual(error?.description, "\(library) was made by a newer photofs (schema changes this one does not "
                       + "know: v4: moments); upgrade photofs")
        XCTAssertEqual(FileSnapshot(library), before)
    }

    func testALibraryWithATableAddedByHandIsLeftAlone() throws {
        _ = try Catalog(path: library)
        try tamper(library, "CREATE TABLE my_notes(text TEXT)")
        let before = FileSnapshot(library)
        let error = catalogError(try Catalog(path: library))
        XCTAssertEqual(error?.reason, .foreignDatabase)
        XCTAssertTrue(error?.description.contains("(tables: my_notes)") == true, error?.description ?? "")
        XCTAssertEqual(FileSnapshot(library), before)
    }

    func testALibraryOfThePreviousPhotofsIsAdoptedWithItsPhotos() throws {
        _ = try Catalog(path: library).applyImport(places: [], photos: [importedPhoto("1"), importedPhoto("2")])
        // What the previous photofs left: no mark, no version.
        try tamper(library, "PRAGMA application_id = 0; PRAGMA user_version = 0")
        let catalog = try Catalog(path: library, mode: .mounting)
        XCTAssertFalse(catalog.isReadOnly)
        XCTAssertEqual(try catalog.allPhotos().map(\.id), ["1", "2"])
        XCTAssertEqual(try pragma(library, "application_id"), Int64(Schema.applicationID))
        XCTAssertEqual(try pragma(library, "user_version"), Int64(Schema.version))
    }

    func testAVersion1LibraryIsMigratedAndMarked() throws {
        let queue = try DatabaseQueue(path: library)
        try Schema.migrator.migrate(queue, upTo: Schema.migrationIdentifiers[0])
        try queue.write { db in try db.execute(sql: "PRAGMA application_id = 0; PRAGMA user_version = 0") }
        try queue.close()
        let catalog = try Catalog(path: library)
        XCTAssertEqual(try catalog.renditions(seq: 1), [], "the v2 tables exist")
        XCTAssertEqual(try catalog.albums(), [], "the v3 tables exist")
        XCTAssertEqual(try catalog.outdatedDesktopThumbnailURIs(removedAfter: 0), [], "the v4 table exists")
        XCTAssertEqual(try pragma(library, "user_version"), Int64(Schema.version))
        XCTAssertEqual(try pragma(library, "application_id"), Int64(Schema.applicationID))
    }

    /// A row that breaks a foreign key (a library edited by hand: a photo of a region deleted) is one bad row:
    /// upgrading the library must not refuse the whole file for it (GRDB's default re-checks every foreign key
    /// after each migration and throws).
    func testAnOlderLibraryWithARowBreakingAForeignKeyIsStillUpgraded() throws {
        let queue = try DatabaseQueue(path: library)
        try Schema.migrator.migrate(queue, upTo: Schema.migrationIdentifiers[Schema.migrationIdentifiers.count - 2])
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF") // outside a transaction, or SQLite ignores it
            try db.execute(sql: """
                INSERT INTO photo(id, title, photographer_id, region_id, moment_at, moment_year, original_url, byte_size, content_type)
                VALUES ('dangling', 'Dangling', 999, 999, 0, 1970, 'http://x/d.jpg', 10, 'image/jpeg')
                """)
            try db.execute(sql: "PRAGMA user_version = \(Schema.migrationIdentifiers.count - 1)")
        }
        try queue.close()
        let catalog = try Catalog(path: library, mode: .mounting)
        XCTAssertEqual(try pragma(library, "user_version"), Int64(Schema.version), "the last migration ran")
        XCTAssertFalse(catalog.isReadOnly)
    }

    func testImportingMakesALibraryOfNothingAnEmptyFileOrAnEmptyDatabase() throws {
        XCTAssertNoThrow(try Catalog(path: scratch.path("missing.sqlite")))
        FileManager.default.createFile(atPath: scratch.path("empty.sqlite"), contents: Data())
        XCTAssertNoThrow(try Catalog(path: scratch.path("empty.sqlite")))
        try tamper(scratch.path("tableless.sqlite"), "CREATE TABLE t(x); DROP TABLE t")
        XCTAssertNoThrow(try Catalog(path: scratch.path("tableless.sqlite")))
        for file in ["missing.sqlite", "empty.sqlite", "tableless.sqlite"] {
            XCTAssertEqual(try pragma(scratch.path(file), "application_id"), Int64(Schema.applicationID), file)
        }
    }

    func testMountingNeedsAnExistingLibraryAndCreatesNothing() throws {
        let missing = scratch.path("missing.sqlite")
        XCTAssertEqual(catalogError(try Catalog(path: missing, mode: .mounting))?.description,
                       "\(missing) is not a photofs library: the file does not exist")
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))

        let empty = scratch.path("empty.sqlite")
        FileManager.default.createFile(atPath: empty, contents: Data())
        XCTAssertEqual(catalogError(try Catalog(path: empty, mode: .mounting))?.description,
                       "\(empty) is not a photofs library: the file is empty")

        let tableless = scratch.path("tableless.sqlite")
        try tamper(tableless, "CREATE TABLE t(x); DROP TABLE t")
        let before = FileSnapshot(tableless)
        XCTAssertEqual(catalogError(try Catalog(path: tableless, mode: .mounting))?.description,
                       "\(tableless) is not a photofs library: an empty SQLite database")
        XCTAssertEqual(FileSnapshot(tableless), before)

        XCTAssertEqual(catalogError(try Catalog(path: scratch.url.path, mode: .mounting))?.reason, .notALibrary)
    }

    func testALibraryInUseByAnotherCatalogIsInspectedWithoutDisturbingIt() throws {
        // A mount holds the library open (its -wal and -shm exist); an import opens it too.
        let mount = try Catalog(path: library, mode: .importing)
        _ = try mount.applyImport(places: [], photos: [importedPhoto("1")])
        let importer = try Catalog(path: library, mode: .importing)
        _ = try importer.applyImport(places: [], photos: [importedPhoto("2")])
        XCTAssertEqual(try mount.allPhotos().map(\.id), ["1", "2"])
    }

    func testClassificationOfInspections() {
        let ours = Array(Schema.knownTables)
        func classify(_ id: Int32, _ version: Int32, _ tables: [String], _ migrations: [String]?) -> LibraryIdentity {
            LibraryInspection(applicationID: id, userVersion: version, tables: tables, migrations: migrations).classify()
        }
        let all = Schema.migrationIdentifiers
        XCTAssertEqual(classify(Schema.applicationID, Schema.version, ours, all), .library(needsMigration: false, needsMarking: false))
        XCTAssertEqual(classify(0, 0, ours, all), .library(needsMigration: false, needsMarking: true))
        XCTAssertEqual(classify(0, 0, [], nil), .emptyDatabase)
        XCTAssertEqual(classify(0, 7, [], nil), .foreign(tables: [], applicationID: 0))
        XCTAssertEqual(classify(Schema.applicationID, Schema.version + 1, ours, all),
                       .newer(version: Schema.version + 1, unknownMigrations: []))
        XCTAssertEqual(classify(0, 0, ["photo", "grdb_migrations"], ["create users"]),
                       .foreign(tables: ["grdb_migrations", "photo"], applicationID: 0))
    }
}
