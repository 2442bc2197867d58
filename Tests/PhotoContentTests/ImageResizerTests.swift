// Pixel operations for resized variants: fitting, area averaging, centre crop, EXIF orientation.
@testable import PhotoContent
import XCTest

final class ImageResizerTests: XCTestCase {
    func gray(_ width: Int, _ height: Int, _ values: [UInt8]) -> PixelImage {
        PixelImage(width: width, height: height, channels: 1, pixels: values)
    }

    func testFittingKeepsTheAspectRatioAndNeverUpscales() {
        XCTAssertTrue(ImageResizer.fitting(width: 4000, height: 3000, maxEdge: 1024) == (1024, 768))
        XCTAssertTrue(ImageResizer.fitting(width: 3000, height: 4000, maxEdge: 1024) == (768, 1024))
        XCTAssertTrue(ImageResizer.fitting(width: 800, height: 600, maxEdge: 1024) == (800, 600))
        XCTAssertTrue(ImageResizer.fitting(width: 5000, height: 10, maxEdge: 256) == (256, 1))
    }

    func testAreaAveragingIsTheMeanOfTheCoveredArea() {
        let image = gray(4, 2, [0, 100, 200, 40,
                                20, 60, 0, 40])
        XCTAssertEqual(ImageResizer.reduce(image, width: 2, height: 1).pixels, [45, 70])
        // 3 → 2: each output covers 1.5 inputs.
        let row = gray(3, 1, [0, 90, 180])
        XCTAssertEqual(ImageResizer.reduce(row, width: 2, height: 1).pixels, [30, 150])
        let flat = PixelImage(width: 37, height: 23, channels: 3, pixels: [UInt8](repeating: 77, count: 37 * 23 * 3))
        XCTAssertEqual(Set(ImageResizer.reduce(flat, width: 10, height: 6).pixels), [77])
    }

    func testLanczosResamplingKeepsFlatAreasFlatAndSquaresAreAlwaysNByN() {
        let flat = PixelImage(width: 300, height: 200, channels: 3, pixels: [UInt8](repeating: 90, count: 300 * 200 * 3))
        XCTAssertEqual(Set(ImageResizer.resize(flat, width: 73, height: 41).pixels), [90], "no ringing on a flat image")
        XCTAssertEqual(Set(ImageResizer.squareThumbnail(flat, side: 64).pixels), [90])
        // Thumbnails are N×N: a photo smaller than N is enlarged, a large one box-shrunk then filtered.
        let small = ImageResizer.squareThumbnail(gray(40, 20, [UInt8](repeating: 7, count: 800)), side: 64)
        XCTAssertEqual([small.width, small.height], [64, 64])
        let large = ImageResizer.squareThumbnail(flat, side: 16)
        XCTAssertEqual([large.width, large.height, large.channels], [16, 16, 3])
    }

    func testSquareThumbnailsCutTheMiddleOfTheScaledImage() {
        // Left third black, middle white, right third black: the centred square of a 3:1 strip is the white.
        var pixels = [UInt8]()
        for _ in 0..<100 { for x in 0..<300 { pixels.append(x >= 100 && x < 200 ? 255 : 0) } }
        let thumbnail = ImageResizer.squareThumbnail(gray(300, 100, pixels), side: 50)
        XCTAssertGreaterThan(thumbnail.pixels.min() ?? 0, 200, "only the white middle is shown")
    }

    func testBlockShrinkAveragesWholeBlocksWeightingColoursByAlpha() {
        let image = gray(5, 2, [0, 100, 200, 40, 99,
                                20, 60, 0, 40, 99])
        XCTAssertEqual(ImageResizer.blockShrink(image, by: 2).pixels, [45, 70], "the odd last column is left out")
        // Gray+alpha: a transparent pixel's colour does not count; alpha itself is the plain mean.
        let withAlpha = PixelImage(width: 2, height: 1, channels: 2, pixels: [200, 255, 0, 0])
        XCTAssertEqual(ImageResizer.blockShrink(withAlpha, by: 1).pixels, [200, 255, 0, 0])
        let shrunk = ImageResizer.blockShrink(PixelImage(width: 2, height: 2, channels: 2, pixels: [200, 255, 0, 0, 200, 255, 0, 0]), by: 2)
        XCTAssertEqual(shrunk.pixels, [200, 128])
    }

