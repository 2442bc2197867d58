// readdir(plus) replies: offsets, "." and "..", and the "size unknown" rule of sized mounts.
import GRDB
import PhotoCatalog
import PhotoContent
import PhotoFS
import PhotoTree
import XCTest

final class DirectoryReplyTests: XCTestCase {
    func testOffsetsCountDotDotDotThenEntriesAndEachEntryCarriesTheNext() throws {
        let fixture = try FilesystemFixture(photos: 5)
        let directory = try fixture.filesystem.openDirectory(fixture.yearInode)
        var names: [String] = []
        var offset: Int64 = 0
        while let entry = fixture.filesystem.directoryEntry(directory, at: offset, plus: false) {
            XCTAssertEqual(entry.nextOffset, offset + 1)
            names.append(entry.name)
            offset = entry.nextOffset
        }
        XCTAssertEqual(names, [".", ".."] + directory.listing.entries.map(\.name))
        XCTAssertEqual(names.count, 7)
        // Resuming from any offset continues exactly there (the kernel's next readdir).
        XCTAssertEqual(fixture.filesystem.directoryEntry(directory, at: 4, plus: false)?.name, names[4])
        XCTAssertNil(fixture.filesystem.directoryEntry(directory, at: -1, plus: false))
        let dotdot = try XCTUnwrap(fixture.filesystem.directoryEntry(directory, at: 1, plus: true))
        XCTAssertEqual(dotdot.attributes.node, .moments)
    }

    /// One reply's entries (the listing and /recent read once) are the entries asked for one at a time: the
    /// photo opened since (in /recent: a fourth name) with its link count, the others with theirs.
    func testAReplysEntriesAreTheEntriesAskedOneByOne() throws {
        let fixture = try FilesystemFixture(photos: 5)
        let entries = try fixture.yearEntries()
        let opened = try fixture.filesystem.open(inode: entries[1].attributes.inode, opener: OpenerIdentity(names: ["eog"]))
        fixture.filesystem.opened(opened.handle)
        fixture.filesystem.release(opened.handle)
        fixture.filesystem.flushRecentOpens()
        let directory = try fixture.filesystem.openDirectory(fixture.yearInode)
        for plus in [false, true] {
            var batch: [DirectoryReplyEntry] = []
            fixture.filesystem.directoryEntries(directory, from: 1, plus: plus) { batch.append($0); return true }
            let single = (1...6).compactMap { fixture.filesystem.directoryEntry(directory, at: Int64($0), plus: plus) }
            XCTAssertEqual(batch, single)
            XCTAssertEqual(batch.map(\.name), [".."] + entries.map(\.name))
            XCTAssertEqual(batch.dropFirst().map(\.attributes.linkCount), [3, 4, 3, 3, 3])
        }
        // A full reply stops the entries: none is handed out after `add` says no.
        var handed = 0
        fixture.filesystem.directoryEntries(directory, from: 0, plus: true) { _ in handed += 1; return handed < 3 }
        XCTAssertEqual(handed, 3)
    }

    func testAListingKeepsItsEntriesWhileTheCatalogChanges() throws {
        let fixture = try FilesystemFixture(photos: 4)
        let directory = try fixture.filesystem.openDirectory(fixture.yearInode)
        let ids = try directory.listing.entries.map(fixture.photoID(of:))
        try fixture.catalog.removePhotos(ids: [ids[0]])
        fixture.filesystem.checkForCatalogChanges()
        XCTAssertEqual(fixture.filesystem.directoryEntry(directory, at: 2, plus: false)?.name,
                       directory.listing.entries[0].name, "offsets stay valid for the open directory")
        XCTAssertEqual(try fixture.filesystem.openDirectory(fixture.yearInode).listing.entries.count, 3)
    }

