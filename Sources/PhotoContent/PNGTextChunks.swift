// PNG text chunks (tEXt, iTXt): inserting them after IHDR with correct CRCs, and reading them back from any
// bytes at all (a thumbnail directory holds whatever other programs, or a hostile one, left there).
import Foundation

public struct PNGTextChunkError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}

public enum PNGTextChunks {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// `png` with one text chunk per entry inserted right after IHDR, in order. Earlier text chunks (tEXt, zTXt,
    /// iTXt) with one of the inserted keys are dropped, so a reader never sees two values for a key (GLib
    /// rejects a thumbnail when any one of several Thumb::URI chunks differs).
    ///
    /// A value that is Latin-1 goes in a tEXt chunk — the only kind GLib's thumbnail check reads, and what
    /// gdk-pixbuf (GNOME's thumbnailer) writes; URIs, times, sizes and MIME types always are. Any other value
    /// goes in an uncompressed iTXt chunk (UTF-8), as gdk-pixbuf does. Keys must be 1–79 Latin-1 characters
    /// without NUL and without leading, trailing or doubled spaces (PNG 1.2 §4.2.3); values may not hold NUL.
    public static func inserting(_ entries: [(key: String, value: String)], into png: Data) throws -> Data {
        let bytes = [UInt8](png)
        guard bytes.count >= signature.count + 25, Array(bytes[0..<8]) == signature,
              let ihdr = chunk(in: bytes, at: 8), ihdr.type == "IHDR", ihdr.length == 13 else {
            throw PNGTextChunkError(message: "not a PNG starting with a valid IHDR chunk")
        }
        var replacedKeys = Set<[UInt8]>()
        var inserted = [UInt8]()
        for (key, value) in entries {
            let keyword = try latin1Keyword(key)
            replacedKeys.insert(keyword)
            guard !value.unicodeScalars.contains("\0") else {
                throw PNGTextChunkError(message: "the value of PNG text key \(key) holds a NUL")
            }
            if let latin1 = latin1Bytes(value) {
                inserted += encodedChunk(type: "tEXt", data: keyword + [0] + latin1)
            } else {
                // keyword NUL, compression flag 0, method 0, empty language tag NUL, empty translated key NUL.
                inserted += encodedChunk(type: "iTXt", data: keyword + [0, 0, 0, 0, 0] + Array(value.utf8))
            }
        }
        var output = [UInt8]()
        output.reserveCapacity(bytes.count + inserted.count)
        output += bytes[0..<ihdr.end]
        output += inserted
        var offset = ihdr.end
        while offset < bytes.count {
            guard let next = chunk(in: bytes, at: offset) else {
                output += bytes[offset...] // trailing bytes we cannot parse stay as they were
                break
            }
            let isText = next.type == "tEXt" || next.type == "zTXt" || next.type == "iTXt"
            if !(isText && replacedKeys.contains(keyword(of: bytes[next.dataStart..<next.dataEnd]))) {
                output += bytes[offset..<next.end]
            }
            offset = next.end
        }
        return Data(output)
    }

    /// Every tEXt chunk and every uncompressed iTXt chunk of `png`, key → value (the first chunk wins when a key
    /// repeats). Stops quietly at the first malformed or truncated chunk; never traps, whatever the bytes.
    /// zTXt and compressed iTXt chunks are skipped (no thumbnail reader we match needs them).
    public static func entries(in png: Data) -> [String: String] {
        var result: [String: String] = [:]
        for entry in textChunks(in: [UInt8](png)) where result[entry.key] == nil {
            result[entry.key] = entry.value
        }
        return result
    }

