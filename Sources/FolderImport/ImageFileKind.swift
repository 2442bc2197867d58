// Which files a folder import takes (JPEG, PNG, HEIC/HEIF), which it counts as skipped, and how it tells them apart.
import Foundation

/// What a file in an imported folder is, first by its name, then confirmed by its first bytes.
public enum ImageFileKind: String, Equatable, Sendable, CaseIterable {
    case jpeg, png, heic
    /// Left out and counted: photofs shows photos.
    case video, raw, other

    public var isImage: Bool { self == .jpeg || self == .png || self == .heic }

    /// The catalog's content type of an image kind.
    public var contentType: String? {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .heic: return "image/heic"
        case .video, .raw, .other: return nil
        }
    }

    static let videoExtensions: Set<String> = [
        "mp4", "mov", "m4v", "avi", "mkv", "webm", "3gp", "3g2", "mts", "m2ts", "mpg", "mpeg", "wmv", "flv", "insv",
    ]
    /// Camera raw formats (exiftool's list of the common ones): photos, but not ones photofs can show.
    static let rawExtensions: Set<String> = [
        "dng", "cr2", "cr3", "crw", "nef", "nrw", "arw", "srf", "sr2", "orf", "rw2", "raf", "pef", "srw", "raw",
        "rwl", "3fr", "iiq", "x3f", "mrw", "kdc", "dcr", "erf", "mef", "mos",
    ]

    /// The kind a file name claims: `.jpg`, `.jpeg`, `.jpe`, `.jfif` (any case) are JPEG, `.png` PNG, `.heic`, `.heif`,
    /// `.hif` HEIC.
    public static func fromName(_ name: String) -> ImageFileKind {
        if let kind = commonImage(name.utf8) { return kind }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return .other }
        let ext = name[name.index(after: dot)...].lowercased()
        switch ext {
        case "jpg", "jpeg", "jpe", "jfif": return .jpeg
        case "png": return .png
        case "heic", "heif", "hif": return .heic
        default:
            if videoExtensions.contains(ext) { return .video }
            if rawExtensions.contains(ext) { return .raw }
            return .other
        }
    }

    /// `.jpg`, `.jpeg`, `.png`, `.heic` in any case, read from the name's last bytes without making a lowercased
    /// copy of its extension (100,000 names: 2% of an unchanged re-import's CPU).
    private static func commonImage(_ name: String.UTF8View) -> ImageFileKind? {
        var tail: UInt64 = 0 // the last five bytes, ASCII letters lowercased
        var count = 0
        for byte in name.reversed() {
            guard count < 5 else { break }
            let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            tail |= UInt64(lowered) << (8 * UInt64(count))
            count += 1
        }
        let length = name.count
        func ends(_ suffix: String) -> Bool {
            guard length > suffix.utf8.count else { return false } // ".jpg" alone is a hidden file, not a photo
            var value: UInt64 = 0
            for (index, byte) in suffix.utf8.reversed().enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
            let mask: UInt64 = suffix.utf8.count >= 8 ? .max : (1 << (8 * UInt64(suffix.utf8.count))) - 1
            return tail & mask == value
        }
        if ends(".jpg") || ends(".jpeg") { return .jpeg }
        if ends(".png") { return .png }
        if ends(".heic") { return .heic }
        return nil
    }

    /// The image kind the first bytes say, whatever the name claims: a HEIC exported as `.jpg`, a JPEG
    /// downloaded as `.png`. Imported as what they are (the mount names and serves them by that).
    public static func fromBytes(_ head: [UInt8]) -> ImageFileKind? {
        [ImageFileKind.jpeg, .png, .heic].first { bytesMatch($0, head) }
    }

    /// Whether the first bytes are those of `kind`.
    public static func bytesMatch(_ kind: ImageFileKind, _ head: [UInt8]) -> Bool {
        switch kind {
        case .jpeg:
            return head.count >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF
        case .png:
            return head.count >= 8 && head[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case .heic:
            // An ISO-BMFF `ftyp` box whose major brand is one of HEIF's.
            guard head.count >= 12, head[4..<8].elementsEqual(Array("ftyp".utf8)) else { return false }
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            return ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand)
        case .video, .raw, .other:
            return false
        }
    }
}

/// Pixel sizes read from an image's first bytes, with every offset checked against the buffer.
public enum ImageHeaderSize {
    /// The frame size of the first SOF marker, walking the marker segments of a JPEG prefix; nil when the
    /// prefix ends first (huge APP segments) or a segment length is impossible.
    public static func jpeg(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        JPEGSegments.first(in: bytes) { marker, payload -> (width: Int, height: Int)?? in
            let isFrame = (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
            guard isFrame else { return nil }
            // Precision, then height and width (two bytes each): a frame header cut short gives no size.
            guard payload.count >= 5 else { return .some(nil) }
            let height = Int(bytes[payload.lowerBound + 1]) << 8 | Int(bytes[payload.lowerBound + 2])
            let width = Int(bytes[payload.lowerBound + 3]) << 8 | Int(bytes[payload.lowerBound + 4])
            return .some(width > 0 && height > 0 ? (width, height) : nil)
        } ?? nil
    }

    /// IHDR's width and height (PNG requires it first), each 1…2^31−1.
    public static func png(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 24, bytes[12..<16].elementsEqual(Array("IHDR".utf8)) else { return nil }
        func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        let width = be32(16), height = be32(20)
        guard (1...Int(Int32.max)).contains(width), (1...Int(Int32.max)).contains(height) else { return nil }
        return (width, height)
    }
}
