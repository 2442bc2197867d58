// Desktop thumbnails from a rendition: fitted per size, never enlarged, upright, 8-bit RGBA non-interlaced PNG;
// corrupt input is an error; and how long normal+large take for the renditions photofs fetches.
@testable import PhotoContent
import Foundation
import XCTest

final class DesktopThumbnailRendererTests: XCTestCase {
    /// A photo-like picture: smooth gradients with fine texture, so JPEG and PNG do real work.
    func photo(width: Int, height: Int, channels: Int = 3) -> PixelImage {
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height { for x in 0..<width { for c in 0..<channels {
            let texture = (x * 7 + y * 13 + c * 5) % 23
            pixels[(y * width + x) * channels + c] = UInt8((x * 200 / width + y * 55 / height + texture + c * 30) % 256)
        } } }
        return PixelImage(width: width, height: height, channels: channels, pixels: pixels)
    }

    /// IHDR's width, height, bit depth, colour type and interlace method.
    func header(_ png: Data) -> [Int] {
        let bytes = [UInt8](png)
        func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        return [u32(16), u32(20), Int(bytes[24]), Int(bytes[25]), Int(bytes[28])]
    }

    func testEachSizeFitsItsEdgeAsAnRGBAPNG() throws {
        let jpeg = try ImageCodec.encodeJPEG(photo(width: 500, height: 375), quality: 85)
        let pngs = try DesktopThumbnailRenderer.pngs(from: jpeg, sizes: [.normal, .large])
        XCTAssertEqual(Set(pngs.keys), [.normal, .large])
        // 8 bits, colour type 6 (RGBA), not interlaced: the standard's format.
        XCTAssertEqual(header(pngs[.normal]!), [128, 96, 8, 6, 0])
        XCTAssertEqual(header(pngs[.large]!), [256, 192, 8, 6, 0])
        let decoded = try ImageCodec.decodePNG(pngs[.large]!)
        XCTAssertEqual(decoded.channels, 4)
        XCTAssertTrue(stride(from: 3, to: decoded.pixels.count, by: 4).allSatisfy { decoded.pixels[$0] == 255 }, "opaque")
        XCTAssertTrue(PNGTextChunks.entries(in: pngs[.large]!).isEmpty, "the store adds the Thumb:: keys")
        XCTAssertEqual(try DesktopThumbnailRenderer.pngs(from: jpeg, sizes: [.normal, .large]), pngs, "deterministic")
        XCTAssertEqual(try DesktopThumbnailRenderer.pngs(from: jpeg, sizes: []), [:])
    }

    func testASmallSourceIsNeverEnlarged() throws {
        let jpeg = try ImageCodec.encodeJPEG(photo(width: 200, height: 150), quality: 85)
        let pngs = try DesktopThumbnailRenderer.pngs(from: jpeg, sizes: DesktopThumbnailSize.allCases)
        XCTAssertEqual(header(pngs[.normal]!).prefix(2), [128, 96])
        for size in [DesktopThumbnailSize.large, .xLarge, .xxLarge] {
            XCTAssertEqual(header(pngs[size]!).prefix(2), [200, 150], "\(size) holds the source at its own size")
            XCTAssertEqual(pngs[size], pngs[.large], "one encoding shared")
        }
        // The source's pixels themselves, not a resampled copy.
        let source = try ImageCodec.decodeJPEG(jpeg)
        let kept = try ImageCodec.decodePNG(pngs[.large]!)
        XCTAssertEqual(DesktopThumbnailRenderer.rgba(source).pixels, kept.pixels)
    }

    func testTheEXIFOrientationIsApplied() throws {
        // Left half dark, right half light, stored landscape; orientation 6 means "turn 90° clockwise to show".
        let image = PixelImage(width: 400, height: 300, channels: 3, pixels: (0..<(400 * 300)).flatMap { index -> [UInt8] in
            index % 400 < 200 ? [20, 20, 20] : [230, 230, 230]
        })
        let jpeg = VariantRendererTests.withOrientation(try ImageCodec.encodeJPEG(image, quality: 90), 6)
        let normal = try ImageCodec.decodePNG(try DesktopThumbnailRenderer.pngs(from: jpeg, sizes: [.normal])[.normal]!)
        XCTAssertEqual([normal.width, normal.height], [96, 128], "portrait once upright")
        // Turned clockwise, the stored left half (dark) is now the top.
        let top = normal.pixels[(10 * 96 + 48) * 4], bottom = normal.pixels[(118 * 96 + 48) * 4]
        XCTAssertLessThan(top, 60)
        XCTAssertGreaterThan(bottom, 200)
    }

    func testPNGAndGraySourcesBecomeRGBAKeepingAlpha() throws {
        var rgba = photo(width: 300, height: 300, channels: 4)
        for index in 0..<(300 * 150) { rgba.pixels[index * 4 + 3] = 0 } // the top half transparent
        for index in (300 * 150)..<(300 * 300) { rgba.pixels[index * 4 + 3] = 255 }
        let fromPNG = try ImageCodec.decodePNG(try DesktopThumbnailRenderer.pngs(from: try ImageCodec.encodePNG(rgba),
                                                                                 sizes: [.normal])[.normal]!)
        XCTAssertEqual([fromPNG.width, fromPNG.height, fromPNG.channels], [128, 128, 4])
        XCTAssertEqual(fromPNG.pixels[(5 * 128 + 64) * 4 + 3], 0, "transparent stays transparent")
        XCTAssertEqual(fromPNG.pixels[(120 * 128 + 64) * 4 + 3], 255)

        let gray = try ImageCodec.encodeJPEG(photo(width: 300, height: 200, channels: 1), quality: 85)
        let fromGray = try ImageCodec.decodePNG(try DesktopThumbnailRenderer.pngs(from: gray, sizes: [.normal])[.normal]!)
        XCTAssertEqual([fromGray.width, fromGray.height, fromGray.channels], [128, 85, 4])
        XCTAssertEqual(fromGray.pixels[0], fromGray.pixels[1])
    }

    func testCorruptInputIsAnError() throws {
        let jpeg = try ImageCodec.encodeJPEG(photo(width: 320, height: 240), quality: 85)
        XCTAssertThrowsError(try DesktopThumbnailRenderer.pngs(from: Data("not an image".utf8), sizes: [.normal]))
        XCTAssertThrowsError(try DesktopThumbnailRenderer.pngs(from: Data(), sizes: [.normal]))
        for length in [2, 20, 200] {
            XCTAssertThrowsError(try DesktopThumbnailRenderer.pngs(from: jpeg.prefix(length), sizes: [.normal]), "\(length)")
        }
        XCTAssertThrowsError(try DesktopThumbnailRenderer.pngs(from: Data(PNGTextChunks.signature + [0, 0, 0, 13]),
                                                               sizes: [.normal]))
        // A header claiming 65535×65535 pixels is refused before any pixel is decoded.
        var bomb = [UInt8](jpeg)
        if let sof = (0..<(bomb.count - 9)).first(where: { bomb[$0] == 0xFF && bomb[$0 + 1] == 0xC0 }) {
            bomb[sof + 5] = 0xFF; bomb[sof + 6] = 0xFF; bomb[sof + 7] = 0xFF; bomb[sof + 8] = 0xFF
        }
        XCTAssertThrowsError(try DesktopThumbnailRenderer.pngs(from: Data(bomb), sizes: [.normal]))
    }
}