    func testCentreSquareCropsTheMiddle() {
        let image = gray(4, 2, [1, 2, 3, 4,
                                5, 6, 7, 8])
        XCTAssertEqual(ImageResizer.centreSquare(image).pixels, [2, 3, 6, 7])
    }

    func testEveryOrientationComesOutUpright() {
        // An upright 3×2 picture; each orientation's stored form is made with the inverse transform.
        let upright = gray(3, 2, [1, 2, 3,
                                  4, 5, 6])
        for orientation in 1...8 {
            let inverse = orientation == 6 ? 8 : orientation == 8 ? 6 : orientation
            let stored = ImageResizer.upright(upright, orientation: inverse)
            let shown = ImageResizer.upright(stored, orientation: orientation)
            XCTAssertEqual(shown.pixels, upright.pixels, "orientation \(orientation)")
            XCTAssertEqual([shown.width, shown.height], [3, 2])
        }
        // Semantics, not only consistency: 6 means "rotate 90° clockwise to display".
        let sideways = ImageResizer.upright(gray(2, 1, [7, 9]), orientation: 6)
        XCTAssertEqual([sideways.width, sideways.height], [1, 2])
        XCTAssertEqual(sideways.pixels, [7, 9])
        let other = ImageResizer.upright(gray(2, 1, [7, 9]), orientation: 8)
        XCTAssertEqual(other.pixels, [9, 7])
    }

    func testOrientationIsReadFromExifInBothByteOrders() {
        func jpeg(bigEndian: Bool, orientation: UInt8) -> Data {
            let tiff: [UInt8] = bigEndian
                ? [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0, 0, 0, 0, 0]
                : [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0, 0, 0, 0, 0]
            let payload = Array("Exif\0\0".utf8) + tiff
            let length = payload.count + 2
            return Data([0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + [0xFF, 0xD9])
        }
        XCTAssertEqual(ExifOrientation.read(jpeg: jpeg(bigEndian: true, orientation: 6)), 6)
        XCTAssertEqual(ExifOrientation.read(jpeg: jpeg(bigEndian: false, orientation: 3)), 3)
        XCTAssertEqual(ExifOrientation.read(jpeg: jpeg(bigEndian: false, orientation: 9)), 1)
        XCTAssertEqual(ExifOrientation.read(jpeg: Data([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0x45])), 1, "truncated")
        XCTAssertEqual(ExifOrientation.read(jpeg: Data("not a jpeg".utf8)), 1)
    }

    func testJPEGSizeComesFromTheHeaderAlone() throws {
        let image = PixelImage(width: 40, height: 24, channels: 3, pixels: [UInt8](repeating: 128, count: 40 * 24 * 3))
        let data = try ImageCodec.encodeJPEG(image, quality: 80)
        XCTAssertTrue(try ImageCodec.jpegSize(data) == (40, 24))
        XCTAssertThrowsError(try ImageCodec.jpegSize(Data([0xFF, 0xD8, 0xFF])))
    }
}

final class VariantRendererTests: XCTestCase {
    func photo(width: Int, height: Int, channels: Int) -> PixelImage {
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height { for x in 0..<width { for c in 0..<channels {
            pixels[(y * width + x) * channels + c] = c == 3 ? UInt8((x * 255) / max(1, width - 1)) : UInt8((x + 2 * y + 50 * c) % 256)
        } } }
        return PixelImage(width: width, height: height, channels: channels, pixels: pixels)
    }

    func testFitShrinksJPEGKeepingFormatAndAspectAndIsDeterministic() throws {
        let original = try ImageCodec.encodeJPEG(photo(width: 1600, height: 1200, channels: 3), quality: 90)
        let first = try VariantRenderer.render(original, contentType: "image/jpeg", spec: .fit(400))
        let second = try VariantRenderer.render(original, contentType: "image/jpeg", spec: .fit(400))
        XCTAssertEqual([first.width, first.height], [400, 300])
        XCTAssertEqual(first.contentType, "image/jpeg")
        XCTAssertTrue(try ImageCodec.jpegSize(first.data) == (400, 300))
        XCTAssertEqual(first.data, second.data)
    }

