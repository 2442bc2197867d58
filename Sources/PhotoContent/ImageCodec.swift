// JPEG and PNG encoding and decoding in memory, through libjpeg-turbo and libpng's simplified API.
import CJPEG
import CPNG
import Foundation

public struct ImageCodecError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}

/// Decoded 8-bit pixels, row-major, `channels` bytes per pixel (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA).
public struct PixelImage: Sendable {
    public var width: Int
    public var height: Int
    public var channels: Int
    public var pixels: [UInt8]
    public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * channels, "pixel buffer does not match the dimensions")
        self.width = width; self.height = height; self.channels = channels; self.pixels = pixels
    }
}

public enum ImageCodec {
    /// Encodes gray (1 channel), RGB (3) or CMYK (4, Adobe's inverted convention) pixels. Variants are
    /// baseline; `progressive` exists for test fixtures and the demo library.
    public static func encodeJPEG(_ image: PixelImage, quality: Int, progressive: Bool = false) throws -> Data {
        precondition([1, 3, 4].contains(image.channels), "JPEG holds gray, RGB or CMYK")
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            photofs_jpeg_encode(pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.channels),
                                Int32(quality), progressive ? 1 : 0, &output, &size, &message, message.count)
        }
        defer { free(output) }
        guard status == 0, let output else {
            throw ImageCodecError(message: "JPEG encoding failed: \(String(cString: message))")
        }
        return Data(bytes: output, count: Int(size))
    }

    /// Decodes a JPEG to RGB (gray stays one channel; CMYK becomes RGB), optionally scaled down by 2, 4 or 8
    /// while decoding. `dcOnly`: at 1/8, a progressive JPEG is decoded from its first (DC) scan alone.
    public static func decodeJPEG(_ data: Data, scaleDenominator: Int = 1, maxPixels: Int = 0,
                                  dcOnly: Bool = false) throws -> PixelImage {
        try decodeJPEGReportingScans(data, scaleDenominator: scaleDenominator, maxPixels: maxPixels, dcOnly: dcOnly).image
    }

    /// `decodeJPEG`, also saying whether only the DC scan was decoded (tests and the benchmark check it).
    public static func decodeJPEGReportingScans(_ data: Data, scaleDenominator: Int, maxPixels: Int,
                                                dcOnly: Bool) throws -> (image: PixelImage, usedDCOnly: Bool) {
        try withJPEGRows(data, scaleDenominator: scaleDenominator, maxPixels: maxPixels, dcOnly: dcOnly) { rows in
            var pixels = [UInt8](repeating: 0, count: rows.width * rows.height * rows.channels)
            try pixels.withUnsafeMutableBufferPointer { try rows.read(into: $0.baseAddress!, count: rows.height) }
            return (PixelImage(width: rows.width, height: rows.height, channels: rows.channels, pixels: pixels),
                    rows.usedDCOnly)
        }
    }

    /// A JPEG's dimensions from its header alone.
    public static func jpegSize(_ data: Data) throws -> (width: Int, height: Int) {
        let header = try jpegHeader(data)
        return (header.width, header.height)
    }

    /// What a JPEG's header says before any pixel is decoded.
    public struct JPEGHeader: Sendable {
        public var width: Int, height: Int
        /// Bytes libjpeg holds for the whole image's coefficients while decoding a progressive (or otherwise
        /// multi-scan) JPEG, whatever the output scale: 88 MB for a 5120×2880 4:4:4 wallpaper. 0 when the
        /// image is one interleaved scan, decoded a band at a time.
        public var coefficientBytes: Int
    }

    public static func jpegHeader(_ data: Data) throws -> JPEGHeader {
        var width: Int32 = 0
        var height: Int32 = 0
        var coefficients: UInt64 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { bytes in
            photofs_jpeg_read_size(bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count), &width, &height,
                                   &coefficients, &message, message.count)
        }
        guard status == 0 else { throw ImageCodecError(message: "not a decodable JPEG: \(String(cString: message))") }
        // At most 65,535² pixels × 10 components (libjpeg's limit) × 2 bytes, and whole MCUs: far below Int.max.
        return JPEGHeader(width: Int(width), height: Int(height), coefficientBytes: Int(clamping: coefficients))
    }

    /// zlib level 1 with the SUB filter: on a 256 px photographic thumbnail libpng's defaults (level 6,
    /// adaptive filters) took 19 ms against 2.1 ms for 19 % more bytes; a thumbnail is made once per photo
    /// and read many times, but it is made while someone waits for `ls -l`.
    public static let pngZlibLevel: Int32 = 1

    /// How zlib compresses a PNG's filtered rows.
    public enum PNGCompression: Sendable {
        /// Level 1 LZ77 + Huffman (`pngZlibLevel`, zlib's default strategy).
        case standard
        /// Huffman coding alone (Z_HUFFMAN_ONLY): SUB-filtered photographic rows hold almost no repeats for
        /// LZ77 to find. On 256 px RGBA thumbnails of three real photos (six renditions) it took 1.5–2.6 ms
        /// against 2.5–4.0 ms for `standard`, for files between 5 % smaller and 3 % larger.
        case huffmanOnly
    }

    /// Encodes 1 (gray), 2 (gray+alpha), 3 (RGB) or 4 (RGBA) channels as an 8-bit PNG.
    public static func encodePNG(_ image: PixelImage, compression: PNGCompression = .standard) throws -> Data {
        precondition((1...4).contains(image.channels), "PNG holds 1 to 4 channels")
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            photofs_png_encode(pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.channels),
                               pngZlibLevel, compression == .huffmanOnly ? 1 : 0, &output, &size, &message, message.count)
        }
        defer { free(output) }
        guard status == 0, let output else {
            throw ImageCodecError(message: "PNG encoding failed: \(String(cString: message))")
        }
        return Data(bytes: output, count: size)
    }

    /// Decodes any PNG (palette, gray, 16-bit, alpha) to 8 bits per channel: gray or RGB, with alpha when the
    /// file has any (a palette with transparency counts).
    public static func decodePNG(_ data: Data, maxPixels: Int = 0) throws -> PixelImage {
        // libpng keeps the pointer given to begin_read until finish_read, so both run inside one withUnsafeBytes.
        try data.withUnsafeBytes { bytes in
            var png = png_image()
            png.version = UInt32(PNG_IMAGE_VERSION)
            guard png_image_begin_read_from_memory(&png, bytes.baseAddress, bytes.count) != 0 else {
                throw ImageCodecError(message: "not a decodable PNG: \(pngMessage(&png))")
            }
            defer { png_image_free(&png) }
            // 16-bit samples without gAMA or sRGB are sRGB-encoded, as an 8-bit file's are (numpy, OpenCV, PIL and
            // scanners write them so). libpng's default takes them as linear light and gamma-encodes them for
            // 8-bit output: such files came out far too bright (a mean of 134 became 161; grey 183).
            png.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
            if maxPixels > 0 && Int(png.width) * Int(png.height) > maxPixels {
                throw ImageCodecError(message: "PNG of \(png.width)×\(png.height) has more pixels than allowed")
            }
            let hasAlpha = png.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0
            let hasColor = png.format & UInt32(PNG_FORMAT_FLAG_COLOR) != 0
            png.format = (hasColor ? UInt32(PNG_FORMAT_FLAG_COLOR) : 0) | (hasAlpha ? UInt32(PNG_FORMAT_FLAG_ALPHA) : 0)
            let channels = (hasColor ? 3 : 1) + (hasAlpha ? 1 : 0)
            var pixels = [UInt8](repeating: 0, count: Int(png.width) * Int(png.height) * channels)
            let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(&png, nil, $0.baseAddress, 0, nil) }
            guard finished != 0 else { throw ImageCodecError(message: "not a decodable PNG: \(pngMessage(&png))") }
            return PixelImage(width: Int(png.width), height: Int(png.height), channels: channels, pixels: pixels)
        }
    }

    private static func pngMessage(_ png: inout png_image) -> String {
        withUnsafeBytes(of: &png.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
