// Issue 10, acceptance 1, 2 and 4 (thumbnails): a folder listed by a thumbnail lister gets freedesktop thumbnails that
// GLib's own `gio info` finds valid, in every tree and for hostile names, made from small renditions with no
// request for an original; they follow a photo's replacement, renaming and deletion at the origin. Issue 18:
// listings by anyone else (ls, du, find, scripts, rsync) fetch and write nothing.
import FlickrOrigin
import Foundation
import PhotoCatalog
import PhotoContent
import TestRequirements
import XCTest

final class DesktopThumbnailMountTests: XCTestCase {
    var harness: MountHarness!

    override func tearDown() { harness?.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    /// These tests list folders with ls(1), which gets no thumbnails by default (only file managers and
    /// thumbnailers do, see FileManagerMountTests for pcmanfm): the mount adds it to the thumbnail listers.
    static let lsDrawsThumbnails = ["-o", "thumbnail_listers=ls"]

    var store: DesktopThumbnailStore {
        DesktopThumbnailStore(root: URL(fileURLWithPath: harness.xdgCacheHome).appendingPathComponent("thumbnails"))
    }

    /// What GLib says of a file's thumbnail: its path and whether it is valid for the file now.
    func gioThumbnail(_ path: String) -> (path: String?, valid: Bool) {
        let result = Shell.run("gio", ["info", "-a", "thumbnail::path,thumbnail::is-valid", path],
                               environment: ["XDG_CACHE_HOME": harness.xdgCacheHome, "HOME": harness.root.path])
        var thumbnail: String?, valid = false
        for line in result.text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("thumbnail::path: ") { thumbnail = String(trimmed.dropFirst("thumbnail::path: ".count)) }
            if trimmed == "thumbnail::is-valid: TRUE" { valid = true }
        }
        return (thumbnail, valid)
    }

