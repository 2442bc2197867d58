// PNGs decoded band by band and block-shrunk as they arrive give what the whole-image decoder and blockShrink give.
@testable import PhotoContent
import XCTest

final class PNGShrinkOnLoadTests: XCTestCase {
    /// (name, colour type, depth, tRNS): every kind the band decoder takes on itself.
    static let kinds: [(name: String, colourType: UInt8, depth: UInt8, trns: [UInt8]?)] = [
        ("palette", 3, 8, nil),
        ("palette with transparency", 3, 8, [255, 0, 128, 255]),
        ("palette, 2-bit", 3, 2, nil),
        ("palette, 1-bit with transparency", 3, 1, [0, 255]),
        ("gray", 0, 8, nil),
        ("gray, 1-bit", 0, 1, nil),
        ("gray, 4-bit", 0, 4, nil),
        ("gray with a transparent value", 0, 8, [0, 0x30]),
        ("gray+alpha", 4, 8, nil),
        ("RGB", 2, 8, nil),
        ("RGB with a transparent colour", 2, 8, [0, 0x30, 0, 0x50, 0, 0x70]),
        ("RGBA", 6, 8, nil),
    ]

    func testEveryKindShrinksOnLoadToTheBytesOfTheWholeImageShrunk() throws {
        for kind in Self.kinds {
            // 121×83: neither side a multiple of any factor, so the partial last band and column are left out.
            let png = PNGFixture.make(width: 121, height: 83, colourType: kind.colourType, depth: kind.depth, trns: kind.trns)
            let whole = try ImageCodec.decodePNG(png)
            for factor in [2, 3, 5, 83] {
                let banded = try XCTUnwrap(try ImageCodec.decodePNG(png, shrinkingBy: factor), "\(kind.name) by \(factor)")
                let expected = ImageResizer.blockShrink(whole, by: factor)
                XCTAssertEqual([banded.width, banded.height, banded.channels],
                               [expected.width, expected.height, expected.channels], "\(kind.name) by \(factor)")
                XCTAssertEqual(banded.pixels, expected.pixels, "\(kind.name) by \(factor)")
            }
        }
    }

    func testAGammaNearSRGBsIsDecodedByBandsAndAnyOtherIsLeftToTheWholeImageDecoder() throws {
        for gamma in [45455, 45000, 45910] {
            let png = PNGFixture.make(width: 64, height: 40, colourType: 2, depth: 8, trns: nil, gamma: gamma)
            let banded = try XCTUnwrap(try ImageCodec.decodePNG(png, shrinkingBy: 2), "gamma \(gamma)")
            XCTAssertEqual(banded.pixels, ImageResizer.blockShrink(try ImageCodec.decodePNG(png), by: 2).pixels, "gamma \(gamma)")
        }
        // The simplified API converts a linear file to sRGB: the band decoder does not try to.
        let linear = PNGFixture.make(width: 64, height: 40, colourType: 2, depth: 8, trns: nil, gamma: 100_000)
        XCTAssertNil(try ImageCodec.decodePNG(linear, shrinkingBy: 2))
        XCTAssertNotEqual(try ImageCodec.decodePNG(linear).pixels,
                          try ImageCodec.decodePNG(PNGFixture.make(width: 64, height: 40, colourType: 2, depth: 8, trns: nil)).pixels,
                          "the whole-image decoder does convert this gamma (else the band decoder could take it)")
    }

    func testSixteenBitAndInterlacedFilesAndFactorsLargerThanTheImageAreLeftToTheWholeImageDecoder() throws {
        XCTAssertNil(try ImageCodec.decodePNG(PNGFixture.make(width: 40, height: 30, colourType: 2, depth: 16, trns: nil), shrinkingBy: 2))
        XCTAssertNil(try ImageCodec.decodePNG(PNGFixture.make(width: 40, height: 30, colourType: 6, depth: 8, trns: nil, interlaced: true), shrinkingBy: 2))
        XCTAssertNil(try ImageCodec.decodePNG(PNGFixture.make(width: 40, height: 30, colourType: 2, depth: 8, trns: nil), shrinkingBy: 31))
    }

    func testDamagedFilesAndTooManyPixelsAreErrorsNotCrashes() throws {
        let png = PNGFixture.make(width: 90, height: 60, colourType: 6, depth: 8, trns: nil)
        for cut in [20, 40, png.count / 2, png.count - 30] {
            XCTAssertThrowsError(try ImageCodec.decodePNG(png.prefix(cut), shrinkingBy: 3), "cut at \(cut)")
        }
        var corrupt = png
        corrupt[png.count / 2] ^= 0xFF // inside the stored image data: the zlib checksum or the CRC no longer holds
        XCTAssertThrowsError(try ImageCodec.decodePNG(corrupt, shrinkingBy: 3))
        XCTAssertThrowsError(try ImageCodec.decodePNG(png, maxPixels: 90 * 60 - 1, shrinkingBy: 3)) { error in
            XCTAssertTrue("\(error)".contains("more pixels than allowed"), "\(error)")
        }
    }

    func testVariantsRenderedThroughBandsAreTheBytesOfVariantsFromTheWholeImage() throws {
        let png = PNGFixture.make(width: 603, height: 411, colourType: 6, depth: 8, trns: nil)
        let whole = try ImageCodec.decodePNG(png)
        // fit 100: a 6× reduction (block factor 3); square:40, short side 411 → 40 (factor 5).
        let fitted = try VariantRenderer.render(png, contentType: "image/png", spec: .fit(100))
        XCTAssertEqual(fitted.data, try ImageCodec.encodePNG(ImageResizer.resize(whole, width: 100, height: 68)))
        let square = try VariantRenderer.render(png, contentType: "image/png", spec: .square(40))
        XCTAssertEqual(square.data, try ImageCodec.encodePNG(ImageResizer.squareThumbnail(whole, side: 40)))
        XCTAssertEqual(ImageResizer.Resampling.whole(sourceWidth: 603, sourceHeight: 411, width: 100, height: 68).blockFactor, 3)
        XCTAssertEqual(ImageResizer.Resampling.square(sourceWidth: 603, sourceHeight: 411, side: 40).blockFactor, 5)
    }
}
