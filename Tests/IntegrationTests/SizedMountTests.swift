// Mounts with --size through the kernel: square PNG thumbnails and fitted variants with exact sizes, upright
// orientation, smaller renditions as sources, sizes kept across remounts, broken images failing alone.
import FlickrOrigin
import Foundation
import PhotoCatalog
import PhotoContent
import XCTest

final class SizedMountTests: MountedTestCase {
    /// Twelve demo photos at full scale (640 to 1280 px, one PNG with alpha, "z" renditions for those over
    /// 640 px), eight small orientation fixtures and four broken images.
    static let library: OriginLibrary = {
        var library = DemoLibrary.make(count: 12, scale: 1)
        let place = library.photos[0].placeID
        func photo(_ id: String, _ title: String, _ image: OriginImage) -> OriginPhoto {
            OriginPhoto(id: id, owner: "fixtures@N01", ownerName: "Fixtures", title: title, dateTaken: "2020-06-01 12:00:00",
                        dateUpload: 1_700_000_000, placeID: place, image: image)
        }
        for orientation in 1...8 {
            let data = orientationFixture(orientation)
            library.photos.append(photo("9100\(orientation)", "orientation \(orientation)",
                                        OriginImage(data: data, contentType: "image/jpeg", width: 96, height: 64)))
        }
        let good = try! ImageCodec.encodeJPEG(quadrants(width: 300, height: 200), quality: 90)
        library.photos.append(photo("92001", "truncated jpeg", OriginImage(data: good.prefix(good.count / 2),
                                                                         contentType: "image/jpeg", width: 300, height: 200)))
        library.photos.append(photo("92002", "bomb", OriginImage(data: claimingSize(good, width: 30000, height: 30000),
                                                               contentType: "image/jpeg", width: 30000, height: 30000)))
        let png = try! ImageCodec.encodePNG(quadrants(width: 300, height: 200))
        var corrupt = png
        corrupt.replaceSubrange(60..<160, with: Data(repeating: 0x5A, count: 100))
        library.photos.append(photo("92003", "corrupt png", OriginImage(data: corrupt, contentType: "image/png",
                                                                      width: 300, height: 200)))
        library.photos.append(photo("92004", "truncated png", OriginImage(data: png.prefix(png.count * 2 / 3),
                                                                        contentType: "image/png", width: 300, height: 200)))
        return library
    }()
    override class var originLibrary: OriginLibrary { SizedMountTests.library }
    override class var mountsInSetUp: Bool { false }

    static let brokenTitles: Set<String> = ["truncated jpeg", "bomb", "corrupt png", "truncated png"]
    static let colours: [[UInt8]] = [[230, 30, 30], [30, 200, 30], [30, 30, 230], [240, 240, 240]]

    /// Red, green, blue and white quadrants (top left, top right, bottom left, bottom right) when upright.
    static func quadrants(width: Int, height: Int) -> PixelImage {
        var pixels = [UInt8]()
        for y in 0..<height {
            for x in 0..<width { pixels += colours[(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)] }
        }
        return PixelImage(width: width, height: height, channels: 3, pixels: pixels)
    }

