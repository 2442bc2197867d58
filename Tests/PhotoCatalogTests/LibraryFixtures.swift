// Shared by the catalog tests: a scratch directory, photos to import, and a file's bytes and neighbours, to
// prove a refused file was left exactly as it was.
import Foundation
import GRDB
import PhotoCatalog
import XCTest

/// A scratch directory removed at the end of the test.
final class ScratchDirectory {
    let url: URL
    init(_ name: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ file: String) -> String { url.appendingPathComponent(file).path }
    deinit {
        _ = try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        try? FileManager.default.removeItem(at: url)
    }
}

/// A file's whole content and the names beside it: equal before and after means nothing was written, and no
/// -wal, -shm or -journal file was left behind.
struct FileSnapshot: Equatable {
    var bytes: Data?
    var neighbours: [String]
    init(_ path: String) {
        bytes = FileManager.default.contents(atPath: path)
        let directory = (path as NSString).deletingLastPathComponent
        neighbours = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }
}

func importedPhoto(_ id: String, title: String? = nil, owner: String = "owner", place: String? = nil,
                   at moment: Int64? = nil, size: Int64? = 100) -> ImportedPhoto {
    let momentAt = moment ?? 1_600_000_000 + (Int64(id) ?? 0)
    let photo = PhotoRecord(id: id, title: title ?? "Photo \(id)", placeID: place, momentAt: momentAt,
                            momentYear: PhotoRecord.year(ofMoment: momentAt), originalURL: "http://origin/\(id).jpg",
                            byteSize: size, contentType: "image/jpeg")
    return ImportedPhoto(photo: photo, owner: owner, ownerName: owner.uppercased())
}

/// Runs SQL on a library through a plain GRDB connection, as another program would; foreign keys off so a
/// test can store what photofs never would.
func tamper(_ path: String, _ sql: String) throws {
    var config = Configuration()
    config.foreignKeysEnabled = false
    let queue = try DatabaseQueue(path: path, configuration: config)
    try queue.writeWithoutTransaction { db in try db.execute(sql: sql) }
    try queue.close()
}

func pragma(_ path: String, _ name: String) throws -> Int64? {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in try Int64.fetchOne(db, sql: "PRAGMA \(name)") }
}

/// The catalog error a throwing expression threw (fails the test when it threw something else or nothing).
func catalogError(_ body: @autoclosure () throws -> Any, file: StaticString = #filePath, line: UInt = #line) -> CatalogError? {
    do {
        _ = try body()
        XCTFail("expected a CatalogError, nothing was thrown", file: file, line: line)
    } catch let error as CatalogError {
        return error
    } catch {
        XCTFail("expected a CatalogError, got \(error)", file: file, line: line)
    }
    return nil
}
