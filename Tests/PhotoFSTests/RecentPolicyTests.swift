// /recent: which opens count, batches flushed then asserted, and a library that cannot be written.
import Foundation
import PhotoCatalog
import PhotoFS
import PhotoTree
import XCTest

final class RecentPolicyTests: XCTestCase {
    private func recentNames(_ fixture: FilesystemFixture) throws -> [String] {
        try fixture.filesystem.listing(of: Node.recent.inode).entries.map(\.name)
    }

    /// An open as the adapter makes it: `opened` once its reply was sent (unless `replied` is false), then the release.
    private func openAndClose(_ fixture: FilesystemFixture, _ entry: DirectoryEntry, by opener: OpenerIdentity? = nil,
                              replied: Bool = true) throws {
        let open = try fixture.filesystem.open(inode: entry.attributes.inode, opener: opener)
        if replied { fixture.filesystem.opened(open.handle) }
        fixture.filesystem.release(open.handle)
    }

    func testOpensByFileManagersDoNotCountAndOthersDo() throws {
        let fixture = try FilesystemFixture(photos: 4)
        let entries = try fixture.yearEntries()
        for entry in entries { try openAndClose(fixture, entry, by: OpenerIdentity(names: ["pcmanfm", "pcmanfm"])) }
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try recentNames(fixture), [])
        XCTAssertTrue(try fixture.catalog.recentPhotos(limit: 20).isEmpty)

        try openAndClose(fixture, entries[2], by: OpenerIdentity(names: ["eog"]))
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try fixture.catalog.recentPhotos(limit: 20).map(\.seq), [try seq(entries[2])])
        XCTAssertEqual(try recentNames(fixture).count, 1)
        // The photo now has a fourth name.
        XCTAssertEqual(try fixture.filesystem.getattr(entries[2].attributes.inode).attributes.linkCount, 4)
    }

    func testAnOpenWhoseReplyNeverReachedTheKernelIsNotRecent() throws {
        // The adapter refused it (EBUSY beside a passed-through version) or its opener was interrupted: no
        // `opened`, only the release.
        let fixture = try FilesystemFixture(photos: 2)
        let entries = try fixture.yearEntries()
        try openAndClose(fixture, entries[0], by: OpenerIdentity(names: ["eog"]), replied: false)
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try recentNames(fixture), [])
        XCTAssertTrue(try fixture.catalog.recentPhotos(limit: 20).isEmpty)
        try openAndClose(fixture, entries[1], by: OpenerIdentity(names: ["eog"]))
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try fixture.catalog.recentPhotos(limit: 20).map(\.seq), [try seq(entries[1])])
    }

    func testWithoutAWritableLibraryRecentOpensAreKeptInMemory() throws {
        let fixture = try FilesystemFixture(photos: 3, persistentRecents: false)
        let entries = try fixture.yearEntries()
        for entry in entries.prefix(2) { try openAndClose(fixture, entry) }
        fixture.filesystem.flushRecentOpens()
        XCTAssertTrue(try fixture.catalog.recentPhotos(limit: 20).isEmpty, "nothing written to the library")
        let recent = try fixture.filesystem.listing(of: Node.recent.inode).entries
        XCTAssertEqual(Set(try recent.map(seq)), Set(try entries.prefix(2).map(seq)))
    }

    private func seq(_ entry: DirectoryEntry) throws -> Int64 {
        guard case .photo(let seq) = entry.node else { throw HarnessFailure("not a photo") }
        return seq
    }
}