    /// The text chunks in file order, keys and values decoded (tEXt as Latin-1, iTXt as UTF-8).
    static func textChunks(in bytes: [UInt8]) -> [(key: String, value: String)] {
        var result: [(key: String, value: String)] = []
        for next in chunks(in: bytes) {
            let data = bytes[next.dataStart..<next.dataEnd]
            guard let separator = data.firstIndex(of: 0) else { continue }
            let key = latin1String(data[data.startIndex..<separator])
            let rest = data[(separator + 1)...]
            switch next.type {
            case "tEXt":
                result.append((key, latin1String(rest)))
            case "iTXt":
                // compression flag, method, language tag NUL, translated keyword NUL, text.
                guard rest.count >= 2, rest[rest.startIndex] == 0 else { continue }
                let afterMethod = rest[(rest.startIndex + 2)...]
                guard let languageEnd = afterMethod.firstIndex(of: 0),
                      let translatedEnd = afterMethod[(languageEnd + 1)...].firstIndex(of: 0) else { continue }
                result.append((key, String(decoding: afterMethod[(translatedEnd + 1)...], as: UTF8.self)))
            default:
                continue
            }
        }
        return result
    }

    /// One chunk's place in the file: `length` bytes of data at `dataStart`, the whole chunk ending at `end`.
    struct ChunkSpan {
        var type: String
        var length: Int
        var dataStart: Int
        var dataEnd: Int { dataStart + length }
        var end: Int { dataStart + length + 4 }
    }

    /// The chunk starting at `offset`, or nil when its header or its declared length runs past the bytes.
    /// The length is read as UInt32 into Int (64-bit), so no arithmetic here can overflow.
    static func chunk(in bytes: [UInt8], at offset: Int) -> ChunkSpan? {
        guard offset >= 0, bytes.count - offset >= 12 else { return nil }
        let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
            | Int(bytes[offset + 3])
        guard length <= bytes.count - offset - 12 else { return nil }
        let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
        return ChunkSpan(type: type, length: length, dataStart: offset + 8)
    }

    /// The chunks after the signature, in order, up to IEND or the first that does not fit.
    static func chunks(in bytes: [UInt8]) -> [ChunkSpan] {
        guard bytes.count >= 8, Array(bytes[0..<8]) == signature else { return [] }
        var result: [ChunkSpan] = []
        var offset = 8
        while let next = chunk(in: bytes, at: offset) {
            result.append(next)
            if next.type == "IEND" { break }
            offset = next.end
        }
        return result
    }

    /// Length, type, data, CRC-32 of type and data (PNG 1.2 §3.2).
    static func encodedChunk(type: String, data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let length = UInt32(truncatingIfNeeded: data.count)
        var chunk = [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
        chunk += typeBytes
        chunk += data
        let crc = crc32(typeBytes + data)
        chunk += [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
        return chunk
    }

    /// CRC-32 (ISO 3309, polynomial 0xEDB88320 reflected), as PNG and zlib compute it.
    static func crc32<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }

    private static let crcTable: [UInt32] = (0..<256).map { (n: Int) -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func latin1Keyword(_ key: String) throws -> [UInt8] {
        guard let bytes = latin1Bytes(key), (1...79).contains(bytes.count), !bytes.contains(0),
              bytes.first != 0x20, bytes.last != 0x20,
              !zip(bytes, bytes.dropFirst()).contains(where: { $0 == 0x20 && $1 == 0x20 }) else {
            throw PNGTextChunkError(message: "\(key.debugDescription) is not a PNG text keyword (1–79 Latin-1 characters)")
        }
        return bytes
    }

    private static func keyword(of data: ArraySlice<UInt8>) -> [UInt8] {
        Array(data.prefix { $0 != 0 })
    }

    /// The string's Latin-1 bytes, or nil when a character lies beyond U+00FF.
    private static func latin1Bytes(_ string: String) -> [UInt8]? {
        var bytes = [UInt8]()
        bytes.reserveCapacity(string.unicodeScalars.count)
        for scalar in string.unicodeScalars {
            guard scalar.value <= 0xFF else { return nil }
            bytes.append(UInt8(scalar.value))
        }
        return bytes
    }

    private static func latin1String(_ bytes: ArraySlice<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}
