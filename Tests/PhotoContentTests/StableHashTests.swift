// The stable hash behind cache keys and default cache directories: pinned values, so existing users'
// cached files and cache directories keep their names across versions.
@testable import PhotoContent
import XCTest

final class StableHashTests: XCTestCase {
    func testFNV1a64MatchesTheReferenceValues() {
        // FNV-1a 64's published test vectors ("" is the offset basis).
        XCTAssertEqual(StableHash.fnv1a64(""), 0xcbf2_9ce4_8422_2325)
        XCTAssertEqual(StableHash.fnv1a64("a"), 0xaf63_dc4c_8601_ec8c)
        // A library path: `photofs` names its default cache directory "<name>-<first 8 hex digits>" of this.
        XCTAssertEqual(String(StableHash.fnv1a64("/home/u/library.sqlite"), radix: 16), "12b2e1dc23220de5")
    }

    func testPartsHashAsTheirJoinedString() {
        for parts in [[], [""], ["a"], ["", ""], ["https://h/p.jpg", "1234", "image/jpeg", "\"e1\""], ["Été", "ç", ""]] {
            XCTAssertEqual(StableHash.fnv1a64(parts: parts), StableHash.fnv1a64(parts.joined(separator: "\u{0}")), "\(parts)")
        }
    }

    func testCacheKeysKeepTheirNames() {
        let source = ContentSource(photoID: "1", url: "https://live.staticflickr.com/65535/1_ab_o.jpg", expectedSize: 1234,
                                   contentType: "image/jpeg", etag: "\"e1\"")
        XCTAssertEqual(OriginalCache.key(for: source), "1-a36806ccb958001e")
        let untagged = ContentSource(photoID: "a/b", url: "http://h/p.jpg", expectedSize: 10, contentType: "image/jpeg")
        XCTAssertEqual(OriginalCache.key(for: untagged), "a_b-4495c6ef6d8e65f8")
    }
}
