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

    func testOpensByFileManagersDoNotCountAndOthersDo() throws {
        let fixture = try FilesystemFixture(photos: 4)
        let entries = try fixture.yearEntries()
        for entry in entries {
            let opened = try fixture.filesystem.open(inode: entry.attributes.inode,
                                                     opener: OpenerIdentity(names: ["pcmanfm", "pcmanfm"]))
            fixture.filesystem.opened(opened.handle)
            fixture.filesystem.release(opened.handle)
        }
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try recentNames(fixture), [])
        XCTAssertTrue(try fixture.catalog.recentPhotos(limit: 20).isEmpty)

        let viewed = try fixture.filesystem.open(inode: entries[2].attributes.inode, opener: OpenerIdentity(names: ["eog"]))
        fixture.filesystem.opened(viewed.handle)
        fixture.filesystem.release(viewed.handle)
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
        let refused = try fixture.filesystem.open(inode: entries[0].attributes.inode, opener: OpenerIdentity(names: ["eog"]))
        fixture.filesystem.release(refused.handle)
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try recentNames(fixture), [])
        XCTAssertTrue(try fixture.catalog.recentPhotos(limit: 20).isEmpty)
        let sent = try fixture.filesystem.open(inode: entries[1].attributes.inode, opener: OpenerIdentity(names: ["eog"]))
        fixture.filesystem.opened(sent.handle)
        fixture.filesystem.release(sent.handle)
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try fixture.catalog.recentPhotos(limit: 20).map(\.seq), [try seq(entries[1])])
    }

    func testWithoutAWritableLibraryRecentOpensAreKeptInMemory() throws {
        let fixture = try FilesystemFixture(photos: 3, persistentRecents: false)
        let entries = try fixture.yearEntries()
        for entry in entries.prefix(2) {
            let opened = try fixture.filesystem.open(inode: entry.attributes.inode)
            fixture.filesystem.opened(opened.handle)
            fixture.filesystem.release(opened.handle)
        }
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
