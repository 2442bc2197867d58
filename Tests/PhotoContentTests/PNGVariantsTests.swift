// PNG originals of every kind libpng can hand us (palette, palette with transparency, gray, gray+alpha,
// 16-bit): each decodes, resizes and keeps (or gains) the channels it should.
import PhotoContent
import XCTest

final class PNGVariantsTests: XCTestCase {
    func testEveryPNGKindRendersWithTheRightChannels() throws {
        // (colour type, bit depth, channels decoded, what one pixel's bytes look like)
        let kinds: [(name: String, colourType: UInt8, depth: UInt8, channels: Int, trns: [UInt8]?)] = [
            ("palette", 3, 8, 3, nil),
            ("palette with transparency", 3, 8, 4, [255, 0, 128, 255]),
            ("gray", 0, 8, 1, nil),
            ("gray 16-bit", 0, 16, 1, nil),
            ("gray+alpha", 4, 8, 2, nil),
            ("RGB 16-bit", 2, 16, 3, nil),
            ("RGBA 16-bit", 6, 16, 4, nil),
        ]
        for kind in kinds {
            let png = PNGFixture.make(width: 120, height: 80, colourType: kind.colourType, depth: kind.depth, trns: kind.trns)
            let decoded = try ImageCodec.decodePNG(png)
            XCTAssertEqual([decoded.width, decoded.height, decoded.channels], [120, 80, kind.channels], kind.name)
            let fitted = try VariantRenderer.render(png, contentType: "image/png", spec: .fit(60))
            XCTAssertEqual(fitted.contentType, "image/png", kind.name)
            XCTAssertEqual([fitted.width, fitted.height], [60, 40], kind.name)
            let square = try ImageCodec.decodePNG(try VariantRenderer.render(png, contentType: "image/png", spec: .square(32)).data)
            XCTAssertEqual([square.width, square.height, square.channels], [32, 32, kind.channels], kind.name)
        }
    }
}

/// Writes PNGs of any colour type and depth with stored (uncompressed) deflate blocks: enough for fixtures
/// our own encoder does not produce (it writes 8-bit only, never palettes).
enum PNGFixture {
    /// `depth` 1, 2, 4 (gray and palette only), 8 or 16; `gamma` writes a gAMA chunk (100,000 = 1.0); an
    /// `interlaced` file says Adam7 in its header over rows laid out plainly (only its header is valid).
    static func make(width: Int, height: Int, colourType: UInt8, depth: UInt8, trns: [UInt8]?, gamma: Int? = nil,
                     interlaced: Bool = false) -> Data {
        let samples: Int = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colourType)]!
        let bytesPerSample = depth == 16 ? 2 : 1
        var raw = [UInt8]()
        for y in 0..<height {
            raw.append(0) // filter: none
            var packed = [UInt8](), bits = 0
            for x in 0..<width {
                for sample in 0..<samples {
                    let value = colourType == 3 ? UInt16((x / 30 + y / 20) % 4) : UInt16((x * 500 + y * 300 + sample * 9000) % 65536)
                    if depth < 8 {
                        // Samples packed from the high bit; a palette index wraps to the entries `depth` reaches.
                        let sample = colourType == 3 ? value % (1 << depth) : value >> (16 - UInt16(depth))
                        if bits % 8 == 0 { packed.append(0) }
                        packed[packed.count - 1] |= UInt8(sample) << (8 - Int(depth) - bits % 8)
                        bits += Int(depth)
                    } else if bytesPerSample == 2 {
                        raw += [UInt8(value >> 8), UInt8(value & 0xFF)]
                    } else {
                        raw.append(UInt8(value >> (colourType == 3 ? 0 : 8)))
                    }
                }
            }
            raw += packed
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ body: [UInt8]) {
            png += be32(body.count) + Array(type.utf8) + body + be32(Int(crc32(Array(type.utf8) + body)))
        }
        chunk("IHDR", be32(width) + be32(height) + [depth, colourType, 0, 0, interlaced ? 1 : 0])
        if let gamma { chunk("gAMA", be32(gamma)) }
        if colourType == 3 { chunk("PLTE", [200, 30, 30, 30, 200, 30, 30, 30, 200, 240, 240, 240]) }
        if let trns { chunk("tRNS", trns) }
        chunk("IDAT", zlibStored(raw))
        chunk("IEND", [])
        return Data(png)
    }

    static func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) } }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, data.count - offset)
            let last: UInt8 = offset + count == data.count ? 1 : 0
            out += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        return out + be32(Int(b << 16 | a))
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