    func testAPhotoSmallerThanTheTargetIsServedByteIdentical() throws {
        let original = try ImageCodec.encodeJPEG(photo(width: 300, height: 200, channels: 3), quality: 90)
        XCTAssertEqual(try VariantRenderer.render(original, contentType: "image/jpeg", spec: .fit(1024)).data, original)
        let png = try ImageCodec.encodePNG(photo(width: 30, height: 20, channels: 4))
        XCTAssertEqual(try VariantRenderer.render(png, contentType: "image/png", spec: .fit(64)).data, png)
    }

    func testSquareIsAPNGThatKeepsAlpha() throws {
        let png = try ImageCodec.encodePNG(photo(width: 300, height: 200, channels: 4))
        let square = try VariantRenderer.render(png, contentType: "image/png", spec: .square(64))
        XCTAssertEqual(square.contentType, "image/png")
        let decoded = try ImageCodec.decodePNG(square.data)
        XCTAssertEqual([decoded.width, decoded.height], [64, 64])
        let alphas = stride(from: 3, to: decoded.pixels.count, by: 4).map { decoded.pixels[$0] }
        XCTAssertGreaterThan(Set(alphas).count, 10, "alpha was flattened")
    }

    func testBombsAndCorruptInputAreErrors() throws {
        let original = try ImageCodec.encodeJPEG(photo(width: 400, height: 300, channels: 3), quality: 80)
        XCTAssertThrowsError(try VariantRenderer.render(original, contentType: "image/jpeg", spec: .fit(100),
                                                     options: RenderOptions(maxPixels: 1000)))
        XCTAssertThrowsError(try VariantRenderer.render(original.prefix(200), contentType: "image/jpeg", spec: .fit(100)))
        XCTAssertThrowsError(try VariantRenderer.render(Data([1, 2, 3]), contentType: "image/png", spec: .square(32)))
        // A JPEG cut short decodes "successfully" in libjpeg (gray padding, a warning); here it is an error.
        XCTAssertThrowsError(try VariantRenderer.render(original.prefix(original.count * 6 / 10), contentType: "image/jpeg",
                                                        spec: .fit(100)))
        let png = try ImageCodec.encodePNG(photo(width: 200, height: 150, channels: 3))
        XCTAssertThrowsError(try VariantRenderer.render(png.prefix(png.count / 2), contentType: "image/png", spec: .square(32)))
    }

    func testGrayJPEGStaysGrayAndCMYKBecomesRGB() throws {
        let gray = try ImageCodec.encodeJPEG(photo(width: 400, height: 300, channels: 1), quality: 90)
        let fitted = try VariantRenderer.render(gray, contentType: "image/jpeg", spec: .fit(100))
        XCTAssertEqual(try ImageCodec.decodeJPEG(fitted.data).channels, 1)
        // Adobe CMYK is stored inverted: (255, 0, 0, 255) is no cyan, full magenta and yellow, no black: red.
        let red = PixelImage(width: 32, height: 32, channels: 4,
                             pixels: [UInt8]((0..<32 * 32).flatMap { _ in [255, 0, 0, 255] as [UInt8] }))
        let cmyk = try ImageCodec.encodeJPEG(red, quality: 95)
        let decoded = try ImageCodec.decodeJPEG(cmyk)
        XCTAssertEqual(decoded.channels, 3)
        let centre = (16 * 32 + 16) * 3
        XCTAssertGreaterThan(decoded.pixels[centre], 240)
        XCTAssertLessThan(decoded.pixels[centre + 1], 15)
        XCTAssertLessThan(decoded.pixels[centre + 2], 15)
        let square = try VariantRenderer.render(cmyk, contentType: "image/jpeg", spec: .square(8))
        XCTAssertEqual(try ImageCodec.decodePNG(square.data).channels, 3)
    }

