// EXIF text: UTF-8 as written, else Windows-1252 (older tools and scanners), never lost to U+FFFD.
@testable import FolderImport
import XCTest

final class ExifTextTests: XCTestCase {
    func testUTF8IsReadAsItIsAndOtherBytesAsWindows1252() {
        XCTAssertEqual(ExifText.decoded(Array("Café 東京".utf8)), "Café 東京")
        XCTAssertEqual(ExifText.decoded([0x43, 0x61, 0x66, 0xE9, 0x20, 0x61, 0x75, 0x20, 0x6C, 0x61, 0x69, 0x74]), "Café au lait")
        XCTAssertEqual(ExifText.decoded([0x4D, 0xFC, 0x6C, 0x6C, 0x65, 0x72, 0x20, 0x80, 0x35, 0x20, 0x93, 0x68, 0x69, 0x94]),
                       "Müller €5 \u{201C}hi\u{201D}")
        XCTAssertEqual(ExifText.decoded([0x61, 0x81, 0x62]), "a\u{81}b", "an unassigned byte stays a C1 control (cleaned to a space later)")
        XCTAssertEqual(ExifText.decoded([]), "")
        XCTAssertFalse(ExifText.decoded((0...255).map(UInt8.init)).contains("\u{FFFD}"))
    }
}
