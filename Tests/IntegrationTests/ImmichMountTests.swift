// Immich end to end with the built binary (issue 20's acceptance): login (wrong key, then the right one from a
// file), import, a mount whose moments, regions, albums, people and favourites hold the right photos with the
// server's bytes and one inode each, thumbnails and --size variants from Immich's renditions with no original
// fetched, edits shown live after the next (incremental) import, and the key nowhere.
import FlickrOrigin
import Foundation
import ImmichOrigin
import PhotoCatalog
import PhotoContent
import XCTest

final class ImmichMountTests: XCTestCase {
    static let key = "immich-it-key-4c2a9e7b1f"
    var harness: MountHarness!
    var origin: ImmichOriginServer!
    var configHome: String { harness.root.appendingPathComponent("config").path }
    var environment: [String: String] { ["XDG_CONFIG_HOME": configHome, "PHOTOFS_IMMICH_API_KEY": ""] }

    override func setUpWithError() throws {
        harness = try MountHarness(library: DemoLibrary.make(count: 1, scale: 16))
    }

    /// The Immich-format server of a test: `scale` divides the generated images' sizes (640×480 and the like).
    func startOrigin(count: Int = 30, scale: Int = 8) throws {
        origin = ImmichOriginServer(library: .generated(count: count, scale: scale), keys: [ImmichMountTests.key: ["all"]])
        try origin.start()
    }

    /// Login with the right key from a file, then an import: what every test here starts from.
    func loginAndImport() throws {
        let login = harness.photofs(["login", "immich", "--server", origin.baseURL, "--api-key-file", try keyFile(ImmichMountTests.key)],
                                    environment: environment)
        XCTAssertEqual(login.status, 0, login.stderr)
        let imported = harness.photofs(["import", "immich", harness.library], environment: environment)
        XCTAssertEqual(imported.status, 0, imported.stderr)
    }

    /// Photo ids of the files under a directory of the mount (through their inodes); a name gone between the
    /// listing and its stat (the mount changing under the test) is left out.
    func photoIDs(under relative: String) -> [String] {
        harness.files(under: relative).compactMap { path in
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            return try? harness.photoID(ofInode: UInt64(info.st_ino))
        }
    }

