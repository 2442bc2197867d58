// What a render's memory is estimated at from the source's header: libjpeg's coefficient arrays, shrink on load.
@testable import PhotoContent
import XCTest

final class RenderMemoryEstimateTests: XCTestCase {
    /// A smooth 643×481 RGB picture (neither side a multiple of a JPEG block or an MCU).
    static let picture: PixelImage = {
        var pixels = [UInt8]()
        for y in 0..<481 { for x in 0..<643 { pixels += [UInt8(x % 256), UInt8(y % 256), UInt8((x + y) % 256)] } }
        return PixelImage(width: 643, height: 481, channels: 3, pixels: pixels)
    }()

    func testAProgressiveJPEGCountsTheWholeImagesCoefficientsAndABaselineOneNone() throws {
        let progressive = try ImageCodec.encodeJPEG(Self.picture, quality: 85, progressive: true)
        let baseline = try ImageCodec.encodeJPEG(Self.picture, quality: 85)
        // libjpeg's defaults are 4:2:0: luma in 2×2-block MCUs, each chroma plane at half size. Blocks of 8×8
        // coefficients, 2 bytes each: luma ⌈643/8⌉ = 81 → 82 across (whole MCUs), ⌈481/8⌉ = 61 → 62 down;
        // chroma ⌈322/8⌉ = 41 across and ⌈241/8⌉ = 31 down.
        let blocks = 82 * 62 + 2 * (41 * 31)
        XCTAssertEqual(try ImageCodec.jpegHeader(progressive).coefficientBytes, blocks * 64 * 2)
        XCTAssertEqual(try ImageCodec.jpegHeader(baseline).coefficientBytes, 0)
        let header = try ImageCodec.jpegHeader(progressive)
        XCTAssertEqual([header.width, header.height], [643, 481])

        // At any size the progressive file's estimate carries those arrays on top of the baseline's.
        for spec in [VariantSpec.fit(200), .square(64)] {
            let withArrays = try XCTUnwrap(VariantRenderer.estimatedPeakBytes(
                prefix: progressive, sourceBytes: 1000, contentType: "image/jpeg", spec: spec))
            let without = try XCTUnwrap(VariantRenderer.estimatedPeakBytes(
                prefix: baseline, sourceBytes: 1000, contentType: "image/jpeg", spec: spec))
            XCTAssertGreaterThanOrEqual(withArrays - without, blocks * 128 - 643 * 481 * 3, "\(spec)")
            XCTAssertGreaterThan(withArrays, blocks * 128, "\(spec)")
        }
    }

    func testAPNGShrunkOnLoadIsEstimatedAtItsBandNotItsWholeImage() throws {
        let png = try ImageCodec.encodePNG(PixelImage(width: 1200, height: 900, channels: 4,
                                                      pixels: [UInt8](repeating: 90, count: 1200 * 900 * 4)))
        let whole = 1200 * 900 * 4
        // square:64 shrinks by 7 while decoding (short side 900 → 64 is 14×).
        let square = try XCTUnwrap(VariantRenderer.estimatedPeakBytes(prefix: png, sourceBytes: png.count,
                                                                      contentType: "image/png", spec: .square(64)))
        XCTAssertLessThan(square, png.count + whole / 10)
        // fit 800 cannot shrink on load (1.5×): the whole image is decoded, and counted.
        let fit = try XCTUnwrap(VariantRenderer.estimatedPeakBytes(prefix: png, sourceBytes: png.count,
                                                                   contentType: "image/png", spec: .fit(800)))
        XCTAssertGreaterThan(fit, png.count + whole)
    }

    func testAPNGOnlyTheWholeImageDecoderReadsIsEstimatedWhole() throws {
        // An interlaced header (the band decoder leaves these to the whole-image decoder); only the chunks
        // before the image data are read for an estimate.
        let interlaced = PNGFixture.make(width: 1200, height: 900, colourType: 6, depth: 8, trns: nil, interlaced: true)
        XCTAssertEqual(try ImageCodec.pngHeader(interlaced).decodesByBands, false)
        let estimate = try XCTUnwrap(VariantRenderer.estimatedPeakBytes(prefix: interlaced, sourceBytes: 0,
                                                                        contentType: "image/png", spec: .square(64)))
        XCTAssertGreaterThan(estimate, 1200 * 900 * 4)
    }

    func testAHeaderOverTheLimitCostsItsBytesAndASizeFromAHostileCatalogDoesNotOverflow() throws {
        let png = PNGFixture.make(width: 300, height: 200, colourType: 2, depth: 8, trns: nil)
        XCTAssertEqual(VariantRenderer.estimatedPeakBytes(prefix: png, sourceBytes: 77, contentType: "image/png",
                                                          spec: .square(64), maxPixels: 300 * 200 - 1), 77)
        XCTAssertEqual(VariantRenderer.estimatedPeakBytes(prefix: png, sourceBytes: Int.max, contentType: "image/png",
                                                          spec: .square(64)), Int.max)
    }

    func testASourceServedUnchangedCostsItsBytesAndAnUnreadableHeaderIsUnknown() throws {
        let small = try ImageCodec.encodeJPEG(Self.picture, quality: 85)
        XCTAssertEqual(VariantRenderer.estimatedPeakBytes(prefix: small, sourceBytes: 1234, contentType: "image/jpeg",
                                                          spec: .fit(1024)), 1234)
        XCTAssertNil(VariantRenderer.estimatedPeakBytes(prefix: small.prefix(40), sourceBytes: 1234,
                                                        contentType: "image/jpeg", spec: .fit(100)))
        XCTAssertNil(VariantRenderer.estimatedPeakBytes(prefix: Data("<html>".utf8), sourceBytes: 6,
                                                        contentType: "image/png", spec: .fit(100)))
    }
}
