// WebP through Debian's libwebp: encoding for the loopback Immich origin; decoding is PhotoContent's (`WebPDecoding`).
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
    public static let maxEdge = WebPDecoding.maxEdge

    /// Width and height from the header alone (`WebPDecoding`, which the renderer uses too).
    public static func size(_ data: Data) -> (width: Int, height: Int)? { WebPDecoding.size(data) }

    /// Decodes to 3-channel RGB, refusing more than `maxPixels` (0: no bound) before anything is decoded.
    public static func decode(_ data: Data, maxPixels: Int = 0) throws -> PixelImage {
        do { return try WebPDecoding.decode(data, maxPixels: maxPixels) } catch let error as ImageCodecError {
            throw WebPError(error.message)
        }
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