    func testProgressiveJPEGAtOneEighthDecodesOnlyTheDCScan() throws {
        // A smooth picture, like a photograph at 1/8: no wrapping edges for the chroma's missing AC terms to
        // matter at (libjpeg-turbo reconstructs 2×2-subsampled chroma with a 2×2 IDCT at this scale).
        var pixels = [UInt8](repeating: 0, count: 640 * 480 * 3)
        for y in 0..<480 { for x in 0..<640 { for c in 0..<3 {
            pixels[(y * 640 + x) * 3 + c] = UInt8(min(255, x / 4 + y / 5 + 30 * c))
        } } }
        let image = PixelImage(width: 640, height: 480, channels: 3, pixels: pixels)
        let progressive = try ImageCodec.encodeJPEG(image, quality: 90, progressive: true)
        let dc = try ImageCodec.decodeJPEGReportingScans(progressive, scaleDenominator: 8, maxPixels: 0, dcOnly: true)
        let full = try ImageCodec.decodeJPEGReportingScans(progressive, scaleDenominator: 8, maxPixels: 0, dcOnly: false)
        XCTAssertTrue(dc.usedDCOnly)
        XCTAssertFalse(full.usedDCOnly)
        XCTAssertEqual([dc.image.width, dc.image.height], [80, 60])
        // The first scan drops the DC's lowest bit (successive approximation): off by a few levels at most.
        let differences = zip(dc.image.pixels, full.image.pixels).map { abs(Int($0) - Int($1)) }
        XCTAssertLessThanOrEqual(differences.max() ?? 0, 8)
        XCTAssertLessThan(Double(differences.reduce(0, +)) / Double(differences.count), 2)
        // A baseline JPEG has one scan: nothing to skip.
        let baseline = try ImageCodec.encodeJPEG(image, quality: 90)
        XCTAssertFalse(try ImageCodec.decodeJPEGReportingScans(baseline, scaleDenominator: 8, maxPixels: 0, dcOnly: true).usedDCOnly)
    }

    func testOrientationIsAppliedToVariants() throws {
        // A 200×100 landscape stored with orientation 6 is a 100×200 portrait when shown.
        var stored = try ImageCodec.encodeJPEG(photo(width: 200, height: 100, channels: 3), quality: 90)
        stored = Self.withOrientation(stored, 6)
        let fitted = try VariantRenderer.render(stored, contentType: "image/jpeg", spec: .fit(50))
        XCTAssertEqual([fitted.width, fitted.height], [25, 50])
        XCTAssertTrue(try ImageCodec.jpegSize(fitted.data) == (25, 50))
        // Even a photo already small enough is re-encoded when it must be turned upright.
        let small = try VariantRenderer.render(stored, contentType: "image/jpeg", spec: .fit(1000))
        XCTAssertFalse(small.isUnchanged)
        XCTAssertEqual([small.width, small.height], [100, 200])
    }

    func testPNGKeepsGrayAndOpaqueChannelCounts() throws {
        let rgb = try ImageCodec.encodePNG(photo(width: 90, height: 60, channels: 3))
        XCTAssertEqual(try ImageCodec.decodePNG(rgb).channels, 3)
        let gray = try ImageCodec.encodePNG(photo(width: 90, height: 60, channels: 1))
        XCTAssertEqual(try ImageCodec.decodePNG(gray).channels, 1)
        let square = try VariantRenderer.render(rgb, contentType: "image/png", spec: .square(30))
        XCTAssertEqual(try ImageCodec.decodePNG(square.data).channels, 3, "an opaque photo gets no alpha channel")
    }

    /// Inserts an EXIF APP1 segment (little-endian TIFF, one entry: orientation) right after SOI.
    static func withOrientation(_ jpeg: Data, _ orientation: UInt8) -> Data {
        let tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0,
                             0, 0, 0, 0]
        let payload = Array("Exif\0\0".utf8) + tiff
        let length = payload.count + 2
        return Data([0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload) + jpeg.dropFirst(2)
    }
}
