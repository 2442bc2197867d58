// A member's photostream through FlickrSource's account mode: who the user is, what a signed owner sees and
// what everyone else sees, videos counted and left out, and the id listing deletions are found with.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import PhotoCatalog
import PhotoSources
import XCTest

final class AccountListingTests: XCTestCase {
    var fixture: AccountFixture!

    override func setUpWithError() throws { fixture = try AccountFixture() }
    override func tearDown() { fixture.stop() }

    func testTheSignedOwnerSeesPrivateFriendsAndFamilyPhotos() throws {
        let source = fixture.source(user: "me", perPage: 4)
        XCTAssertEqual(try source.resolveUser(), SourceAccount(id: "10000001@N01", name: "ansel"))
        XCTAssertEqual(source.account, SourceAccount(id: "10000001@N01", name: "ansel", seesPrivatePhotos: true))
        XCTAssertEqual(source.listingKey, "flickr user 10000001@N01", "the owner's own view")

        let pages = try allPages(source.listPage)
        let photos = pages.flatMap(\.photos)
        let expected = fixture.ownerPhotos { !$0.isVideo }
        XCTAssertEqual(Set(photos.map(\.id)), Set(expected.map(\.id)))
        XCTAssertEqual(photos.count, expected.count, "each photo once")
        XCTAssertEqual(pages.count, (expected.count + 3) / 4, "paged at per_page")
        XCTAssertTrue(pages.allSatisfy { $0.skipped.isEmpty })
        let byTitle = Dictionary(photos.map { ($0.title, $0) }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(byTitle["Passport scan"]?.visibility, .privateOnly)
        XCTAssertEqual(byTitle["The party"]?.visibility, .friends)
        XCTAssertEqual(byTitle["Grandmother's birthday"]?.visibility, .family)
        XCTAssertEqual(byTitle["New house"]?.visibility, [.friends, .family])
        XCTAssertEqual(photos.filter { $0.visibility == .everyone }.count, expected.filter(\.isPublic).count)
        // The account extras arrive: tags, views, lastupdate; the owner is the account's.
        let passport = try XCTUnwrap(byTitle["Passport scan"])
        let origin = try XCTUnwrap(fixture.origin.photo(id: passport.id))
        XCTAssertEqual(passport.tags, origin.tags)
        XCTAssertEqual(passport.views, origin.views)
        XCTAssertEqual(passport.lastUpdate, origin.lastUpdate)
        XCTAssertTrue(photos.allSatisfy { $0.owner == "10000001@N01" })

        // Signed: flickr.people.getPhotos, photos only, with every extra the catalog keeps.
        let calls = fixture.origin.restCallLog.filter { $0.method == "flickr.people.getPhotos" }
        XCTAssertEqual(calls.count, pages.count)
        XCTAssertTrue(calls.allSatisfy { $0.signed && $0.parameters["media"] == "photos" && $0.parameters["user_id"] == "10000001@N01" })
        let extras = Set((calls.first?.parameters["extras"] ?? "").split(separator: ","))
        XCTAssertTrue(extras.isSuperset(of: ["tags", "views", "last_update", "media", "original_format", "url_o", "url_sq"]), "\(extras)")
        XCTAssertEqual(fixture.origin.restCallCount("flickr.people.getPublicPhotos"), 0)
        XCTAssertEqual(fixture.origin.restCallCount("flickr.test.login"), 1, "the user is resolved once")
    }

    func testUnsignedCallersSeePublicPhotosOnly() throws {
        let source = fixture.source(user: "ANSEL", signedInAs: nil)
        XCTAssertEqual(try source.resolveUser(), SourceAccount(id: "10000001@N01", name: "ansel"), "user names match without case")
        let photos = try allPages(source.listPage).flatMap(\.photos)
        XCTAssertEqual(Set(photos.map(\.id)), Set(fixture.ownerPhotos { $0.isPublic && !$0.isVideo }.map(\.id)))
        XCTAssertTrue(photos.allSatisfy { $0.visibility == .everyone })
        XCTAssertGreaterThan(fixture.origin.restCallCount("flickr.people.getPublicPhotos"), 0)
        XCTAssertEqual(fixture.origin.restCallCount("flickr.people.getPhotos"), 0)
        XCTAssertEqual(fixture.origin.restCallCount("flickr.people.findByUsername"), 1)
        XCTAssertTrue(fixture.origin.restCallLog.allSatisfy { !$0.signed })
        // Nobody is signed in: no changes to list from, every import is a full listing, and the public view is
        // a listing of its own (its deletions cannot touch private photos another view imported).
        XCTAssertNil(try source.syncPoint())
        XCTAssertEqual(source.account?.seesPrivatePhotos, false)
        XCTAssertEqual(source.listingKey, "flickr user 10000001@N01 public")
    }

    func testAnotherSignedInMemberSeesTheOwnersPublicPhotosOnly() throws {
        let source = fixture.source(user: "10000001@N01", signedInAs: AccountFixture.stranger.nsid)
        XCTAssertEqual(try source.resolveUser(), SourceAccount(id: "10000001@N01", name: "ansel"), "an NSID's name from people.getInfo")
        XCTAssertEqual(source.listingKey, "flickr user 10000001@N01 as \(AccountFixture.stranger.nsid)")
        let photos = try allPages(source.listPage).flatMap(\.photos)
        XCTAssertEqual(Set(photos.map(\.id)), Set(fixture.ownerPhotos { $0.isPublic && !$0.isVideo }.map(\.id)))
        XCTAssertGreaterThan(fixture.origin.restCallCount("flickr.people.getPhotos"), 0)
        // recentlyUpdated would list the stranger's own photos, not the owner's: no sync point.
        XCTAssertNil(try source.syncPoint())
    }

    func testUsersThatDoNotExistOrCannotBeAskedForAreErrors() throws {
        XCTAssertThrowsError(try fixture.source(user: "nobody-here").resolveUser()) {
            XCTAssertEqual("\($0)", "no Flickr user named nobody-here")
        }
        XCTAssertThrowsError(try fixture.source(user: "99999999@N99").resolveUser()) {
            XCTAssertEqual("\($0)", "no Flickr user 99999999@N99")
        }
        XCTAssertThrowsError(try fixture.source(user: "me", signedInAs: nil).resolveUser()) {
            XCTAssertTrue("\($0)".contains("needs a signed-in Flickr account"), "\($0)")
        }
        // Until the user is known, the source follows no account and names the user as given.
        let unknown = fixture.source(user: "nobody-here")
        XCTAssertNil(unknown.account)
        XCTAssertEqual(unknown.listingKey, "flickr user nobody-here")
        XCTAssertThrowsError(try unknown.listPage(nil))
        XCTAssertTrue(FlickrSource.isNSID("12345678@N01"))
        for text in ["me", "12345678@N1", "@N01", "1234@n01", "12345678@N01x", "a@N01", "12@N01@N01"] {
            XCTAssertFalse(FlickrSource.isNSID(text), text)
        }
    }

    func testVideosAreCountedAndLeftOutWhenTheServerListsThem() throws {
        // A server that ignores media=photos (Flickr documents no media argument for people.getPhotos).
        let source = fixture.source(user: "me") { $0.parameters["media"] = "all" }
        let pages = try allPages(source.listPage)
        XCTAssertEqual(pages.map(\.videos).reduce(0, +), fixture.ownerPhotos(\.isVideo).count)
        XCTAssertEqual(fixture.ownerPhotos(\.isVideo).count, 2)
        let titles = Set(pages.flatMap(\.photos).map(\.title))
        XCTAssertFalse(titles.contains("Harbour timelapse") || titles.contains("Private clip"))
        XCTAssertTrue(pages.allSatisfy { $0.skipped.isEmpty }, "a video is not a bad record")
    }

    func testTheIDListingIsEveryPhotoWithoutExtras500APage() throws {
        // 1,001 photos of the account: three pages of ids at Flickr's maximum of 500.
        let image = DemoLibrary.renderImage(width: 8, height: 8, png: false, seed: 1)
        var photos: [OriginPhoto] = []
        for index in 0..<1_001 {
            var photo = OriginPhoto(id: "\(60_000_000_000 + index)", owner: AccountFixture.owner.nsid, ownerName: "Ansel",
                                    title: "p\(index)", dateTaken: nil, dateUpload: 1_700_000_000 + Int64(index),
                                    placeID: nil, image: image)
            photo.isPublic = index % 3 != 0
            photos.append(photo)
        }
        fixture.stop()
        fixture = try AccountFixture(library: OriginLibrary(photos: photos, places: [], accounts: [AccountFixture.owner]))
        let signed = try allIDs { try XCTUnwrap(try fixture.source(user: "me").idPage($0)) }
        XCTAssertEqual(signed.count, 1_001)
        XCTAssertEqual(Set(signed), Set(photos.map(\.id)))
        let calls = fixture.origin.restCallLog.filter { $0.method == "flickr.people.getPhotos" }
        XCTAssertEqual(calls.count, 3)
        XCTAssertTrue(calls.allSatisfy { $0.parameters["per_page"] == "500" && $0.parameters["extras"] == "media" })
        let unsigned = try allIDs { try XCTUnwrap(try fixture.source(user: "ansel", signedInAs: nil).idPage($0)) }
        XCTAssertEqual(Set(unsigned), Set(photos.filter(\.isPublic).map(\.id)))
        // A query has no id listing: deletions are never guessed from a getRecent page.
        XCTAssertNil(try fixture.source(user: nil).idPage(nil))
    }
}
