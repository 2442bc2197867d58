// file:// URIs as GLib and Qt spell them: fixed tables (from GLib's and Qt's sources, checked against PyQt5/6)
// and, on disk, byte-for-byte equality with `gio info`'s uri line for hostile names.
import Foundation
import PhotoContent
import XCTest

final class FileURITests: XCTestCase {
    /// Names a photo can be given at the origin, each stressing one part of the escaping.
    static let hostileNames = [
        "a b.jpg", "#hash.jpg", "100%.jpg", "what?.jpg", "[bracket].jpg", "at@sign.jpg", "bang!.jpg",
        "$dollar.jpg", "&amp.jpg", "it's.jpg", "(paren).jpg", "star*.jpg", "plus+.jpg", "comma,.jpg",
        "semi;colon.jpg", "eq=.jpg", "colon:.jpg", "tilde~.jpg", "quote\".jpg", "back\\slash.jpg",
        "tab\there.jpg", "ctrl\u{1}.jpg", "line\nbreak.jpg", "del\u{7F}.jpg", "<angle>.jpg", "caret^`{pipe|}.jpg",
        "é.jpg", "日本.jpg", "😀.jpg", "a b#%?[]@!$&'()*+,;=:~\"\\é日本😀.jpg", "-._~plain.jpg",
    ]

    func testGLibAndQtSpellingsAgainstFixedStrings() {
        // (path, GLib 2.74, Qt 6, Qt 5.15): the Qt columns are PyQt6 6.11's and PyQt5 5.15.14's
        // QUrl.fromLocalFile(path).toEncoded(RemovePassword | FullyEncoded).
        let table: [(String, String, String, String)] = [
            ("/photos/a b.jpg", "file:///photos/a%20b.jpg", "file:///photos/a%20b.jpg", "file:///photos/a%20b.jpg"),
            ("/photos/#1 100%?.jpg", "file:///photos/%231%20100%25%3F.jpg", "file:///photos/%231%20100%25%3F.jpg",
             "file:///photos/%231%20100%25%3F.jpg"),
            ("/photos/[x];y.jpg", "file:///photos/%5Bx%5D%3By.jpg", "file:///photos/%5Bx%5D;y.jpg",
             "file:///photos/[x];y.jpg"),
            ("/photos/@!$&'()*+,=:~-._.jpg", "file:///photos/@!$&'()*+,=:~-._.jpg",
             "file:///photos/@!$&'()*+,=:~-._.jpg", "file:///photos/@!$&'()*+,=:~-._.jpg"),
            ("/photos/\"\\<>^`{|}.jpg", "file:///photos/%22%5C%3C%3E%5E%60%7B%7C%7D.jpg",
             "file:///photos/%22%5C%3C%3E%5E%60%7B%7C%7D.jpg", "file:///photos/%22%5C%3C%3E%5E%60%7B%7C%7D.jpg"),
            ("/photos/tab\t\u{1}\u{7F}.jpg", "file:///photos/tab%09%01%7F.jpg", "file:///photos/tab%09%01%7F.jpg",
             "file:///photos/tab%09%01%7F.jpg"),
            ("/photos/é日本😀.jpg", "file:///photos/%C3%A9%E6%97%A5%E6%9C%AC%F0%9F%98%80.jpg",
             "file:///photos/%C3%A9%E6%97%A5%E6%9C%AC%F0%9F%98%80.jpg",
             "file:///photos/%C3%A9%E6%97%A5%E6%9C%AC%F0%9F%98%80.jpg"),
            ("/mnt/photo fs/2024 #1/IMG_0001.jpg", "file:///mnt/photo%20fs/2024%20%231/IMG_0001.jpg",
             "file:///mnt/photo%20fs/2024%20%231/IMG_0001.jpg", "file:///mnt/photo%20fs/2024%20%231/IMG_0001.jpg"),
        ]
        for (path, glib, qt6, qt5) in table {
            XCTAssertEqual(FileURI.glib(path: path), glib, path.debugDescription)
            XCTAssertEqual(FileURI.qt(path: path), qt6, path.debugDescription)
            XCTAssertEqual(FileURI.qt5(path: path), qt5, path.debugDescription)
        }
    }

    func testTheSpellingsDifferOnlyOnSemicolonAndBrackets() {
        for value in UInt8(1)..<UInt8(128) where value != UInt8(ascii: "/") {
            let path = "/p/" + String(Character(UnicodeScalar(value)))
            let glib = FileURI.glib(path: path), qt6 = FileURI.qt(path: path), qt5 = FileURI.qt5(path: path)
            switch UnicodeScalar(value) {
            case ";":
                XCTAssertEqual([glib, qt6, qt5], ["file:///p/%3B", "file:///p/;", "file:///p/;"])
            case "[", "]":
                XCTAssertNotEqual(glib, qt5)
                XCTAssertEqual(glib, qt6)
            default:
                XCTAssertEqual(glib, qt6, "byte \(value)")
                XCTAssertEqual(glib, qt5, "byte \(value)")
            }
        }
    }

    /// Every hostile name created on disk: FileURI.glib equals the `uri:` line `gio info` prints for it.
    func testGLibSpellingEqualsGioInfoForHostileNamesOnDisk() throws {
        try GIOInfo.requireGIO()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("photofs-uri-\(UUID().uuidString)/dir #1 [x];é", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        for name in Self.hostileNames {
            let path = directory.path + "/" + name
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()), name.debugDescription)
            let uri = GIOInfo.value("uri", in: try GIOInfo.lines(path: path))
            XCTAssertEqual(FileURI.glib(path: path), uri, name.debugDescription)
        }
    }
}
