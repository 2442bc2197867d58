// JPEG and PNG through libjpeg-turbo and libpng: round trips, and corrupt input as an error, not a crash.
import PhotoContent
import XCTest

final class ImageCodecTests: XCTestCase {
    func gradient(width: Int, height: Int, channels: Int) -> PixelImage {
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height { for x in 0..<width { for c in 0..<channels {
            pixels[(y * width + x) * channels + c] = UInt8((x * 3 + y * 5 + c * 40) % 256)
        } } }
        return PixelImage(width: width, height: height, channels: channels, pixels: pixels)
    }

    func testJPEGRoundTripKeepsDimensionsAndScalesWhileDecoding() throws {
        let data = try ImageCodec.encodeJPEG(gradient(width: 64, height: 48, channels: 3), quality: 90)
        XCTAssertEqual(Array(data.prefix(2)), [0xFF, 0xD8])
        let full = try ImageCodec.decodeJPEG(data)
        XCTAssertEqual([full.width, full.height], [64, 48])
        let eighth = try ImageCodec.decodeJPEG(data, scaleDenominator: 8)
        XCTAssertEqual([eighth.width, eighth.height], [8, 6])
    }

    func testPNGRoundTripIsLosslessWithAlpha() throws {
        let image = gradient(width: 20, height: 10, channels: 4)
        let decoded = try ImageCodec.decodePNG(try ImageCodec.encodePNG(image))
        XCTAssertEqual(decoded.pixels, image.pixels)
    }

    func testCorruptAndOversizedImagesAreErrors() throws {
        let data = try ImageCodec.encodeJPEG(gradient(width: 64, height: 64, channels: 3), quality: 80)
        XCTAssertThrowsError(try ImageCodec.decodeJPEG(data.prefix(20)))
        XCTAssertThrowsError(try ImageCodec.decodeJPEG(Data("not a jpeg".utf8)))
        XCTAssertThrowsError(try ImageCodec.decodeJPEG(data, maxPixels: 100))
        XCTAssertThrowsError(try ImageCodec.decodePNG(Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])))
    }
}
