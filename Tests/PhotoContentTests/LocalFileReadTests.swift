// A local photo's handle gives the mount its file and the part of it a read covers, so the kernel can take
// the pages from the file itself; a download's handle gives none.
import Foundation
@testable import PhotoContent
import XCTest

final class LocalFileReadTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("local-read-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    /// A file of `size` bytes and the source a folder import would record for it.
    func localPhoto(size: Int) throws -> (path: String, source: ContentSource) {
        let path = directory.appendingPathComponent("photo one.jpg").path
        try Data((0..<size).map { UInt8(truncatingIfNeeded: $0) }).write(to: URL(fileURLWithPath: path))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let modified = try XCTUnwrap(attributes[.modificationDate] as? Date)
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        XCTAssertEqual(Int64(modified.timeIntervalSince1970), Int64(info.st_mtim.tv_sec))
        let source = ContentSource(photoID: "file-1", url: FileURI.glib(path: path), expectedSize: Int64(size),
                                   contentType: "image/jpeg", etag: LocalFileContent.etag(partialHash: "ab", size: Int64(size), mtimeNanos: mtime))
        return (path, source)
    }

    func testAReadIsTheFileAndItsRangeClampedToTheEnd() throws {
        let (_, source) = try localPhoto(size: 300_000)
        let originals = LocalFileOriginals()
        let handle = try originals.open(source, thumbnailer: nil)
        let first = try XCTUnwrap(handle.fileRange(count: 131_072, at: 0))
        XCTAssertGreaterThanOrEqual(first.descriptor, 0)
        XCTAssertEqual(first.offset, 0)
        XCTAssertEqual(first.count, 131_072)
        let last = try XCTUnwrap(handle.fileRange(count: 131_072, at: 262_144))
        XCTAssertEqual(last.count, 300_000 - 262_144, "the end of the file, not past it")
        XCTAssertEqual(try XCTUnwrap(handle.fileRange(count: 131_072, at: 300_000)).count, 0, "past the end: nothing")
        XCTAssertEqual(try XCTUnwrap(handle.fileRange(count: 131_072, at: -1)).count, 0, "a hostile offset: nothing")
        // The descriptor reads the photo's bytes.
        var byte: UInt8 = 0
        XCTAssertEqual(pread(last.descriptor, &byte, 1, off_t(last.offset)), 1)
        XCTAssertEqual(byte, UInt8(truncatingIfNeeded: 262_144))
        originals.release(handle)
    }

    func testAFileChangedSinceTheImportIsNotOpened() throws {
        let (path, source) = try localPhoto(size: 1000)
        try Data(count: 999).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try LocalFileOriginals().open(source, thumbnailer: nil))
    }

    func testAnOpenFilesIdentityIsTheOneItsPathNamesUntilTheFileIsEditedOrReplaced() throws {
        let (path, source) = try localPhoto(size: 1000)
        let handle = try LocalFileOriginals().open(source, thumbnailer: nil)
        let file = try XCTUnwrap(handle.localFile)
        XCTAssertEqual(file.size, 1000)
        var opened = stat()
        XCTAssertEqual(fstat(try XCTUnwrap(handle.wholeFileDescriptor), &opened), 0)
        XCTAssertEqual(file.inode, UInt64(opened.st_ino), "the file the handle reads")
        XCTAssertTrue(LocalFileContent.stillNames(file, source))
        // Replaced by another file of the same size and mtime (a copy with `cp -p`, a sync tool's rename).
        let other = directory.appendingPathComponent("other.jpg").path
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: other))
        var times = [timespec](repeating: timespec(), count: 2)
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        times[0] = info.st_atim
        times[1] = info.st_mtim
        XCTAssertEqual(utimensat(AT_FDCWD, other, times, 0), 0)
        XCTAssertEqual(rename(other, path), 0)
        XCTAssertFalse(LocalFileContent.stillNames(file, source), "another inode at the path")
        let reopened = try LocalFileOriginals().open(source, thumbnailer: nil)
        let replaced = try XCTUnwrap(reopened.localFile)
        XCTAssertTrue(LocalFileContent.stillNames(replaced, source), "the new file passes the import's size and mtime")
        // Edited in place: the same inode with a new mtime (set a second on, as file timestamps are coarse).
        try Data(repeating: 8, count: 1000).write(to: URL(fileURLWithPath: path), options: [])
        times[1].tv_sec += 1
        XCTAssertEqual(utimensat(AT_FDCWD, path, times, 0), 0)
        var edited = stat()
        XCTAssertEqual(stat(path, &edited), 0)
        XCTAssertEqual(UInt64(edited.st_ino), replaced.inode)
        XCTAssertFalse(LocalFileContent.stillNames(replaced, source))
        try FileManager.default.removeItem(atPath: path)
        XCTAssertFalse(LocalFileContent.stillNames(replaced, source), "gone")
        withExtendedLifetime(handle) {}
        withExtendedLifetime(reopened) {}
        XCTAssertFalse(LocalFileContent.stillNames(file, ContentSource(photoID: "x", url: "https://example.com/a.jpg",
                                                                       expectedSize: 1000, contentType: "image/jpeg", etag: nil)))
    }

    func testAFileURIsPathWithAndWithoutEscapes() {
        XCTAssertEqual(LocalFileContent.path(fromFileURI: "file:///home/ada/IMG_1.jpg"), "/home/ada/IMG_1.jpg")
        XCTAssertEqual(LocalFileContent.path(fromFileURI: "file:///home/ada/%C3%89t%C3%A9%202024/a%23b.jpg"), "/home/ada/Été 2024/a#b.jpg")
        XCTAssertEqual(LocalFileContent.path(fromFileURI: "file:///a/..b/c..d/...jpg"), "/a/..b/c..d/...jpg", "dots, not a parent")
        XCTAssertNil(LocalFileContent.path(fromFileURI: "file:///a/../etc/passwd"))
        XCTAssertNil(LocalFileContent.path(fromFileURI: "file:///a/.."))
        XCTAssertNil(LocalFileContent.path(fromFileURI: "file:///a/%2E%2E/b"), "an escaped parent is a parent")
        XCTAssertNil(LocalFileContent.path(fromFileURI: "file:///a%00b"))
        XCTAssertNil(LocalFileContent.path(fromFileURI: "file:///a%2"), "a cut escape")
        XCTAssertNil(LocalFileContent.path(fromFileURI: "file://host/a.jpg"))
        XCTAssertNil(LocalFileContent.path(fromFileURI: "https://example.com/a.jpg"))
        XCTAssertNil(LocalFileContent.path(fromFileURI: "file:///a\u{0}b"), "a raw NUL")
        XCTAssertNil(LocalFileContent.path(fromFileURI: "file:///a/b/.."))
        XCTAssertEqual(LocalFileContent.path(fromFileURI: "file:///home/Été/ç.jpg"), "/home/Été/ç.jpg", "unescaped UTF-8 as it is")
        XCTAssertEqual(LocalFileContent.path(fromFileURI: "file:///"), "/")
    }

    func testTheImportedMtimeIsReadBackFromTheETag() {
        let etag = LocalFileContent.etag(partialHash: "0123456789abcdef0123", size: 1234, mtimeNanos: 1_700_000_000_123_456_789)
        XCTAssertEqual(etag, "0123456789abcdef-1234-1700000000123456789")
        XCTAssertEqual(LocalFileContent.modifiedNanos(fromETag: etag, size: 1234), 1_700_000_000_123_456_789)
        XCTAssertEqual(LocalFileContent.modifiedNanos(fromETag: "ab-1234--5", size: 1234), -5, "an mtime before 1970")
        XCTAssertNil(LocalFileContent.modifiedNanos(fromETag: etag, size: 123), "another size")
        XCTAssertNil(LocalFileContent.modifiedNanos(fromETag: "ab-1234-", size: 1234))
        XCTAssertNil(LocalFileContent.modifiedNanos(fromETag: "ab-1234-12x", size: 1234))
        XCTAssertNil(LocalFileContent.modifiedNanos(fromETag: "\"e1\"", size: 1234), "a web server's etag")
        XCTAssertNil(LocalFileContent.modifiedNanos(fromETag: nil, size: 1234))
    }

    func testCacheFileNamesKeepOnlyASCIILettersAndDigits() {
        XCTAssertEqual(OriginalCache.fileNamePrefix(photoID: "file-ab12"), "file_ab12")
        XCTAssertEqual(OriginalCache.fileNamePrefix(photoID: "é/x"), "__x")
        XCTAssertEqual(OriginalCache.fileNamePrefix(photoID: String(repeating: "a", count: 100)).count, 64)
    }
}
