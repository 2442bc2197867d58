// Issue 9, acceptance 3: after edits at the origin (a title changed, a photo deleted, one added, one replaced,
// an album renamed with members added and removed), a second `photofs import --user me` makes only the calls
// it needs, HEADs only the new and the replaced photo, and a live mount shows the new state within 2 s, with
// the deleted photo's cached bytes gone from the cache directory.
import FlickrOrigin
import Foundation
import XCTest

final class AccountSyncMountTests: XCTestCase {
    var harness: MountHarness!

    override func setUpWithError() throws {
        // The account: 5 public photos (all in albums), 4 that are not public, 2 videos, 4 albums.
        harness = try MountHarness(library: DemoLibrary.account(count: 60, scale: 8))
        try harness.signIn()
        let first = harness.importAccount()
        XCTAssertEqual(first.status, 0, first.stderr)
        try harness.mount()
    }

    override func tearDown() { harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    func testASecondImportMakesOnlyTheCallsItNeedsAndTheLiveMountFollows() throws {
        let origin = harness.origin
        let stream = DemoLibrary.stream(of: origin)
        let harbour = try XCTUnwrap(origin.albums.first { $0.title == "Harbour walks" })
        let publicInHarbour = harbour.photoIDs.filter { id in stream.contains { $0.id == id && $0.isPublic } }
        XCTAssertEqual(publicInHarbour.count, 3)
        // Deleted: a photo of Harbour walks only (so that album is the one that changed). Replaced: one in two
        // albums. Retitled: one of "Trips" (an album that does not change).
        let deleted = publicInHarbour[0], replaced = publicInHarbour[2]
        let trips = try XCTUnwrap(origin.albums.first { $0.title.hasPrefix("Trips") })
        let retitled = try XCTUnwrap(trips.photoIDs.first { !harbour.photoIDs.contains($0) })
        let oldTitle = try XCTUnwrap(origin.photo(id: retitled)?.title)
        let party = try XCTUnwrap(stream.first { $0.title == "The party" })
        XCTAssertEqual(origin.albums.filter { $0.photoIDs.contains(deleted) }.map(\.title), ["Harbour walks"])

        // Reading the photo to be deleted and the one to be replaced puts their bytes in the cache.
        let before = try harness.mountedFilesByPhotoID()
        let deletedInode = try XCTUnwrap(before[deleted]?.first).inode
        for id in [deleted, replaced] {
            let file = try XCTUnwrap(before[id]?.first)
            XCTAssertEqual(Shell.run("cat", [harness.path(file.path)]).stdout.count, Int(file.size))
        }
        XCTAssertTrue(eventually(within: 5) { harness.cachedOriginals(of: deleted).count == 1 && harness.cachedOriginals(of: replaced).count == 1 },
                      "the reads were cached: \(harness.cachedOriginals(of: deleted)) \(harness.cachedOriginals(of: replaced))")
        let deletedCacheFile = try XCTUnwrap(harness.cachedOriginals(of: deleted).first)
        let replacedCacheFile = try XCTUnwrap(harness.cachedOriginals(of: replaced).first)

        // The edits at the origin.
        let newTitle = "Renamed at the origin"
        XCTAssertTrue(origin.setTitle(photoID: retitled, newTitle))
        XCTAssertTrue(origin.deletePhoto(deleted))
        let image = DemoLibrary.renderImage(width: 80, height: 60, png: false, seed: 0xADD)
        var added = OriginPhoto(id: "52200000001", owner: DemoLibrary.account.nsid, ownerName: "Ansel Adams", title: "Fresh upload",
                                dateTaken: "2024-06-01 12:00:00", dateUpload: Int64(Date().timeIntervalSince1970),
                                placeID: stream[0].placeID, image: image,
                                thumbnail: DemoLibrary.renderImage(width: 60, height: 60, png: false, seed: 0xADD))
        added.isPublic = true
        origin.addPhoto(added)
        let newBytes = DemoLibrary.renderImage(width: 80, height: 60, png: false, seed: 0xBEEF)
        XCTAssertTrue(origin.replacePhoto(photoID: replaced, with: newBytes))
        XCTAssertTrue(origin.renameAlbum(harbour.id, title: "Harbour mornings"))
        XCTAssertTrue(origin.removeFromAlbum(harbour.id, photoID: party.id))
        XCTAssertTrue(origin.addToAlbum(harbour.id, photoID: added.id))
        let addedPath = try XCTUnwrap(origin.imagePath(photoID: added.id))
        let replacedPath = try XCTUnwrap(origin.imagePath(photoID: replaced))

        origin.resetCounters()
        let second = harness.importAccount()
        let importDone = Date()
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.text.contains("changes since the last import"), second.text)
        XCTAssertTrue(second.text.contains("1 photo(s) deleted at the origin removed"), second.text)

        // Only the calls it needs: who "me" is, what changed, every id (deletions), one question about the photo
        // about to be deleted, the album list, and the members of the one album that changed. No listing of the
        // photostream with extras.
        let log = origin.restCallLog
        let counts = origin.restCallCounts
        XCTAssertEqual(Set(counts.keys), ["flickr.test.login", "flickr.photos.recentlyUpdated", "flickr.people.getPhotos",
                                          "flickr.photos.getInfo", "flickr.photosets.getList", "flickr.photosets.getPhotos"],
                       "\(counts)")
        XCTAssertEqual(log.filter { $0.method == "flickr.photos.getInfo" }.map { $0.parameters["photo_id"] }, [deleted],
                       "the deletion is confirmed, and only it")
        XCTAssertEqual(counts["flickr.photos.recentlyUpdated"], 1, "\(counts)")
        XCTAssertEqual(counts["flickr.photosets.getList"], 1, "\(counts)")
        for call in log where call.method == "flickr.people.getPhotos" {
            XCTAssertEqual(call.parameters["extras"], "media", "the id listing asks only whether an item is a video: \(call.parameters)")
            XCTAssertEqual(call.parameters["per_page"], "500", "\(call.parameters)")
        }
        XCTAssertEqual(counts["flickr.people.getPhotos"], 1, "9 ids: one page of 500")
        XCTAssertEqual(log.filter { $0.method == "flickr.photosets.getPhotos" }.map { $0.parameters["photoset_id"] }, [harbour.id],
                       "members listed again for the changed album only")
        XCTAssertTrue(log.allSatisfy(\.signed), "every call signed")
        // HEAD only for the added and the replaced photo (at its new URL), none for the unchanged ones.
        XCTAssertEqual(origin.requestCount(method: "HEAD"), 2)
        XCTAssertEqual(origin.requestCount(method: "HEAD", path: addedPath), 1)
        XCTAssertEqual(origin.requestCount(method: "HEAD", path: replacedPath), 1)

        // The live mount shows the new state within 2 s of the import's end on a quiet machine (its 1 s poll, then
        // the kernel is told what changed); the deadline is wider so a loaded machine cannot fail the test.
        var problems: [String] = []
        let shown = eventually(within: 10) {
            problems = []
            let files = harness.mountedFiles()
            let byID = (try? harness.mountedFilesByPhotoID()) ?? [:]
            if files.contains(where: { $0.inode == deletedInode }) { problems.append("the deleted photo is still listed") }
            if byID[deleted] != nil { problems.append("the deleted photo is still in the catalog's tree") }
            let retitledNames = byID[retitled]?.map(\.name) ?? []
            if retitledNames.count != 4 || !retitledNames.allSatisfy({ $0.contains(newTitle) }) {
                problems.append("the new title is not on every name: \(retitledNames)")
            }
            if files.contains(where: { $0.name.contains(oldTitle) }) { problems.append("the old title \(oldTitle) is still shown") }
            let addedFiles = byID[added.id] ?? []
            if addedFiles.map(\.tree).sorted() != ["albums", "events", "moments", "regions"] || !addedFiles.allSatisfy({ $0.links == 4 }) {
                problems.append("the added photo: \(addedFiles)")
            }
            // Read before, so also in /recent: two albums, /events, /moments, /regions, /recent.
            let replacedFiles = byID[replaced] ?? []
            if replacedFiles.map(\.tree).sorted() != ["albums", "albums", "events", "moments", "recent", "regions"]
                || !replacedFiles.allSatisfy({ $0.size == Int64(newBytes.data.count) }) {
                problems.append("the replaced photo (\(newBytes.data.count) bytes now): \(replacedFiles)")
            }
            let albums = harness.directoryOrder("albums")
            if !albums.contains("Harbour mornings") || albums.contains("Harbour walks") { problems.append("albums: \(albums)") }
            let members = harness.directoryOrder("albums/Harbour mornings").map {
                (try? harness.photoID(at: "albums/Harbour mornings/" + $0)).flatMap { $0 } ?? $0
            }
            if members != [publicInHarbour[1], replaced, added.id] { problems.append("Harbour mornings holds \(members)") }
            return problems.isEmpty
        }
        XCTAssertTrue(shown, "not shown within 2 s (\(String(format: "%.1f", Date().timeIntervalSince(importDone))) s): \(problems)")

        // The replaced photo reads back as the origin's new bytes, though its old ones were cached.
        let replacedFile = try XCTUnwrap(try harness.mountedFilesByPhotoID()[replaced]?.first)
        XCTAssertTrue(try harness.sameBytes(replacedFile.path, as: newBytes.data), "\(replacedFile.path) is not the new version")
        XCTAssertTrue(try harness.sameBytes(try XCTUnwrap(try harness.mountedFilesByPhotoID()[added.id]?.first).path, as: image.data))
        // The deleted photo's cached bytes, and the replaced photo's old ones, are gone from the cache directory.
        XCTAssertTrue(eventually(within: 5) {
            !FileManager.default.fileExists(atPath: harness.cacheDirectory + "/originals/" + deletedCacheFile)
                && !FileManager.default.fileExists(atPath: harness.cacheDirectory + "/originals/" + replacedCacheFile)
        }, "still cached: \(harness.cachedOriginals(of: deleted)) \(harness.cachedOriginals(of: replaced))")
        XCTAssertEqual(harness.cachedOriginals(of: deleted), [])
    }
}