    /// The files of a directory of the mount, as ls(1) lists them (one listing, as a person would).
    func listed(_ relative: String) -> [String] {
        let result = Shell.run("ls", ["-1A", "--zero", harness.path(relative)])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Directories holding photos, in every tree.
    func photoDirectories() -> [String] {
        let result = Shell.run("find", [harness.mountpoint, "-mindepth", "2", "-type", "d", "-printf", "%P\\n"])
        return result.text.split(separator: "\n").map(String.init).filter { directory in
            let depth = directory.split(separator: "/").count
            return (!directory.hasPrefix("regions/") && !directory.hasPrefix("events/")) || depth == 3
        }.sorted()
    }

    /// GETs the origin answered for photos' originals (the catalog's original URLs).
    func originalRequests() throws -> Int {
        let catalog = try harness.catalog()
        return try catalog.allPhotos().reduce(0) { count, photo in
            count + harness.origin.requestCount(method: "GET", path: URL(string: photo.originalURL)?.path ?? "")
        }
    }

    func testEveryListedFileHasAThumbnailGLibFindsValidWithoutAnyOriginalFetched() throws {
        try gioRequired()
        // 30 photos at full scale: the first 24 have the hostile titles the naming rules allow (spaces, `#`,
        // `%`, `?`, quotes, backslashes, RTL override, emoji, 300 × é, ...).
        harness = try MountHarness(library: DemoLibrary.make(count: 30, scale: 1))
        harness.desktopThumbnails = true
        XCTAssertEqual(harness.importLibrary().status, 0)
        try harness.mount(extra: Self.lsDrawsThumbnails)
        harness.origin.resetCounters()
        let directories = photoDirectories()
        XCTAssertGreaterThan(directories.count, 6, "moments and regions directories: \(directories)")
        var checked = 0
        for directory in directories {
            let names = listed(directory)
            for name in names {
                let path = harness.path(directory + "/" + name)
                XCTAssertTrue(eventually(within: 10) { gioThumbnail(path).valid }, "no valid thumbnail for \(path)")
                let (thumbnail, _) = gioThumbnail(path)
                let uri = FileURI.glib(path: path)
                XCTAssertEqual(thumbnail, store.fileURL(forURI: uri, size: .large).path, path)
                for size in [DesktopThumbnailSize.normal, .large] {
                    let data = try Data(contentsOf: store.fileURL(forURI: uri, size: size))
                    let text = PNGTextChunks.entries(in: data)
                    XCTAssertEqual(text["Thumb::URI"], uri)
                    var info = stat()
                    XCTAssertEqual(stat(path, &info), 0)
                    XCTAssertEqual(text["Thumb::MTime"], String(info.st_mtim.tv_sec))
                    XCTAssertEqual(text["Thumb::Size"], String(info.st_size))
                    let image = try ImageCodec.decodePNG(data)
                    XCTAssertLessThanOrEqual(max(image.width, image.height), size.edge)
                    XCTAssertEqual(stat(store.fileURL(forURI: uri, size: size).path, &info), 0)
                    XCTAssertEqual(info.st_mode & 0o777, 0o600, "thumbnail files are 0600")
                }
                checked += 1
            }
        }
        XCTAssertEqual(checked, 90, "each of the 30 photos in /moments, /regions and its event")
        var info = stat()
        XCTAssertEqual(stat(store.root.appendingPathComponent("large").path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700, "thumbnail directories are 0700")
        XCTAssertEqual(try originalRequests(), 0, "no original was fetched to make thumbnails")
        XCTAssertGreaterThan(harness.origin.requestCount(method: "GET"), 0, "renditions were fetched")
        XCTAssertEqual(listed("recent"), [], "/recent stays as it was")

        // A remount at the same place needs no network: the sources are kept in the library.
        XCTAssertEqual(harness.unmount(), 0)
        try FileManager.default.removeItem(atPath: store.root.path)
        try harness.mount(extra: Self.lsDrawsThumbnails)
        harness.origin.resetCounters()
        let directory = directories[0]
        for name in listed(directory) {
            let path = harness.path(directory + "/" + name)
            XCTAssertTrue(eventually(within: 10) { gioThumbnail(path).valid }, "no valid thumbnail for \(path) after a remount")
        }
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0, "a remount writes thumbnails from the library alone")
    }

    func testThumbnailsFollowReplacedRenamedAndDeletedPhotos() throws {
        try gioRequired()
        harness = try MountHarness(library: DemoLibrary.account(count: 36, scale: 1))
        harness.desktopThumbnails = true
        try harness.signIn()
        XCTAssertEqual(harness.importAccount().status, 0)
        try harness.mount(extra: Self.lsDrawsThumbnails)
        let origin = harness.origin
        let public_ = DemoLibrary.stream(of: origin).filter(\.isPublic)
        XCTAssertGreaterThanOrEqual(public_.count, 3)
        let (replaced, renamed, deleted) = (public_[0].id, public_[1].id, public_[2].id)

        // Every tree's files, listed once, get thumbnails.
        var pathsByPhoto: [String: [String]] = [:]
        for file in harness.mountedFiles() where [replaced, renamed, deleted].contains(try harness.photoID(ofInode: file.inode) ?? "") {
            pathsByPhoto[try harness.photoID(ofInode: file.inode) ?? "", default: []].append(harness.path(file.path))
        }
        for paths in pathsByPhoto.values {
            for path in paths {
                _ = listed(String(path.dropFirst(harness.mountpoint.count + 1)).split(separator: "/").dropLast().joined(separator: "/"))
                XCTAssertTrue(eventually(within: 10) { gioThumbnail(path).valid }, "no valid thumbnail for \(path)")
            }
        }
        let replacedPaths = try XCTUnwrap(pathsByPhoto[replaced])
        let oldPixels = try ImageCodec.decodePNG(Data(contentsOf: store.fileURL(forURI: FileURI.glib(path: replacedPaths[0]), size: .large))).pixels
        // An album listed (so it has thumbnails), to be renamed: its old folder's thumbnails must go.
        let album = try XCTUnwrap(origin.albums.first { album in album.photoIDs.contains { id in public_.contains { $0.id == id } } })
        let albumFolder = try XCTUnwrap(harness.mountedFiles(under: "albums").first { file in
            (try? harness.photoID(ofInode: file.inode)).flatMap { $0 }.map(album.photoIDs.contains) ?? false
        }).path.split(separator: "/").dropLast().joined(separator: "/")
        let albumPaths = listed(albumFolder).map { harness.path(albumFolder + "/" + $0) }
        for path in albumPaths { XCTAssertTrue(eventually(within: 10) { gioThumbnail(path).valid }, path) }

        XCTAssertTrue(origin.replacePhoto(photoID: replaced, with: DemoLibrary.renderImage(width: 500, height: 400, png: false, seed: 0xBEEF)))
        XCTAssertTrue(origin.setTitle(photoID: renamed, "Renamed at the origin"))
        XCTAssertTrue(origin.deletePhoto(deleted))
        XCTAssertTrue(origin.renameAlbum(album.id, title: "Renamed album"))
        let second = harness.importAccount()
        XCTAssertEqual(second.status, 0, second.stderr)

        // Deleted: no thumbnail left at any of its names, at any size.
        for path in try XCTUnwrap(pathsByPhoto[deleted]) {
            let uri = FileURI.glib(path: path)
            XCTAssertTrue(eventually(within: 10) {
                DesktopThumbnailSize.allCases.allSatisfy { !FileManager.default.fileExists(atPath: store.fileURL(forURI: uri, size: $0).path) }
            }, "the deleted photo's thumbnail is gone: \(path)")
        }
        // Renamed: the old names' thumbnails are gone.
        for path in try XCTUnwrap(pathsByPhoto[renamed]) {
            let uri = FileURI.glib(path: path)
            XCTAssertTrue(eventually(within: 10) { !FileManager.default.fileExists(atPath: store.fileURL(forURI: uri, size: .large).path) },
                          "the old name's thumbnail is gone: \(path)")
        }
        // Replaced: a new thumbnail, valid for the new file, with other pixels.
        // (Its names in the renamed album are gone with the album's old name: checked below.)
        for path in replacedPaths where !path.hasPrefix(harness.path(albumFolder) + "/") {
            XCTAssertTrue(eventually(within: 10) {
                let data = try? Data(contentsOf: store.fileURL(forURI: FileURI.glib(path: path), size: .large))
                return gioThumbnail(path).valid && data.flatMap { try? ImageCodec.decodePNG($0).pixels }.map { $0 != oldPixels } == true
            }, "the replaced photo has a new thumbnail, of its new pixels: \(path)")
        }
        // The renamed album's old folder: no thumbnail left under any of its names.
        for path in albumPaths {
            let uri = FileURI.glib(path: path)
            XCTAssertTrue(eventually(within: 10) { !FileManager.default.fileExists(atPath: store.fileURL(forURI: uri, size: .large).path) },
                          "the renamed album's old thumbnails are gone: \(path)")
        }
        // The renamed photo under its new name, once its folder is listed.
        let newPath = try XCTUnwrap(harness.mountedFiles().first { $0.name == "Renamed at the origin.jpg" }).path
        _ = listed(newPath.split(separator: "/").dropLast().joined(separator: "/"))
        XCTAssertTrue(eventually(within: 10) { gioThumbnail(harness.path(newPath)).valid }, newPath)
    }

    func testThumbnailsCommandWritesAWholeMountAheadOfTime() throws {
        try gioRequired()
        harness = try MountHarness(library: DemoLibrary.make(count: 12, scale: 1))
        harness.desktopThumbnails = true
        XCTAssertEqual(harness.importLibrary().status, 0)
        let run = harness.photofs(["thumbnails", harness.library, harness.mountpoint, "--cache-dir", harness.cacheDirectory],
                                  environment: ["XDG_CACHE_HOME": harness.xdgCacheHome, "HOME": harness.root.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.text.contains("thumbnails of 36 file(s) below \(harness.mountpoint)"), run.text)
        try harness.mount()
        harness.origin.resetCounters()
        // No folder is listed (find(1) is a backup tool: its listings write nothing): every file already has one.
        let files = harness.files()
        XCTAssertEqual(files.count, 36, "12 photos in /moments, /regions and /events")
        for file in files { XCTAssertTrue(gioThumbnail(file).valid, file) }
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0)
    }

    /// Issue 18, acceptance 1: with the default options, shells, coreutils, scripts and backups walking the
    /// whole tree cause no image request and no thumbnail file; only their listings were asked for.
    func testListingsByProgramsThatDrawNoThumbnailsFetchAndWriteNothing() throws {
        harness = try MountHarness(library: DemoLibrary.make(count: 30, scale: 1))
        harness.desktopThumbnails = true // photofs's default
        XCTAssertEqual(harness.importLibrary().status, 0)
        try harness.mount()
        harness.origin.resetCounters()
        let walks: [(String, [String])] = [
            ("ls", ["-lR", harness.mountpoint]),
            ("du", ["-s", harness.mountpoint]),
            ("find", [harness.mountpoint, "-type", "f"]),
            ("python3", ["-c", "import os, sys\nfor _ in os.walk(sys.argv[1]): pass", harness.mountpoint]),
            ("rsync", ["-a", "--list-only", harness.mountpoint + "/"]),
        ]
        for (command, arguments) in walks {
            let result = Shell.run(command, arguments)
            XCTAssertEqual(result.status, 0, "\(command): \(result.stderr)")
        }
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0, "no image request")
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.root.path), "no thumbnail directory, no file")
        // Every listing was decided at opendir, before its reply: none queued anything to write later.
        let log = harness.daemonLog
        XCTAssertTrue(log.contains("listing gets no desktop thumbnails"), "the daemon says why, at debug level")
        XCTAssertFalse(log.contains("desktop thumbnails before listing"), "no listing queued thumbnails")
        // Unmounting flushes whatever the daemon still had to do: still nothing.
        XCTAssertEqual(harness.unmount(), 0)
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.root.path))
    }

    func testOffWritesNoThumbnails() throws {
        harness = try MountHarness(library: DemoLibrary.make(count: 6, scale: 1))
        harness.desktopThumbnails = true // photofs's default; the -o below turns it off
        XCTAssertEqual(harness.importLibrary().status, 0)
        try harness.mount(extra: ["-o", "desktop_thumbnails=off"])
        for directory in photoDirectories() { _ = listed(directory) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.root.path), "no thumbnail directory")
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0)
    }

    /// GLib's own `gio info` checks the thumbnails as a file manager would.
    func gioRequired() throws {
        try TestRequirement.program("/usr/bin/gio", package: "libglib2.0-bin")
    }
}
