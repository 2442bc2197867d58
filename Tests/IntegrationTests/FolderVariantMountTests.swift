// Local photos (JPEG, PNG, HEIC) in a sized mount and in a file manager's listing: rendered and thumbnailed from
// their own files, with no HTTP request and no copy of an original in the cache.
import FlickrOrigin
import Foundation
import PhotoContent
import TestRequirements
import XCTest

final class FolderVariantMountTests: XCTestCase {
    var harness: MountHarness!
    var photos: String { harness.root.appendingPathComponent("photos").path }
    /// The photos' files and their pixel sizes (as displayed).
    var originals: [String: (width: Int, height: Int)] = [:]

    override func setUpWithError() throws {
        try TestRequirement.program("/usr/bin/heif-enc", package: "libheif-examples")
        // The origin serves a library nobody imports: any request it sees came from this mount.
        harness = try MountHarness(library: DemoLibrary.make(count: 1, scale: 4))
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        try image(width: 400, height: 200).write(to: URL(fileURLWithPath: photos + "/IMG_20220101_000001.jpg"))
        try ImageCodec.encodePNG(pixels(width: 300, height: 150))
            .write(to: URL(fileURLWithPath: photos + "/IMG_20220101_000002.png"))
        let source = harness.root.path + "/heic-source.jpg"
        try image(width: 240, height: 160).write(to: URL(fileURLWithPath: source))
        let encoded = Shell.run("heif-enc", ["-q", "50", "-o", photos + "/IMG_20220101_000003.heic", source])
        XCTAssertEqual(encoded.status, 0, encoded.stderr)
        originals = ["IMG_20220101_000001.jpg": (400, 200), "IMG_20220101_000002.png": (300, 150),
                     "IMG_20220101_000003.heic": (240, 160)]
        let imported = harness.photofs(["import", "folder", harness.library, photos])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.text.contains("3 new"), imported.text)
    }

    override func tearDown() { harness?.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    func pixels(width: Int, height: Int) -> PixelImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: index / 3 % width + index % 3 * 60) }
        return PixelImage(width: width, height: height, channels: 3, pixels: pixels)
    }

    func image(width: Int, height: Int) throws -> Data {
        try ImageCodec.encodeJPEG(pixels(width: width, height: height), quality: 90)
    }

    /// Width and height of JPEG or PNG bytes.
    func size(of data: Data) throws -> [Int] {
        if data.starts(with: [0xFF, 0xD8]) {
            let size = try ImageCodec.jpegSize(data)
            return [size.width, size.height]
        }
        let header = try ImageCodec.pngHeader(data)
        return [header.width, header.height]
    }

    /// Every regular file under the cache directory holding an original's bytes.
    func originalsInCache() -> [String] {
        let contents = Set(originals.keys.compactMap { FileManager.default.contents(atPath: photos + "/" + $0) })
        let files = Shell.run("find", [harness.cacheDirectory, "-type", "f", "-print0"]).stdout.split(separator: 0)
            .map { String(decoding: $0, as: UTF8.self) }
        return files.filter { FileManager.default.contents(atPath: $0).map(contents.contains) ?? false }
    }

    func testSizedMountRendersJPEGPNGAndHEICFromTheirFiles() throws {
        try harness.mount(extra: ["--size", "100"])
        let listed = try FileManager.default.contentsOfDirectory(atPath: harness.path("moments/2022")).sorted()
        // The HEIC is served as the JPEG it is rendered to.
        XCTAssertEqual(listed, ["2022-01-01 00.00.01 IMG_20220101_000001.jpg", "2022-01-01 00.00.02 IMG_20220101_000002.png",
                                "2022-01-01 00.00.03 IMG_20220101_000003.jpg"])
        let expected = [[100, 50], [100, 50], [100, 67]]
        for (name, size) in zip(listed, expected) {
            let path = harness.path("moments/2022/" + name)
            let data = try XCTUnwrap(FileManager.default.contents(atPath: path), name)
            XCTAssertEqual(try self.size(of: data), size, name)
            XCTAssertEqual(name.hasSuffix(".png"), data.starts(with: [0x89, 0x50, 0x4E, 0x47]), name)
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            XCTAssertEqual((attributes[.size] as? NSNumber)?.intValue, data.count, "stat agrees with the bytes: \(name)")
        }
        // `photofs render` of each file gives what the mount shows (the troubleshooting guide's check), HEIC too.
        for (file, name) in zip(originals.keys.sorted(), listed) {
            let output = harness.root.path + "/render-" + file + ".out"
            let rendered = harness.photofs(["render", photos + "/" + file, "--size", "100", "--output", output])
            XCTAssertEqual(rendered.status, 0, "\(file): \(rendered.stderr)")
            XCTAssertEqual(FileManager.default.contents(atPath: output),
                           FileManager.default.contents(atPath: harness.path("moments/2022/" + name)), file)
        }
        let heic = harness.path("moments/2022/" + listed[2])
        XCTAssertEqual(Shell.run("getfattr", ["--only-values", "-n", "user.xdg.origin.url", heic]).text,
                       FileURI.glib(path: photos + "/IMG_20220101_000003.heic"))
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0, "no HTTP request")
        XCTAssertEqual(originalsInCache(), [], "no original copied into the cache")
        XCTAssertFalse(harness.daemonLog.contains("render failed"), harness.daemonLog)
    }

    /// An original-size mount serves the HEIC as itself; a listing by a thumbnail lister gets thumbnails of all
    /// three, made from the files.
    func testThumbnailsOfLocalPhotosComeFromTheirFiles() throws {
        harness.desktopThumbnails = true
        try harness.mount(extra: DesktopThumbnailMountTests.lsDrawsThumbnails)
        let listing = Shell.run("ls", ["-1", harness.path("moments/2022")])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        let names = listing.text.split(separator: "\n").map(String.init)
        XCTAssertEqual(names.count, 3, listing.text)
        XCTAssertTrue(names.contains("2022-01-01 00.00.03 IMG_20220101_000003.heic"), listing.text)
        XCTAssertEqual(FileManager.default.contents(atPath: harness.path("moments/2022/2022-01-01 00.00.03 IMG_20220101_000003.heic")),
                       FileManager.default.contents(atPath: photos + "/IMG_20220101_000003.heic"))
        let store = DesktopThumbnailStore(root: URL(fileURLWithPath: harness.xdgCacheHome).appendingPathComponent("thumbnails"))
        let expected: [String: [Int]] = ["001.jpg": [256, 128], "002.png": [256, 128], "003.heic": [240, 160]]
        for name in names {
            let uri = FileURI.glib(path: harness.path("moments/2022/" + name))
            let file = store.fileURL(forURI: uri, size: .large).path
            XCTAssertTrue(eventually(within: 20) { FileManager.default.fileExists(atPath: file) }, "no thumbnail for \(name)")
            let png = try XCTUnwrap(FileManager.default.contents(atPath: file))
            let key = try XCTUnwrap(expected.keys.first { name.hasSuffix($0) })
            XCTAssertEqual(try size(of: png), expected[key], name)
        }
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0, "no HTTP request")
        XCTAssertEqual(originalsInCache(), [], "no original copied into the cache")
    }
}
