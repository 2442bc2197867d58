// The JSON reader: every escape, repaired surrogates, numbers as text with checked conversions, and what is
// still refused (not JSON, too deep).
import Foundation
import PhotoSources
import XCTest

final class JSONValueTests: XCTestCase {
    func testEveryEscapeRFC8259Allows() throws {
        let value = try JSONValue.parse(#"["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20ac\ud83d\ude00", "\u0000"]"#)
        XCTAssertEqual(value, .array([.string("\"\\/\u{8}\u{C}\n\r\t"), .string("Aé€😀"), .string("\u{0}")]))
    }

    func testBadSurrogatesAndEscapesBecomeReplacementCharacters() throws {
        XCTAssertEqual(try JSONValue.parse(#""\ud800""#), .string("\u{FFFD}"))
        XCTAssertEqual(try JSONValue.parse(#""\udc00x""#), .string("\u{FFFD}x"))
        // A high surrogate followed by a non-surrogate escape: both survive, the first repaired.
        XCTAssertEqual(try JSONValue.parse(#""\ud800\u0041""#), .string("\u{FFFD}A"))
        XCTAssertEqual(try JSONValue.parse(#""\ud800\ud800\udc00""#), .string("\u{FFFD}𐀀"))
        XCTAssertEqual(try JSONValue.parse(#""\q\u12G4""#), .string("\u{FFFD}\u{FFFD}12G4"))
        // Invalid UTF-8 bytes are repaired, not refused.
        XCTAssertEqual(try JSONValue.parse(Data([0x22, 0x61, 0xFF, 0xC3, 0x22])), .string("a\u{FFFD}\u{FFFD}"))
    }

    func testNumbersAreKeptAsTextAndConvertedWithChecks() throws {
        let value = try JSONValue.parse("[1e400, 99999999999999999999, -0, 9223372036854775807, 9223372036854775808, 1.5, 2e3, -1e308]")
        guard case .array(let items) = value, items.count == 8 else { return XCTFail("\(value)") }
        func number(_ index: Int) -> JSONNumber? { if case .number(let n) = items[index] { return n }; return nil }
        XCTAssertEqual(number(0)?.text, "1e400")
        XCTAssertNil(number(0)?.double, "out of Double's range is nil, not infinity")
        XCTAssertNil(number(0)?.int64)
        XCTAssertNil(number(1)?.int64)
        XCTAssertEqual(number(2)?.int64, 0)
        XCTAssertEqual(number(3)?.int64, Int64.max)
        XCTAssertNil(number(4)?.int64, "Int64.max + 1 does not fit")
        XCTAssertNil(number(5)?.int64)
        XCTAssertEqual(number(5)?.double, 1.5)
        XCTAssertEqual(number(6)?.int64, 2000)
        XCTAssertEqual(number(7)?.double, -1e308)
        XCTAssertNil(number(7)?.int64)
    }

    func testObjectsArraysAndLiterals() throws {
        let value = try JSONValue.parse(#"{"a": [true, false, null], "b": {"c": "d"}, "a2": {}, "e": [] }"#)
        XCTAssertEqual(value["a"], .array([.bool(true), .bool(false), .null]))
        XCTAssertEqual(value["b"]?["c"], .string("d"))
        XCTAssertEqual(value["a2"], .object([:]))
        XCTAssertEqual(value["e"], .array([]))
        XCTAssertEqual(try JSONValue.parse(#"{"k": 1, "k": 2}"#)["k"], .number(JSONNumber(text: "2")), "last key wins")
        XCTAssertEqual(try JSONValue.parse(Data([0xEF, 0xBB, 0xBF] + Array("[]".utf8))), .array([]), "a BOM is skipped")
    }

    func testWhatIsNotJSONIsRefused() {
        for text in ["", "{", #"{"photos":{"page":1,"photo":[{"id":"#, "[1,]", "[01]", "[1.]", "[.5]", "[1e]", "-",
                     "NaN", "[Infinity]", "{'a': 1}", "{\"a\" 1}", "[1] x", "tru", "nul", "\"open", "\"\\", "{1: 2}",
                     "<html>502 Bad Gateway</html>"] {
            XCTAssertThrowsError(try JSONValue.parse(text), text)
        }
    }

    func testNestingIsLimitedWithoutExhaustingTheStack() throws {
        let deep = String(repeating: "[", count: JSONValue.maxDepth) + String(repeating: "]", count: JSONValue.maxDepth)
        XCTAssertNoThrow(try JSONValue.parse(deep))
        let tooDeep = "[" + deep + "]"
        XCTAssertThrowsError(try JSONValue.parse(tooDeep)) { error in
            XCTAssertTrue("\(error)".contains("nested deeper"), "\(error)")
        }
        // A million opening brackets: refused at level 65, no stack overflow.
        XCTAssertThrowsError(try JSONValue.parse(String(repeating: "[{\"a\":", count: 500_000)))
    }

    func testAgreesWithFoundationOnOrdinaryJSON() throws {
        let object: [String: Any] = ["s": "text é 😀 \u{1} \"q\" / \\", "i": 52_000_000_001 as Int, "d": 0.25,
                                     "a": [1, "2", ["_content": "x"]], "n": NSNull(), "b": true]
        let data = try JSONSerialization.data(withJSONObject: object)
        let value = try JSONValue.parse(data)
        XCTAssertEqual(value["s"], .string("text é 😀 \u{1} \"q\" / \\"))
        XCTAssertEqual(value["i"], .number(JSONNumber(text: "52000000001")))
        XCTAssertEqual(value["d"]?.kindName, "a number")
        XCTAssertEqual(value["a"]?.arrayValue?.count, 3)
        XCTAssertEqual(value["n"], .null)
        XCTAssertEqual(value["b"], .bool(true))
    }
}
