// What the kernel is told after a catalog change: exact names and nodes, computed from listing diffs.
import Foundation
import PhotoCatalog
import PhotoFS
@testable import PhotoTree
import XCTest

final class InvalidationTests: XCTestCase {
    private func attributes(_ node: Node, size: Int64 = 10, mtime: Int64 = 0) -> NodeAttributes {
        NodeAttributes(node: node, size: size, mtime: mtime, linkCount: 2)
    }

    private func listing(_ entries: [(String, NodeAttributes)]) -> DirectoryListing {
        DirectoryListing(attributes: attributes(.year(2020), size: 4096),
                         entries: entries.map { DirectoryEntry(name: $0.0, attributes: $0.1) })
    }

    func testDiffsNameExactlyWhatChanged() {
        let a = attributes(.photo(seq: 1)), b = attributes(.photo(seq: 2)), c = attributes(.photo(seq: 3))
        let old = listing([("a.jpg", a), ("b.jpg", b)])
        var resized = b
        resized.size = 11
        let new = listing([("a.jpg", a), ("b.jpg", resized), ("c.jpg", c)])
        let parent = Node.year(2020).inode
        XCTAssertEqual(PhotoFilesystem.differences(from: old, to: new), [
            .inode(b.inode), .entry(parent: parent, name: "c.jpg"), .inode(c.inode), .inode(parent),
        ])
        XCTAssertEqual(PhotoFilesystem.differences(from: old, to: old), [])
        XCTAssertEqual(PhotoFilesystem.differences(from: old, to: nil), [
            .entry(parent: parent, name: "a.jpg"), .entry(parent: parent, name: "b.jpg"), .inode(parent),
        ])
        // A name that now points at another photo: the dentry goes, both photos' link counts moved, and the
        // directory's cached listing (which holds inode numbers) goes too.
        XCTAssertEqual(PhotoFilesystem.differences(from: old, to: listing([("a.jpg", c), ("b.jpg", b)])),
                       [.entry(parent: parent, name: "a.jpg"), .inode(a.inode), .inode(c.inode), .inode(parent)])
    }

    /// The whole path a live mount takes: a change is noticed once, and only listings the kernel saw are diffed.
    func testACatalogChangeIsReportedOnceWithTheDeletedPhotosNames() throws {
        let fixture = try FilesystemFixture(photos: 3)
        let entries = try fixture.yearEntries()
        XCTAssertEqual(fixture.filesystem.checkForCatalogChanges(), [], "nothing changed yet")
        try fixture.catalog.removePhotos(ids: [fixture.photoID(of: entries[1])])
        let invalidations = fixture.filesystem.checkForCatalogChanges()
        XCTAssertTrue(invalidations.contains(.entry(parent: fixture.yearInode, name: entries[1].name)))
        XCTAssertTrue(invalidations.contains(.inode(fixture.yearInode)))
        XCTAssertFalse(invalidations.contains(.entry(parent: fixture.yearInode, name: entries[0].name)))
        XCTAssertEqual(fixture.filesystem.checkForCatalogChanges(), [])
        XCTAssertEqual(try fixture.yearEntries().map(\.name), [entries[0].name, entries[2].name])
    }
}