    override func tearDown() {
        harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0)
        origin?.stop()
    }

    func keyFile(_ key: String) throws -> String {
        let path = harness.root.appendingPathComponent("key-\(key.count)").path
        try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    var visible: [ImmichOriginAsset] { origin.current.assets.filter { $0.type == "IMAGE" && !$0.isTrashed && $0.visibility != "locked" } }

    func testLoginImportMountBytesAndEdits() throws {
        try startOrigin()
        // A wrong key: the server's message, and nothing stored.
        let wrong = harness.photofs(["login", "immich", "--server", origin.baseURL, "--api-key-file", try keyFile("wrong-key-00000")],
                                    environment: environment)
        XCTAssertNotEqual(wrong.status, 0)
        XCTAssertTrue(wrong.stderr.contains("Invalid API key"), wrong.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: configHome + "/photofs/immich-accounts.json"))

        let login = harness.photofs(["login", "immich", "--server", origin.baseURL, "--api-key-file", try keyFile(ImmichMountTests.key)],
                                    environment: environment)
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertTrue(login.text.contains("Ada Lovelace"), login.text)
        let accounts = harness.photofs(["accounts"], environment: environment)
        XCTAssertTrue(accounts.text.contains("immich"), accounts.text)

        let imported = harness.photofs(["import", "immich", harness.library], environment: environment)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.text.contains("video(s) left out"), imported.text)

        try harness.mount(environment: environment)
        // Every visible photo once under /moments, named by its local time.
        let moments = harness.files(under: "moments")
        XCTAssertEqual(moments.count, visible.count, moments.joined(separator: "\n"))
        let inodes = Set(moments.map(harness.inode(of:)))
        XCTAssertEqual(inodes.count, visible.count, "one inode per asset")
        for asset in visible {
            let stamp = ImmichMountTests.stamp(asset.localTime)
            let name = try XCTUnwrap(moments.first { URL(fileURLWithPath: $0).lastPathComponent.hasPrefix(stamp)
                && (try? harness.photoID(ofInode: harness.inode(of: $0))) == asset.id }, "\(asset.id) at \(stamp)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: name)), asset.bytes, "bytes equal the server's original")
        }
        // Regions: state, else country; the same inodes.
        let regionFiles = harness.files(under: "regions")
        XCTAssertEqual(Set(regionFiles.map(harness.inode(of:))), inodes)
        XCTAssertTrue(regionFiles.contains { $0.contains("/regions/California/Ada Lovelace/") }, regionFiles.joined(separator: "\n"))
        XCTAssertTrue(regionFiles.contains { $0.contains("/regions/Iceland/") })
        // Albums with odd and duplicate names, members as on the server.
        let albumFiles = harness.files(under: "albums")
        XCTAssertEqual(albumFiles.count, origin.current.albums.reduce(0) { $0 + $1.assetIDs.count }, albumFiles.joined(separator: "\n"))
        // Favourites and named people (two called "Ada": both shown, by distinct names).
        XCTAssertEqual(Set(photoIDs(under: "favorites")), Set(visible.filter(\.isFavorite).map(\.id)))
        let named = origin.current.people.filter { !$0.name.isEmpty && !$0.isHidden }
        let expectedPeople = named.map { person in Set(visible.filter { $0.personIDs.contains(person.id) }.map(\.id)) }.filter { !$0.isEmpty }
        let personDirectories = (try? FileManager.default.contentsOfDirectory(atPath: harness.path("people"))) ?? []
        XCTAssertEqual(personDirectories.count, expectedPeople.count, "\(personDirectories)")
        XCTAssertTrue(personDirectories.contains("Ada") && personDirectories.contains { $0.hasPrefix("Ada (") }, "\(personDirectories)")
        XCTAssertEqual(Set(personDirectories.map { Set(photoIDs(under: "people/" + $0)) }), Set(expectedPeople))
        // One inode per asset across every tree; its link count is its number of names. The reads above put
        // photos in /recent as their opens are written (a moment later): polled until the two agree.
        func namesPerInode() -> [UInt64: Int] {
            var names: [UInt64: Int] = [:]
            for file in harness.files() {
                var info = stat()
                if lstat(file, &info) == 0 { names[UInt64(info.st_ino), default: 0] += 1 }
            }
            return names
        }
        XCTAssertEqual(Set(namesPerInode().keys), inodes, "no tree shows a photo /moments does not, nor under another inode")
        var mismatched: [String] = []
        XCTAssertTrue(eventually(within: 5) {
            let names = namesPerInode()
            mismatched = harness.files(under: "favorites") + harness.files(under: "people")
            mismatched.removeAll { file in
                var info = stat()
                return lstat(file, &info) == 0 && Int(info.st_nlink) == names[UInt64(info.st_ino)]
            }
            return mismatched.isEmpty
        }, "link counts that are not the number of names: \(mismatched)")

        // Edits on the server (deleted for good, trashed, changed bytes, added, favourite and album changes), then an
        // import: it lists changes with updatedAfter, fetches no original, and the live mount shows them within 2 s.
        let mine = visible.filter { $0.ownerID == origin.current.owner.id }
        let purged = mine[0]
        origin.purge(purged.id)
        let trashed = mine[2]
        origin.edit(trashed.id) { $0.isTrashed = true }
        let changed = mine[1]
        let newBytes = DemoLibrary.renderImage(width: 30, height: 20, png: false, seed: 7).data
        origin.edit(changed.id) { $0.bytes = newBytes }
        let unfavoured = try XCTUnwrap(mine.first { $0.isFavorite && $0.id != changed.id })
        origin.edit(unfavoured.id) { $0.isFavorite = false }
        var added = mine[3]
        added.id = "11111111-2222-4333-8444-555555555555"
        added.isFavorite = true
        added.bytes = DemoLibrary.renderImage(width: 24, height: 18, png: false, seed: 11).data
        origin.add(added)
        let album = try XCTUnwrap(origin.current.albums.first { $0.name == "Summer/Winter 2023" })
        origin.editAlbum(album.id) { $0.assetIDs.append(added.id) }
        let albumDirectory = "albums/Summer／Winter 2023"
        XCTAssertFalse(photoIDs(under: albumDirectory).contains(added.id))
        origin.resetCounters()
        let again = harness.photofs(["import", "immich", harness.library], environment: environment)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original"), 0)
        XCTAssertTrue(origin.searchRequests.first?.contains("updatedAfter") == true, "\(origin.searchRequests)")
        let expected = Set(visible.map(\.id))
        XCTAssertFalse(expected.contains(trashed.id) || expected.contains(purged.id))
        XCTAssertTrue(expected.contains(added.id))
        // The mount sees a catalog change within its 1 s poll and tells the kernel what changed: within 2 s on a
        // quiet machine. The deadline is wider so a loaded machine cannot fail the test; the figure is
        // the poll's and the timeouts', not this test's.
        XCTAssertTrue(eventually(within: 10) { Set(photoIDs(under: "moments")) == expected }, "deletions and the addition")
        XCTAssertTrue(eventually(within: 10) { Set(photoIDs(under: "favorites")) == Set(visible.filter(\.isFavorite).map(\.id)) },
                      "the favourite changes")
        XCTAssertTrue(eventually(within: 10) { photoIDs(under: albumDirectory).contains(added.id) }, "the album change")
        let changedFile = try XCTUnwrap(harness.files(under: "moments").first { (try? harness.photoID(ofInode: harness.inode(of: $0))) == changed.id })
        XCTAssertTrue(eventually(within: 10) { (try? Data(contentsOf: URL(fileURLWithPath: changedFile))) == newBytes }, "the new bytes")
        let addedFile = try XCTUnwrap(harness.files(under: "moments").first { (try? harness.photoID(ofInode: harness.inode(of: $0))) == added.id })
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: addedFile)), added.bytes)
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original"), 2, "the changed and the added photo, when read")

        // Nothing changed: one listing request, no original.
        origin.resetCounters()
        let unchanged = harness.photofs(["import", "immich", harness.library], environment: environment)
        XCTAssertEqual(unchanged.status, 0, unchanged.stderr)
        XCTAssertEqual(origin.count("POST /api/search/metadata"), 1, "\(origin.searchRequests)")
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original"), 0)

        // The key: in no URL the server saw, no output, no log, no library file, no process list.
        XCTAssertFalse(origin.targets.contains { $0.contains(ImmichMountTests.key) })
        XCTAssertTrue(origin.headersSeen.contains { $0["x-api-key"] == ImmichMountTests.key })
        for text in [login.text, login.stderr, imported.text, imported.stderr, again.text, again.stderr, harness.daemonLog, accounts.text] {
            XCTAssertFalse(text.contains(ImmichMountTests.key), text)
        }
        for suffix in ["", "-wal"] {
            let data = (try? Data(contentsOf: URL(fileURLWithPath: harness.library + suffix))) ?? Data()
            XCTAssertNil(data.range(of: Data(ImmichMountTests.key.utf8)), "library\(suffix)")
        }
        let processes = Shell.run("ps", ["-eo", "args"]).text
        XCTAssertFalse(processes.contains(ImmichMountTests.key))
    }

    /// Acceptance 3: a file manager's listing writes every photo's thumbnails from Immich's renditions (the WebP
    /// thumbnail where it is big enough) and fetches no original; a --size mount renders from them too.
    func testThumbnailsAndSizedMountsComeFromImmichsRenditionsNeverTheOriginal() throws {
        // Half-size images: 320×240 and the like, so the WebP thumbnail (short side 250, never enlarged) is
        // the whole image, long side ≥ 256: what a 256 px thumbnail is made from.
        try startOrigin(count: 12, scale: 2)
        try loginAndImport()
        harness.desktopThumbnails = true
        try harness.mount(extra: ["-o", "thumbnail_listers=ls"], environment: environment)
        origin.resetCounters()
        let store = DesktopThumbnailStore(root: URL(fileURLWithPath: harness.xdgCacheHome).appendingPathComponent("thumbnails"))
        let years = try FileManager.default.contentsOfDirectory(atPath: harness.path("moments")).sorted()
        XCTAssertFalse(years.isEmpty)
        var listed: [String] = []
        for year in years {
            let result = Shell.run("ls", ["-1", harness.path("moments/" + year)])
            XCTAssertEqual(result.status, 0, result.stderr)
            listed += result.text.split(separator: "\n").map { harness.path("moments/\(year)/\($0)") }
        }
        XCTAssertEqual(listed.count, visible.count)
        for path in listed {
            let large = store.fileURL(forURI: FileURI.glib(path: path), size: .large).path
            XCTAssertTrue(eventually(within: 20) { FileManager.default.fileExists(atPath: large) }, "no thumbnail for \(path)")
        }
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original"), 0, "no original fetched for thumbnails")
        XCTAssertGreaterThanOrEqual(origin.count("GET /api/assets/{id}/thumbnail"), visible.count)
        XCTAssertTrue(origin.targets.contains { $0.contains("size=thumbnail") }, "the WebP thumbnail is used: \(origin.targets)")
        XCTAssertEqual(harness.unmount(), 0)
        XCTAssertFalse(harness.isMounted)

        // A --size mount: every file at most 200 px, a JPEG's rendered from a rendition with no original fetched.
        // A PNG original is its own source, as for Flickr: Immich's renditions are flattened (no alpha).
        harness.desktopThumbnails = false
        origin.resetCounters()
        try harness.mount(extra: ["--size", "200"], environment: environment)
        let sized = harness.files(under: "moments")
        XCTAssertEqual(sized.count, visible.count)
        for file in sized {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            let size: (width: Int, height: Int)
            if file.hasSuffix(".png") {
                let header = try ImageCodec.pngHeader(bytes)
                size = (header.width, header.height)
            } else {
                size = try ImageCodec.jpegSize(bytes)
            }
            XCTAssertLessThanOrEqual(max(size.width, size.height), 200, file)
        }
        // The original only where no rendition is big enough: a PNG, or a photo under 200 px (its renditions are
        // never enlarged).
        let ownSources = visible.filter { $0.mimeType == "image/png" || max($0.width, $0.height) < 200 }.count
        XCTAssertGreaterThan(ownSources, 0)
        XCTAssertLessThan(ownSources, visible.count / 2)
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original"), ownSources, "originals of PNGs and small photos only")
        XCTAssertTrue(origin.targets.contains { $0.contains("size=thumbnail") })
    }

    /// A photo purged for good while a video and an image the import cannot use were added: Immich's count of
    /// images is unchanged (one gone, one unusable come), so the count alone would skip the id listing and keep
    /// the photo. The record left out in the changes listing makes the import list the ids; the photo leaves
    /// the live mount.
    func testAPurgeBesideAddedAssetsTheImportLeavesOutLeavesTheMount() throws {
        try startOrigin(count: 20)
        try loginAndImport()
        try harness.mount(environment: environment)
        XCTAssertEqual(Set(photoIDs(under: "moments")), Set(visible.map(\.id)))

        let mine = visible.filter { $0.ownerID == origin.current.owner.id }
        let purged = mine[0]
        origin.purge(purged.id)
        var video = mine[1]
        video.id = "33333333-4444-4555-8666-777777777777"
        video.type = "VIDEO"
        video.mimeType = "video/mp4"
        origin.add(video)
        var unusable = mine[2]
        unusable.id = "33333333-4444-4555-8666-888888888888"
        unusable.mimeType = "application/x-nonsense"
        origin.add(unusable)
        origin.resetCounters()
        let again = harness.photofs(["import", "immich", harness.library], environment: environment)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(origin.count("GET /api/assets/statistics"), 1)
        XCTAssertGreaterThanOrEqual(origin.count("POST /api/search/metadata"), 2, "the changes and the id listing: \(origin.searchRequests)")
        let expected = Set(visible.filter { $0.mimeType != "application/x-nonsense" }.map(\.id))
        XCTAssertFalse(expected.contains(purged.id))
        XCTAssertTrue(eventually(within: 10) { Set(photoIDs(under: "moments")) == expected }, "the purged photo leaves the mount")
    }

    /// "2024-07-14 09.30.12", the moment prefix of a name.
    static func stamp(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH.mm.ss"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
