// /people and /favorites through the filesystem logic: one inode per photo in every tree, a link per name,
// xattrs, and listings that follow the marks an import writes.
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoFS
import PhotoTree
import XCTest

final class PeopleAndFavoritesTests: XCTestCase {
    let ada = "a0000000-0000-4000-8000-000000000001"
    let grace = "b0000000-0000-4000-8000-000000000002"
    let ada2 = "c0000000-0000-4000-8000-000000000003"

    func testPeopleAndFavouritesShowTheMarkedPhotosAsTheSameInodes() throws {
        let fixture = try FilesystemFixture(photos: 4)
        let ids = fixture.origin.photos.map(\.id)
        try fixture.catalog.applyMarks([
            ids[0]: PhotoMarks(isFavorite: true, personIDs: [ada, grace]),
            ids[1]: PhotoMarks(isFavorite: false, personIDs: [ada2]),
            ids[2]: PhotoMarks(isFavorite: true, personIDs: []),
        ], people: [ada: "Ada", grace: "Grace/Hopper", ada2: "Ada"])
        let fs = fixture.filesystem
        fs.checkForCatalogChanges()
        let people = try fs.listing(of: Node.people.inode)
        XCTAssertEqual(people.entries.map(\.name), ["Ada", "Ada (000003)", "Grace／Hopper"])
        let adaDirectory = try XCTUnwrap(people.entry(named: "Ada"))
        XCTAssertEqual(fs.parent(of: adaDirectory.attributes.inode), Node.people.inode)
        let adaPhotos = try fs.listing(of: adaDirectory.attributes.inode).entries
        XCTAssertEqual(try adaPhotos.map { try fixture.photoID(of: $0) }, [ids[0]])
        let inYear = try XCTUnwrap(fixture.yearEntries().first { try fixture.photoID(of: $0) == ids[0] })
        XCTAssertEqual(adaPhotos.first?.attributes.inode, inYear.attributes.inode, "one inode across trees")
        XCTAssertEqual(try fs.attributes(of: inYear.attributes.inode).linkCount, 6, "regions, moments, events, favourites, two people")
        XCTAssertEqual(try fs.lookup(parent: adaDirectory.attributes.inode, name: try XCTUnwrap(adaPhotos.first).name),
                       try fs.lookup(parent: fixture.yearInode, name: inYear.name))

        let favourites = try fs.listing(of: Node.favorites.inode).entries
        XCTAssertEqual(Set(try favourites.map { try fixture.photoID(of: $0) }), [ids[0], ids[2]])
        XCTAssertEqual(try fs.attributes(of: Node.people.inode).linkCount, 5, "2 and a link per person")

        // Extended attributes: the photo's people and its favourite flag.
        let names = try fs.getExtendedAttribute(inode: inYear.attributes.inode, name: ExtendedAttributeBuilder.Name.people, size: 4096)
        XCTAssertEqual(text(names), "Ada\nGrace/Hopper")
        let favourite = try fs.getExtendedAttribute(inode: inYear.attributes.inode, name: ExtendedAttributeBuilder.Name.favorite, size: 16)
        XCTAssertEqual(text(favourite), "1")

        // The next import's marks: a favourite no longer, a person renamed, one gone. The listings follow, and
        // the kernel is told.
        try fixture.catalog.applyMarks([ids[2]: PhotoMarks(isFavorite: false, personIDs: [])],
                                       people: [ada: "Ada Lovelace", grace: "Grace/Hopper"])
        let sent = fs.checkForCatalogChanges()
        XCTAssertTrue(sent.contains(.inode(Node.favorites.inode)), "\(sent)")
        XCTAssertEqual(try fs.listing(of: Node.favorites.inode).entries.count, 1)
        XCTAssertEqual(try fs.listing(of: Node.people.inode).entries.map(\.name), ["Ada Lovelace", "Grace／Hopper"])
        XCTAssertEqual(try fs.attributes(of: inYear.attributes.inode).linkCount, 6)
        let second = try XCTUnwrap(fixture.yearEntries().first { try fixture.photoID(of: $0) == ids[1] })
        XCTAssertEqual(try fs.attributes(of: second.attributes.inode).linkCount, 3, "its person is gone")
        XCTAssertThrowsError(try fs.listing(of: Node.person(PersonRecord.key(of: ada2)).inode))
    }

    func text(_ reply: ExtendedAttributeReply) -> String? {
        if case .data(let bytes) = reply { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    func testEmptyPeopleAndFavouritesAreThereForEveryLibrary() throws {
        let fixture = try FilesystemFixture(photos: 2)
        XCTAssertTrue(try fixture.filesystem.listing(of: Node.people.inode).entries.isEmpty)
        XCTAssertTrue(try fixture.filesystem.listing(of: Node.favorites.inode).entries.isEmpty)
        XCTAssertEqual(try fixture.filesystem.attributes(of: Node.favorites.inode).permissions, 0o555)
    }
}