    /// A JPEG that shows the quadrants upright once its EXIF orientation is applied.
    static func orientationFixture(_ orientation: Int) -> Data {
        let inverse = orientation == 6 ? 8 : orientation == 8 ? 6 : orientation
        let stored = ImageResizer.upright(quadrants(width: 96, height: 64), orientation: inverse)
        let jpeg = try! ImageCodec.encodeJPEG(stored, quality: 95)
        let tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, UInt8(orientation), 0,
                             0, 0, 0, 0, 0, 0]
        let payload = Array("Exif\0\0".utf8) + tiff
        return Data([0xFF, 0xD8, 0xFF, 0xE1, 0, UInt8(payload.count + 2)] + payload) + jpeg.dropFirst(2)
    }

    /// The same JPEG with a frame header that claims another size (a decompression bomb's header).
    static func claimingSize(_ jpeg: Data, width: Int, height: Int) -> Data {
        var bytes = [UInt8](jpeg)
        let sof = (0..<bytes.count - 9).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }!
        bytes[sof + 5] = UInt8(height >> 8); bytes[sof + 6] = UInt8(height & 0xFF)
        bytes[sof + 7] = UInt8(width >> 8); bytes[sof + 8] = UInt8(width & 0xFF)
        return Data(bytes)
    }

    func origin(ofTitle title: String) -> OriginPhoto { SizedMountTests.library.photos.first { $0.title == title }! }

    /// Files under /moments by name (find lists them without stat, so broken ones are listed too).
    func momentFiles() -> [String] {
        let found = Shell.run("find", [harness.path("moments"), "-type", "f", "-print0"])
        XCTAssertEqual(found.status, 0, found.stderr)
        return found.stdout.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    func isBroken(_ path: String) -> Bool { SizedMountTests.brokenTitles.contains { path.contains($0) } }

    func stat(_ path: String) -> Int? {
        Int(Shell.run("stat", ["-c", "%s", path]).text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func testSquareThumbnailsArePNGsOfExactSizeAndKeepAlpha() throws {
        try harness.mount(extra: ["--size", "square:64"])
        let listing = Shell.run("ls", ["-lR", harness.path("moments")])
        XCTAssertTrue(listing.stderr.contains("Input/output error"), "broken images are reported, not listed with a size")
        var checked = 0
        for file in momentFiles() where !isBroken(file) {
            XCTAssertTrue(file.hasSuffix(".png"), file)
            let bytes = Shell.run("cat", [file])
            XCTAssertEqual(bytes.status, 0, bytes.stderr)
            XCTAssertEqual(stat(file), bytes.stdout.count, file)
            let image = try ImageCodec.decodePNG(bytes.stdout)
            XCTAssertEqual([image.width, image.height], [64, 64], file)
            checked += 1
        }
        XCTAssertEqual(checked, 12 + 8)
        // The demo's PNG photo has a graded alpha channel; its thumbnail keeps it (so it is made from the PNG
        // original, not from Flickr's 75 px JPEG square, which serves the JPEG photos).
        let png = try XCTUnwrap(SizedMountTests.library.photos.first { $0.image.contentType == "image/png" })
        let file = try XCTUnwrap(momentFiles().filter { !isBroken($0) }.first {
            (try? harness.photoID(ofInode: harness.inode(of: $0))) == png.id
        })
        let thumbnail = try ImageCodec.decodePNG(Shell.run("cat", [file]).stdout)
        XCTAssertEqual(thumbnail.channels, 4)
        XCTAssertGreaterThan(Set(stride(from: 3, to: thumbnail.pixels.count, by: 4).map { thumbnail.pixels[$0] }).count, 4)
        // Thumbnails are in the catalog, one row per photo and size.
        let stored = try harness.catalog().variantSizes(spec: "square:64")
        XCTAssertEqual(stored.count, 20)
    }

    func testFitKeepsFormatAndAspectUsesSmallerRenditionsAndServesSmallPhotosUnchanged() throws {
        try harness.mount(extra: ["--size", "600"])
        harness.origin.resetCounters()
        for photo in SizedMountTests.library.photos.prefix(12) {
            let file = try XCTUnwrap(momentFiles().filter { !isBroken($0) }.first { (try? harness.photoID(ofInode: harness.inode(of: $0))) == photo.id })
            let bytes = Shell.run("cat", [file]).stdout
            XCTAssertEqual(stat(file), bytes.count, file)
            let long = max(photo.image.width, photo.image.height)
            if photo.image.contentType == "image/png" {
                XCTAssertTrue(file.hasSuffix(".png"))
                let image = try ImageCodec.decodePNG(bytes)
                XCTAssertEqual(max(image.width, image.height), min(600, long), file)
            } else {
                XCTAssertTrue(file.hasSuffix(".jpg"))
                let size = try ImageCodec.jpegSize(bytes)
                XCTAssertEqual(max(size.width, size.height), min(600, long), file)
                // Aspect kept: within a pixel of the original's.
                let expected = Double(photo.image.height) * Double(size.width) / Double(photo.image.width)
                XCTAssertLessThanOrEqual(abs(Double(size.height) - expected), 1, file)
            }
            if long <= 600 { XCTAssertEqual(bytes, photo.image.data, "\(file) should be the original, byte for byte") }
            if photo.renditions["z"] != nil && photo.image.contentType == "image/jpeg" {
                // 640 px "z" is big enough for 600: the original is never downloaded.
                XCTAssertEqual(harness.origin.requestCount(method: "GET", path: harness.origin.imagePath(photoID: photo.id)), 0, file)
                XCTAssertEqual(harness.origin.requestCount(method: "GET", path: photo.renditionPath("z")), 1, file)
            }
        }
    }

    func testOrientationFixturesComeOutUpright() throws {
        try harness.mount(extra: ["--size", "48"])
        for orientation in 1...8 {
            let file = try XCTUnwrap(momentFiles().first { $0.hasSuffix("orientation \(orientation).jpg") })
            let bytes = Shell.run("cat", [file]).stdout
            let image = try ImageCodec.decodeJPEG(bytes)
            XCTAssertEqual([image.width, image.height], [48, 32], "orientation \(orientation)")
            for (index, (x, y)) in [(12, 8), (36, 8), (12, 24), (36, 24)].enumerated() {
                let at = (y * image.width + x) * 3
                let pixel = Array(image.pixels[at..<at + 3])
                func distance(_ colour: Int) -> Int {
                    var total = 0
                    for channel in 0..<3 { total += abs(Int(SizedMountTests.colours[colour][channel]) - Int(pixel[channel])) }
                    return total
                }
                let nearest = SizedMountTests.colours.indices.min { distance($0) < distance($1) }
                XCTAssertEqual(nearest, index, "orientation \(orientation), quadrant \(index): \(pixel)")
            }
        }
    }

    func testSizesAreKeptAcrossARemountAndAReRenderGivesTheSameBytes() throws {
        try harness.mount(extra: ["--size", "500"])
        var before: [String: Data] = [:]
        for file in momentFiles() where !isBroken(file) {
            let bytes = Shell.run("cat", [file]).stdout
            XCTAssertEqual(stat(file), bytes.count, file)
            before[file] = bytes
        }
        XCTAssertEqual(harness.unmount(), 0)
        // Evict every rendered variant from the cache: the catalog still knows their sizes.
        let originals = harness.cacheDirectory + "/originals"
        for name in try FileManager.default.contentsOfDirectory(atPath: originals) where name.hasPrefix("variant-") {
            try FileManager.default.removeItem(atPath: originals + "/" + name)
        }
        try harness.mount(extra: ["--size", "500"])
        for (file, bytes) in before { XCTAssertEqual(stat(file), bytes.count, "size before rendering, \(file)") }
        XCTAssertFalse(harness.daemonLog.contains("variant rendered"), "stat after a remount rendered something")
        for (file, bytes) in before { XCTAssertEqual(Shell.run("cat", [file]).stdout, bytes, "re-rendered \(file)") }
    }

    func testBrokenImagesFailWithEIOAndTheRestStillRead() throws {
        try harness.mount(extra: ["--size", "square:32"])
        for title in SizedMountTests.brokenTitles.sorted() {
            let file = try XCTUnwrap(momentFiles().first { $0.hasSuffix("\(title).png") }, title)
            let result = Shell.run("cat", [file])
            XCTAssertNotEqual(result.status, 0, title)
            XCTAssertTrue(result.stderr.contains("Input/output error"), "\(title): \(result.stderr)")
            XCTAssertTrue(result.stdout.isEmpty, title)
            XCTAssertTrue(harness.daemonLog.contains(origin(ofTitle: title).id), "the log names the photo")
        }
        XCTAssertTrue(harness.daemonLog.contains("more pixels than allowed"), "the bomb is refused from its header")
        let good = try XCTUnwrap(momentFiles().first { $0.hasSuffix("orientation 1.png") })
        let bytes = Shell.run("cat", [good])
        XCTAssertEqual(bytes.status, 0)
        XCTAssertEqual(try ImageCodec.decodePNG(bytes.stdout).width, 32)
    }

    func testAPhotoChangedByAnImportUnderTheMountIsRenderedAgain() throws {
        try harness.mount(extra: ["--size", "square:48"])
        let changed = origin(ofTitle: "orientation 3")
        let file = try XCTUnwrap(momentFiles().first { $0.hasSuffix("orientation 3.png") })
        let before = Shell.run("cat", [file]).stdout
        XCTAssertEqual(stat(file), before.count)
        // The photo was replaced on the origin: another picture, and (as on Flickr, where a replaced photo gets
        // a new secret) another URL; here it is a PNG now. Thumbnail names end in .png whatever the original.
        var library = SizedMountTests.library
        let index = library.photos.firstIndex { $0.id == changed.id }!
        let replacement = try ImageCodec.encodePNG(SizedMountTests.quadrants(width: 64, height: 96))
        library.photos[index].image = OriginImage(data: replacement, contentType: "image/png", width: 64, height: 96)
        harness.origin.replaceLibrary(library)
        let imported = harness.importLibrary()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let deadline = Date().addingTimeInterval(6)
        var after = before
        while Date() < deadline {
            after = Shell.run("cat", [file]).stdout
            if after != before { break }
            usleep(200_000)
        }
        XCTAssertNotEqual(after, before, "the thumbnail of the old picture is still served")
        XCTAssertEqual(stat(file), after.count, "the size the kernel reports follows the new thumbnail")
        let expected = try VariantRenderer.render(replacement, contentType: "image/png", spec: .square(48))
        XCTAssertEqual(after, expected.data)
    }

    func testTwoMountsOfOneLibraryAtDifferentSizesShareTheCache() throws {
        try harness.mount(extra: ["--size", "1000"])
        let second = harness.root.appendingPathComponent("mnt-500").path
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        let mounted = harness.photofs(["mount", harness.library, second, "--cache-dir", harness.cacheDirectory,
                                       "--size", "500"])
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        defer { Shell.run("fusermount3", ["-u", second]) }
        // 640×480 with no rendition but its 75 px square: both sizes are made from the original.
        let photo = SizedMountTests.library.photos[0]
        XCTAssertEqual([photo.image.width, photo.image.height], [640, 480])
        let relative = try XCTUnwrap(momentFiles().filter { !isBroken($0) }.first {
            (try? harness.photoID(ofInode: harness.inode(of: $0))) == photo.id
        }).dropFirst(harness.mountpoint.count)
        let large = Shell.run("cat", [harness.mountpoint + relative])
        let small = Shell.run("cat", [second + relative])
        XCTAssertEqual(large.stdout, photo.image.data, "640 px is within 1000: the original, byte for byte")
        XCTAssertTrue(try ImageCodec.jpegSize(small.stdout) == (500, 375))
        XCTAssertEqual(harness.origin.requestCount(method: "GET", path: harness.origin.imagePath(photoID: photo.id)), 1,
                       "one download in all (the import only sent HEADs): the second mount found the original in the cache")
        XCTAssertEqual(Shell.run("stat", ["-c", "%s", second + relative]).text.trimmingCharacters(in: .whitespacesAndNewlines),
                       String(small.stdout.count))
    }

    func testBadSizeOptionsAreRefusedBeforeMounting() throws {
        for (arguments, message) in [(["--size", "banana"], "--size takes original"), (["--size", "square:0"], "--size takes"),
                                     (["--size", "0"], "--size takes"), (["--size", "512", "--jpeg-quality", "0"], "--jpeg-quality"),
                                     (["--size", "512", "--max-pixels", "0"], "--max-pixels")] {
            let result = harness.photofs(["mount", harness.library, harness.mountpoint, "--cache-dir", harness.cacheDirectory]
                                         + arguments)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertFalse(harness.isMounted, "\(arguments)")
        }
    }
}
