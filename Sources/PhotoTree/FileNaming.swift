// Turns catalog text (titles, region and photographer names) into valid, visible, unique file names.
import Foundation

/// The stem a name gets when its text leaves nothing (used by `FileNaming.compose`; `TreeBuilder.fallbackTitle`).
enum TreeFallback {
    static let stem = "Untitled"
}

/// The naming rules of docs/user-guide.md ("Names"), as pure functions.
public enum FileNaming {
    /// Linux's NAME_MAX: a name is at most 255 bytes.
    public static let maxNameBytes = 255

    /// Bidirectional controls can make a name display as another (e.g. "gpj.exe" shown as "exe.jpg").
    private static let bidiControls: Set<UInt32> = [0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                                                    0x2066, 0x2067, 0x2068, 0x2069]

    /// Makes one path component from arbitrary text:
    /// - "/" becomes "／" (U+FF0F, looks the same, is not a separator);
    /// - NUL, other control characters (C0, DEL, C1) and line/paragraph separators become a space;
    /// - bidirectional override characters are dropped;
    /// - leading dots and spaces are dropped (a leading dot would hide the file from `ls`; "." and ".." vanish);
    ///   trailing spaces are dropped;
    /// - an empty result becomes `fallback`.
    /// Only the first 4,096 scalars are looked at: a name keeps at most 255 bytes, and a 10 MB title from a
    /// hostile library must not cost 10 MB of work per listing.
    public static func sanitize(_ text: String, fallback: String) -> String {
        // Most titles are plain printable ASCII with nothing to replace or trim: returned as they are, without
        // rebuilding them scalar by scalar (a tenth of building a mount's listings).
        let utf8 = text.utf8
        if let first = utf8.first, let last = utf8.last, first != UInt8(ascii: "."), first != 0x20, last != 0x20,
           utf8.count <= 4096, utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x2F }) {
            return text
        }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(4096) {
            let value = scalar.value
            if value == 0x2F {
                scalars.append("\u{FF0F}")
            } else if value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 {
                scalars.append(" ")
            } else if bidiControls.contains(value) {
                continue
            } else {
                scalars.append(scalar)
            }
        }
        var name = String(scalars)
        while let first = name.unicodeScalars.first, first == "." || first.properties.isWhitespace {
            name.unicodeScalars.removeFirst()
        }
        while let last = name.unicodeScalars.last, last.properties.isWhitespace {
            name.unicodeScalars.removeLast()
        }
        return name.isEmpty ? fallback : name
    }

    /// Joins a stem, an optional disambiguating suffix and an extension into a name of at most 255 bytes,
    /// cutting the stem at a character (grapheme) boundary so no character is split and the suffix and
    /// extension survive whole. `stem` is expected sanitised (`sanitize`); suffixes come from `suffixes(forID:)`.
    /// Whatever they hold, the result is a valid name: an extension that is not a short plain word is dropped,
    /// a tail over half the budget is cut, and a stem cut to nothing (one grapheme cluster longer than the
    /// budget, e.g. a letter with hundreds of combining marks) becomes "Untitled", so no name starts with the
    /// suffix's space or the extension's dot.
    public static func compose(stem: String, suffix: String = "", extension ext: String? = nil) -> String {
        let safeExtension = ext.flatMap { isPlainExtension($0) ? "." + $0 : nil } ?? ""
        let safeSuffix = suffix.utf8.count <= maxNameBytes / 2 ? suffix : cut(suffix, toBytes: maxNameBytes / 2)
        let tail = safeSuffix + safeExtension
        let budget = maxNameBytes - tail.utf8.count
        if !stem.isEmpty && stem.utf8.count <= budget { return stem + tail }
        var kept = cut(stem, toBytes: budget)
        while let last = kept.unicodeScalars.last, last.properties.isWhitespace { kept.unicodeScalars.removeLast() }
        if kept.isEmpty { kept = cut(TreeFallback.stem, toBytes: budget) }
        return kept + tail
    }

    /// The longest prefix of whole characters within `limit` UTF-8 bytes.
    private static func cut(_ text: String, toBytes limit: Int) -> String {
        var kept = ""
        var bytes = 0
        for character in text {
            let width = character.utf8.count
            if bytes + width > limit { break }
            bytes += width
            kept.append(character)
        }
        return kept
    }

    /// 1–16 ASCII letters and digits: what every extension photofs makes looks like ("jpg", "png", "webp").
    private static func isPlainExtension(_ ext: String) -> Bool {
        (1...16).contains(ext.utf8.count) && ext.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
            || (0x61...0x7A).contains($0) }
    }

    /// What an id looks like inside a name: sanitised like a title ("/" and control characters replaced) and at
    /// most 64 bytes (Flickr ids have 10–11 digits, owner ids like "12345678@N00" about 12 characters; a
    /// longer id is cut at a character boundary, and the namer's counter still keeps names apart).
    public static func displayID(_ id: String) -> String {
        let clean = sanitize(id, fallback: "?")
        return clean.utf8.count <= 64 ? clean : cut(clean, toBytes: 64)
    }

    /// The de-duplicating suffix for a photo or directory: its id's last 6 characters, or the whole id when
    /// the short form also collides. Flickr ids are decimal numbers of 10–11 digits; 6 digits tell apart
    /// any two photos of one directory but by a 1-in-a-million chance, which the full id then resolves.
    /// The id goes through `displayID` first, so an id with "/" or control characters, or 10 KB long, still
    /// gives a valid name.
    public static func suffixes(forID rawID: String) -> [String] {
        let id = displayID(rawID)
        let short = String(id.suffix(6))
        return short == id ? [" (\(id))"] : [" (\(short))", " (\(id))"]
    }
}

/// Hands out unique names within one directory.
///
/// Candidates are named in the order given, which callers make the order of first import (catalog `seq`):
/// each takes its plain name if free, else the plain name with a suffix from its id. A name therefore depends
/// only on items imported before it, so importing more photos never renames a file that already existed.
/// Names are compared ignoring case and Unicode normalisation, so a copy to a case-insensitive disk (exFAT,
/// macOS) keeps every file.
public struct UniqueNamer {
    private var taken = Set<String>()
    public init() {}

    public mutating func claim(stem: String, id: String, extension ext: String?) -> String {
        let plain = FileNaming.compose(stem: stem, extension: ext)
        if take(plain) { return plain }
        for suffix in FileNaming.suffixes(forID: id) {
            let name = FileNaming.compose(stem: stem, suffix: suffix, extension: ext)
            if take(name) { return name }
        }
        // Only a crafted title can reach this ("A (123456)" beside two photos titled "A"), or ids that are
        // alike once cut or sanitised: count upwards. The counter is in the suffix, which `compose` keeps whole.
        let shownID = FileNaming.displayID(id)
        var counter = 2
        while true {
            let name = FileNaming.compose(stem: stem, suffix: " (\(shownID)-\(counter))", extension: ext)
            if take(name) { return name }
            counter += 1
        }
    }

    private mutating func take(_ name: String) -> Bool {
        taken.insert(name.lowercased()).inserted
    }
}
