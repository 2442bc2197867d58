// A library photofs cannot write (mode 0444, a read-only disk) mounts read-only: no migration, no writes, no
// SQL jargon; importing into it fails with a clear message. The read-only disk is a real read-only bind mount.
import Foundation
import PhotoCatalog
import TestRequirements
import XCTest

final class ReadOnlyLibraryTests: XCTestCase {
    var scratch: ScratchDirectory!
    var readOnlyView: String?

    override func setUpWithError() throws { scratch = try ScratchDirectory("readonly") }

    override func tearDownWithError() throws {
        if let readOnlyView {
            XCTAssertEqual(try run("/usr/bin/umount", [readOnlyView]), 0, "umount \(readOnlyView)")
        }
        scratch = nil
    }

    func makeLibrary(_ path: String, photos: [ImportedPhoto] = [importedPhoto("1"), importedPhoto("2")]) throws {
        _ = try Catalog(path: path).applyImport(places: [], photos: photos)
    }

    /// Words a user should never have to read.
    func assertNoJargon(_ error: CatalogError?, file: StaticString = #filePath, line: UInt = #line) {
        let text = error?.description ?? ""
        for jargon in ["SQLite error", "grdb", "CREATE TABLE", "attempt to write"] {
            XCTAssertFalse(text.contains(jargon), "\(text)", file: file, line: line)
        }
    }

    func testAFileWithoutWritePermissionMountsReadOnlyAndRefusesImports() throws {
        // URI characters in the name: the read-only open passes the path as a `file:` URI.
        let library = scratch.path("my library #1?%&.sqlite")
        try makeLibrary(library)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: library)
        let before = FileSnapshot(library)

        let importing = catalogError(try Catalog(path: library, mode: .importing))
        XCTAssertEqual(importing?.reason, .readOnly)
        XCTAssertEqual(importing?.description, "\(library) is read-only (the file's mode is 444, no one may write it): "
                       + "cannot import into it")

        let catalog = try Catalog(path: library, mode: .mounting)
        XCTAssertTrue(catalog.isReadOnly)
        XCTAssertEqual(try catalog.allPhotos().map(\.id), ["1", "2"])
        XCTAssertEqual(try catalog.years().map(\.photoCount), [2])
        let write = catalogError(try catalog.recordOpen(seq: 1))
        XCTAssertEqual(write?.reason, .readOnly)
        XCTAssertEqual(write?.description, "\(library) is open read-only: nothing was written")
        assertNoJargon(write)
        XCTAssertEqual(catalogError(try catalog.applyImport(places: [], photos: [importedPhoto("3")]))?.reason, .readOnly)
        XCTAssertEqual(catalogError(try catalog.removePhotos(ids: ["1"]))?.reason, .readOnly)
        XCTAssertEqual(FileSnapshot(library), before, "a read-only catalog wrote nothing and left no -wal or -shm")
    }

    func testAnOlderLibraryThatCannotBeUpgradedIsRefusedClearly() throws {
        let library = scratch.path("library.sqlite")
        try makeLibrary(library)
        try tamper(library, "DELETE FROM grdb_migrations WHERE identifier LIKE 'v2%'; PRAGMA user_version = 1")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: library)
        let error = catalogError(try Catalog(path: library, mode: .mounting))
        XCTAssertEqual(error?.reason, .readOnly)
        XCTAssertTrue(error?.description.contains("was made by an older photofs and must be upgraded") == true,
                      error?.description ?? "")
        assertNoJargon(error)
    }

    func testALibraryOnAReadOnlyDiskMountsReadOnlyWithoutItsWALFiles() throws {
        let writable = scratch.url.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: writable, withIntermediateDirectories: true)
        try makeLibrary(writable + "/library.sqlite")
        let view = try mountReadOnly(writable)
        let library = view + "/library.sqlite"
        let before = FileSnapshot(library)
        XCTAssertEqual(before.neighbours, ["library.sqlite"], "closed cleanly: no -wal, so SQLite cannot make one")

        let error = catalogError(try Catalog(path: library, mode: .importing))
        XCTAssertEqual(error?.description, "\(library) is read-only (it is on a read-only file system): cannot import into it")

        let catalog = try Catalog(path: library, mode: .mounting)
        XCTAssertTrue(catalog.isReadOnly)
        XCTAssertEqual(try catalog.allPhotos().map(\.id), ["1", "2"])
        XCTAssertEqual(try catalog.photos(inYear: 2020).count, 2)
        assertNoJargon(catalogError(try catalog.recordOpen(seq: 1)))
        XCTAssertEqual(FileSnapshot(library), before)
    }

    func testALibraryOnAReadOnlyDiskSeesImportsMadeThroughAWritablePath() throws {
        // The harder WAL case: a writer elsewhere keeps -wal and -shm in place; the read-only view reads them.
        let writable = scratch.url.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: writable, withIntermediateDirectories: true)
        let writer = try Catalog(path: writable + "/library.sqlite")
        _ = try writer.applyImport(places: [], photos: [importedPhoto("1")])
        let view = try mountReadOnly(writable)
        let library = view + "/library.sqlite"
        XCTAssertTrue(FileManager.default.fileExists(atPath: library + "-wal"))

        let catalog = try Catalog(path: library, mode: .mounting)
        XCTAssertTrue(catalog.isReadOnly)
        XCTAssertEqual(try catalog.allPhotos().map(\.id), ["1"])
        let generation = try catalog.generation()
        _ = try writer.applyImport(places: [], photos: [importedPhoto("2")])
        XCTAssertNotEqual(try catalog.generation(), generation, "a read-only mount still notices imports")
        XCTAssertEqual(try catalog.allPhotos().map(\.id), ["1", "2"])
    }

    /// A read-only bind mount of `directory` (root ignores permission bits, so chmod 0555 would prove nothing).
    private func mountReadOnly(_ directory: String) throws -> String {
        try TestRequirement.root("to bind-mount a read-only view of the library's folder")
        let view = scratch.url.appendingPathComponent("readonly-view").path
        try FileManager.default.createDirectory(atPath: view, withIntermediateDirectories: true)
        guard try run("/usr/bin/mount", ["--bind", directory, view]) == 0 else {
            throw XCTSkip("needs CAP_SYS_ADMIN to bind-mount (root in a container without it?)")
        }
        readOnlyView = view
        guard try run("/usr/bin/mount", ["-o", "remount,bind,ro", view]) == 0 else {
            throw XCTSkip("cannot remount the bind mount read-only here")
        }
        XCTAssertFalse(FileManager.default.isWritableFile(atPath: view))
        return view
    }

    @discardableResult
    private func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
