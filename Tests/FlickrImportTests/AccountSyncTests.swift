// Changes between imports through flickr.photos.recentlyUpdated: the sync point, edited, replaced and added
// photos, a deleted one found by the id listing, and when there is no sync point at all.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import PhotoSources
import XCTest

final class AccountSyncTests: XCTestCase {
    var fixture: AccountFixture!
    /// The origin's clock and this machine's agree in these tests; the demo photos were last updated in 2023–24.
    let importStart: Int64 = 1_800_000_000

    override func setUpWithError() throws {
        fixture = try AccountFixture()
        fixture.origin.clock.set(importStart)
    }
    override func tearDown() { fixture.stop() }

    func ownerSource() -> FlickrSource {
        fixture.source(user: "me") { [importStart] options in options.now = { importStart } }
    }

    func testEditsAtTheOriginAreTheChangesOfTheNextImport() throws {
        let source = ownerSource()
        let point = try XCTUnwrap(try source.syncPoint())
        XCTAssertEqual(point.token, String(importStart - FlickrSource.syncSlack))
        let before = Dictionary(try allPages(source.listPage).flatMap(\.photos).map { ($0.id, $0) }, uniquingKeysWith: { $1 })

        // Nothing changed yet: the demo photos' last updates are long before the sync point.
        XCTAssertEqual(try allPages { try source.changesPage(since: point, cursor: $0) }.flatMap(\.photos), [])

        let publicOwn = fixture.ownerPhotos { $0.isPublic && !$0.isVideo }
        let (retitled, replaced) = (publicOwn[0], publicOwn[1])
        let deleted = try XCTUnwrap(fixture.ownerPhotos { $0.title == "Grandmother's birthday" }.first)
        fixture.origin.clock.advance(by: 120)
        XCTAssertTrue(fixture.origin.setTitle(photoID: retitled.id, "Harbour, retitled"))
        let newBytes = DemoLibrary.renderImage(width: 40, height: 30, png: false, seed: 99)
        XCTAssertTrue(fixture.origin.replacePhoto(photoID: replaced.id, with: newBytes))
        var added = OriginPhoto(id: "52999999999", owner: AccountFixture.owner.nsid, ownerName: "Ansel Adams",
                                title: "Just uploaded", dateTaken: "2030-01-01 10:00:00", dateUpload: importStart + 120,
                                placeID: nil, image: DemoLibrary.renderImage(width: 32, height: 24, png: false, seed: 7))
        added.isPublic = false
        fixture.origin.addPhoto(added)
        XCTAssertTrue(fixture.origin.deletePhoto(deleted.id))

        fixture.origin.resetCounters()
        let changes = try allPages { try source.changesPage(since: point, cursor: $0) }
        let changed = Dictionary(changes.flatMap(\.photos).map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        XCTAssertEqual(Set(changed.keys), [retitled.id, replaced.id, added.id])
        XCTAssertEqual(changed[retitled.id]?.title, "Harbour, retitled")
        XCTAssertEqual(changed[retitled.id]?.originalURL, before[retitled.id]?.originalURL, "a new title keeps the URL")
        XCTAssertEqual(changed[retitled.id]?.lastUpdate, importStart + 120)
        XCTAssertEqual(changed[added.id]?.visibility, .privateOnly)
        let replacedURL = try XCTUnwrap(changed[replaced.id]?.originalURL)
        XCTAssertNotEqual(replacedURL, before[replaced.id]?.originalURL, "replaced bytes come under a new URL")
        guard case .success(let measured) = source.measure(replacedURL) else { return XCTFail("the new URL must be served") }
        XCTAssertEqual(measured.size, Int64(newBytes.data.count))
        // Signed, from the sync point, with the account extras.
        let calls = fixture.origin.restCallLog
        XCTAssertEqual(calls.map(\.method), ["flickr.photos.recentlyUpdated"])
        XCTAssertEqual(calls.first?.parameters["min_date"], point.token)
        XCTAssertTrue(calls.allSatisfy { $0.signed && ($0.parameters["extras"] ?? "").contains("last_update") })

        // The deleted photo is found by what the id listing no longer has.
        let ids = Set(try allIDs { try XCTUnwrap(try source.idPage($0)) })
        XCTAssertFalse(ids.contains(deleted.id))
        XCTAssertTrue(ids.isSuperset(of: [retitled.id, replaced.id, added.id]))
        XCTAssertEqual(ids, Set(before.keys).subtracting([deleted.id]).union([added.id]))
    }

    func testAChangedVideoIsCountedNotImported() throws {
        let source = ownerSource()
        let point = try XCTUnwrap(try source.syncPoint())
        let video = try XCTUnwrap(fixture.ownerPhotos(\.isVideo).first)
        fixture.origin.clock.advance(by: 1)
        XCTAssertTrue(fixture.origin.setTitle(photoID: video.id, "Timelapse, recut"))
        // recentlyUpdated has no media argument: the client leaves the video out.
        let pages = try allPages { try source.changesPage(since: point, cursor: $0) }
        XCTAssertEqual(pages.flatMap(\.photos), [])
        XCTAssertEqual(pages.map(\.videos).reduce(0, +), 1)
    }

    func testNoSyncPointWhereRecentlyUpdatedCannotServeTheNextImport() throws {
        XCTAssertNil(try fixture.source(user: "me", signedInAs: nil).syncPoint(), "unsigned")
        XCTAssertNil(try fixture.source(user: "ansel", signedInAs: AccountFixture.stranger.nsid).syncPoint(),
                     "signed in as someone else: recentlyUpdated would list their photos")
        XCTAssertNil(try fixture.source(user: nil).syncPoint(), "a query")
        XCTAssertNotNil(try fixture.source(user: "ansel").syncPoint(), "the owner named by user name")
        // A clock near 1970 cannot make a negative min_date.
        XCTAssertEqual(try fixture.source(user: "me") { $0.now = { 5 } }.syncPoint()?.token, "0")
    }

    func testSyncPointsThatAreNotUnixTimesAndUnsignedChangesAreRefused() throws {
        let source = ownerSource()
        for token in ["", "abc", "-1", "1e9", "99999999999999999999", "1800000000 ", "0x10"] {
            XCTAssertThrowsError(try source.changesPage(since: SyncPoint(token: token), cursor: nil), token) {
                XCTAssertTrue("\($0)".contains("is not a Unix time"), "\($0)")
            }
        }
        XCTAssertThrowsError(try fixture.source(user: "ansel", signedInAs: nil)
            .changesPage(since: SyncPoint(token: "1800000000"), cursor: nil)) {
            XCTAssertTrue("\($0)".contains("signed-in account"), "\($0)")
        }
        XCTAssertEqual(fixture.origin.restCallCount("flickr.photos.recentlyUpdated"), 0, "refused before asking")
    }
}
