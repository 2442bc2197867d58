// lookup and getattr replies: entries with their timeouts, negative entries, handles that outlive changes.
import PhotoCatalog
import PhotoFS
import PhotoTree
import XCTest

final class LookupAndAttributesTests: XCTestCase {
    func testLookupAnswersEntriesWithLongTimeoutsAndMissingNamesWithANegativeEntry() throws {
        let fixture = try FilesystemFixture()
        let timeouts = fixture.filesystem.options.timeouts
        guard case .entry(let moments, let entryTimeout, let attributeTimeout)
                = try fixture.filesystem.lookup(parent: Node.root.inode, name: "moments") else {
            return XCTFail("moments not found")
        }
        XCTAssertEqual(moments.node, .moments)
        XCTAssertEqual(entryTimeout, timeouts.entry)
        XCTAssertEqual(attributeTimeout, timeouts.attributes)
        XCTAssertEqual(try fixture.filesystem.lookup(parent: Node.root.inode, name: ".hidden"),
                       .negative(timeout: timeouts.negativeEntry))
        XCTAssertEqual(try fixture.filesystem.lookup(parent: Node.moments.inode, name: "1999"),
                       .negative(timeout: timeouts.negativeEntry))
        let first = try XCTUnwrap(fixture.yearEntries().first)
        guard case .entry(let photo, _, _) = try fixture.filesystem.lookup(parent: fixture.yearInode, name: first.name) else {
            return XCTFail("photo not found")
        }
        XCTAssertEqual(photo.node, first.node)
        XCTAssertEqual(photo.linkCount, 3, "regions, moments, events")
    }

    func testLookupInAPhotoIsNotADirectoryAndAnUnknownInodeIsNotFound() throws {
        let fixture = try FilesystemFixture()
        let photo = try XCTUnwrap(fixture.yearEntries().first)
        XCTAssertThrowsError(try fixture.filesystem.lookup(parent: photo.attributes.inode, name: "x")) {
            XCTAssertEqual(($0 as? FilesystemError)?.code, .notADirectory)
        }
        XCTAssertThrowsError(try fixture.filesystem.getattr(0xFF00_0000_0000_0000)) {
            XCTAssertEqual(($0 as? FilesystemError)?.code, .notFound)
        }
    }

    func testGetattrWithAHandleAnswersTheAttributesAtOpenAfterThePhotoIsDeleted() throws {
        let fixture = try FilesystemFixture()
        let entry = try XCTUnwrap(fixture.yearEntries().first)
        let opened = try fixture.filesystem.open(inode: entry.attributes.inode)
        try fixture.catalog.removePhotos(ids: [fixture.photoID(of: entry)])
        fixture.filesystem.checkForCatalogChanges()
        XCTAssertEqual(try fixture.filesystem.getattr(entry.attributes.inode, handle: opened.handle).attributes.size,
                       entry.attributes.size)
        // Without a handle: still open, so like an unlinked file, with no links.
        XCTAssertEqual(try fixture.filesystem.getattr(entry.attributes.inode).attributes.linkCount, 0)
        fixture.filesystem.release(opened.handle)
        XCTAssertThrowsError(try fixture.filesystem.getattr(entry.attributes.inode)) {
            XCTAssertEqual(($0 as? FilesystemError)?.code, .notFound)
        }
    }

    func testStatfsCountsTheShownPhotosInWholeBlocks() throws {
        let fixture = try FilesystemFixture(photos: 4)
        let bytes = fixture.origin.photos.map { Int64($0.image.data.count) }.reduce(0, +)
        let usage = fixture.filesystem.usage()
        XCTAssertEqual(usage.files, 4)
        XCTAssertEqual(usage.blocks, UInt64((bytes + 4095) / 4096))
        XCTAssertEqual(usage.nameMax, 255)
    }
}
