// A member's albums through FlickrSource: flickr.photosets.getList in the member's order, and each album's
// photo ids in the album's order (private members only for the signed owner), paged at 500.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import PhotoSources
import XCTest

final class AlbumListingTests: XCTestCase {
    var fixture: AccountFixture!

    override func setUpWithError() throws { fixture = try AccountFixture() }
    override func tearDown() { fixture.stop() }

    func testAlbumsAndTheirMembersInOrder() throws {
        let source = fixture.source(user: "me")
        let albums = try source.albums()
        let origin = fixture.origin.albums
        XCTAssertEqual(albums.map(\.id), origin.map(\.id), "the member's own order")
        XCTAssertEqual(albums.map(\.title), ["Harbour walks", "Family", "Trips: 2019/2024", "Empty"])
        XCTAssertEqual(albums.first?.description, "Mornings by the water")
        XCTAssertEqual(albums.map(\.updatedAt), origin.map(\.dateUpdate))
        for album in origin {
            let members = try allIDs { try source.albumMembersPage(album.id, cursor: $0) }
            // The owner sees every member; videos are left out (media=photos).
            let photos = album.photoIDs.filter { fixture.origin.photo(id: $0)?.isVideo == false }
            XCTAssertEqual(members, photos, album.title)
            XCTAssertEqual(albums.first { $0.id == album.id }?.photoCount, photos.count, album.title)
        }
        XCTAssertTrue(fixture.origin.restCallLog.filter { $0.method == "flickr.photosets.getPhotos" }.allSatisfy {
            $0.parameters["per_page"] == "500" && $0.parameters["extras"] == nil && $0.parameters["media"] == "photos"
        })
    }

    func testOthersSeeOnlyAnAlbumsPublicPhotos() throws {
        for source in [fixture.source(user: "ansel", signedInAs: nil),
                       fixture.source(user: "ansel", signedInAs: AccountFixture.stranger.nsid)] {
            let albums = try source.albums()
            XCTAssertEqual(albums.count, 4)
            let family = try XCTUnwrap(albums.first { $0.title == "Family" })
            XCTAssertEqual(family.photoCount, 0)
            XCTAssertEqual(try source.albumMembersPage(family.id, cursor: nil).ids, [])
            let harbour = try XCTUnwrap(fixture.origin.albums.first { $0.title == "Harbour walks" })
            XCTAssertEqual(try allIDs { try source.albumMembersPage(harbour.id, cursor: $0) },
                           harbour.photoIDs.filter { fixture.origin.photo(id: $0).map { $0.isPublic && !$0.isVideo } ?? false })
        }
    }

    func testAnAlbumDeletedSinceTheListHasNoMembers() throws {
        let source = fixture.source(user: "me")
        let album = try XCTUnwrap(try source.albums().first)
        XCTAssertTrue(fixture.origin.deleteAlbum(album.id))
        let page = try source.albumMembersPage(album.id, cursor: nil)
        XCTAssertEqual(page.ids, [])
        XCTAssertNil(page.next)
        XCTAssertFalse(try source.albums().contains { $0.id == album.id })
    }

    func testAlbumChangesShowInTheListing() throws {
        let source = fixture.source(user: "me")
        fixture.origin.clock.set(1_800_000_000)
        let family = try XCTUnwrap(fixture.origin.albums.first { $0.title == "Family" })
        let harbour = try XCTUnwrap(fixture.origin.albums.first { $0.title == "Harbour walks" })
        XCTAssertTrue(fixture.origin.renameAlbum(family.id, title: "Family & friends"))
        XCTAssertTrue(fixture.origin.removeFromAlbum(family.id, photoID: family.photoIDs[0]))
        fixture.origin.clock.advance(by: 60)
        XCTAssertTrue(fixture.origin.addToAlbum(harbour.id, photoID: family.photoIDs[0], at: 0))
        fixture.origin.addAlbum(OriginAlbum(id: "72157799999999999", owner: AccountFixture.owner.nsid, title: "New",
                                            photoIDs: [family.photoIDs[1]], dateCreate: 1_800_000_100))
        let albums = try source.albums()
        XCTAssertEqual(albums.map(\.title), ["Harbour walks", "Family & friends", "Trips: 2019/2024", "Empty", "New"])
        XCTAssertEqual(albums.map(\.updatedAt), [1_800_000_060, 1_800_000_000, origin("Trips: 2019/2024"), origin("Empty"), 1_800_000_060])
        XCTAssertEqual(try allIDs { try source.albumMembersPage(family.id, cursor: $0) }, Array(family.photoIDs.dropFirst()))
        XCTAssertEqual(try allIDs { try source.albumMembersPage(harbour.id, cursor: $0) }.first, family.photoIDs[0])
    }

    private func origin(_ title: String) -> Int64? { fixture.origin.albums.first { $0.title == title }?.dateUpdate }

    func testMembersAndAlbumsArePagedAt500() throws {
        let image = DemoLibrary.renderImage(width: 8, height: 8, png: false, seed: 2)
        let owner = AccountFixture.owner.nsid
        let photos = (0..<1_001).map { index in
            OriginPhoto(id: "\(61_000_000_000 + index)", owner: owner, ownerName: "Ansel", title: "p\(index)", dateTaken: nil,
                        dateUpload: 1_700_000_000, placeID: nil, image: image)
        }
        // The album's order is not the upload order: reversed, with one id that is no photo (gone at Flickr).
        let members = photos.map(\.id).reversed() + ["61999999999"]
        let albums = (0..<501).map { index in
            OriginAlbum(id: "7215770\(String(format: "%010d", index))", owner: owner, title: "Album \(index)",
                        photoIDs: index == 0 ? Array(members) : [], dateCreate: 1_700_000_000)
        }
        fixture.stop()
        fixture = try AccountFixture(library: OriginLibrary(photos: photos, places: [], accounts: [AccountFixture.owner],
                                                            albums: albums))
        let source = fixture.source(user: "me")
        let listed = try source.albums()
        XCTAssertEqual(listed.map(\.id), albums.map(\.id))
        XCTAssertEqual(fixture.origin.restCallCount("flickr.photosets.getList"), 2)
        XCTAssertEqual(try allIDs { try source.albumMembersPage(albums[0].id, cursor: $0) }, Array(photos.map(\.id).reversed()))
        XCTAssertEqual(fixture.origin.restCallCount("flickr.photosets.getPhotos"), 3)
    }
}
