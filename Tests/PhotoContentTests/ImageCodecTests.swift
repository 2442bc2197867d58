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

    /// A PNG of 16-bit samples, built by hand (stored deflate blocks): colour type 2 (RGB) or 4 (grey and
    /// alpha), every pixel `sample`, with a gAMA chunk when `gamma` is given (in 1/100,000).
    static func sixteenBitPNG(colourType: UInt8, sample: [UInt16], width: Int = 4, height: Int = 2, gamma: UInt32? = nil) -> Data {
        func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func crc32(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return ~crc
        }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            be32(UInt32(body.count)) + Array(type.utf8) + body + be32(crc32(Array(type.utf8) + body))
        }
        var raw: [UInt8] = []
        for _ in 0..<height {
            raw.append(0) // filter: none
            for _ in 0..<width { for value in sample { raw += [UInt8(value >> 8), UInt8(value & 0xFF)] } }
        }
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        let zlib: [UInt8] = [0x78, 0x01, 0x01, UInt8(raw.count & 0xFF), UInt8(raw.count >> 8),
                             UInt8(~raw.count & 0xFF), UInt8((~raw.count >> 8) & 0xFF)] + raw + be32(b << 16 | a)
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [16, colourType, 0, 0, 0])
        if let gamma { png += chunk("gAMA", be32(gamma)) }
        png += chunk("IDAT", zlib) + chunk("IEND", [])
        return Data(png)
    }

    /// 16-bit samples without gAMA, sRGB or iCCP are sRGB-encoded as an 8-bit file's are (numpy, OpenCV and
    /// scanners write them so): 0x8000 is 128, not libpng's "linear" reading of it (188, far too bright).
    func testSixteenBitPNGsWithoutAColourSpaceAreNotBrightened() throws {
        let rgb = try ImageCodec.decodePNG(Self.sixteenBitPNG(colourType: 2, sample: [0x8000, 0x4000, 0xFFFF]))
        XCTAssertEqual(rgb.channels, 3)
        XCTAssertEqual(Array(rgb.pixels.prefix(3)), [0x80, 0x40, 0xFF])
        XCTAssertEqual(Set(stride(from: 0, to: rgb.pixels.count, by: 3).map { rgb.pixels[$0] }), [0x80], "every pixel")
        let greyAlpha = try ImageCodec.decodePNG(Self.sixteenBitPNG(colourType: 4, sample: [0x8000, 0x8000]))
        XCTAssertEqual(greyAlpha.channels, 2)
        XCTAssertEqual(Int(greyAlpha.pixels[0]), 0x80, accuracy: 1, "grey as stored, not darkened by its alpha")
        XCTAssertEqual(greyAlpha.pixels[1], 0x80)
        let clear = try ImageCodec.decodePNG(Self.sixteenBitPNG(colourType: 4, sample: [0x8000, 0]))
        XCTAssertEqual(clear.pixels[1], 0, "transparent stays transparent")
        // A gAMA of 1/2.2 says what the samples encode: libpng's reading, as before (also 128).
        let withGamma = try ImageCodec.decodePNG(Self.sixteenBitPNG(colourType: 2, sample: [0x8000, 0x8000, 0x8000], gamma: 45_455))
        XCTAssertEqual(Int(withGamma.pixels[0]), 128, accuracy: 1)
    }

    func testCorruptAndOversizedImagesAreErrors() throws {
        let data = try ImageCodec.encodeJPEG(gradient(width: 64, height: 64, channels: 3), quality: 80)
        XCTAssertThrowsError(try ImageCodec.decodeJPEG(data.prefix(20)))
        XCTAssertThrowsError(try ImageCodec.decodeJPEG(Data("not a jpeg".utf8)))
        XCTAssertThrowsError(try ImageCodec.decodeJPEG(data, maxPixels: 100))
        XCTAssertThrowsError(try ImageCodec.decodePNG(Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])))
    }
}
