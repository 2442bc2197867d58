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
            fixture.filesystem.release(opened.handle)
        }
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try recentNames(fixture), [])
        XCTAssertTrue(try fixture.catalog.recentPhotos(limit: 20).isEmpty)

        let viewed = try fixture.filesystem.open(inode: entries[2].attributes.inode, opener: OpenerIdentity(names: ["eog"]))
        fixture.filesystem.release(viewed.handle)
        fixture.filesystem.flushRecentOpens()
        XCTAssertEqual(try fixture.catalog.recentPhotos(limit: 20).map(\.seq), [try seq(entries[2])])
        XCTAssertEqual(try recentNames(fixture).count, 1)
        // The photo now has a fourth name.
        XCTAssertEqual(try fixture.filesystem.getattr(entries[2].attributes.inode).attributes.linkCount, 4)
    }

    func testWithoutAWritableLibraryRecentOpensAreKeptInMemory() throws {
        let fixture = try FilesystemFixture(photos: 3, persistentRecents: false)
        let entries = try fixture.yearEntries()
        for entry in entries.prefix(2) {
            fixture.filesystem.release(try fixture.filesystem.open(inode: entry.attributes.inode).handle)
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
