// PNG text chunks: inserted right after IHDR with correct CRCs, still a PNG libpng decodes, read back, and any
// bytes at all (truncated, garbage, lying lengths) read without a trap.
@testable import PhotoContent
import Foundation
import XCTest

final class PNGTextChunksTests: XCTestCase {
    func smallPNG() throws -> Data {
        var pixels = [UInt8]()
        for index in 0..<(12 * 8) { pixels += [UInt8(index % 256), 40, 200, 255] }
        return try ImageCodec.encodePNG(PixelImage(width: 12, height: 8, channels: 4, pixels: pixels))
    }

    func testCRCIsPNGsCRC32() {
        XCTAssertEqual(PNGTextChunks.crc32(Array("123456789".utf8)), 0xCBF4_3926, "the CRC-32 check value")
        XCTAssertEqual(PNGTextChunks.crc32(Array("IEND".utf8)), 0xAE42_6082, "every PNG's IEND CRC")
    }

    func testEntriesGoRightAfterIHDRAndTheImageStillDecodes() throws {
        let png = try smallPNG()
        let entries: [(key: String, value: String)] = [("Thumb::URI", "file:///a%20b.jpg"), ("Thumb::MTime", "1700000000"),
                                                       ("Thumb::Size", "12345"), ("Comment", "café ☕")]
        let stamped = try PNGTextChunks.inserting(entries, into: png)
        let chunks = PNGTextChunks.chunks(in: [UInt8](stamped))
        XCTAssertEqual(chunks.map(\.type).prefix(5), ["IHDR", "tEXt", "tEXt", "tEXt", "iTXt"],
                       "Latin-1 values as tEXt (what GLib reads), others as iTXt, all before the image data")
        XCTAssertEqual(chunks.last?.type, "IEND")
        let bytes = [UInt8](stamped)
        for chunk in chunks {
            let stored = bytes[chunk.dataEnd..<chunk.end].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            XCTAssertEqual(stored, PNGTextChunks.crc32(bytes[(chunk.dataStart - 4)..<chunk.dataEnd]), chunk.type)
        }
        XCTAssertEqual(PNGTextChunks.entries(in: stamped),
                       ["Thumb::URI": "file:///a%20b.jpg", "Thumb::MTime": "1700000000", "Thumb::Size": "12345",
                        "Comment": "café ☕"])
        let decoded = try ImageCodec.decodePNG(stamped)
        XCTAssertEqual(decoded.pixels, try ImageCodec.decodePNG(png).pixels)
    }

    func testInsertingAgainReplacesTheValueInsteadOfAddingASecond() throws {
        let once = try PNGTextChunks.inserting([("Thumb::MTime", "1"), ("Software", "x")], into: try smallPNG())
        let twice = try PNGTextChunks.inserting([("Thumb::MTime", "2")], into: once)
        let mtimes = PNGTextChunks.textChunks(in: [UInt8](twice)).filter { $0.key == "Thumb::MTime" }
        XCTAssertEqual(mtimes.map(\.value), ["2"])
        XCTAssertEqual(PNGTextChunks.entries(in: twice)["Software"], "x", "other keys stay")
    }

    func testBadKeysValuesAndNonPNGsAreErrors() throws {
        let png = try smallPNG()
        for key in ["", String(repeating: "k", count: 80), " lead", "trail ", "two  spaces", "nul\0key", "日本"] {
            XCTAssertThrowsError(try PNGTextChunks.inserting([(key, "v")], into: png), key.debugDescription)
        }
        XCTAssertThrowsError(try PNGTextChunks.inserting([("Key", "nul\0value")], into: png))
        XCTAssertThrowsError(try PNGTextChunks.inserting([("Key", "v")], into: Data("not a png".utf8)))
        XCTAssertThrowsError(try PNGTextChunks.inserting([("Key", "v")], into: png.prefix(20)))
    }

    func testHostileBytesNeverTrap() throws {
        let stamped = try PNGTextChunks.inserting([("Thumb::URI", "file:///x"), ("Thumb::MTime", "5")], into: try smallPNG())
        // Every truncation: whatever is read must be what was fully there.
        for length in 0...stamped.count {
            let entries = PNGTextChunks.entries(in: stamped.prefix(length))
            for (key, value) in entries { XCTAssertEqual(["Thumb::URI": "file:///x", "Thumb::MTime": "5"][key], value) }
        }
        // Lengths that lie (up to 0xFFFFFFFF), a missing NUL, an iTXt too short for its fields, garbage.
        let signature = PNGTextChunks.signature
        func chunk(_ length: UInt32, _ type: String, _ data: [UInt8]) -> [UInt8] {
            [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
                + Array(type.utf8) + data + [0, 0, 0, 0]
        }
        let hostile: [[UInt8]] = [
            signature + chunk(0xFFFF_FFFF, "tEXt", Array("Thumb::URI\0x".utf8)),
            signature + chunk(0x7FFF_FFFF, "tEXt", []),
            signature + chunk(5, "tEXt", Array("nonul".utf8)),
            signature + chunk(3, "iTXt", [0x41, 0, 0]),
            signature + chunk(6, "iTXt", [0x41, 0, 0, 0, 0x41, 0x41]),
            signature + chunk(2, "iTXt", [0x41, 0]),
            signature + chunk(4, "tEXt", [0, 0, 0, 0]),
            signature + [0, 0],
            signature,
            [],
            Array(repeating: 0xFF, count: 100),
        ]
        for bytes in hostile { _ = PNGTextChunks.entries(in: Data(bytes)) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var bytes = [UInt8](stamped)
            for _ in 0..<4 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            _ = PNGTextChunks.entries(in: Data(bytes))
            _ = try? PNGTextChunks.inserting([("K", "v")], into: Data(bytes))
        }
        XCTAssertEqual(PNGTextChunks.entries(in: Data(signature + chunk(4, "tEXt", Array("k\0v!".utf8)))), ["k": "v!"])
    }
}
