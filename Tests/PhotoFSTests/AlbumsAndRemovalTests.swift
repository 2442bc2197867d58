// /albums through the filesystem logic (one inode per photo in every tree, a link per album, private modes),
// and the cached bytes of deleted or replaced photos freed when the mount sees the change.
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoFS
import PhotoTree
import XCTest

final class AlbumsAndRemovalTests: XCTestCase {
    func testAPhotoInTwoAlbumsIsOneInodeWithTwoMoreLinks() throws {
        let fixture = try FilesystemFixture(photos: 4)
        let ids = fixture.origin.photos.map(\.id)
        try fixture.catalog.applyAlbums([
            AlbumImport(sourceID: "721", title: "Harbour", description: "", updatedAt: 1, memberIDs: [ids[2], ids[0]]),
            AlbumImport(sourceID: "722", title: "Best", description: "", updatedAt: 1, memberIDs: [ids[0]]),
        ], keepingOnly: nil)
        let fs = fixture.filesystem
        let albums = try fs.listing(of: Node.albums.inode)
        XCTAssertEqual(albums.entries.map(\.name), ["Best", "Harbour"])
        let harbour = try XCTUnwrap(albums.entry(named: "Harbour"))
        let members = try fs.listing(of: harbour.attributes.inode).entries
        XCTAssertEqual(try members.map { try fixture.photoID(of: $0) }, [ids[2], ids[0]], "the album's own order")
        let inYear = try XCTUnwrap(fixture.yearEntries().first { try fixture.photoID(of: $0) == ids[0] })
        let inAlbum = try XCTUnwrap(members.last)
        XCTAssertEqual(inAlbum.attributes.inode, inYear.attributes.inode)
        XCTAssertEqual(try fs.attributes(of: inAlbum.attributes.inode).linkCount, 5, "regions, moments, events and two albums")
        XCTAssertEqual(try fs.lookup(parent: harbour.attributes.inode, name: inAlbum.name),
                       try fs.lookup(parent: fixture.yearInode, name: inYear.name))
        XCTAssertEqual(fs.parent(of: harbour.attributes.inode), Node.albums.inode)
        XCTAssertEqual(try fs.listing(of: Node.root.inode).entries.map(\.name),
                       ["regions", "moments", "recent", "albums", "people", "favorites", "events", "search"])
    }

    func testAPrivatePhotoIs0400AndAnAlbumOfThemIs0500() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let id = try XCTUnwrap(fixture.origin.photos.first?.id)
        var record = try XCTUnwrap(try fixture.catalog.photo(id: id))
        record.visibility = .friends
        _ = try fixture.catalog.applyImport(places: [], photos: [ImportedPhoto(photo: record, owner: "o", ownerName: "O")])
        try fixture.catalog.applyAlbums([AlbumImport(sourceID: "9", title: "Friends", description: "", updatedAt: 1,
                                                     memberIDs: [id])], keepingOnly: nil)
        fixture.filesystem.checkForCatalogChanges()
        let album = try XCTUnwrap(try fixture.filesystem.listing(of: Node.albums.inode).entries.first)
        XCTAssertEqual(album.attributes.permissions, 0o500)
        let photo = try XCTUnwrap(try fixture.filesystem.listing(of: album.attributes.inode).entries.first)
        XCTAssertEqual(try fixture.filesystem.attributes(of: photo.attributes.inode).permissions, 0o400)
    }

    func testTheCachedBytesOfADeletedOrReplacedPhotoAreFreedWhenTheMountSeesIt() throws {
        let fixture = try FilesystemFixture(photos: 3)
        let fs = fixture.filesystem
        let entries = try fixture.yearEntries()
        var paths: [String: String] = [:]
        for entry in entries.prefix(2) {
            let id = try fixture.photoID(of: entry)
            let record = try XCTUnwrap(try fixture.catalog.photo(id: id))
            // Downloaded into the cache as a read through the mount would leave it.
            paths[id] = try fixture.cache.fetch(ContentSource(
                photoID: id, url: record.originalURL, expectedSize: try XCTUnwrap(record.byteSize),
                contentType: try XCTUnwrap(record.contentType), etag: record.etag))
        }
        let deleted = try fixture.photoID(of: entries[0])
        let replaced = try fixture.photoID(of: entries[1])
        try fixture.catalog.removePhotos(ids: [deleted])
        var record = try XCTUnwrap(try fixture.catalog.photo(id: replaced))
        record.etag = "\"another-version\""
        _ = try fixture.catalog.applyImport(places: [], photos: [ImportedPhoto(photo: record, owner: "o", ownerName: "O")])
        XCTAssertTrue(FileManager.default.fileExists(atPath: try XCTUnwrap(paths[deleted])), "not before the mount looks")
        fs.checkForCatalogChanges()
        XCTAssertFalse(FileManager.default.fileExists(atPath: try XCTUnwrap(paths[deleted])))
        XCTAssertFalse(FileManager.default.fileExists(atPath: try XCTUnwrap(paths[replaced])), "the old version's bytes")
    }
}
