// A PNG's EXIF: the `eXIf` chunk (PNG 1.5, what exiftool writes), found by walking the chunks before the image data.
import Foundation

enum PNGExif {
    /// The chunk is not read past this size (a camera's EXIF is under 64 KiB; libexif reads 64 KiB of it).
    static let limit = 16 << 20

    /// The `eXIf` chunk's data as the block `ExifReader` takes ("Exif\0\0" and the TIFF data), or nil when the
    /// chunks before the first IDAT hold none. `read(offset, count)` reads bytes of the file beyond `prefix`
    /// (a chunk that ends past it). Every length is checked against the file's `size`: a hostile length ends
    /// the walk.
    static func block(prefix: [UInt8], size: Int64, read: (Int64, Int) throws -> [UInt8]) rethrows -> [UInt8]? {
        var offset: Int64 = 8 // the signature
        // A PNG has a handful of chunks before its image data; a file of millions of tiny ones would cost a
        // read each past the prefix.
        var chunks = 0
        while offset + 8 <= size, chunks < 1_000 {
            chunks += 1
            let header = offset + 8 <= Int64(prefix.count) ? Array(prefix[Int(offset)..<Int(offset) + 8]) : try read(offset, 8)
            guard header.count == 8 else { return nil }
            let length = Int64(header[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let type = String(decoding: header[4..<8], as: UTF8.self)
            let dataStart = offset + 8
            // Data, then a 4-byte CRC; PNG caps a chunk at 2^31 − 1 bytes.
            guard length <= Int64(Int32.max), dataStart + length + 4 <= size else { return nil }
            if type == "IDAT" || type == "IEND" { return nil }
            if type == "eXIf" {
                guard length > 0, length <= Int64(limit) else { return nil }
                let data = dataStart + length <= Int64(prefix.count)
                    ? Array(prefix[Int(dataStart)..<Int(dataStart + length)]) : try read(dataStart, Int(length))
                guard data.count == Int(length) else { return nil }
                // The chunk is the TIFF data; some writers put JPEG's "Exif\0\0" before it anyway.
                let header = Array("Exif".utf8) + [0, 0]
                return data.starts(with: header) ? data : header + data
            }
            offset = dataStart + length + 4
        }
        return nil
    }
}
