// The loopback origin's account methods on the wire: Flickr's envelopes, field types and error codes as its
// API documentation shows them, the edits tests make between imports, and the REST call log.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import OAuth1
import PhotoContent
import PhotoSources
import XCTest

final class OriginAccountMethodsTests: XCTestCase {
    var fixture: AccountFixture!

    override func setUpWithError() throws { fixture = try AccountFixture() }
    override func tearDown() { fixture.stop() }

    /// One REST call as the client makes it (signed as `nsid`, or with the app's key), answered as JSON.
    func call(_ method: String, _ parameters: [String: String] = [:], signedInAs nsid: String? = AccountFixture.owner.nsid) throws -> JSONValue {
        let credentials = fixture.credentials(signedInAs: nsid)
        return try FlickrREST(endpoint: fixture.origin.endpoint, credentials: credentials, http: HTTPClient(),
                              redactor: credentials.redactor).call(method, parameters)
    }

    func code(_ method: String, _ parameters: [String: String] = [:], signedInAs nsid: String? = nil) -> (Int, String)? {
        do { _ = try call(method, parameters, signedInAs: nsid); return nil } catch let failure as FlickrREST.Failure {
            return (failure.code, failure.message)
        } catch { XCTFail("\(error)"); return nil }
    }

    func testErrorsAreFlickrsCodes() throws {
        XCTAssertEqual(code("flickr.photos.recentlyUpdated", ["min_date": "0"])?.0, 99)
        XCTAssertTrue(code("flickr.photos.recentlyUpdated", ["min_date": "0"])?.1
            .contains("Insufficient permissions. Method requires read privileges; none granted.") ?? false)
        XCTAssertEqual(code("flickr.photos.recentlyUpdated", [:], signedInAs: AccountFixture.owner.nsid)?.0, 1)
        XCTAssertEqual(code("flickr.photos.recentlyUpdated", ["min_date": "yesterday-ish"], signedInAs: AccountFixture.owner.nsid)?.0, 2)
        XCTAssertEqual(code("flickr.people.findByUsername", ["username": "nobody"])?.0, 1)
        XCTAssertTrue(code("flickr.people.findByUsername", ["username": "nobody"])?.1.contains("User not found") ?? false)
        XCTAssertEqual(code("flickr.people.getPhotos", ["user_id": "me"])?.0, 2, "me is nobody without a signature")
        XCTAssertEqual(code("flickr.people.getPhotos", ["user_id": "42@N42"])?.0, 2)
        XCTAssertEqual(code("flickr.people.getPhotos")?.0, 1)
        XCTAssertEqual(code("flickr.people.getPublicPhotos", ["user_id": "42@N42"])?.0, 1)
        XCTAssertEqual(code("flickr.photosets.getList")?.0, 1, "no user_id and nobody signed in")
        XCTAssertEqual(code("flickr.photosets.getPhotos", ["photoset_id": "1"])?.0, 1)
        XCTAssertEqual(code("flickr.photosets.getPhotos", ["photoset_id": "72157700000000001", "user_id": "10000002@N02"])?.0, 1)
        XCTAssertEqual(code("flickr.people.getInfo", ["user_id": "42@N42"])?.0, 1)
    }

    func testUserLookupsAsDocumented() throws {
        let found = try call("flickr.people.findByUsername", ["username": "ansel"], signedInAs: nil)
        XCTAssertEqual(found["user"]?["id"], .string("10000001@N01"))
        XCTAssertEqual(found["user"]?["nsid"], .string("10000001@N01"))
        XCTAssertEqual(found["user"]?["username"]?["_content"], .string("ansel"))
        let login = try call("flickr.test.login")
        XCTAssertEqual(login["user"]?["id"], .string("10000001@N01"))
        let info = try call("flickr.people.getInfo", ["user_id": "10000001@N01"], signedInAs: nil)
        XCTAssertEqual(info["person"]?["username"]?["_content"], .string("ansel"))
        XCTAssertEqual(info["person"]?["realname"]?["_content"], .string("Ansel Adams"))
    }

