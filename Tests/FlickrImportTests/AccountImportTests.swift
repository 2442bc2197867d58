// LibraryImporter over a member's library on the loopback origin: incremental imports, deletions only from a
// whole id listing, albums listed again only when they changed, and the public view kept apart.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import Logging
import PhotoCatalog
import PhotoSources
import XCTest

final class AccountImportTests: XCTestCase {
    private var fixture: AccountFixture!
    private var directory: URL!
    private var catalog: Catalog!

    override func setUpWithError() throws {
        fixture = try AccountFixture()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("account-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
    }

    override func tearDown() {
        fixture.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private func run(_ source: FlickrSource, full: Bool = false) throws -> ImportReport {
        var options = LibraryImportOptions()
        options.full = full
        return try LibraryImporter(catalog: catalog, source: source, options: options, progress: nil,
                                   logger: fixture.log.logger()).run()
    }

    private var ownerIDs: Set<String> { Set(fixture.ownerPhotos { !$0.isVideo }.map(\.id)) }

    func testTheSecondImportListsOnlyChangesAndFindsDeletionsAndChangedAlbums() throws {
        let first = try run(fixture.source(user: "me", perPage: 5))
        XCTAssertEqual(first.mode, .full)
        XCTAssertEqual(Set(try catalog.allPhotos().map(\.id)), ownerIDs)
        XCTAssertGreaterThan(first.albums.added, 0)
        let albumCount = try catalog.albums().count

        let updatedBefore = Dictionary(uniqueKeysWithValues: fixture.origin.albums.map { ($0.id, $0.dateUpdate) })
        let ids = fixture.ownerPhotos { $0.isPublic && !$0.isVideo }.map(\.id)
        XCTAssertTrue(fixture.origin.setTitle(photoID: ids[0], "Renamed at the origin"))
        XCTAssertTrue(fixture.origin.deletePhoto(ids[1]))
        let album = try XCTUnwrap(fixture.origin.albums.first { !$0.photoIDs.isEmpty })
        XCTAssertTrue(fixture.origin.renameAlbum(album.id, title: "Renamed album"))
        fixture.origin.resetCounters()

        let second = try run(fixture.source(user: "me", perPage: 5))
        XCTAssertEqual(second.mode, .changes)
        XCTAssertEqual(second.removed.map(\.id), [ids[1]])
        XCTAssertEqual(try catalog.photo(id: ids[0])?.title, "Renamed at the origin")
        XCTAssertNil(try catalog.photo(id: ids[1]))
        // Only albums whose update time moved at the origin (the renamed one, and any that held the deleted photo).
        let moved = fixture.origin.albums.filter { updatedBefore[$0.id] != $0.dateUpdate }.count
        XCTAssertGreaterThanOrEqual(moved, 1)
        XCTAssertLessThan(moved, fixture.origin.albums.count, "the test needs an album that did not change")
        XCTAssertEqual(second.albumsListed, moved)
        XCTAssertTrue(try catalog.albums().contains { $0.title == "Renamed album" })
        XCTAssertEqual(try catalog.albums().count, albumCount)
        let counts = fixture.origin.restCallCounts
        XCTAssertEqual(counts["flickr.photos.recentlyUpdated"], 1)
        XCTAssertEqual(fixture.origin.restCallLog.filter { $0.method == "flickr.people.getPhotos" && ($0.parameters["extras"] ?? "").contains("url_o") }.count,
                       0, "no full listing with extras")
        XCTAssertEqual(fixture.origin.requestCount(method: "HEAD"), 0, "nothing unchanged is measured again")
        XCTAssertNotNil(try catalog.syncState(listingKey: "flickr user 10000001@N01")?.lastSyncPoint)
    }

    /// An id listing that does not add up to the total the origin announced deletes nothing.
    func testAnIDListingThatIsNotWholeDeletesNothing() throws {
        _ = try run(fixture.source(user: "me"))
        let before = Set(try catalog.allPhotos().map(\.id))
        // A photo the library holds vanishes from the id pages only (the origin still counts it in `total`).
        let hidden = try XCTUnwrap(fixture.ownerPhotos { $0.isPublic && !$0.isVideo }.first?.id)
        fixture.origin.hideFromIDListings(photoID: hidden)
        let report = try run(fixture.source(user: "me"))
        XCTAssertEqual(report.removed, [])
        XCTAssertEqual(Set(try catalog.allPhotos().map(\.id)), before)
        XCTAssertTrue(fixture.log.text.contains("the id listing is not whole"), fixture.log.text)
    }

    /// A listing whose count adds up though it lost a photo: the photo is asked about (photos.getInfo) before
    /// it goes, and a photo that still exists stays; one that is gone is removed.
    func testEveryDeletionIsConfirmedWithTheOrigin() throws {
        _ = try run(fixture.source(user: "me"))
        let photos = fixture.ownerPhotos { $0.isPublic && !$0.isVideo }.map(\.id)
        fixture.origin.dropFromIDListingsAndTotal(photoID: photos[0])
        XCTAssertTrue(fixture.origin.deletePhoto(photos[1]))
        fixture.origin.resetCounters()
        let report = try run(fixture.source(user: "me"))
        XCTAssertEqual(report.removed.map(\.id), [photos[1]])
        XCTAssertNotNil(try catalog.photo(id: photos[0]), "alive at the origin: kept")
        XCTAssertEqual(fixture.origin.restCallCount("flickr.photos.getInfo"), 2, "one question per photo about to go")
        XCTAssertEqual(report.missedByListing, 1)
    }

    /// The public view of an account (no signature) neither removes the private photos the owner's own view
    /// imported nor takes over its sync state.
    func testThePublicViewOfAnAccountLeavesItsPrivatePhotos() throws {
        let library = directory.appendingPathComponent("library.sqlite").path
        XCTAssertEqual(chmod(library, 0o644), 0)
        _ = try run(fixture.source(user: "me"))
        let privateIDs = Set(try catalog.allPhotos().filter { !$0.visibility.isPublic }.map(\.id))
        XCTAssertFalse(privateIDs.isEmpty)
        // Private photos' rows (their URLs) are in the file: nobody but its owner may read it.
        var info = stat()
        XCTAssertEqual(stat(library, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        let report = try run(fixture.source(user: AccountFixture.owner.nsid, signedInAs: nil))
        XCTAssertEqual(report.removed, [])
        XCTAssertTrue(privateIDs.isSubset(of: Set(try catalog.allPhotos().map(\.id))))
        XCTAssertEqual(Set(try catalog.syncStates().map(\.listingKey)),
                       ["flickr user 10000001@N01", "flickr user 10000001@N01 public"])
    }

    /// A resumed listing counted in another page size starts at the page holding the first unread photo.
    func testAResumeWithAnotherPageSizeSkipsNoPhoto() throws {
        XCTAssertEqual(FlickrSource.pageNumber(FlickrSource.cursor(page: 11, perPage: 100), perPage: 500), 3)
        XCTAssertEqual(FlickrSource.pageNumber(FlickrSource.cursor(page: 3, perPage: 500), perPage: 100), 11)
        XCTAssertEqual(FlickrSource.pageNumber(FlickrSource.cursor(page: 4, perPage: 7), perPage: 7), 4)
        XCTAssertEqual(FlickrSource.pageNumber(PageCursor(token: "5"), perPage: 9), 5)
        for hostile in ["0:5", "-3:5", "1:0", "99999999999:1", "2:3:4", "x", ""] {
            XCTAssertEqual(FlickrSource.pageNumber(PageCursor(token: hostile), perPage: 5), 1, hostile)
        }
    }

    /// A server whose pages never end (it answers the same page whatever is asked) stops the listing.
    func testAListingThatNeverEndsIsStopped() throws {
        var bound = PagingBound()
        var pages = 0
        while bound.allowsAnother(pageCount: Int.max, itemsOnPage: 10, newItems: pages == 0 ? 10 : 0) { pages += 1 }
        XCTAssertEqual(pages, 1, "the first page is followed; the second brought nothing new")
        var growing = PagingBound()
        var count = 0
        while growing.allowsAnother(pageCount: 3, itemsOnPage: 10, newItems: 10) { count += 1 }
        XCTAssertEqual(count, 3 + PagingBound.slack - 1, "three pages announced, a little slack, then stop")
    }
}
