// /albums and private photos in the pure tree: names, modes and link counts.
import PhotoCatalog
import PhotoTree
import XCTest

final class AlbumTreeTests: XCTestCase {
    func testAlbumsAreNamedLikeTheOtherTreesAndDeduplicatedByTheirSourceID() {
        let albums = [
            AlbumRecord(id: 1, sourceID: "721", title: "Holiday", description: "", updatedAt: nil, photoCount: 2,
                        newestMomentAt: 10, hasPublicPhotos: true),
            AlbumRecord(id: 2, sourceID: "722", title: "Holiday", description: "", updatedAt: nil, photoCount: 1,
                        newestMomentAt: 20, hasPublicPhotos: false),
            AlbumRecord(id: 3, sourceID: "723", title: "a/b", description: "", updatedAt: nil, photoCount: 1,
                        newestMomentAt: 30, hasPublicPhotos: true),
        ]
        let listing = TreeBuilder.albums(albums, newest: 30)
        XCTAssertEqual(listing.entries.map(\.name), ["a／b", "Holiday", "Holiday (722)"])
        XCTAssertEqual(listing.entry(named: "Holiday (722)")?.attributes.permissions, 0o500)
        XCTAssertEqual(listing.entry(named: "Holiday")?.attributes.permissions, 0o555)
        XCTAssertEqual(listing.entry(named: "Holiday")?.attributes.mtime, 10, "an album's mtime is its newest photo's")
        XCTAssertEqual(listing.attributes.linkCount, 5)
        XCTAssertEqual(Node(inode: Node.album(2).inode), .album(2))
        XCTAssertEqual(Node(inode: Node.albums.inode), .albums)
        XCTAssertEqual(TreeBuilder.root(newest: 0).entries.map(\.name),
                       ["regions", "moments", "recent", "albums", "people", "favorites", "events", "search"])
    }

    func testPrivatePhotosAre0400AndADirectoryOfOnlyThem0500() {
        var open = PhotoRecord(seq: 1, id: "1", title: "Open", originalURL: "u", byteSize: 1, contentType: "image/jpeg")
        var hidden = PhotoRecord(seq: 2, id: "2", title: "Hidden", originalURL: "u", byteSize: 1, contentType: "image/jpeg",
                                 visibility: .family, albumCount: 3)
        let mixed = TreeBuilder.photos([open, hidden], in: .album(1), style: .title) { TreeBuilder.linkCount(of: $0, inRecent: false) }
        XCTAssertEqual(mixed.entries.map(\.attributes.permissions), [0o444, 0o400])
        XCTAssertEqual(mixed.attributes.permissions, 0o555)
        XCTAssertEqual(mixed.entries.map(\.attributes.linkCount), [3, 6], "regions, moments, events; one more link per album")
        let onlyPrivate = TreeBuilder.photos([hidden], in: .year(2020), style: .title) { _ in 2 }
        XCTAssertEqual(onlyPrivate.attributes.permissions, 0o500)
        let recent = TreeBuilder.photos([hidden], in: .recent, style: .title) { TreeBuilder.linkCount(of: $0, inRecent: true) }
        XCTAssertEqual(recent.attributes.permissions, 0o555, "/recent is always there for everyone")
        XCTAssertEqual(recent.entries.first?.attributes.linkCount, 7)
        open.albumCount = Int.max
        XCTAssertEqual(TreeBuilder.linkCount(of: open, inRecent: true), UInt32.max, "saturates, never traps")
        hidden.visibility = [.everyone, .friends]
        XCTAssertEqual(TreeBuilder.photoAttributes(hidden, linkCount: 2).permissions, 0o444)
    }
}
