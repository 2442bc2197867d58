// Your own folders through a real mount: names from EXIF, regions from GPS, bytes read from the files, and
// identity across renames, edits, duplicates and deletions, in a library that also follows Flickr.
import FlickrOrigin
import Foundation
import PhotoContent
import XCTest

final class FolderMountTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 4, scale: 4) }
    override class var mountsInSetUp: Bool { false }

    var photos: String { harness.root.appendingPathComponent("photos").path }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(atPath: photos + "/2024 Japan", withIntermediateDirectories: true)
    }

    /// Skips without the tool (naming its Debian package), fails under CI=true.
    func require(_ program: String, package: String) throws {
        guard Shell.run("/bin/sh", ["-c", "command -v \(program)"]).status != 0 else { return }
        let message = "\(program) is missing: install Debian's \(package)"
        if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail(message); throw HarnessError(message) }
        throw XCTSkip(message)
    }

    func photo(_ name: String, seed: UInt8, tags: [String]) throws -> String {
        let path = photos + "/" + name
        var pixels = [UInt8](repeating: 0, count: 120 * 80 * 3)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: index &* Int(seed + 1) / 7) }
        try ImageCodec.encodeJPEG(PixelImage(width: 120, height: 80, channels: 3, pixels: pixels), quality: 85)
            .write(to: URL(fileURLWithPath: path))
        if !tags.isEmpty {
            let result = Shell.run("exiftool", ["-q", "-overwrite_original", "-m"] + tags + [path])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        return path
    }

    func importFolder() -> CommandResult {
        let result = harness.photofs(["import", "folder", harness.library, photos])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result
    }

    /// On a terminal the import draws a progress bar with "\r" and no newline: a warning about a corrupt file
    /// continued the bar's line ("read 4/42026-11-28T00:40:22 warning …"). Run under a pseudo-terminal
    /// (`script`), every warning starts a line of its own: what is left of its line after the last "clear the
    /// line" is the warning alone.
    func testWarningsOnATerminalArePrintedAboveTheProgressBar() throws {
        try require("script", package: "bsdutils")
        _ = try photo("IMG_20220102_030405.jpg", seed: 1, tags: [])
        _ = try photo("IMG_20220102_030406.jpg", seed: 2, tags: [])
        for name in ["broken1.jpg", "broken2.jpg"] {
            try Data([0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x08, 0x45, 0x78]).write(to: URL(fileURLWithPath: photos + "/" + name))
        }
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = [MountHarness.binary, "import", "folder", harness.library, photos].map(quoted).joined(separator: " ")
        let result = Shell.run("script", ["-qec", command, "/dev/null"], environment: ["XDG_CACHE_HOME": harness.xdgCacheHome])
        XCTAssertEqual(result.status, 0, result.text + result.stderr)
        // The terminal ends each line with "\r\n" (one Character for Swift: split at it, not at "\n").
        let output = result.text.replacingOccurrences(of: "\r\n", with: "\n")
        XCTAssertTrue(output.contains("\r\u{1B}[Kwalk "), "no progress bar on the terminal: \(output.debugDescription)")
        let warnings = output.components(separatedBy: "\n").filter { $0.contains("image skipped") }
        XCTAssertEqual(warnings.count, 2, output.debugDescription)
        for line in warnings {
            let visible = line.components(separatedBy: "\r\u{1B}[K").last ?? line
            XCTAssertNotNil(visible.range(of: #"^\d{4}-\d{2}-\d{2}T"#, options: .regularExpression),
                            "a warning shares its line with the bar: \(line.debugDescription)")
        }
    }

    /// A mount of the library inside an imported folder (`~/Photos` mounted, then `~` imported) is not walked:
    /// its photos came back as duplicates of themselves read through FUSE, a deleted photo lived on through its
    /// copies there, and the mount's /recent fed each import new "files".
    func testAPhotofsMountInsideAnImportedFolderIsNotWalked() throws {
        _ = try photo("IMG_20220102_030405.jpg", seed: 1, tags: [])
        _ = try photo("IMG_20220102_030406.jpg", seed: 2, tags: [])
        XCTAssertTrue(importFolder().text.contains("2 new"))
        let inner = photos + "/Library"
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: true)
        let mounted = harness.photofs(["mount", harness.library, inner, "--cache-dir", harness.root.appendingPathComponent("inner-cache").path])
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        defer { _ = Shell.run("fusermount3", ["-u", inner]) }
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: inner + "/moments").isEmpty, "the mount is live")
        let again = importFolder()
        XCTAssertTrue(again.stderr.contains("folder skipped: \(inner): a photofs mount"), again.stderr)
        XCTAssertTrue(again.text.contains("2 image file(s)"), again.text)
        XCTAssertFalse(again.text.contains("duplicate"), again.text)
        let inside = harness.photofs(["import", "folder", harness.library, inner + "/moments"])
        XCTAssertTrue(inside.stderr.contains("folder not imported: \(inner)/moments: a photofs mount"), inside.stderr)
        XCTAssertNotEqual(inside.status, 0, "nothing to import: a failure, as for a folder that is not there")
        XCTAssertTrue(inside.stderr.contains("none of the folders can be imported"), inside.stderr)
        // A photo deleted from the folder leaves the library (no copy in the mount keeps it).
        try FileManager.default.removeItem(atPath: photos + "/IMG_20220102_030406.jpg")
        _ = importFolder()
        XCTAssertEqual(try harness.catalog().allPhotos().filter { $0.id.hasPrefix("file-") }.count, 1)
    }

    /// A root deleted for good is kept as it was (it may be a disk not plugged in) until it is forgotten:
    /// `--forget` removes the photos only it held, the library stops listing it, and other folders are untouched.
    func testAFolderThatIsGoneIsForgottenOnlyWhenAsked() throws {
        _ = try photo("IMG_20220102_030405.jpg", seed: 1, tags: [])
        let downloads = harness.root.appendingPathComponent("Downloads").path
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        let kept = try photo("IMG_20220102_030406.jpg", seed: 2, tags: [])
        try FileManager.default.copyItem(atPath: kept, toPath: downloads + "/copy of kept.jpg")
        try Data(try Data(contentsOf: URL(fileURLWithPath: kept)).reversed()).write(to: URL(fileURLWithPath: downloads + "/not a photo.jpg"))
        _ = try photo("IMG_20220102_030407.jpg", seed: 3, tags: [])
        try FileManager.default.moveItem(atPath: photos + "/IMG_20220102_030407.jpg", toPath: downloads + "/IMG_20220102_030407.jpg")
        let first = harness.photofs(["import", "folder", harness.library, photos, downloads])
        XCTAssertEqual(first.status, 0, first.stderr)
        func folderPhotos() throws -> Int { try harness.catalog().allPhotos().filter { $0.id.hasPrefix("file-") }.count }
        XCTAssertEqual(try folderPhotos(), 3)

        try FileManager.default.removeItem(atPath: downloads)
        XCTAssertNotEqual(harness.photofs(["import", "folder", harness.library, downloads]).status, 0)
        XCTAssertEqual(try folderPhotos(), 3, "a folder that is not there keeps its photos")
        let stranger = harness.photofs(["import", "folder", "--forget", harness.library, photos + "/nothing"])
        XCTAssertNotEqual(stranger.status, 0)
        XCTAssertTrue(stranger.stderr.contains("the library does not follow"), stranger.stderr)

        let forgot = harness.photofs(["import", "folder", "--forget", harness.library, downloads])
        XCTAssertEqual(forgot.status, 0, forgot.stderr)
        XCTAssertTrue(forgot.text.contains("1 folder(s) forgotten: 1 photo(s) removed"), forgot.text)
        XCTAssertEqual(try folderPhotos(), 2, "the photo with a copy in the other folder stays")
        let status = harness.photofs(["status", harness.library])
        XCTAssertFalse(status.text.contains(downloads), status.text)
        XCTAssertTrue(status.text.contains("folder \(photos)"), status.text)
        XCTAssertTrue(harness.photofs(["import", "folder", harness.library, photos]).text.contains("nothing new"))

        // A folder inside a followed one is not followed on its own: its photos come with the one holding it
        // (following both, its files moved between the two at each import).
        let inner = photos + "/2024 Japan"
        let nested = harness.photofs(["import", "folder", harness.library, inner])
        XCTAssertNotEqual(nested.status, 0)
        XCTAssertTrue(nested.stderr.contains("\(inner) is inside \(photos), which this library follows"), nested.stderr)
        XCTAssertTrue(harness.photofs(["import", "folder", harness.library, photos, inner]).stderr.contains("is inside"))
        // Followed the other way round (the inner one first), neither is forgotten alone (the inner one took the
        // other's photos with it).
        XCTAssertEqual(harness.photofs(["import", "folder", "--forget", harness.library, photos]).status, 0)
        XCTAssertEqual(harness.photofs(["import", "folder", harness.library, inner]).status, 0)
        XCTAssertEqual(harness.photofs(["import", "folder", harness.library, photos]).status, 0)
        XCTAssertEqual(try folderPhotos(), 2)
        XCTAssertEqual(harness.photofs(["import", "folder", harness.library, inner, photos]).status, 0, "both followed: as before")
        let alone = harness.photofs(["import", "folder", "--forget", harness.library, inner])
        XCTAssertNotEqual(alone.status, 0)
        XCTAssertTrue(alone.stderr.contains("cannot be forgotten alone: the library also follows \(photos), which holds it"), alone.stderr)
        XCTAssertEqual(try folderPhotos(), 2)
        let both = harness.photofs(["import", "folder", "--forget", harness.library, inner, photos])
        XCTAssertEqual(both.status, 0, both.stderr)
        XCTAssertEqual(try folderPhotos(), 0)
    }

    /// A file named where a folder is expected: said so, and with nothing else to import the command fails.
    func testAFileNamedInsteadOfAFolderIsRefusedClearly() throws {
        let file = try photo("IMG_20220102_030405.jpg", seed: 1, tags: [])
        let result = harness.photofs(["import", "folder", harness.library, file])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("not a folder"), result.stderr)
        XCTAssertTrue(result.stderr.contains("none of the folders can be imported"), result.stderr)
        XCTAssertFalse(result.stderr.contains("No such file"), result.stderr)
        // Beside a folder, it is a warning and the folder imports.
        let both = harness.photofs(["import", "folder", harness.library, file, photos])
        XCTAssertEqual(both.status, 0, both.stderr)
        XCTAssertTrue(both.stderr.contains("not a folder"), both.stderr)
        XCTAssertTrue(both.text.contains("1 new"), both.text)
    }

    func testFoldersAndFlickrInOneMount() throws {
        try require("exiftool", package: "libimage-exiftool-perl")
        let tokyo = try photo("2024 Japan/DSC0001.jpg", seed: 1, tags: [
            "-DateTimeOriginal=2024:07:14 09:30:12", "-OffsetTimeOriginal=+09:00", "-GPSLatitude=35.6895",
            "-GPSLatitudeRef=N", "-GPSLongitude=139.6917", "-GPSLongitudeRef=E", "-Artist=Ada Lovelace",
            "-ImageDescription=Shinjuku",
        ])
        let sydney = try photo("P1010001.JPG", seed: 2, tags: [
            "-DateTimeOriginal=2023:12:31 23:59:59", "-Make=OLYMPUS IMAGING CORP.", "-Model=E-M10",
            "-ImageDescription=OLYMPUS DIGITAL CAMERA", "-GPSLatitude=33.8688", "-GPSLatitudeRef=S",
            "-GPSLongitude=151.2093", "-GPSLongitudeRef=E",
        ])
        let plain = try photo("IMG_20220102_030405.jpg", seed: 3, tags: [])
        try Data("x".utf8).write(to: URL(fileURLWithPath: photos + "/movie.mp4"))
        let first = importFolder()
        XCTAssertTrue(first.text.contains("3 new"), first.text)
        XCTAssertTrue(first.text.contains("video: 1"), first.text)
        let flickrBefore = try harness.catalog().allPhotos().filter { !$0.id.hasPrefix("file-") }
        XCTAssertEqual(flickrBefore.count, 4)

        try harness.mount()
        let tokyoName = "moments/2024/2024-07-14 09.30.12 Shinjuku.jpg"
        XCTAssertTrue(FileManager.default.fileExists(atPath: harness.path(tokyoName)), harness.files(under: "moments").joined(separator: "\n"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: harness.path("moments/2023/2023-12-31 23.59.59 P1010001.jpg")))
        XCTAssertTrue(FileManager.default.fileExists(atPath: harness.path("moments/2022/2022-01-02 03.04.05 IMG_20220102_030405.jpg")))
        XCTAssertTrue(FileManager.default.fileExists(atPath: harness.path("regions/Tokyo/Ada Lovelace/Shinjuku.jpg")),
                      harness.files(under: "regions").joined(separator: "\n"))
        XCTAssertTrue(FileManager.default.fileExists(
            atPath: harness.path("regions/New South Wales/OLYMPUS IMAGING CORP. E-M10/P1010001.jpg")))
        XCTAssertEqual(FileManager.default.contents(atPath: harness.path(tokyoName)), FileManager.default.contents(atPath: tokyo))
        let origin = Shell.run("getfattr", ["--only-values", "-n", "user.xdg.origin.url", harness.path(tokyoName)])
        XCTAssertEqual(origin.text, FileURI.glib(path: tokyo))
        let taken = Shell.run("getfattr", ["--only-values", "-n", "user.photofs.taken", harness.path(tokyoName)])
        XCTAssertEqual(taken.text, "2024-07-14T09:30:12+09:00")
        let inode = harness.inode(of: harness.path(tokyoName))
        let id = try harness.photoID(ofInode: inode)

        // Importing Flickr again leaves the folder's photos; importing the folder again changes nothing.
        XCTAssertEqual(harness.importLibrary().status, 0)
        XCTAssertEqual(try harness.catalog().allPhotos().count, 7)
        XCTAssertTrue(importFolder().text.contains("nothing new"))

        // Rename: same inode and id. Edit: the mount refuses the old promise, then serves the new bytes.
        try FileManager.default.moveItem(atPath: tokyo, toPath: photos + "/shinjuku-renamed.jpg")
        let sydneyName = "moments/2023/2023-12-31 23.59.59 P1010001.jpg"
        let original = try XCTUnwrap(FileManager.default.contents(atPath: sydney))
        var edited = original
        edited.append(contentsOf: [0, 0, 0]) // bytes after the end-of-image marker: another size, same picture
        try edited.write(to: URL(fileURLWithPath: sydney))
        XCTAssertNil(FileManager.default.contents(atPath: harness.path(sydneyName)), "changed since import")
        XCTAssertTrue(eventually(within: 5) { harness.daemonLog.contains("changed since import: run photofs import folder again") })
        // A program retrying it: refused each time, logged once (a trial's minute of retries was 9 MB of log).
        for _ in 0..<20 { XCTAssertNil(FileManager.default.contents(atPath: harness.path(sydneyName))) }
        XCTAssertEqual(harness.daemonLog.components(separatedBy: "changed since import").count - 1, 1, harness.daemonLog)
        try FileManager.default.copyItem(atPath: plain, toPath: photos + "/2024 Japan/copy.jpg")
        let second = importFolder()
        XCTAssertTrue(second.text.contains("1 renamed or moved"), second.text)
        XCTAssertTrue(second.text.contains("1 duplicate file"), second.text)
        XCTAssertTrue(eventually(within: 5) { harness.inode(of: harness.path(tokyoName)) == inode })
        XCTAssertEqual(try harness.photoID(ofInode: harness.inode(of: harness.path(tokyoName))), id)
        XCTAssertTrue(eventually(within: 5) { FileManager.default.contents(atPath: harness.path(sydneyName)) == edited })
        let status = harness.photofs(["status", harness.library])
        XCTAssertTrue(status.text.contains("follows: folder \(photos)"), status.text)
        XCTAssertTrue(status.text.contains("duplicate files: 1"), status.text)

        // Delete both copies: the photo leaves the mount; Flickr's photos stay.
        try FileManager.default.removeItem(atPath: plain)
        try FileManager.default.removeItem(atPath: photos + "/2024 Japan/copy.jpg")
        XCTAssertTrue(importFolder().text.contains("1 photo(s) removed"))
        XCTAssertTrue(eventually(within: 5) {
            !FileManager.default.fileExists(atPath: harness.path("moments/2022/2022-01-02 03.04.05 IMG_20220102_030405.jpg"))
        })
        XCTAssertEqual(try harness.catalog().allPhotos().filter { !$0.id.hasPrefix("file-") }.map(\.id).sorted(),
                       flickrBefore.map(\.id).sorted())
    }

    /// A reader holding a photo open across an edit (a new file renamed over the old, as editors save) and a
    /// re-import keeps the bytes it opened, and no open ever gets the new size with the old bytes. Passed
    /// through (root, Linux 6.9+: the kernel reads the old file itself for that reader) a new open is refused
    /// with EBUSY until that reader closes; read through the daemon it gets the new bytes at once.
    func testAReaderOfTheOldVersionKeepsItAndNewOpensNeverMixVersions() throws {
        try require("exiftool", package: "libimage-exiftool-perl")
        // A date from EXIF: without one the name would follow the mtime, which the edit moves.
        let path = try photo("held.jpg", seed: 5, tags: ["-DateTimeOriginal=2021:05:06 07:08:09"])
        XCTAssertTrue(importFolder().text.contains("1 new"))
        try harness.mount()
        let mounted = try XCTUnwrap(harness.files(under: "moments").first { $0.hasSuffix(" held.jpg") })
        let original = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let held = open(mounted, O_RDONLY)
        guard held >= 0 else { return XCTFail("cannot open \(mounted): \(errno)") }
        XCTAssertEqual(readAll(held), original)

        var edited = original
        edited.append(contentsOf: [0, 0, 0, 0]) // after the end-of-image marker: another size, same picture
        try edited.write(to: URL(fileURLWithPath: path), options: .atomic)
        XCTAssertTrue(importFolder().text.contains("1 edited"))
        XCTAssertTrue(eventually(within: 5) { (try? FileManager.default.attributesOfItem(atPath: mounted)[.size] as? Int) == edited.count })

        let second = open(mounted, O_RDONLY)
        if second >= 0 {
            XCTAssertEqual(readAll(second), edited, "a new open reads the new version whole")
            close(second)
        } else {
            XCTAssertEqual(errno, EBUSY, "refused only while the old version is passed through")
            XCTAssertTrue(eventually(within: 5) { harness.daemonLog.contains("another version of it is open") })
        }
        XCTAssertEqual(readAll(held), original, "the reader that held the old version keeps it")
        close(held)
        // The release reaches the daemon after close returns: the new version opens once it has.
        XCTAssertTrue(eventually(within: 5) {
            let fd = open(mounted, O_RDONLY)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return readAll(fd) == edited
        })
    }

    func testAPhotoReadAndClosedIsNeverServedFromItsOldFileOnceReplacedOrEdited() throws {
        try require("exiftool", package: "libimage-exiftool-perl")
        let path = try photo("kept.jpg", seed: 6, tags: ["-DateTimeOriginal=2021:05:06 07:08:09"])
        XCTAssertTrue(importFolder().text.contains("1 new"))
        try harness.mount()
        let mounted = try XCTUnwrap(harness.files(under: "moments").first { $0.hasSuffix(" kept.jpg") })
        let original = try XCTUnwrap(FileManager.default.contents(atPath: path))
        for _ in 0..<2 { XCTAssertEqual(FileManager.default.contents(atPath: mounted), original) }
        // Read through the daemon (not root, a kernel before 6.9) the kernel's page cache keeps a version whose
        // size and mtime did not change: this is about the idle backing that passthrough keeps.
        if harness.daemonLog.contains("read through the daemon") { throw XCTSkip("no FUSE passthrough here") }
        XCTAssertTrue(eventually(within: 5) { harness.daemonLog.contains("idle passthrough backing reused") },
                      "the second read reuses the first one's backing")

        // Replaced by a file of the same size and mtime (what the import's check sees): the bytes served are the
        // file the path names now, not those of the file the mount read before (its backing kept idle).
        var replacement = original
        replacement[replacement.count - 3] ^= 0xFF // inside the image data: same size, other bytes
        let staging = photos + "/staging.tmp"
        try replacement.write(to: URL(fileURLWithPath: staging))
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        let times = [info.st_atim, info.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, staging, times, 0), 0)
        XCTAssertEqual(rename(staging, path), 0)
        XCTAssertEqual(FileManager.default.contents(atPath: mounted), replacement)

        // Edited in place (same inode, a new mtime): refused, never the bytes of before.
        try original.write(to: URL(fileURLWithPath: path), options: [])
        var later = times
        later[1].tv_sec += 1
        XCTAssertEqual(utimensat(AT_FDCWD, path, later, 0), 0)
        XCTAssertNil(FileManager.default.contents(atPath: mounted), "changed since import")
    }

    /// The bytes of an open descriptor from its start.
    func readAll(_ fd: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
            offset += off_t(count)
        }
        return data
    }
}
