// `photofs mount` and `photofs import` on files that are not photofs libraries (another application's SQLite
// database, a text file, a library from a newer photofs): a clear message, and the file left exactly as it was.
// A library that cannot be written is mounted read-only, with /recent kept in memory.
import FlickrOrigin
import Foundation
import GRDB
import XCTest

final class LibraryRefusalTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 6, scale: 4) }
    override class var mountsInSetUp: Bool { false }

    /// The file's bytes and the names beside it (a refused open must leave no -wal, -shm or -journal).
    private func snapshot(_ path: String) -> (Data?, [String]) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let siblings = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(name) }
        return (FileManager.default.contents(atPath: path), siblings.sorted())
    }

    private func assertRefused(_ path: String, saying expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let before = snapshot(path)
        let mount = harness.photofs(["mount", path, harness.mountpoint, "--cache-dir", harness.cacheDirectory])
        XCTAssertNotEqual(mount.status, 0, file: file, line: line)
        XCTAssertTrue(mount.stderr.contains(expected), "mount said: \(mount.stderr)", file: file, line: line)
        XCTAssertFalse(mount.stderr.contains("SQLite error"), mount.stderr, file: file, line: line)
        XCTAssertFalse(harness.isMounted, file: file, line: line)
        let imported = harness.photofs(["import", "flickr", path, "--endpoint", harness.origin.endpoint,
                                        "--api-key", harness.origin.apiKey])
        XCTAssertNotEqual(imported.status, 0, file: file, line: line)
        XCTAssertTrue(imported.stderr.contains(expected), "import said: \(imported.stderr)", file: file, line: line)
        let after = snapshot(path)
        XCTAssertEqual(after.0, before.0, "the file changed", file: file, line: line)
        XCTAssertEqual(after.1, before.1, "files appeared beside it", file: file, line: line)
    }

    func testAnotherApplicationsDatabaseIsRefusedUnchanged() throws {
        let path = harness.root.appendingPathComponent("contacts.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE contacts(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO contacts(name) VALUES ('Ada')")
        }
        try queue.close()
        assertRefused(path, saying: "another application")
        assertRefused(path, saying: "contacts")
    }

    func testATextFileIsRefusedUnchanged() throws {
        let path = harness.root.appendingPathComponent("notes.sqlite").path
        try Data("shopping list\n- film\n- batteries\n".utf8).write(to: URL(fileURLWithPath: path))
        assertRefused(path, saying: "not a SQLite database")
    }

    func testALibraryFromANewerPhotofsIsRefusedUnchanged() throws {
        let queue = try DatabaseQueue(path: harness.library)
        try queue.write { db in try db.execute(sql: "PRAGMA user_version = 999") }
        try queue.close()
        assertRefused(harness.library, saying: "newer photofs")
    }

    func testALibraryThatCannotBeWrittenMountsReadOnlyWithRecentInMemory() throws {
        XCTAssertEqual(chmod(harness.library, 0o444), 0)
        let before = snapshot(harness.library)
        try harness.mount()
        let files = harness.files(under: "moments")
        XCTAssertEqual(files.count, 6)
        XCTAssertEqual(Shell.run("cat", [files[0]]).status, 0)
        let deadline = Date().addingTimeInterval(10)
        func recent() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: harness.path("recent"))) ?? [] }
        while recent().isEmpty && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(recent().count, 1, "/recent works from memory")
        XCTAssertEqual(harness.unmount(), 0)
        XCTAssertEqual(snapshot(harness.library).0, before.0, "nothing written to the library")
        XCTAssertTrue(harness.daemonLog.contains("cannot be written"), harness.daemonLog)
        XCTAssertFalse(harness.daemonLog.contains("SQLite error"), harness.daemonLog)
    }

    /// `--cache-dir` pointed at a folder of the user's: refused before anything (even the log) is put there.
    func testAUsersFolderIsRefusedAsTheCacheAndLeftUntouched() throws {
        let folder = harness.root.appendingPathComponent("Pictures")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: folder.appendingPathComponent("holiday.jpg"))
        XCTAssertEqual(chmod(folder.path, 0o755), 0)
        let mount = harness.photofs(["mount", harness.library, harness.mountpoint, "--cache-dir", folder.path])
        XCTAssertNotEqual(mount.status, 0)
        XCTAssertTrue(mount.stderr.contains("is not a photofs cache"), mount.stderr)
        XCTAssertFalse(harness.isMounted)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["holiday.jpg"])
        var info = stat()
        XCTAssertEqual(stat(folder.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o755, "its permissions were not changed")

        // `cache clear` on it deletes nothing, even files named like cache entries.
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("originals"), withIntermediateDirectories: true)
        try Data("mine too".utf8).write(to: folder.appendingPathComponent("originals/IMG_0001-1"))
        let clear = harness.photofs(["cache", "clear", harness.library, "--cache-dir", folder.path])
        XCTAssertNotEqual(clear.status, 0)
        XCTAssertTrue(clear.stderr.contains("is not a photofs cache"), clear.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("originals/IMG_0001-1").path))
    }
}
