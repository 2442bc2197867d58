// Decodes a JPEG a few rows at a time, in order, for renders that never hold the whole decoded image.
import CJPEG
import Foundation

extension ImageCodec {
    /// libjpeg's decoder open on one JPEG: the output's size, then its rows in order. Valid only inside
    /// `withJPEGRows`, which keeps the bytes it reads alive.
    public struct JPEGRows {
        public let width: Int, height: Int, channels: Int
        /// Whether only the DC scan of a progressive JPEG is decoded (see `decodeJPEG`'s `dcOnly`).
        public let usedDCOnly: Bool
        /// Rows handed out so far.
        public private(set) var rowsRead = 0
        fileprivate let decoder: UnsafeMutablePointer<photofs_jpeg_rows>
        /// After an error libjpeg's state is undefined (it longjmp'd out mid-row): nothing may call it again.
        fileprivate var failure: ImageCodecError?

        /// Decodes the next `count` rows into `target`, `width * channels` bytes each. Fails on corrupt or
        /// truncated data (a truncated file fails when its last row is read, as libjpeg only notices then).
        public mutating func read(into target: UnsafeMutablePointer<UInt8>, count: Int) throws {
            if let failure { throw failure }
            guard count > 0 else { return }
            let status = photofs_jpeg_rows_read(decoder, target, width * channels, Int32(clamping: count))
            guard status == 0 else {
                let error = ImageCodecError(message: "not a decodable JPEG: \(message)")
                failure = error
                throw error
            }
            rowsRead += count
        }

        /// Decodes the rows not read yet into `scratch` (one row long), so damage after the last row a render
        /// used still fails it, as the whole-image decoder does.
        public mutating func readRest(scratch: UnsafeMutablePointer<UInt8>) throws {
            while rowsRead < height { try read(into: scratch, count: 1) }
        }

        fileprivate var message: String {
            withUnsafeBytes(of: &decoder.pointee.jerr.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
    }

    /// Opens a decoder on `data` (scaled by 1/`scaleDenominator` in the DCT domain, refused before any pixel
    /// when over `maxPixels`, 0 = no limit) for `body`, and frees it after.
    public static func withJPEGRows<T>(_ data: Data, scaleDenominator: Int = 1, maxPixels: Int = 0, dcOnly: Bool = false,
                                       _ body: (inout JPEGRows) throws -> T) throws -> T {
        try data.withUnsafeBytes { bytes in
            let decoder = UnsafeMutablePointer<photofs_jpeg_rows>.allocate(capacity: 1)
            decoder.initialize(to: photofs_jpeg_rows())
            defer {
                photofs_jpeg_rows_close(decoder)
                decoder.deallocate()
            }
            var width: Int32 = 0, height: Int32 = 0, components: Int32 = 0, usedDCOnly: Int32 = 0
            let status = photofs_jpeg_rows_open(decoder, bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count),
                                                Int32(clamping: scaleDenominator), UInt(max(0, maxPixels)),
                                                dcOnly ? 1 : 0, &width, &height, &components, &usedDCOnly)
            var rows = JPEGRows(width: Int(width), height: Int(height), channels: Int(components),
                                usedDCOnly: usedDCOnly != 0, decoder: decoder, failure: nil)
            guard status == 0, width > 0, height > 0 else {
                throw ImageCodecError(message: "not a decodable JPEG: \(rows.message)")
            }
            return try body(&rows)
        }
    }
}
