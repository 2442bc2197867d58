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
        XCTAssertThrowsError(try VariantRenderer.render(original, contentType: "image/jpeg", spec: .fit(100), maxPixels: 1000))
        XCTAssertThrowsError(try VariantRenderer.render(original.prefix(200), contentType: "image/jpeg", spec: .fit(100)))
        XCTAssertThrowsError(try VariantRenderer.render(Data([1, 2, 3]), contentType: "image/png", spec: .square(32)))
    }
}
