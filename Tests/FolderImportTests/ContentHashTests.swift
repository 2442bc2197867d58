// The content hashes are plain SHA-256, whatever library computes them: ids and remembered files depend on it.
@testable import FolderImport
import Foundation
import XCTest

final class ContentHashTests: XCTestCase {
    /// Expected values from Python's hashlib: sha256(size as 8 bytes little endian + prefix), sha256(file).
    func testHashesAreSHA256OfSizeAndPrefixAndOfTheFile() throws {
        XCTAssertEqual(ContentHash.partial(size: 3, prefix: Array("abc".utf8)),
                       "ce91dc5eec0139adf091900d225971d6ad246a845bad791b5693a9d0d55dd391")
        let path = NSTemporaryDirectory() + "content-hash-\(UUID().uuidString.prefix(8))"
        try Data("abc".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertEqual(ContentHash.full(path: path), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// Only the first 128 KiB count in the partial hash.
    func testPartialHashStopsAtThePrefix() {
        let long = [UInt8](repeating: 7, count: ContentHash.prefixBytes + 10)
        XCTAssertEqual(ContentHash.partial(size: 1, prefix: long),
                       ContentHash.partial(size: 1, prefix: Array(long.prefix(ContentHash.prefixBytes))))
    }

    /// A link is hashed as its file; a FIFO (a name replaced since the walk) is no file, and does not block.
    func testALinkIsItsFileAndAFIFOIsNone() throws {
        let folder = NSTemporaryDirectory() + "content-hash-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("abc".utf8).write(to: URL(fileURLWithPath: folder + "/file"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: "file")
        XCTAssertEqual(ContentHash.full(path: folder + "/link"), ContentHash.full(path: folder + "/file"))
        XCTAssertEqual(mkfifo(folder + "/fifo", 0o600), 0)
        XCTAssertNil(ContentHash.full(path: folder + "/fifo"))
    }
}
