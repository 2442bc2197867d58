// WebP through Debian's libwebp: encoding for the loopback Immich origin, header-checked decoding for its thumbnails.
import CWebP
import Foundation
import PhotoContent

/// Why WebP bytes could not be read or written.
public struct WebPError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
    init(_ message: String) { self.message = message }
}

public enum WebPCodec {
    /// 16,384 px is WebP's own limit per edge (14-bit sizes); a header claiming more is not WebP.
    public static let maxEdge = 16_383

    /// Width and height from the header alone; nil when the bytes are not a WebP image libwebp accepts.
    public static func size(_ data: Data) -> (width: Int, height: Int)? {
        var width: Int32 = 0, height: Int32 = 0
        let ok = data.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return 0 }
            return WebPGetInfo(base, raw.count, &width, &height)
        }
        guard ok != 0, (1...maxEdge).contains(Int(width)), (1...maxEdge).contains(Int(height)) else { return nil }
        return (Int(width), Int(height))
    }

    /// Decodes to 3-channel RGB. `maxPixels` (0: no bound) is checked against the header before anything is
    /// decoded, so a hostile header cannot make libwebp allocate what it claims.
    public static func decode(_ data: Data, maxPixels: Int = 0) throws -> PixelImage {
        guard let (width, height) = size(data) else { throw WebPError("not a WebP image") }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || (maxPixels > 0 && pixels > maxPixels) {
            throw WebPError("WebP image of \(width)×\(height) is over the pixel limit")
        }
        var outWidth: Int32 = 0, outHeight: Int32 = 0
        let decoded: [UInt8]? = data.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress,
                  let output = WebPDecodeRGB(base, raw.count, &outWidth, &outHeight) else { return nil }
            defer { WebPFree(output) }
            guard Int(outWidth) == width, Int(outHeight) == height else { return nil }
            return Array(UnsafeBufferPointer(start: output, count: width * height * 3))
        }
        guard let decoded else { throw WebPError("corrupt WebP image") }
        return PixelImage(width: width, height: height, channels: 3, pixels: decoded)
    }

    /// Lossy WebP of an RGB (3 channels) or RGBA (4) image, `quality` 0–100.
    public static func encode(_ image: PixelImage, quality: Int = 80) throws -> Data {
        guard image.channels == 3 || image.channels == 4, (1...maxEdge).contains(image.width),
              (1...maxEdge).contains(image.height), image.pixels.count == image.width * image.height * image.channels
        else { throw WebPError("no image WebP can hold (\(image.width)×\(image.height)×\(image.channels))") }
        var output: UnsafeMutablePointer<UInt8>?
        let stride = Int32(image.width * image.channels)
        let q = Float(min(max(quality, 0), 100))
        let length = image.pixels.withUnsafeBufferPointer { pixels -> Int in
            guard let base = pixels.baseAddress else { return 0 }
            return image.channels == 3
                ? WebPEncodeRGB(base, Int32(image.width), Int32(image.height), stride, q, &output)
                : WebPEncodeRGBA(base, Int32(image.width), Int32(image.height), stride, q, &output)
        }
        guard length > 0, let output else { throw WebPError("libwebp could not encode the image") }
        defer { WebPFree(output) }
        return Data(bytes: output, count: length)
    }
}
