// HEIC photos in sized mounts and thumbnails: libheif decodes them upright, served as JPEG, never rotated twice.
import Foundation
import PhotoContent
import XCTest

final class HeifRenderingTests: XCTestCase {
    var folder: String!

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "heif-render-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: folder) }

    /// A HEIC made by heif-enc from a 192×128 JPEG, and that JPEG's pixels.
    func heic(exifOrientation: Int? = nil) throws -> (heic: Data, source: PixelImage) {
        let jpeg = try PhotoFixtures.jpeg(width: 192, height: 128, seed: 5)
        let jpegPath = folder + "/source.jpg", heicPath = folder + "/photo.heic"
        try jpeg.write(to: URL(fileURLWithPath: jpegPath))
        try PhotoFixtures.heic(from: jpegPath, to: heicPath)
        if let exifOrientation { try PhotoFixtures.exiftool(heicPath, ["-Orientation#=\(exifOrientation)"]) }
        return (try Data(contentsOf: URL(fileURLWithPath: heicPath)), try ImageCodec.decodeJPEG(jpeg))
    }

    func testDecodesToTheSourcePixels() throws {
        let (data, source) = try heic()
        let header = try HeifDecoding.header(data)
        XCTAssertEqual([header.width, header.height], [192, 128])
        XCTAssertFalse(header.hasAlpha)
        let image = try HeifDecoding.decode(data, maxPixels: 100_000_000)
        XCTAssertEqual([image.width, image.height, image.channels], [192, 128, 3])
        // HEVC at quality 50 against the JPEG: close, not equal.
        let difference = zip(image.pixels, source.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        XCTAssertLessThan(Double(difference) / Double(image.pixels.count), 20)
    }

    /// A fit variant of a HEIC is a JPEG (photofs writes no HEIC) of the fitted size; a square one a PNG.
    func testVariantsAreJPEGAndPNG() throws {
        let (data, _) = try heic()
        let fit = try VariantRenderer.render(data, contentType: "image/heic", spec: .fit(96), outputType: "image/heic")
        XCTAssertEqual(fit.contentType, "image/jpeg")
        XCTAssertFalse(fit.isUnchanged)
        XCTAssertEqual([fit.width, fit.height], [96, 64])
        let decoded = try ImageCodec.jpegSize(fit.data)
        XCTAssertEqual([decoded.width, decoded.height], [96, 64])
        // Larger than the photo: still a JPEG, at the photo's size.
        let large = try VariantRenderer.render(data, contentType: "image/heic", spec: .fit(4096), outputType: "image/heic")
        XCTAssertEqual([large.width, large.height], [192, 128])
        XCTAssertEqual(large.contentType, "image/jpeg")
        let square = try VariantRenderer.render(data, contentType: "image/heic", spec: .square(48))
        XCTAssertEqual(square.contentType, "image/png")
        XCTAssertEqual([square.width, square.height], [48, 48])
        XCTAssertEqual(VariantSpec.fit(96).servedType(forOriginal: "image/heic"), "image/jpeg")
        XCTAssertEqual(VariantSpec.fit(96).servedType(forOriginal: "image/png"), "image/png")
    }

    /// libheif applies the file's own rotation; an EXIF orientation in a HEIC describes the stored pixels and
    /// is not applied on top (a landscape photo stays landscape).
    func testExifOrientationIsNotAppliedTwice() throws {
        let (data, _) = try heic(exifOrientation: 6)
        let fit = try VariantRenderer.render(data, contentType: "image/heic", spec: .fit(96), outputType: "image/heic")
        XCTAssertEqual([fit.width, fit.height], [96, 64])
    }

    func testMemoryEstimateCoversTheDecodedImage() throws {
        let (data, _) = try heic()
        let estimate = try XCTUnwrap(VariantRenderer.estimatedPeakBytes(prefix: data, sourceBytes: data.count,
                                                                        contentType: "image/heic", spec: .fit(96),
                                                                        outputType: "image/heic"))
        XCTAssertGreaterThanOrEqual(estimate, data.count + 2 * 192 * 128 * 3)
        let refused = VariantRenderer.estimatedPeakBytes(prefix: data, sourceBytes: data.count, contentType: "image/heic",
                                                         spec: .fit(96), maxPixels: 100)
        XCTAssertEqual(refused, data.count, "over the pixel limit: refused before decoding, costs its bytes")
    }

    /// Truncated, corrupted and random bytes are errors, never a crash; a header over the limit decodes nothing.
    func testHostileBytesAreErrors() throws {
        let (data, _) = try heic()
        XCTAssertThrowsError(try HeifDecoding.decode(data, maxPixels: 100))
        XCTAssertThrowsError(try HeifDecoding.decode(Data(), maxPixels: 100_000_000))
        var random = SystemRandomNumberGenerator()
        for cut in stride(from: 0, to: data.count, by: max(1, data.count / 23)) {
            _ = try? HeifDecoding.decode(data.prefix(cut), maxPixels: 100_000_000)
        }
        for _ in 0..<40 {
            var damaged = data
            for _ in 0..<8 {
                let index = Int.random(in: 0..<damaged.count, using: &random)
                damaged[index] = UInt8.random(in: 0...255, using: &random)
            }
            _ = try? VariantRenderer.render(damaged, contentType: "image/heic", spec: .fit(64))
        }
        XCTAssertThrowsError(try VariantRenderer.render(Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
                                                        contentType: "image/heic", spec: .fit(64)))
    }
}
