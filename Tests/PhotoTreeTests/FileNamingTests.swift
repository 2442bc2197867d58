// Naming rules: sanitising, the 255-byte limit, and de-duplication that never renames existing files.
import PhotoTree
import XCTest

final class FileNamingTests: XCTestCase {
    func testSeparatorsAndControlCharactersAreReplaced() {
        XCTAssertEqual(FileNaming.sanitize("a/b/c", fallback: "x"), "a／b／c")
        XCTAssertEqual(FileNaming.sanitize("nul\u{0}inside", fallback: "x"), "nul inside")
        XCTAssertEqual(FileNaming.sanitize("tab\there\nand\u{7F}del\u{85}", fallback: "x"), "tab here and del")
        XCTAssertEqual(FileNaming.sanitize("report\u{202E}gpj.exe", fallback: "x"), "reportgpj.exe")
    }

    func testDotsAndSpacesCannotHideOrEscape() {
        XCTAssertEqual(FileNaming.sanitize(".", fallback: "Untitled"), "Untitled")
        XCTAssertEqual(FileNaming.sanitize("..", fallback: "Untitled"), "Untitled")
        XCTAssertEqual(FileNaming.sanitize("   ", fallback: "Untitled"), "Untitled")
        XCTAssertEqual(FileNaming.sanitize("", fallback: "Untitled"), "Untitled")
        XCTAssertEqual(FileNaming.sanitize(".hidden", fallback: "x"), "hidden")
        XCTAssertEqual(FileNaming.sanitize("  . spaced  ", fallback: "x"), "spaced")
        XCTAssertEqual(FileNaming.sanitize("keep.inner.dots", fallback: "x"), "keep.inner.dots")
        // Plain ASCII is returned as given, but for what it must trim.
        XCTAssertEqual(FileNaming.sanitize("Photo 1 ~ [x]", fallback: "x"), "Photo 1 ~ [x]")
        XCTAssertEqual(FileNaming.sanitize("trailing ", fallback: "x"), "trailing")
        XCTAssertEqual(FileNaming.sanitize(" leading", fallback: "x"), "leading")
    }

    func testLongNamesAreCutAtACharacterBoundaryKeepingTheExtension() {
        let long = String(repeating: "é", count: 300) // 600 bytes
        let name = FileNaming.compose(stem: long, extension: "jpg")
        XCTAssertLessThanOrEqual(name.utf8.count, 255)
        XCTAssertTrue(name.hasSuffix("é.jpg"))
        XCTAssertEqual(name.utf8.count, 254) // 125 × 2 bytes + ".jpg": one more é would be 256
        let emoji = String(repeating: "👨‍👩‍👧", count: 40) // 18-byte grapheme clusters
        let cut = FileNaming.compose(stem: emoji, suffix: " (123456)", extension: "png")
        XCTAssertLessThanOrEqual(cut.utf8.count, 255)
        XCTAssertTrue(cut.hasSuffix("👨‍👩‍👧 (123456).png"), cut)
    }

    func testDuplicatesGetAnIDSuffixAndCaseOnlyDifferencesCount() {
        var namer = UniqueNamer()
        XCTAssertEqual(namer.claim(stem: "Sunset", id: "52000000001", extension: "jpg"), "Sunset.jpg")
        XCTAssertEqual(namer.claim(stem: "Sunset", id: "52000000002", extension: "jpg"), "Sunset (000002).jpg")
        XCTAssertEqual(namer.claim(stem: "sunset", id: "52000000003", extension: "jpg"), "sunset (000003).jpg")
        XCTAssertEqual(namer.claim(stem: "Sunset", id: "52000000003", extension: "png"), "Sunset.png")
    }

    func testACraftedTitleCannotStealASuffixedName() {
        var namer = UniqueNamer()
        XCTAssertEqual(namer.claim(stem: "A", id: "11000123456", extension: "jpg"), "A.jpg")
        XCTAssertEqual(namer.claim(stem: "A", id: "22000123456", extension: "jpg"), "A (123456).jpg")
        // Same short suffix: the full id decides.
        XCTAssertEqual(namer.claim(stem: "A", id: "33000123456", extension: "jpg"), "A (33000123456).jpg")
        XCTAssertEqual(namer.claim(stem: "A (123456)", id: "44", extension: "jpg"), "A (123456) (44).jpg")
    }

    func testAddingPhotosNeverRenamesExistingOnes() {
        let before = names(["Sunset": ["1000001", "1000002"], "Fog": ["1000003"]])
        let after = names(["Sunset": ["1000001", "1000002", "1000009"], "Fog": ["1000003", "1000010"]])
        for (id, name) in before { XCTAssertEqual(after[id], name, "photo \(id) was renamed") }
        XCTAssertEqual(Set(after.values).count, after.count)
    }

    /// Names in import order (ids ascending), as TreeBuilder hands them out.
    private func names(_ titles: [String: [String]]) -> [String: String] {
        var namer = UniqueNamer()
        let items = titles.flatMap { title, ids in ids.map { (id: $0, title: title) } }.sorted { $0.id < $1.id }
        var result: [String: String] = [:]
        for item in items { result[item.id] = namer.claim(stem: item.title, id: item.id, extension: "jpg") }
        return result
    }
}
