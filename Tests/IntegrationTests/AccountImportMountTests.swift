// Issue 9, acceptance 2: `photofs import flickr LIB --user me` brings every photo of the signed-in account
// (private, friends and family ones too; videos left out) and its albums; /albums lists each
// album's photos in its order; a photo is one inode in every tree with one link per name; private photos are
// 0400 and directories of nothing else 0500; the bytes read through the mount are the origin's.
import FlickrOrigin
import Foundation
import XCTest

final class AccountImportMountTests: XCTestCase {
    var harness: MountHarness!

    override func setUpWithError() throws {
        // 60 demo photos: the account owns 5 public ones, plus 4 that are not public and 2 videos.
        harness = try MountHarness(library: DemoLibrary.account(count: 60, scale: 8))
        try harness.signIn()
    }

    override func tearDown() { harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    func testImportMeBringsEveryPhotoAndAlbumAsOneInodePerPhoto() throws {
        let origin = harness.origin
        let imported = harness.importAccount()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let expected = DemoLibrary.stream(of: origin)
        XCTAssertEqual(expected.count, 9)
        XCTAssertEqual(expected.filter { !$0.isPublic }.count, 4, "the fixture has private, friends and family photos")
        XCTAssertTrue(imported.text.contains("imported 9 photos"), imported.text)
        // Videos: counted in the summary (people.getPhotos lists them whatever media asks) and left out of every
        // tree (below).
        XCTAssertTrue(imported.text.contains("2 video(s) left out"), imported.text)
        XCTAssertTrue(imported.text.contains("albums: 4 new"), imported.text)
        try harness.mount()

        // Every photo of the account, and nothing else, in each of the trees that holds every photo.
        let byID = try harness.mountedFilesByPhotoID()
        XCTAssertEqual(Set(byID.keys), Set(expected.map(\.id)), "every photo, private ones too; no video")
        // Albums in their member order, photos only (the video of "Harbour walks" is left out), empty albums hidden.
        let visibleAlbums = origin.albums.compactMap { album -> (String, [String])? in
            let members = album.photoIDs.filter { id in expected.contains { $0.id == id } }
            return members.isEmpty ? nil : (album.title, members)
        }
        XCTAssertEqual(Set(harness.directoryOrder("albums")), ["Harbour walks", "Family", "Trips: 2019\u{FF0F}2024"],
                       "one directory per album with photos, its title made a file name (a slash is U+FF0F)")
        var albumCount: [String: Int] = [:]
        for (title, members) in visibleAlbums {
            let directory = "albums/" + title.replacingOccurrences(of: "/", with: "\u{FF0F}")
            let listed = try harness.directoryOrder(directory).map { name -> String in
                try XCTUnwrap(try harness.photoID(at: directory + "/" + name), name)
            }
            XCTAssertEqual(listed, members, "\(title): the album's photos in its order")
            for id in members { albumCount[id, default: 0] += 1 }
        }
        XCTAssertEqual(albumCount.values.reduce(0, +), 4 + 3 + 4, "Harbour walks: 3 public and The party; Family: 3; Trips: 4 public")

        for photo in expected {
            let files = try XCTUnwrap(byID[photo.id], photo.title)
            let albums = albumCount[photo.id] ?? 0
            XCTAssertEqual(Set(files.map(\.inode)).count, 1, "\(photo.title): one inode in every tree: \(files)")
            XCTAssertEqual(files.map(\.tree).sorted(),
                           (["events", "moments", "regions"] + Array(repeating: "albums", count: albums)).sorted(),
                           "\(photo.title): one name in /regions, one in /moments, one in /events, one per album")
            for file in files {
                XCTAssertEqual(file.links, 3 + albums, "\(file.path): st_nlink = 3 + albums")
                XCTAssertEqual(file.mode, photo.isPublic ? 0o444 : 0o400, "\(file.path) (public: \(photo.isPublic))")
                XCTAssertEqual(file.size, Int64(photo.image.data.count), file.path)
            }
            // The bytes through the mount are the origin's original.
            XCTAssertTrue(try harness.sameBytes(files[0].path, as: photo.image.data), "\(files[0].path) differs from the origin")
        }

        // /recent after a read: the same inode, one more link everywhere.
        let party = try XCTUnwrap(expected.first { $0.title == "The party" })
        let partyFiles = try XCTUnwrap(byID[party.id])
        XCTAssertTrue(eventually(within: 5) {
            (try? harness.mountedFilesByPhotoID(under: "recent")[party.id]?.count) == 1
        }, "the photo read (by `cmp`) shows in /recent")
        let recent = try XCTUnwrap(try harness.mountedFilesByPhotoID(under: "recent").first { $0.key == party.id }?.value.first)
        XCTAssertEqual(recent.inode, partyFiles[0].inode)
        XCTAssertTrue(eventually(within: 5) {
            harness.mountedFiles().filter { $0.inode == recent.inode }.allSatisfy { $0.links == 3 + 1 + 1 }
        }, "The party: 3 + 1 album + 1 in /recent: \(harness.mountedFiles().filter { $0.inode == recent.inode })")

        // Directories: 0500 when they hold only photos that are not public, 0555 otherwise. /people and /favorites
        // (Immich's) are there, empty, for a Flickr library.
        XCTAssertEqual(mode("albums/Family"), 0o500, "Family holds only private, friends and family photos")
        XCTAssertEqual(mode("albums/Harbour walks"), 0o555)
        for empty in ["people", "favorites"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: harness.path(empty)), [])
            XCTAssertEqual(mode(empty), 0o555)
        }
        for directory in Shell.run("find", [harness.mountpoint, "-mindepth", "1", "-type", "d", "-not", "-path", "*/recent*",
                                            "-not", "-path", "*/search*", "-not", "-path", "*/people",
                                            "-not", "-path", "*/favorites"])
            .text.split(separator: "\n").map(String.init) {
            let inside = harness.mountedFiles(under: String(directory.dropFirst(harness.mountpoint.count + 1)))
            XCTAssertFalse(inside.isEmpty, "no empty directory shown: \(directory)")
            let onlyPrivate = inside.allSatisfy { $0.mode == 0o400 }
            XCTAssertEqual(mode(String(directory.dropFirst(harness.mountpoint.count + 1))), onlyPrivate ? 0o500 : 0o555, directory)
        }

        // `photofs status` names the account, its last sync and the counts.
        let status = harness.photofs(["status", harness.library])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.text.contains("follows: flickr account ansel (10000001@N01)"), status.text)
        XCTAssertTrue(status.text.range(of: #"last synced: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ s ago\)"#,
                                        options: .regularExpression) != nil, status.text)
        XCTAssertTrue(status.text.contains("photos: 9 shown (4 private)"), status.text)
        XCTAssertTrue(status.text.contains("albums: 3"), status.text)
        XCTAssertTrue(status.text.contains("videos left out: 2"), status.text)
        XCTAssertFalse(status.text.contains("interrupted"), status.text)
    }

    func mode(_ relative: String) -> Int {
        Int(Shell.run("stat", ["-c", "%a", harness.path(relative)]).text.trimmingCharacters(in: .whitespacesAndNewlines), radix: 8) ?? -1
    }
}