    /// A directory opened before a change and read after it hands the kernel the old entries, maybe after the
    /// change's invalidation: the next check invalidates it again, once; one opened after the change needs none.
    func testAnOpenDirectoryReadAfterAChangeIsInvalidatedAgain() throws {
        let fixture = try FilesystemFixture(photos: 4)
        let directory = try fixture.filesystem.openDirectory(fixture.yearInode)
        let ids = try directory.listing.entries.map(fixture.photoID(of:))
        try fixture.catalog.removePhotos(ids: [ids[0]])
        XCTAssertTrue(fixture.filesystem.checkForCatalogChanges().contains(.inode(fixture.yearInode)), "the change's own")
        XCTAssertEqual(fixture.filesystem.checkForCatalogChanges(), [], "nothing new")
        var read = 0
        fixture.filesystem.directoryEntries(directory, from: 0, plus: true) { _ in read += 1; return true }
        fixture.filesystem.directoryEntries(directory, from: 3, plus: true) { _ in read += 1; return true }
        XCTAssertEqual(read, 6 + 3)
        XCTAssertEqual(fixture.filesystem.checkForCatalogChanges(), [.inode(fixture.yearInode)], "read after the change")
        XCTAssertEqual(fixture.filesystem.checkForCatalogChanges(), [], "once")
        let fresh = try fixture.filesystem.openDirectory(fixture.yearInode)
        fixture.filesystem.directoryEntries(fresh, from: 0, plus: true) { _ in true }
        XCTAssertEqual(fixture.filesystem.checkForCatalogChanges(), [])
    }

    func testPlusEntriesOfASizedMountGoWithoutAttributesUntilTheSizeIsKnown() throws {
        var options = FilesystemOptions()
        options.variant = VariantSpec(argument: "square:32")
        let fixture = try FilesystemFixture(photos: 3, options: options)
        let directory = try fixture.filesystem.openDirectory(fixture.yearInode)
        let unknown = try XCTUnwrap(fixture.filesystem.directoryEntry(directory, at: 2, plus: true))
        XCTAssertFalse(unknown.attributesKnown)
        XCTAssertEqual(unknown.entryTimeout, 0)
        XCTAssertEqual(unknown.attributeTimeout, 0)
        XCTAssertTrue(unknown.name.hasSuffix(".png"))
        // A lookup renders it; then the same entry carries its exact size.
        guard case .entry(let looked, _, _) = try fixture.filesystem.lookup(parent: fixture.yearInode, name: unknown.name) else {
            return XCTFail("not found")
        }
        let known = try XCTUnwrap(fixture.filesystem.directoryEntry(directory, at: 2, plus: true))
        XCTAssertTrue(known.attributesKnown)
        XCTAssertEqual(known.attributes.size, looked.size)
        let opened = try fixture.filesystem.open(inode: looked.inode)
        defer { fixture.filesystem.release(opened.handle) }
        XCTAssertEqual(Int64(try fixture.readAll(opened.handle).count), looked.size)
        // Plain readdir never withholds attributes.
        XCTAssertTrue(try XCTUnwrap(fixture.filesystem.directoryEntry(directory, at: 3, plus: false)).attributesKnown)
        // One reply: the rendered photo with its size; the others (queued for rendering by that lookup, so
        // done or not by now) each with attributes and timeouts, or with neither.
        var reply: [DirectoryReplyEntry] = []
        fixture.filesystem.directoryEntries(directory, from: 2, plus: true) { reply.append($0); return true }
        XCTAssertEqual(reply.count, 3)
        XCTAssertEqual(reply.first?.attributesKnown, true)
        XCTAssertEqual(reply.first?.attributes.size, looked.size)
        for entry in reply {
            XCTAssertEqual(entry.entryTimeout > 0, entry.attributesKnown, entry.name)
            XCTAssertEqual(entry.attributeTimeout > 0, entry.attributesKnown, entry.name)
        }
    }

    /// /recent unreadable (its table gone): a reply's photos go without attributes (the kernel looks each up)
    /// and plain readdir gives the listing's own; nothing else of the reply changes.
    func testARecentListThatCannotBeReadLeavesThePhotosWithoutAttributes() throws {
        let fixture = try FilesystemFixture(photos: 3)
        let directory = try fixture.filesystem.openDirectory(fixture.yearInode)
        let other = try DatabaseQueue(path: fixture.catalog.path)
        try other.write { db in try db.execute(sql: "DROP TABLE recent") }
        try other.close()
        var plus: [DirectoryReplyEntry] = []
        fixture.filesystem.directoryEntries(directory, from: 0, plus: true) { plus.append($0); return true }
        XCTAssertEqual(plus.map(\.name), [".", ".."] + directory.listing.entries.map(\.name))
        XCTAssertEqual(plus.map(\.attributesKnown), [true, true, false, false, false])
        var plain: [DirectoryReplyEntry] = []
        fixture.filesystem.directoryEntries(directory, from: 2, plus: false) { plain.append($0); return true }
        XCTAssertEqual(plain.map(\.attributes), directory.listing.entries.map(\.attributes))
        XCTAssertEqual(plain.map(\.nextOffset), [3, 4, 5])
    }
}
