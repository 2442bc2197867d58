// Albums in the catalog: ordered members, album counts, removal, privacy aggregates, and hostile rows.
import Foundation
import GRDB
@testable import PhotoCatalog
import XCTest

final class AlbumCatalogTests: XCTestCase {
    private var scratch: ScratchDirectory!
    private var catalog: Catalog!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory("albums")
        catalog = try Catalog(path: scratch.path("library.sqlite"))
        var photos = (1...5).map { importedPhoto(String($0)) }
        photos[3].photo.visibility = .privateOnly
        photos[4].photo.visibility = .friends
        _ = try catalog.applyImport(places: [], photos: photos)
    }

    private func album(_ id: String, _ title: String, _ members: [String]?, updated: Int64? = 1) -> AlbumImport {
        AlbumImport(sourceID: id, title: title, description: "about \(title)", updatedAt: updated, memberIDs: members)
    }

    func testMembersKeepTheAlbumsOrderAndCountAsLinks() throws {
        let summary = try catalog.applyAlbums([album("a", "Trip", ["3", "1", "2", "missing", "1"]), album("b", "Dogs", ["1"])],
                                              keepingOnly: nil)
        XCTAssertEqual(summary, { var s = AlbumSummary(); s.added = 2; return s }())
        let albums = try catalog.albums()
        XCTAssertEqual(albums.map(\.title), ["Trip", "Dogs"])
        XCTAssertEqual(albums.map(\.photoCount), [3, 1])
        XCTAssertEqual(albums[0].newestMomentAt, 1_600_000_003)
        XCTAssertEqual(try catalog.photos(inAlbum: albums[0].id).map(\.id), ["3", "1", "2"],
                       "album order, an unknown id left out, a repeated one once")
        XCTAssertEqual(try catalog.photo(id: "1")?.albumCount, 2)
        XCTAssertEqual(try catalog.photo(id: "4")?.albumCount, 0)
        XCTAssertEqual(try catalog.photos(inAlbum: albums[0].id).map(\.albumCount), [1, 2, 1], "listing rows carry it too")
    }

    func testAnUnchangedAlbumIsNotAChangeAndNilMembersKeepTheStoredOnes() throws {
        try catalog.applyAlbums([album("a", "Trip", ["1", "2"])], keepingOnly: nil)
        let generation = try catalog.generation()
        XCTAssertEqual(try catalog.applyAlbums([album("a", "Trip", ["1", "2"])], keepingOnly: nil), AlbumSummary())
        XCTAssertEqual(try catalog.applyAlbums([album("a", "Trip", nil)], keepingOnly: nil), AlbumSummary())
        XCTAssertEqual(try catalog.generation(), generation, "nothing changed, so mounts keep their listings")
        let renamed = try catalog.applyAlbums([album("a", "Road trip", nil, updated: 2)], keepingOnly: nil)
        XCTAssertEqual(renamed.updated, 1)
        XCTAssertEqual(try catalog.photos(inAlbum: try XCTUnwrap(catalog.albums().first).id).map(\.id), ["1", "2"])
        XCTAssertNotEqual(try catalog.generation(), generation)
        XCTAssertEqual(try catalog.albumUpdateTimes(), ["a": 2])
    }

    /// An album with a member the library does not hold keeps no update time (so the next import lists it
    /// again), and the same answer again changes nothing (mounts keep their listings).
    func testAMissingMemberIsListedAgainNextTimeWithoutChurn() throws {
        try catalog.applyAlbums([album("a", "Trip", ["1", "not-yet"], updated: 7)], keepingOnly: nil)
        let stored = try catalog.albumUpdateTimes()
        XCTAssertEqual(stored.keys.sorted(), ["a"])
        XCTAssertEqual(stored["a"], .some(nil), "no update time kept")
        let generation = try catalog.generation()
        XCTAssertEqual(try catalog.applyAlbums([album("a", "Trip", ["1", "not-yet"], updated: 7)], keepingOnly: nil),
                       AlbumSummary())
        XCTAssertEqual(try catalog.generation(), generation)
        _ = try catalog.applyImport(places: [], photos: [importedPhoto("not-yet")])
        try catalog.applyAlbums([album("a", "Trip", ["1", "not-yet"], updated: 7)], keepingOnly: nil)
        XCTAssertEqual(try catalog.albumUpdateTimes(), ["a": 7])
        XCTAssertEqual(try catalog.photos(inAlbum: try XCTUnwrap(catalog.albums().first).id).map(\.id), ["1", "not-yet"])
    }

    /// A library following two accounts: one account's album list removes only its own albums.
    func testAnAccountsAlbumListLeavesAnotherAccountsAlbums() throws {
        try catalog.applyAlbums([AlbumImport(sourceID: "a1", owner: "alice", title: "Alice's", description: "",
                                             updatedAt: 1, memberIDs: ["1"])], keepingOnly: nil)
        try catalog.applyAlbums([AlbumImport(sourceID: "b1", owner: "bob", title: "Bob's", description: "",
                                             updatedAt: 1, memberIDs: ["2"])], keepingOnly: ["b1"], owner: "bob")
        XCTAssertEqual(try catalog.albums().map(\.title), ["Alice's", "Bob's"])
        XCTAssertEqual(try catalog.applyAlbums([], keepingOnly: [], owner: "bob").removed, 1)
        XCTAssertEqual(try catalog.albums().map(\.title), ["Alice's"])
    }

    /// The library reached through a symlink: the real file and its -wal are what become 0600.
    func testALibraryWithPrivatePhotosBecomesOwnerOnlyEvenThroughASymlink() throws {
        let real = scratch.path("library.sqlite")
        let link = scratch.path("link.sqlite")
        XCTAssertEqual(symlink(real, link), 0)
        XCTAssertEqual(chmod(real, 0o644), 0)
        let linked = try Catalog(path: link)
        XCTAssertFalse(linked.restrictToOwner().isEmpty)
        var info = stat()
        XCTAssertEqual(stat(real, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(linked.restrictToOwner(), [], "already owner-only: nothing to change")
    }

    func testAlbumsGoneAtTheOriginAreRemovedAndEmptyOnesAreNotListed() throws {
        try catalog.applyAlbums([album("a", "Trip", ["1"]), album("b", "Dogs", ["2"]), album("c", "Empty", [])],
                                keepingOnly: nil)
        XCTAssertEqual(try catalog.albums().map(\.title), ["Trip", "Dogs"], "an album without photos is not shown")
        let summary = try catalog.applyAlbums([], keepingOnly: ["b", "c"])
        XCTAssertEqual(summary.removed, 1)
        XCTAssertEqual(try catalog.albums().map(\.title), ["Dogs"])
        XCTAssertEqual(try catalog.photo(id: "1")?.albumCount, 0)
    }

    func testARemovedPhotoLeavesItsAlbumsAndIsReturned() throws {
        try catalog.applyAlbums([album("a", "Trip", ["1", "2"])], keepingOnly: nil)
        let removed = try catalog.removePhotos(ids: ["1", "unknown"])
        XCTAssertEqual(removed.map(\.id), ["1"])
        XCTAssertEqual(removed.first?.originalURL, "http://origin/1.jpg")
        XCTAssertEqual(try catalog.photos(inAlbum: try XCTUnwrap(catalog.albums().first).id).map(\.id), ["2"])
        XCTAssertEqual(try catalog.photoIDs(owner: "owner"), ["2", "3", "4", "5"])
    }

    func testAnAlbumOfPrivatePhotosSaysSoAndVisibilityIsStored() throws {
        try catalog.applyAlbums([album("a", "Secret", ["4", "5"]), album("b", "Mixed", ["3", "4"])], keepingOnly: nil)
        XCTAssertEqual(try catalog.albums().map(\.hasPublicPhotos), [false, true])
        XCTAssertEqual(try catalog.photo(id: "4")?.visibility, .privateOnly)
        XCTAssertEqual(try catalog.photo(id: "5")?.visibility, .friends)
        XCTAssertEqual(try catalog.years().first?.hasPublicPhotos, true)
    }

    /// A visibility that is not an integer reads as private: a damaged row must not open a photo to everyone.
    func testAHostileVisibilityReadsAsPrivate() throws {
        try tamper(scratch.path("library.sqlite"), "UPDATE photo SET visibility = 'everyone', album_count = -5 WHERE id = '1'")
        let photo = try XCTUnwrap(try catalog.photo(id: "1"))
        XCTAssertFalse(photo.visibility.isPublic)
        XCTAssertEqual(photo.albumCount, 0)
        try tamper(scratch.path("library.sqlite"), "UPDATE photo SET visibility = 9223372036854775807, album_count = 9223372036854775807 WHERE id = '1'")
        XCTAssertEqual(try catalog.photo(id: "1")?.albumCount, Int(CatalogLimits.maxAlbumsPerPhoto))
    }

    func testSyncStateRoundTripsAndAHostileModeIsNoResumePoint() throws {
        let state = SyncState(listingKey: "flickr user 1@N01", sourceKind: "flickr", accountID: "1@N01", accountName: "ann",
                              lastSyncPoint: "1700000000", lastSyncedAt: 1_700_000_100,
                              resume: ResumePoint(mode: .full, cursor: "3", syncPoint: "1700000500", pages: 2),
                              skippedCount: 4, videoCount: 1)
        _ = try catalog.applyImport(places: [], photos: [importedPhoto("9")], state: state)
        XCTAssertEqual(try catalog.syncState(listingKey: "flickr user 1@N01"), state)
        try tamper(scratch.path("library.sqlite"), "UPDATE sync_state SET resume_mode = 'sideways', skipped_count = 'many'")
        let read = try XCTUnwrap(try catalog.syncState(listingKey: "flickr user 1@N01"))
        XCTAssertNil(read.resume)
        XCTAssertEqual(read.skippedCount, 0)
    }
}