    func testPhotoListsCarryTheirFieldsAsFlickrTypesThem() throws {
        let answer = try call("flickr.people.getPhotos", ["user_id": "me", "per_page": "1000", "page": "99999999999999999999",
                                                         "extras": "tags,views,last_update,media,original_format,url_o"])
        let photos = try XCTUnwrap(answer["photos"])
        XCTAssertEqual(photos["perpage"], .number(JSONNumber(text: "500")), "per_page is at most 500")
        XCTAssertEqual(photos["page"], .number(JSONNumber(text: "1")), "a page number that is no Int is page 1")
        XCTAssertEqual(photos["total"], .number(JSONNumber(text: "\(fixture.ownerPhotos().count)")))
        let records = try XCTUnwrap(photos["photo"]?.arrayValue)
        let byTitle = Dictionary(records.map { (FlickrJSON.text($0["title"]) ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        let party = try XCTUnwrap(byTitle["The party"])
        XCTAssertEqual(party["ispublic"], .number(JSONNumber(text: "0")))
        XCTAssertEqual(party["isfriend"], .number(JSONNumber(text: "1")))
        XCTAssertEqual(party["tags"], .string("family"))
        XCTAssertEqual(party["views"]?.stringValue, "1", "views as a string")
        XCTAssertNotNil(party["lastupdate"]?.stringValue, "lastupdate as a string")
        XCTAssertEqual(party["media"], .string("photo"))
        XCTAssertEqual(party["server"], .string("65535"))
        XCTAssertNotNil(party["originalsecret"]?.stringValue)
        XCTAssertEqual(byTitle["Harbour timelapse"]?["media"], .string("video"))
        // Flickr documents no `media` argument for people.getPhotos: its videos come whatever is asked (the
        // client counts them by the `media` extra); photos.search does filter by it.
        let stream = try call("flickr.people.getPhotos", ["user_id": "me", "media": "photos", "extras": "media"])
        XCTAssertEqual(stream["photos"]?["photo"]?.arrayValue?.filter { $0["media"] == .string("video") }.count, 2)
        let onlyVideos = try call("flickr.photos.search", ["user_id": "10000001@N01", "media": "videos", "extras": "media"])
        XCTAssertTrue(onlyVideos["photos"]?["photo"]?.arrayValue?.allSatisfy { $0["media"] == .string("video") } ?? false)
        // getRecent lists public photos only, whoever asks.
        let recent = try call("flickr.photos.getRecent", ["per_page": "500"])
        XCTAssertTrue(recent["photos"]?["photo"]?.arrayValue?.allSatisfy { $0["ispublic"] == .number(JSONNumber(text: "1")) } ?? false)
        // Page past the end: an empty list.
        XCTAssertEqual(try call("flickr.people.getPhotos", ["user_id": "me", "page": "7"])["photos"]?["photo"], .array([]))
    }

    func testPhotosetsAsFlickrSendsThem() throws {
        let list = try call("flickr.photosets.getList", ["user_id": "10000001@N01"], signedInAs: nil)
        let sets = try XCTUnwrap(list["photosets"]?["photoset"]?.arrayValue)
        XCTAssertEqual(sets.count, 4)
        let harbour = try XCTUnwrap(sets.first)
        XCTAssertEqual(harbour["id"], .string("72157700000000001"))
        XCTAssertEqual(harbour["title"]?["_content"], .string("Harbour walks"))
        XCTAssertEqual(harbour["description"]?["_content"], .string("Mornings by the water"))
        XCTAssertEqual(harbour["photos"], .number(JSONNumber(text: "2")), "public photos only, as a number")
        XCTAssertEqual(harbour["videos"], .number(JSONNumber(text: "1")))
        XCTAssertEqual(harbour["date_update"], .string("1710200000"), "dates as strings")
        XCTAssertEqual(harbour["date_create"], .string("1710100000"))
        // Signed as the owner (no user_id: the caller's own sets).
        let own = try call("flickr.photosets.getList")
        XCTAssertEqual(own["photosets"]?["photoset"]?.arrayValue?.first?["photos"], .number(JSONNumber(text: "3")))

        let members = try call("flickr.photosets.getPhotos", ["photoset_id": "72157700000000001", "user_id": "10000001@N01",
                                                              "extras": "media"])
        let set = try XCTUnwrap(members["photoset"])
        XCTAssertEqual(set["id"], .string("72157700000000001"))
        XCTAssertEqual(set["owner"], .string("10000001@N01"))
        XCTAssertEqual(set["ownername"], .string("ansel"))
        XCTAssertEqual(set["title"], .string("Harbour walks"))
        XCTAssertEqual(set["per_page"], .number(JSONNumber(text: "500")), "500 by default, sent as per_page and perpage")
        XCTAssertEqual(set["perpage"], .number(JSONNumber(text: "500")))
        XCTAssertEqual(set["total"], .string("4"), "total as a string")
        let records = try XCTUnwrap(set["photo"]?.arrayValue)
        XCTAssertEqual(records.compactMap { FlickrJSON.text($0["id"]) }, fixture.origin.albums[0].photoIDs)
        XCTAssertTrue(records.allSatisfy { $0["owner"] == nil }, "the set names the owner, its records do not")
        XCTAssertEqual(records.map { $0["isprimary"] }, [.string("1")] + Array(repeating: .string("0"), count: 3))
    }

    func testRecentlyUpdatedListsTheCallersChangesNewestFirst() throws {
        fixture.origin.clock.set(1_900_000_000)
        let own = fixture.ownerPhotos { $0.isPublic && !$0.isVideo }
        XCTAssertTrue(fixture.origin.setTitle(photoID: own[0].id, "first"))
        fixture.origin.clock.advance(by: 10)
        XCTAssertTrue(fixture.origin.setTitle(photoID: own[1].id, "second"))
        XCTAssertEqual(fixture.origin.photo(id: own[1].id)?.lastUpdate, 1_900_000_010)
        let answer = try call("flickr.photos.recentlyUpdated", ["min_date": "1900000000"])
        let records = try XCTUnwrap(answer["photos"]?["photo"]?.arrayValue)
        XCTAssertEqual(records.compactMap { FlickrJSON.text($0["id"]) }, [own[1].id, own[0].id])
        XCTAssertEqual(records.first?["lastupdate"], .string("1900000010"), "lastupdate without asking for it")
        XCTAssertEqual(try call("flickr.photos.recentlyUpdated", ["min_date": "1900000011"])["photos"]?["photo"], .array([]))
        // The stranger's changes are theirs: none.
        XCTAssertEqual(try call("flickr.photos.recentlyUpdated", ["min_date": "0"], signedInAs: AccountFixture.stranger.nsid)
            .objectValue?["photos"]?["photo"]?.arrayValue?.allSatisfy { FlickrJSON.text($0["owner"]) == AccountFixture.stranger.nsid }, true)
    }

    func testEditsStampTheOriginsClockAndChangeWhatIsServed() throws {
        fixture.origin.clock.set(1_900_000_000)
        let photo = try XCTUnwrap(fixture.ownerPhotos { $0.isPublic && $0.hasOriginal && !$0.isVideo }.first)
        let oldPath = photo.staticOriginalPath
        XCTAssertTrue(fixture.origin.replacePhoto(photoID: photo.id, with: DemoLibrary.renderImage(width: 9, height: 9, png: true, seed: 3)))
        let replaced = try XCTUnwrap(fixture.origin.photo(id: photo.id))
        XCTAssertNotEqual(replaced.secret, photo.secret)
        XCTAssertNotEqual(replaced.originalSecret, photo.originalSecret)
        XCTAssertEqual(replaced.originalFormat, "png")
        XCTAssertEqual(replaced.lastUpdate, 1_900_000_000)
        let http = HTTPClient()
        XCTAssertEqual(try http.get(fixture.origin.baseURL + replaced.staticOriginalPath).body, replaced.image.data)
        XCTAssertThrowsError(try http.get(fixture.origin.baseURL + oldPath), "the old URL is gone")
        let album = try XCTUnwrap(fixture.origin.albums.first { $0.photoIDs.contains(photo.id) })
        fixture.origin.clock.advance(by: 5)
        XCTAssertTrue(fixture.origin.deletePhoto(photo.id))
        let after = try XCTUnwrap(fixture.origin.albums.first { $0.id == album.id })
        XCTAssertFalse(after.photoIDs.contains(photo.id))
        XCTAssertEqual(after.dateUpdate, 1_900_000_005, "an album that lost a photo was updated")
        XCTAssertFalse(fixture.origin.deletePhoto(photo.id))
        XCTAssertFalse(fixture.origin.setTitle(photoID: "no-such-photo", "x"))
    }

    func testTheCallLogCountsEveryCallByMethodInOrderOfArrival() throws {
        fixture.origin.resetCounters()
        fixture.origin.scriptRESTStatuses([429])
        // Unsigned: answered 429, retried by the HTTP client, then refused (99) as nobody is signed in.
        XCTAssertEqual(code("flickr.test.login")?.0, 99)
        _ = try call("flickr.test.login")
        _ = try call("flickr.photosets.getList", signedInAs: AccountFixture.owner.nsid)
        let log = fixture.origin.restCallLog
        XCTAssertEqual(log.map(\.method), ["flickr.test.login", "flickr.test.login", "flickr.test.login", "flickr.photosets.getList"],
                       "a call answered 429 arrived all the same")
        XCTAssertEqual(log.map(\.signed), [false, false, true, true])
        XCTAssertEqual(log.map(\.arrivedAt), log.map(\.arrivedAt).sorted())
        XCTAssertGreaterThan(log[1].arrivedAt - log[0].arrivedAt, 0.1, "the retry waited its backoff (0.2 s at least)")
        XCTAssertEqual(fixture.origin.restCallCounts, ["flickr.test.login": 3, "flickr.photosets.getList": 1])
        XCTAssertTrue(log.allSatisfy { $0.parameters["api_key"] == nil && !$0.parameters.keys.contains { $0.hasPrefix("oauth_") } },
                      "no credential is kept")
        fixture.origin.resetCounters()
        XCTAssertEqual(fixture.origin.restCallLog, [])
    }
}
