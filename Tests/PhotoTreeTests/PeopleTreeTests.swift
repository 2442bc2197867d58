// /people and /favorites in the pure tree: names made unique as albums' are, fixed inodes, link counts.
import PhotoCatalog
import PhotoTree
import XCTest

final class PeopleTreeTests: XCTestCase {
    func testPeopleAreNamedLikeAlbumsAndDeduplicatedByTheirSourceID() {
        let people = [
            PersonRecord(id: "b0000000-0000-4000-8000-000000000002", name: "Ada", photoCount: 1, newestMomentAt: 20),
            PersonRecord(id: "a0000000-0000-4000-8000-000000000001", name: "Ada", photoCount: 2, newestMomentAt: 10,
                         hasPublicPhotos: true),
            PersonRecord(id: "c0000000-0000-4000-8000-000000000003", name: "a/b", photoCount: 1),
            PersonRecord(id: "d0000000-0000-4000-8000-000000000004", name: "..", photoCount: 1),
            PersonRecord(id: "e0000000-0000-4000-8000-000000000005", name: "ADA", photoCount: 1),
        ]
        let listing = TreeBuilder.people(people, newest: 30)
        // Person id order decides who keeps the plain name; a case-insensitive clash is a clash too.
        XCTAssertEqual(listing.entries.map(\.name), ["Ada", "Ada (000002)", "ADA (000005)", "a／b", "Unknown"])
        XCTAssertEqual(listing.entry(named: "Ada")?.node, .person(people[1].key))
        XCTAssertEqual(listing.entry(named: "Ada")?.attributes.permissions, 0o555)
        XCTAssertEqual(listing.entry(named: "Ada (000002)")?.attributes.permissions, 0o500, "only private photos")
        XCTAssertEqual(listing.entry(named: "Ada")?.attributes.mtime, 10, "a person's mtime is their newest photo's")
        XCTAssertEqual(listing.attributes.linkCount, 7)
        XCTAssertEqual(Set(listing.entries.map(\.attributes.inode)).count, 5)
        // The same names whatever order the catalog gives them in.
        XCTAssertEqual(TreeBuilder.people(people.reversed(), newest: 30).entries.map(\.name), listing.entries.map(\.name))
    }

    func testFixedInodesAndPersonInodesRoundTrip() {
        XCTAssertEqual(Node.people.inode, 8)
        XCTAssertEqual(Node.favorites.inode, 9)
        XCTAssertEqual(Node(inode: 8), .people)
        XCTAssertEqual(Node(inode: 9), .favorites)
        let key = PersonRecord.key(of: "a0000000-0000-4000-8000-000000000001")
        XCTAssertEqual(Node(inode: Node.person(key).inode), .person(key))
        XCTAssertEqual(Node.person(key).inode >> 56, 9, "kind 9")
        XCTAssertNotEqual(key, PersonRecord.key(of: "a0000000-0000-4000-8000-000000000002"))
        XCTAssertTrue(Node.person(key).isDirectory)
        let root = TreeBuilder.root(newest: 0)
        XCTAssertEqual(root.entry(named: "people")?.node, .people)
        XCTAssertEqual(root.entry(named: "favorites")?.node, .favorites)
        XCTAssertEqual(root.attributes.linkCount, 10, "2 and the 8 top directories")
    }

    func testAFavouriteInTwoPeopleHasALinkPerName() {
        let photo = PhotoRecord(seq: 1, id: "1", title: "Ada and Grace", originalURL: "u", byteSize: 1, contentType: "image/jpeg",
                                visibility: .privateOnly, albumCount: 1, markCount: 3)
        XCTAssertEqual(TreeBuilder.linkCount(of: photo, inRecent: false), 7, "regions, moments, events, an album, favourites, two people")
        XCTAssertEqual(TreeBuilder.photoAttributes(photo, linkCount: 6).albumLinks, 4)
        var huge = photo
        huge.albumCount = Int.max
        huge.markCount = Int.max
        XCTAssertEqual(TreeBuilder.linkCount(of: huge, inRecent: true), UInt32.max, "saturates")
        let favourites = TreeBuilder.photos([photo], in: .favorites, style: .title) { TreeBuilder.linkCount(of: $0, inRecent: false) }
        XCTAssertEqual(favourites.attributes.permissions, 0o555, "/favorites is always there for everyone, as /recent is")
        XCTAssertEqual(favourites.entries.first?.attributes.permissions, 0o400)
    }
}

final class BurstOrderTests: XCTestCase {
    /// Photos of one second are listed in name order, whatever their import order: what `ls` and viewers step
    /// through, and so what prefetch must call "the next photo".
    func testPhotosOfOneSecondAreListedInNameOrderInAYear() {
        let photos = [(3, "b"), (1, "c"), (2, "a"), (4, "d")].map { seq, title in
            PhotoRecord(seq: Int64(seq), id: "\(seq)", title: title, momentAt: seq == 4 ? 200 : 100, originalURL: "u",
                        byteSize: 1, contentType: "image/jpeg")
        }.sorted { ($0.momentAt, $0.seq) < ($1.momentAt, $1.seq) }
        let year = TreeBuilder.photos(photos, in: .year(1970), style: .moment) { _ in 2 }
        XCTAssertEqual(year.entries.map { $0.name.split(separator: " ").last.map(String.init) }, ["a.jpg", "b.jpg", "c.jpg", "d.jpg"])
        let album = TreeBuilder.photos(photos, in: .album(1), style: .title) { _ in 2 }
        XCTAssertEqual(album.entries.map(\.name), ["c.jpg", "a.jpg", "b.jpg", "d.jpg"], "other folders keep the order given")
    }
}
