// EXIF text as it is written: UTF-8 by today's cameras and tools, Windows-1252 by older ones.
import Foundation

enum ExifText {
    /// EXIF says ASCII; phones and exiftool write UTF-8, but Windows XP-era tools, older camera software and
    /// many scanners wrote Windows-1252 ("Caf\xE9"), which decoded as UTF-8 lost every accent to U+FFFD for
    /// good. Bytes that are not UTF-8 are read as Windows-1252 (Latin-1 with typographic marks in 0x80–0x9F;
    /// its five unassigned bytes stay C1 controls, which `cleanText` turns into spaces).
    static func decoded(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var text = ""
        text.unicodeScalars.reserveCapacity(bytes.count)
        for byte in bytes {
            let value = (0x80...0x9F).contains(byte) ? windows1252[Int(byte) - 0x80] : UInt32(byte)
            text.unicodeScalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
        }
        return text
    }

    /// Windows-1252's 0x80–0x9F (0x81, 0x8D, 0x8F, 0x90, 0x9D are unassigned: kept as their C1 code points).
    private static let windows1252: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]
}
