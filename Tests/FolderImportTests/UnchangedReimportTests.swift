// An unchanged re-import recognised by merging the walk with the remembered files gives the full
// reconciliation's answer, and is not recognised when anything changed (real files, a real library).
@testable import FolderImport
import Logging
import PhotoCatalog
import TestRequirements
import XCTest

final class UnchangedReimportTests: XCTestCase {
    var directory: URL!
    var photos: String { directory.appendingPathComponent("photos").path }
    var other: String { directory.appendingPathComponent("other").path }
    var library: String { directory.appendingPathComponent("library.sqlite").path }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("unchanged-reimport-\(UUID().uuidString.prefix(8))")
        for folder in ["trip", "trip-2", "Été 2024", ".hidden"] {
            try FileManager.default.createDirectory(atPath: photos + "/" + folder, withIntermediateDirectories: true)
        }
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    func write(_ path: String, seed: UInt8) throws {
        try PhotoFixtures.jpeg(seed: seed).write(to: URL(fileURLWithPath: path))
    }

    /// The plan of an import of `roots`, recognising an unchanged walk or not.
    func plan(_ roots: [String], recognising: Bool) throws -> FolderPlan {
        try FolderScan(catalog: try Catalog(path: library), roots: roots, logger: Logger(label: "test"), progress: nil,
                       recognisesUnchanged: recognising).plan()
    }

    func run(_ roots: [String]) throws {
        _ = try FolderImporter(catalog: try Catalog(path: library), roots: roots, logger: Logger(label: "test"), progress: nil).run()
    }

    /// Names whose byte order is not the order of a walk sorted by name ("trip-2/" < "trip.jpg" < "trip/"),
    /// a folder name that needs escapes in its URL, duplicates inside the folder and in another one.
    func makeFolders() throws {
        try write(photos + "/trip/x.jpg", seed: 1)
        try write(photos + "/trip-2/y.jpg", seed: 2)
        try write(photos + "/trip.jpg", seed: 3)
        try write(photos + "/Été 2024/plage #1.jpg", seed: 4)
        try write(photos + "/Été 2024/plage copie.jpg", seed: 4)
        try write(photos + "/a.jpg", seed: 5)
        try write(photos + "/.hidden/h.jpg", seed: 6)
        try write(other + "/also-a.jpg", seed: 5)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: photos + "/notes.txt"))
    }

    func testRecognisedWithTheFullReconciliationsCounts() throws {
        try makeFolders()
        // The folder first, so the photo of a.jpg stays shown from it when the other folder's copy comes.
        try run([photos])
        try run([other])
        for roots in [[photos], [photos, other], [other, photos]] {
            let fast = try plan(roots, recognising: true)
            let full = try plan(roots, recognising: false)
            XCTAssertTrue(fast.nothingChanged, "\(roots)")
            XCTAssertFalse(full.nothingChanged)
            XCTAssertEqual(fast.counts, full.counts, "\(roots)")
            XCTAssertEqual(full.photosByRoot.values.map(\.count).reduce(0, +), 0, "the full reconciliation writes nothing either")
            XCTAssertEqual(full.removedByRoot.values.map(\.count).reduce(0, +), 0)
            XCTAssertEqual(Set(full.files.map(\.path)).count, full.files.count)
        }
        let counts = try plan([photos], recognising: true).counts
        XCTAssertEqual(counts.unchanged, 6)
        XCTAssertEqual(counts.duplicateFiles, 2, "the copy in the folder and the one in the other folder")
        XCTAssertEqual(counts.skipped["other"], 1)

        // And a real import that recognises it writes nothing: the remembered rows stay.
        let catalog = try Catalog(path: library)
        let before = try catalog.folderFiles()
        var state = try XCTUnwrap(catalog.syncState(listingKey: "folder \(photos)"))
        state.lastSyncedAt = 1000
        try catalog.saveSyncState(state)
        let started = Int64(Date().timeIntervalSince1970)
        try run([photos])
        XCTAssertEqual(try Catalog(path: library).folderFiles(), before)
        let synced = try XCTUnwrap(Catalog(path: library).syncState(listingKey: "folder \(photos)")?.lastSyncedAt)
        XCTAssertGreaterThanOrEqual(synced, started, "the folder was looked at now: status says so")
    }

    /// Each change makes the walk not unchanged; the plan is then the full reconciliation's.
    func testNotRecognisedWhenAnythingChanged() throws {
        try makeFolders()
        try run([photos])
        let changes: [(String, () throws -> Void)] = [
            ("edited", { try self.write(self.photos + "/trip/x.jpg", seed: 9) }),
            ("touched", {
                try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)],
                                                      ofItemAtPath: self.photos + "/a.jpg")
            }),
            ("renamed", { try FileManager.default.moveItem(atPath: self.photos + "/trip.jpg", toPath: self.photos + "/voyage.jpg") }),
            ("new", { try self.write(self.photos + "/trip-2/z.jpg", seed: 10) }),
            ("deleted", { try FileManager.default.removeItem(atPath: self.photos + "/trip-2/y.jpg") }),
            ("duplicate deleted", { try FileManager.default.removeItem(atPath: self.photos + "/Été 2024/plage #1.jpg") }),
        ]
        for (change, make) in changes {
            try make()
            let fast = try plan([photos], recognising: true)
            let full = try plan([photos], recognising: false)
            XCTAssertFalse(fast.nothingChanged, change)
            XCTAssertEqual(fast.counts, full.counts, change)
            XCTAssertEqual(fast.files, full.files, change)
            try run([photos])
            XCTAssertTrue(try plan([photos], recognising: true).nothingChanged, "after importing \(change)")
        }
    }

    /// A photo whose URL names no file of it any more (the catalog changed behind the import) is written
    /// again by the full reconciliation, so it is not an unchanged walk.
    func testNotRecognisedWhenAPhotoIsNotShownFromItsFiles() throws {
        try makeFolders()
        try run([photos])
        let catalog = try Catalog(path: library)
        let id = try XCTUnwrap(catalog.folderFiles().first { $0.path.hasSuffix("/a.jpg") }?.photoID)
        try TestRequirement.program("/usr/bin/sqlite3", package: "sqlite3")
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [library, "UPDATE photo SET original_url = 'file:///elsewhere/a.jpg' WHERE id = '\(id)'"]
        try sqlite.run()
        sqlite.waitUntilExit()
        XCTAssertEqual(sqlite.terminationStatus, 0)
        XCTAssertFalse(try plan([photos], recognising: true).nothingChanged)
        XCTAssertEqual(try plan([photos], recognising: false).photosByRoot[photos]?.count, 1)
    }

    func testPathOrderIsByteOrder() {
        XCTAssertTrue(PathOrder.precedes("/p/trip-2/y.jpg", "/p/trip.jpg"))
        XCTAssertTrue(PathOrder.precedes("/p/trip.jpg", "/p/trip/x.jpg"))
        XCTAssertTrue(PathOrder.precedes("/p/Z.jpg", "/p/a.jpg"))
        XCTAssertTrue(PathOrder.precedes("/p/a", "/p/a.jpg"))
        XCTAssertFalse(PathOrder.equal("/p/e\u{301}.jpg", "/p/\u{e9}.jpg"), "canonically equal, other bytes")
        XCTAssertTrue(PathOrder.equal("/p/é.jpg", "/p/é.jpg"))
    }
}
