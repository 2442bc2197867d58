// JPEG and PNG encoding and decoding in memory, through libjpeg-turbo and libpng's simplified API.
import CJPEG
import CPNG
import Foundation

public struct ImageCodecError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}

/// Decoded 8-bit pixels, row-major, `channels` bytes per pixel (3 = RGB, 4 = RGBA).
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
    public static func encodeJPEG(_ image: PixelImage, quality: Int) throws -> Data {
        precondition(image.channels == 1 || image.channels == 3, "JPEG holds gray or RGB")
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            photofs_jpeg_encode(pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.channels),
                                Int32(quality), &output, &size, &message, message.count)
        }
        defer { free(output) }
        guard status == 0, let output else {
            throw ImageCodecError(message: "JPEG encoding failed: \(String(cString: message))")
        }
        return Data(bytes: output, count: Int(size))
    }

    /// Decodes a JPEG to RGB, optionally scaled down by 2, 4 or 8 while decoding.
    public static func decodeJPEG(_ data: Data, scaleDenominator: Int = 1, maxPixels: Int = 0) throws -> PixelImage {
        var width: Int32 = 0
        var height: Int32 = 0
        var pixels: UnsafeMutablePointer<UInt8>?
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { bytes in
            photofs_jpeg_decode(bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count), Int32(scaleDenominator),
                                UInt(maxPixels), &width, &height, &pixels, &message, message.count)
        }
        defer { free(pixels) }
        guard status == 0, let pixels else {
            throw ImageCodecError(message: "not a decodable JPEG: \(String(cString: message))")
        }
        let count = Int(width) * Int(height) * 3
        return PixelImage(width: Int(width), height: Int(height), channels: 3,
                          pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
    }

    /// A JPEG's dimensions from its header alone.
    public static func jpegSize(_ data: Data) throws -> (width: Int, height: Int) {
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { bytes in
            photofs_jpeg_read_size(bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count), &width, &height,
                                   &message, message.count)
        }
        guard status == 0 else { throw ImageCodecError(message: "not a decodable JPEG: \(String(cString: message))") }
        return (Int(width), Int(height))
    }

    public static func encodePNG(_ image: PixelImage) throws -> Data {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        png.format = image.channels == 4 ? UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA) : UInt32(PNG_FORMAT_RGB)
        let stride = Int32(image.width * image.channels)
        var size: png_alloc_size_t = 0
        // First call measures, second writes (libpng's documented two-pass use of write_to_memory).
        let measured = image.pixels.withUnsafeBytes { photofs_png_write_to_memory(&png, nil, &size, $0.baseAddress, stride) }
        guard measured != 0 else { throw ImageCodecError(message: "PNG encoding failed: \(pngMessage(&png))") }
        var output = Data(count: Int(size))
        let written = output.withUnsafeMutableBytes { out in
            image.pixels.withUnsafeBytes { photofs_png_write_to_memory(&png, out.baseAddress, &size, $0.baseAddress, stride) }
        }
        guard written != 0 else { throw ImageCodecError(message: "PNG encoding failed: \(pngMessage(&png))") }
        output.count = Int(size)
        return output
    }

    /// Decodes any PNG (palette, gray, 16-bit, alpha) to 8-bit RGBA.
    public static func decodePNG(_ data: Data, maxPixels: Int = 0) throws -> PixelImage {
        // libpng keeps the pointer given to begin_read until finish_read, so both run inside one withUnsafeBytes.
        try data.withUnsafeBytes { bytes in
            var png = png_image()
            png.version = UInt32(PNG_IMAGE_VERSION)
            guard png_image_begin_read_from_memory(&png, bytes.baseAddress, bytes.count) != 0 else {
                throw ImageCodecError(message: "not a decodable PNG: \(pngMessage(&png))")
            }
            defer { png_image_free(&png) }
            if maxPixels > 0 && Int(png.width) * Int(png.height) > maxPixels {
                throw ImageCodecError(message: "PNG of \(png.width)×\(png.height) has more pixels than allowed")
            }
            png.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
            var pixels = [UInt8](repeating: 0, count: Int(png.width) * Int(png.height) * 4)
            let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(&png, nil, $0.baseAddress, 0, nil) }
            guard finished != 0 else { throw ImageCodecError(message: "not a decodable PNG: \(pngMessage(&png))") }
            return PixelImage(width: Int(png.width), height: Int(png.height), channels: 4, pixels: pixels)
        }
    }

    private static func pngMessage(_ png: inout png_image) -> String {
        withUnsafeBytes(of: &png.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
