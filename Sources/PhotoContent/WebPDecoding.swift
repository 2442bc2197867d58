// WebP pixels through Debian's libwebp, for the renderer: Immich's 250 px thumbnails are WebP.
import CWebP
import Foundation

/// libwebp's simple decoder. The header is read first (`WebPGetInfo`), so a size over the renderer's pixel
/// limit is refused before libwebp allocates what it claims.
public enum WebPDecoding {
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

    /// Decodes to 3-channel RGB (a thumbnail's alpha is dropped: variants of it are JPEG). `maxPixels` (0: no
    /// bound) is checked against the header before anything is decoded.
    public static func decode(_ data: Data, maxPixels: Int = 0) throws -> PixelImage {
        guard let (width, height) = size(data) else { throw ImageCodecError(message: "not a WebP image") }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || (maxPixels > 0 && pixels > maxPixels) {
            throw ImageCodecError(message: "WebP image of \(width)×\(height) has more pixels than allowed")
        }
        var outWidth: Int32 = 0, outHeight: Int32 = 0
        let decoded: [UInt8]? = data.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress,
                  let output = WebPDecodeRGB(base, raw.count, &outWidth, &outHeight) else { return nil }
            defer { WebPFree(output) }
            guard Int(outWidth) == width, Int(outHeight) == height else { return nil }
            return Array(UnsafeBufferPointer(start: output, count: width * height * 3))
        }
        guard let decoded else { throw ImageCodecError(message: "corrupt WebP image") }
        return PixelImage(width: width, height: height, channels: 3, pixels: decoded)
    }
}
