// The freedesktop thumbnail store: names, modes, atomic writes, planted symlinks, removal, hostile files, and
// GLib 2.74's own verdict (`gio info -a thumbnail::path,thumbnail::is-valid`) on what it writes.
@testable import PhotoContent
import Foundation
import XCTest

final class DesktopThumbnailStoreTests: XCTestCase {
    var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("photofs-thumbs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: scratch)
    }

    var store: DesktopThumbnailStore { DesktopThumbnailStore(root: scratch.appendingPathComponent("cache/thumbnails")) }

    func png(width: Int = 16, height: Int = 12) throws -> Data {
        try ImageCodec.encodePNG(PixelImage(width: width, height: height, channels: 4,
                                            pixels: [UInt8](repeating: 200, count: width * height * 4)))
    }

    func mode(_ url: URL) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func testFileNamesAreTheMD5OfTheURIAsTheStandardsExampleSays() {
        // The Thumbnail Managing Standard's example: file:///home/jens/photos/me.png.
        let url = DesktopThumbnailStore(root: URL(fileURLWithPath: "/home/jens/.cache/thumbnails"))
            .fileURL(forURI: "file:///home/jens/photos/me.png", size: .large)
        XCTAssertEqual(url.path, "/home/jens/.cache/thumbnails/large/c6ee772d9e49320e97ec29a7eb5b1697.png")
        XCTAssertEqual(DesktopThumbnailSize.allCases.map(\.directoryName), ["normal", "large", "x-large", "xx-large"])
        XCTAssertEqual(DesktopThumbnailSize.allCases.map(\.edge), [128, 256, 512, 1024])
    }

