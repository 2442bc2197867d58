// The file:// URI of a local path exactly as GLib and as Qt/KDE spell it: a thumbnail is found by the MD5 of
// that string and kept only while its Thumb::URI equals it byte for byte.
import Foundation

/// `file://` URIs of absolute local paths, spelled the way each desktop library spells them.
///
/// The libraries escape different characters, and a thumbnail written under one spelling is invisible to the
/// others (its file name is the MD5 of the URI). All escape the path's UTF-8 bytes as `%XX` with upper-case hex
/// and leave `/` alone; they differ only on `;`, `[` and `]`:
///
/// | characters | GLib 2.74 | Qt 6 | Qt 5.15 |
/// | --- | --- | --- | --- |
/// | A–Z a–z 0–9 `- . _ ~ /` and `! $ & ' ( ) * + , = : @` | kept | kept | kept |
/// | `;` | escaped | kept | kept |
/// | `[ ]` | escaped | escaped | kept |
/// | `? #`, space, `" % < > \ ^ `` { | }`, DEL, controls | escaped | escaped | escaped |
/// | bytes ≥ 0x80 (UTF-8) | escaped | escaped | escaped |
///
/// GLib: glib/gconvert.c (2.74.6) `g_filename_to_uri` → `g_escape_uri_string(path, UNSAFE_PATH)`, whose
/// `acceptable` table (bit 0x8) keeps exactly the first row. Qt: `QUrl::fromLocalFile` sets the path in
/// `DecodedMode` and `toEncoded(FullyEncoded)` appends it with the `pathInUrl` actions (qtbase
/// src/corelib/io/qurl.cpp), which add `?` and `#` to what qurlrecode.cpp's `defaultActionTable` encodes
/// (space, `"<>\^`{|}`, DEL, controls, non-ASCII), leaving the other gen-delims and sub-delims as they are. Qt 6's
/// `qt_encodeFromUser` (the DecodedMode setter) additionally encodes `[` and `]`; Qt 5's did not. Checked
/// against PyQt6 6.11 and PyQt5 5.15.14 for every ASCII character, and against `gio info` in
/// FileURITests.
public enum FileURI {
    /// What GLib's `g_filename_to_uri(path, NULL)` returns (file:// + GLib's escaping for paths). This is the
    /// `uri:` line of `gio info PATH` and the string Nautilus, Nemo, Caja, pcmanfm and Thunar hash.
    /// `path` must be absolute (GLib refuses a relative one); it is used as given, not canonicalised.
    public static func glib(path: String) -> String {
        escape(path, keeping: glibKept)
    }

    /// What KDE's KIO 6 (Plasma 6, Qt 6) hashes and stores as Thumb::URI for a local file:
    /// `QUrl::fromLocalFile(canonicalPath).toEncoded(QUrl::RemovePassword | QUrl::FullyEncoded)`
    /// (KDE/kio src/gui/filepreviewjob.cpp `slotStatFile`; src/widgets/previewjob.cpp `statResultThumbnail` in
    /// KF5). KIO canonicalises the path first (symlinks resolved), so pass the canonical path. Equal to
    /// `glib(path:)` unless the path holds `;`.
    public static func qt(path: String) -> String {
        escape(path, keeping: qt6Kept)
    }

    /// The same for KIO 5 (Plasma 5, Qt 5.15, e.g. Debian 12's KDE): also keeps `[` and `]`. Equal to
    /// `glib(path:)` unless the path holds `;`, `[` or `]`.
    public static func qt5(path: String) -> String {
        escape(path, keeping: qt5Kept)
    }

    /// GLib's `acceptable[c - 32] & UNSAFE_PATH` for printable ASCII: alphanumerics and `!$&'()*+,-./:=@_~`.
    private static let glibKept: [Bool] = keptTable(extra: "!$&'()*+,-./:=@_~")
    private static let qt6Kept: [Bool] = keptTable(extra: "!$&'()*+,-./:;=@_~")
    private static let qt5Kept: [Bool] = keptTable(extra: "!$&'()*+,-./:;=@[]_~")

    private static func keptTable(extra: String) -> [Bool] {
        var table = [Bool](repeating: false, count: 128)
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(byte)] = true }
        for byte in extra.utf8 { table[Int(byte)] = true }
        return table
    }

    private static func escape(_ path: String, keeping kept: [Bool]) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes = Array("file://".utf8)
        // g_escape_file_uri inserts a '/' when the escaped path does not start with one.
        if !path.hasPrefix("/") { bytes.append(UInt8(ascii: "/")) }
        bytes.reserveCapacity(bytes.count + path.utf8.count * 3)
        for byte in path.utf8 {
            if byte < 128 && kept[Int(byte)] {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 15)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
