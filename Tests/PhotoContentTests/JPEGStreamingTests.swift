// A JPEG resampled as its rows are decoded gives the same bytes as one decoded whole, and fails the same way.
@testable import PhotoContent
import XCTest

final class JPEGStreamingTests: XCTestCase {
    /// Detail in every channel, neither side a multiple of a JPEG block.
    func picture(width: Int, height: Int, channels: Int) -> PixelImage {
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height { for x in 0..<width { for c in 0..<channels {
            pixels[(y * width + x) * channels + c] = UInt8((x * 7 + y * 3 + c * 50 + (x * y) % 13) % 256)
        } } }
        return PixelImage(width: width, height: height, channels: channels, pixels: pixels)
    }

    /// What the renderer made before it streamed: the JPEG decoded whole at the same DCT scale, resampled,
    /// turned upright and encoded.
    func renderedWhole(_ jpeg: Data, spec: VariantSpec, orientation: Int) throws -> Data {
        let stored = try ImageCodec.jpegSize(jpeg)
        let target = VariantRenderer.storedTarget(stored.width, stored.height, spec, orientation: orientation)
        let denominator = VariantRenderer.dctDenominator(stored.width, stored.height, target: target)
        let decoded = try ImageCodec.decodeJPEG(jpeg, scaleDenominator: denominator, dcOnly: true)
        let resampled = ImageResizer.resample(decoded, VariantRenderer.geometry(decoded.width, decoded.height, spec,
                                                                                orientation: orientation))
        let upright = ImageResizer.upright(resampled, orientation: orientation)
        if case .square = spec { return try ImageCodec.encodePNG(upright) }
        return try ImageCodec.encodeJPEG(upright, quality: RenderOptions().jpegQuality)
    }

    func testStreamedRendersEqualWholeDecodesForEveryKindOfJPEGSizeAndOrientation() throws {
        let rgb = picture(width: 1283, height: 917, channels: 3)
        let sources: [(name: String, jpeg: Data, orientations: [Int])] = [
            ("baseline RGB", try ImageCodec.encodeJPEG(rgb, quality: 90), [1, 6]),
            ("progressive RGB", try ImageCodec.encodeJPEG(rgb, quality: 90, progressive: true), [1]),
            ("gray", try ImageCodec.encodeJPEG(picture(width: 389, height: 517, channels: 1), quality: 90), [1]),
            ("CMYK", try ImageCodec.encodeJPEG(picture(width: 517, height: 389, channels: 4), quality: 90), [1]),
        ]
        // fit 600 and 150: no block shrink (rows straight into the Lanczos pass, at 1/1 and 1/2); fit 24 and
        // square 20: a block shrink after the DCT scale; square 256: a crop, so rows past it are never used.
        let specs: [VariantSpec] = [.fit(600), .fit(150), .fit(24), .square(256), .square(20)]
        var compared = 0
        for (name, jpeg, orientations) in sources {
            for orientation in orientations {
                let source = orientation == 1 ? jpeg : VariantRendererTests.withOrientation(jpeg, UInt8(orientation))
                for spec in specs {
                    let streamed = try VariantRenderer.render(source, contentType: "image/jpeg", spec: spec)
                    if streamed.isUnchanged { continue }
                    XCTAssertEqual(streamed.data, try renderedWhole(source, spec: spec, orientation: orientation),
                                   "\(name), orientation \(orientation), \(spec)")
                    compared += 1
                }
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 23)
    }

    func testDamageBelowTheRowsARenderUsesStillFailsIt() throws {
        // A square crop of a tall photo uses its middle rows only; the file is cut in its last fifth.
        let tall = try ImageCodec.encodeJPEG(picture(width: 400, height: 1600, channels: 3), quality: 90)
        let cut = tall.prefix(tall.count * 9 / 10)
        XCTAssertNoThrow(try VariantRenderer.render(tall, contentType: "image/jpeg", spec: .square(128)))
        XCTAssertThrowsError(try VariantRenderer.render(cut, contentType: "image/jpeg", spec: .square(128))) {
            XCTAssertTrue("\($0)".contains("truncated"), "\($0)")
        }
        XCTAssertThrowsError(try ImageCodec.decodeJPEG(cut))
    }

    func testARowReaderStopsAtItsEndAndAfterAnError() throws {
        let jpeg = try ImageCodec.encodeJPEG(picture(width: 64, height: 48, channels: 3), quality: 90)
        try ImageCodec.withJPEGRows(jpeg) { rows in
            XCTAssertEqual([rows.width, rows.height, rows.channels], [64, 48, 3])
            var buffer = [UInt8](repeating: 0, count: 64 * 3 * 48)
            try buffer.withUnsafeMutableBufferPointer { buffer in
                try rows.read(into: buffer.baseAddress!, count: 40)
                // Asking past the end is an error, and every read after an error fails without reaching libjpeg.
                XCTAssertThrowsError(try rows.read(into: buffer.baseAddress!, count: 9))
                XCTAssertThrowsError(try rows.read(into: buffer.baseAddress!, count: 1))
            }
            XCTAssertEqual(rows.rowsRead, 40)
        }
        XCTAssertThrowsError(try ImageCodec.withJPEGRows(Data("not a jpeg".utf8)) { _ in })
    }
}

extension JPEGStreamingTests {
    /// The specs above reach both of `resample`'s streaming paths: with and without a block shrink.
    func testTheSpecsCoverBothStreamingPaths() throws {
        let factors = [VariantSpec.fit(600), .fit(150), .fit(24), .square(20)].map { spec -> Int in
            let target = VariantRenderer.storedTarget(1283, 917, spec, orientation: 1)
            let d = VariantRenderer.dctDenominator(1283, 917, target: target)
            return VariantRenderer.geometry((1283 + d - 1) / d, (917 + d - 1) / d, spec, orientation: 1).blockFactor
        }
        XCTAssertEqual(factors.map { $0 > 1 }, [false, false, true, true], "\(factors)")
    }
}