    func testDefaultRootFollowsTheBaseDirectorySpec() {
        XCTAssertEqual(DesktopThumbnailStore.defaultRoot(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"])?.path,
                       "/c/thumbnails")
        XCTAssertEqual(DesktopThumbnailStore.defaultRoot(environment: ["XDG_CACHE_HOME": "", "HOME": "/h"])?.path,
                       "/h/.cache/thumbnails")
        XCTAssertEqual(DesktopThumbnailStore.defaultRoot(environment: ["XDG_CACHE_HOME": "rel", "HOME": "/h"])?.path,
                       "/h/.cache/thumbnails", "a relative XDG_CACHE_HOME is invalid and ignored")
        XCTAssertEqual(DesktopThumbnailStore.defaultRoot(environment: ["HOME": "/h"])?.path, "/h/.cache/thumbnails")
        XCTAssertNil(DesktopThumbnailStore.defaultRoot(environment: [:]))
    }

    func testWriteStampsTheFileWithTheStandardsModesAndLeavesNoTemporaryFile() throws {
        let stamp = DesktopThumbnailStamp(uri: "file:///m/a%20b.jpg", mtime: 1_700_000_000, fileSize: 2_000_000,
                                          mimeType: "image/jpeg")
        try store.write(png: try png(), stamp: stamp, size: .normal)
        let file = store.fileURL(forURI: stamp.uri, size: .normal)
        let written = try Data(contentsOf: file)
        XCTAssertEqual(PNGTextChunks.entries(in: written),
                       ["Thumb::URI": "file:///m/a%20b.jpg", "Thumb::MTime": "1700000000", "Thumb::Size": "2000000",
                        "Thumb::Mimetype": "image/jpeg", "Software": "photofs"])
        XCTAssertEqual(try ImageCodec.decodePNG(written).width, 16)
        XCTAssertEqual(try mode(file), 0o600)
        XCTAssertEqual(try mode(file.deletingLastPathComponent()), 0o700)
        XCTAssertEqual(try mode(store.root), 0o700)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path),
                       [file.lastPathComponent])
        for uri in ["file:///m/é.jpg", "file:///m/tab\t.jpg", ""] {
            XCTAssertThrowsError(try store.write(png: try png(), stamp: DesktopThumbnailStamp(uri: uri, mtime: 1, fileSize: nil,
                                                                                             mimeType: nil), size: .normal),
                                 "not a URI FileURI makes: \(uri.debugDescription)")
        }
        XCTAssertThrowsError(try store.write(png: Data("not a png".utf8), stamp: stamp, size: .large))
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.fileURL(forURI: stamp.uri, size: .large).path))
    }

    func testIsCurrentJudgesURIMTimeAndSizeAsGLibDoes() throws {
        let stamp = DesktopThumbnailStamp(uri: "file:///m/x.jpg", mtime: 1_600_000_000, fileSize: 1000, mimeType: nil)
        XCTAssertFalse(store.isCurrent(stamp, size: .large), "nothing written yet")
        try store.write(png: try png(), stamp: stamp, size: .large)
        XCTAssertTrue(store.isCurrent(stamp, size: .large))
        XCTAssertFalse(store.isCurrent(stamp, size: .normal))
        var other = stamp
        other.mtime += 1
        XCTAssertFalse(store.isCurrent(other, size: .large), "mtime changed")
        other = stamp
        other.fileSize = 1001
        XCTAssertFalse(store.isCurrent(other, size: .large), "size changed")
        other = stamp
        other.fileSize = nil
        XCTAssertFalse(store.isCurrent(other, size: .large), "a Thumb::Size we cannot confirm")
        other = stamp
        other.mimeType = "image/png"
        XCTAssertTrue(store.isCurrent(other, size: .large), "GLib does not compare the MIME type")

        // Written without a size, a thumbnail is current whatever the size (Thumb::Size is optional).
        let sizeless = DesktopThumbnailStamp(uri: "file:///m/y.jpg", mtime: 0, fileSize: nil, mimeType: nil)
        try store.write(png: try png(), stamp: sizeless, size: .normal)
        XCTAssertEqual(PNGTextChunks.entries(in: try Data(contentsOf: store.fileURL(forURI: sizeless.uri, size: .normal)))["Thumb::MTime"], "0")
        XCTAssertTrue(store.isCurrent(sizeless, size: .normal))
        XCTAssertTrue(store.isCurrent(DesktopThumbnailStamp(uri: sizeless.uri, mtime: 0, fileSize: 77, mimeType: nil), size: .normal))
    }

    func testAMTimeBefore1970IsWrittenAsGLibComparesIt() throws {
        let stamp = DesktopThumbnailStamp(uri: "file:///m/1965.jpg", mtime: -1, fileSize: nil, mimeType: nil)
        try store.write(png: try png(), stamp: stamp, size: .normal)
        let entries = PNGTextChunks.entries(in: try Data(contentsOf: store.fileURL(forURI: stamp.uri, size: .normal)))
        XCTAssertEqual(entries["Thumb::MTime"], "18446744073709551615", "(guint64) of -1, as thumbnail-verify.c compares")
        XCTAssertTrue(store.isCurrent(stamp, size: .normal))
    }

    func testGLibsIntegerRulesAreExact() {
        let signature = PNGTextChunks.signature
        func file(_ texts: [(String, String)]) -> [UInt8] {
            var bytes = signature + PNGTextChunks.encodedChunk(type: "IHDR", data: [UInt8](repeating: 1, count: 13))
            for (key, value) in texts { bytes += PNGTextChunks.encodedChunk(type: "tEXt", data: Array("\(key)\0\(value)".utf8)) }
            return bytes + PNGTextChunks.encodedChunk(type: "IEND", data: [])
        }
        func accepts(_ bytes: [UInt8], mtime: String = "10", size: String? = nil) -> Bool {
            DesktopThumbnailStore.glibAccepts(bytes, uri: Array("u".utf8), mtime: Array(mtime.utf8), size: size.map { Array($0.utf8) })
        }
        XCTAssertTrue(accepts(file([("Thumb::URI", "u"), ("Thumb::MTime", "10")])))
        XCTAssertFalse(accepts(file([("Thumb::URI", "u"), ("Thumb::MTime", "010")])), "a leading zero")
        XCTAssertFalse(accepts(file([("Thumb::URI", "u"), ("Thumb::MTime", "+10")])))
        XCTAssertFalse(accepts(file([("Thumb::URI", "u")])), "MTime is required")
        XCTAssertFalse(accepts(file([("Thumb::MTime", "10")])), "URI is required")
        XCTAssertFalse(accepts(file([("Thumb::URI", "u"), ("Thumb::MTime", "10"), ("Thumb::URI", "v")])),
                       "every Thumb::URI must match")
        XCTAssertTrue(accepts(file([("Thumb::URI", "u"), ("Thumb::MTime", "10"), ("Thumb::Size", "5")]), size: "5"))
        XCTAssertFalse(accepts(file([("Thumb::URI", "u"), ("Thumb::MTime", "10"), ("Thumb::Size", "6")]), size: "5"))
    }

    func testAPlantedSymlinkIsNeverWrittenThrough() throws {
        let victim = scratch.appendingPathComponent("victim", isDirectory: true)
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: store.root, withIntermediateDirectories: true)
        // At the size directory: refused.
        try FileManager.default.createSymbolicLink(at: store.root.appendingPathComponent("normal"), withDestinationURL: victim)
        let stamp = DesktopThumbnailStamp(uri: "file:///m/s.jpg", mtime: 5, fileSize: nil, mimeType: nil)
        XCTAssertThrowsError(try store.write(png: try png(), stamp: stamp, size: .normal))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: victim.path), [])
        XCTAssertFalse(store.isCurrent(stamp, size: .normal))
        // At the file's name: replaced by the thumbnail, the target untouched.
        let target = victim.appendingPathComponent("precious")
        try Data("keep".utf8).write(to: target)
        let large = store.fileURL(forURI: stamp.uri, size: .large)
        try FileManager.default.createDirectory(at: large.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: large, withDestinationURL: target)
        XCTAssertFalse(store.isCurrent(stamp, size: .large), "a symlink is not followed when judging either")
        try store.write(png: try png(), stamp: stamp, size: .large)
        XCTAssertEqual(try Data(contentsOf: target), Data("keep".utf8))
        XCTAssertNil(try? FileManager.default.destinationOfSymbolicLink(atPath: large.path))
        XCTAssertTrue(store.isCurrent(stamp, size: .large))
        // remove(uri:) reports the symlinked size directory but removes everything else, and never follows it.
        try Data("x".utf8).write(to: victim.appendingPathComponent(large.lastPathComponent))
        XCTAssertThrowsError(try store.remove(uri: stamp.uri))
        XCTAssertFalse(FileManager.default.fileExists(atPath: large.path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: victim.appendingPathComponent(large.lastPathComponent).path))
    }

    func testRemoveTakesEverySizeAndFailEntriesAndNothingElse() throws {
        let stamp = DesktopThumbnailStamp(uri: "file:///m/gone.jpg", mtime: 9, fileSize: 3, mimeType: nil)
        let kept = DesktopThumbnailStamp(uri: "file:///m/kept.jpg", mtime: 9, fileSize: 3, mimeType: nil)
        for size in DesktopThumbnailSize.allCases {
            try store.write(png: try png(), stamp: stamp, size: size)
            try store.write(png: try png(), stamp: kept, size: size)
        }
        let failDirectory = store.root.appendingPathComponent("fail/gnome-thumbnail-factory")
        try FileManager.default.createDirectory(at: failDirectory, withIntermediateDirectories: true)
        let failed = failDirectory.appendingPathComponent(DesktopThumbnailStore.fileName(forURI: stamp.uri))
        try Data().write(to: failed)
        try store.remove(uri: stamp.uri)
        for size in DesktopThumbnailSize.allCases {
            XCTAssertFalse(FileManager.default.fileExists(atPath: store.fileURL(forURI: stamp.uri, size: size).path))
            XCTAssertTrue(store.isCurrent(kept, size: size))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: failed.path))
        XCTAssertNoThrow(try store.remove(uri: stamp.uri), "removing what is not there is fine")
        XCTAssertNoThrow(try DesktopThumbnailStore(root: scratch.appendingPathComponent("none")).remove(uri: stamp.uri))
    }

    func testHostileThumbnailFilesAreNeverCurrentAndNeverTrap() throws {
        let stamp = DesktopThumbnailStamp(uri: "file:///m/h.jpg", mtime: 42, fileSize: 7, mimeType: nil)
        try store.write(png: try png(), stamp: stamp, size: .normal)
        let file = store.fileURL(forURI: stamp.uri, size: .normal)
        let good = try Data(contentsOf: file)
        // Every truncation, even one GLib would still accept (its walk stops once the Thumb:: keys matched):
        // a thumbnail cut short is rewritten, not kept.
        for length in 0..<good.count {
            try good.prefix(length).write(to: file)
            XCTAssertFalse(store.isCurrent(stamp, size: .normal), "cut at \(length)")
        }
        try good.write(to: file)
        XCTAssertTrue(store.isCurrent(stamp, size: .normal))
        for garbage in [Data(), Data("not a png".utf8), Data(repeating: 0xFF, count: 5000),
                        Data(PNGTextChunks.signature + [0xFF, 0xFF, 0xFF, 0xFF] + Array("tEXt".utf8))] {
            try garbage.write(to: file)
            XCTAssertFalse(store.isCurrent(stamp, size: .normal))
        }
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        XCTAssertFalse(store.isCurrent(stamp, size: .normal), "a directory in its place")
    }

    /// GLib itself: `gio info -a thumbnail::path,thumbnail::is-valid` with XDG_CACHE_HOME pointing at our store
    /// finds the thumbnail written for a real file with a hostile name and calls it valid; after the file's
    /// mtime changes it is invalid. GLib 2.74 looks in xx-large, x-large, large, normal and judges the first it
    /// finds, so with normal and large written it names the large one.
    func testGLibFindsAndAcceptsWhatIsWritten() throws {
        try GIOInfo.requireGIO()
        let photo = scratch.appendingPathComponent("dir #1;[x]/a b#%é 日本 😀.jpg")
        try FileManager.default.createDirectory(at: photo.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(repeating: 7, count: 1234).write(to: photo)
        var info = stat()
        XCTAssertEqual(stat(photo.path, &info), 0)
        let stamp = DesktopThumbnailStamp(uri: FileURI.glib(path: photo.path), mtime: Int64(info.st_mtim.tv_sec),
                                          fileSize: Int64(info.st_size), mimeType: "image/jpeg")
        let pngs = try DesktopThumbnailRenderer.pngs(from: try ImageCodec.encodeJPEG(
            PixelImage(width: 300, height: 200, channels: 3, pixels: [UInt8](repeating: 90, count: 300 * 200 * 3)), quality: 80),
            sizes: [.normal, .large])
        for (size, png) in pngs { try store.write(png: png, stamp: stamp, size: size) }
        let environment = ["XDG_CACHE_HOME": scratch.appendingPathComponent("cache").path]
        func glibVerdict() throws -> (path: String?, valid: String?) {
            let lines = try GIOInfo.lines(path: photo.path, attributes: "thumbnail::path,thumbnail::is-valid",
                                          environment: environment)
            return (GIOInfo.value("thumbnail::path", in: lines), GIOInfo.value("thumbnail::is-valid", in: lines))
        }
        var verdict = try glibVerdict()
        XCTAssertEqual(verdict.path, store.fileURL(forURI: stamp.uri, size: .large).path, "large is found before normal")
        XCTAssertEqual(verdict.valid, "TRUE")

        // A stale xx-large (another program's, for an older mtime) hides the current ones from GLib...
        var stale = stamp
        stale.mtime -= 100
        try store.write(png: pngs[.large]!, stamp: stale, size: .xxLarge)
        verdict = try glibVerdict()
        XCTAssertEqual(verdict.path, store.fileURL(forURI: stamp.uri, size: .xxLarge).path)
        XCTAssertEqual(verdict.valid, "FALSE")
        // ...until removeOutdated takes it away.
        try store.removeOutdated(stamp)
        verdict = try glibVerdict()
        XCTAssertEqual(verdict.path, store.fileURL(forURI: stamp.uri, size: .large).path)
        XCTAssertEqual(verdict.valid, "TRUE")

        // The photo changes (mtime moves on): GLib no longer accepts the thumbnail, and neither does isCurrent.
        var times = [timespec(tv_sec: info.st_mtim.tv_sec + 60, tv_nsec: 0), timespec(tv_sec: info.st_mtim.tv_sec + 60, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, photo.path, &times, 0), 0)
        verdict = try glibVerdict()
        XCTAssertEqual(verdict.valid, "FALSE")
        var changed = stamp
        changed.mtime += 60
        XCTAssertFalse(store.isCurrent(changed, size: .large))
        // Written again for the new mtime, it is valid again.
        for (size, png) in pngs { try store.write(png: png, stamp: changed, size: size) }
        XCTAssertEqual(try glibVerdict().valid, "TRUE")
    }
}
