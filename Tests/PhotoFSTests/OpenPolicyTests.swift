// open replies: read-only refusals, and a replaced photo's new bytes never mixed with the old version's.
import FlickrOrigin
import Foundation
import PhotoCatalog
import PhotoFS
import PhotoTree
import XCTest

final class OpenPolicyTests: XCTestCase {
    func testOpeningForWritingOrTruncatingIsReadOnlyAndADirectoryIsOne() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let entry = try XCTUnwrap(fixture.yearEntries().first)
        for (writing, truncating) in [(true, false), (false, true)] {
            XCTAssertThrowsError(try fixture.filesystem.open(inode: entry.attributes.inode, forWriting: writing,
                                                             truncating: truncating)) {
                XCTAssertEqual(($0 as? FilesystemError)?.code, .readOnly)
            }
        }
        XCTAssertThrowsError(try fixture.filesystem.open(inode: fixture.yearInode)) {
            XCTAssertEqual(($0 as? FilesystemError)?.code, .isADirectory)
        }
    }

    func testReopeningTheSameVersionKeepsThePageCache() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let inode = try XCTUnwrap(fixture.yearEntries().first).attributes.inode
        let first = try fixture.filesystem.open(inode: inode)
        XCTAssertEqual(first.pageCache, .dropStale, "first open in this mount: nothing to keep")
        XCTAssertEqual(try fixture.readAll(first.handle).count, Int(first.handle.attributes.size))
        fixture.filesystem.release(first.handle)
        let second = try fixture.filesystem.open(inode: inode)
        XCTAssertEqual(second.pageCache, .keep)
        fixture.filesystem.release(second.handle)
    }

    /// Flickr gives a replaced photo a new secret (so a new URL); its size may stay the same and its mtime
    /// (the date taken) does. New opens read the new bytes; a handle opened before keeps reading the old
    /// version whole; the new version's handle bypasses pages the old one may still fill.
    func testAReplacedPhotoOfTheSameSizeIsReadNewWhileAnOldHandleReadsOld() throws {
        let fixture = try FilesystemFixture(photos: 3)
        let entry = try XCTUnwrap(fixture.yearEntries().first)
        let id = try fixture.photoID(of: entry)
        let oldBytes = try XCTUnwrap(fixture.origin.imageBytes(photoID: id))
        let old = try fixture.filesystem.open(inode: entry.attributes.inode)
        XCTAssertEqual(try fixture.readAll(old.handle), oldBytes)

        var library = OriginLibrary(photos: fixture.origin.photos, places: [])
        let index = try XCTUnwrap(library.photos.firstIndex { $0.id == id })
        var newBytes = oldBytes
        for position in (newBytes.count / 2)..<(newBytes.count / 2 + 64) { newBytes[position] ^= 0xFF }
        library.photos[index].image.data = newBytes
        library.photos[index].secret = "f00d42"
        fixture.origin.replaceLibrary(library)
        try FilesystemFixture.importOrigin(fixture.origin, into: fixture.catalog)
        // Same name, size and mtime: nothing for the kernel to drop by notification (a data invalidation could
        // block on the old reader's page locks); the open below decides instead.
        XCTAssertEqual(fixture.filesystem.checkForCatalogChanges(), [])

        let new = try fixture.filesystem.open(inode: entry.attributes.inode)
        XCTAssertEqual(new.pageCache, .bypass, "the old version is still open")
        XCTAssertEqual(new.handle.attributes.size, old.handle.attributes.size)
        XCTAssertEqual(try fixture.readAll(new.handle), newBytes)
        XCTAssertEqual(try fixture.readAll(old.handle), oldBytes, "the old handle reads its version whole")
        fixture.filesystem.release(new.handle)
        fixture.filesystem.release(old.handle)

        let later = try fixture.filesystem.open(inode: entry.attributes.inode)
        XCTAssertEqual(later.pageCache, .dropStale, "the old version's pages go when the new one is opened")
        XCTAssertEqual(try fixture.readAll(later.handle), newBytes)
        fixture.filesystem.release(later.handle)
        let again = try fixture.filesystem.open(inode: entry.attributes.inode)
        XCTAssertEqual(again.pageCache, .keep)
        fixture.filesystem.release(again.handle)
    }
}
