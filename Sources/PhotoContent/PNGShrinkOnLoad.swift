// Decodes a PNG a band of rows at a time, block-shrinking each band as it arrives: the whole image is never held.
import CPNG
import Foundation

extension ImageCodec {
    /// What a PNG's chunks before its image data say: its size, the channels it decodes to (gray or RGB, plus
    /// alpha when it has any), and whether `decodePNG(_:maxPixels:shrinkingBy:)` can decode it band by band.
    public struct PNGHeader: Sendable {
        public var width: Int, height: Int, channels: Int
        public var decodesByBands: Bool
    }

    public static func pngHeader(_ data: Data) throws -> PNGHeader {
        try withRowReader(data) { _, opened, width, height, channels in
            PNGHeader(width: width, height: height, channels: channels, decodesByBands: opened == 0)
        }
    }

    /// Opens libpng's row reader on `data` for `body` (given the open's result, 0 or 1, and the header's
    /// width, height and channels), and closes it after.
    private static func withRowReader<T>(_ data: Data, _ body: (UnsafeMutablePointer<photofs_png_rows>, Int32, Int, Int, Int) throws -> T) throws -> T {
        try data.withUnsafeBytes { bytes in
            let reader = UnsafeMutablePointer<photofs_png_rows>.allocate(capacity: 1)
            reader.initialize(to: photofs_png_rows())
            defer {
                photofs_png_rows_close(reader)
                reader.deallocate()
            }
            var width: png_uint_32 = 0, height: png_uint_32 = 0
            var channels: Int32 = 0
            let opened = photofs_png_rows_open(reader, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count,
                                               &width, &height, &channels)
            guard opened >= 0 else { throw ImageCodecError(message: "not a decodable PNG: \(rowsMessage(reader))") }
            return try body(reader, opened, Int(width), Int(height), Int(channels))
        }
    }

    /// Decodes a PNG block-shrunk by `factor` (what `ImageResizer.blockShrink` makes of `decodePNG`'s whole
    /// image, byte for byte), holding `factor` decoded rows at a time: a 5120×2880 RGBA wallpaper is 59 MB
    /// decoded, and 2.4 MB once shrunk by 5 for a 256 px thumbnail. Returns nil for the files only the
    /// whole-image decoder reads this way (interlaced, 16-bit, a gamma other than sRGB's), and for a factor
    /// larger than the image: decode those whole.
    public static func decodePNG(_ data: Data, maxPixels: Int = 0, shrinkingBy factor: Int) throws -> PixelImage? {
        guard factor >= 1 else { return nil }
        return try withRowReader(data) { reader, opened, sourceWidth, sourceHeight, channelCount -> PixelImage? in
            if maxPixels > 0 && sourceWidth * sourceHeight > maxPixels {
                throw ImageCodecError(message: "PNG of \(sourceWidth)×\(sourceHeight) has more pixels than allowed")
            }
            guard opened == 0, sourceWidth >= factor, sourceHeight >= factor else { return nil }
            var shrinker = ImageResizer.BlockShrinker(sourceWidth: sourceWidth, factor: factor, channels: channelCount)
            let outputHeight = sourceHeight / factor, outputRow = shrinker.width * channelCount
            let sourceRow = sourceWidth * channelCount
            var output = [UInt8](repeating: 0, count: outputRow * outputHeight)
            var band = [UInt8](repeating: 0, count: factor * sourceRow)
            try band.withUnsafeMutableBufferPointer { band in
                try output.withUnsafeMutableBufferPointer { output in
                    for y in 0..<outputHeight {
                        guard photofs_png_rows_read(reader, band.baseAddress, sourceRow, Int32(factor)) == 0 else {
                            throw ImageCodecError(message: "not a decodable PNG: \(rowsMessage(reader))")
                        }
                        shrinker.shrink(rows: band.baseAddress!, into: output.baseAddress! + y * outputRow)
                    }
                    // The last partial band is left out of the result (as blockShrink does) but still decoded, so
                    // a file damaged there fails here as it does in the whole-image decoder.
                    let rest = sourceHeight - outputHeight * factor
                    guard photofs_png_rows_read(reader, band.baseAddress, sourceRow, Int32(rest)) == 0 else {
                        throw ImageCodecError(message: "not a decodable PNG: \(rowsMessage(reader))")
                    }
                }
            }
            return PixelImage(width: shrinker.width, height: outputHeight, channels: channelCount, pixels: output)
        }
    }

    private static func rowsMessage(_ reader: UnsafeMutablePointer<photofs_png_rows>) -> String {
        withUnsafeBytes(of: &reader.pointee.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
