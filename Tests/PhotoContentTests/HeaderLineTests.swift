// Response header lines as libcurl hands them over (one per callback, with their CRLF), parsed on their bytes.
@testable import PhotoContent
import XCTest

final class HeaderLineTests: XCTestCase {
    func parse(_ text: String) -> HeaderLine.Parsed? {
        Array(text.utf8).withUnsafeBytes { HeaderLine.parse($0) }
    }

    func testStatusLines() {
        XCTAssertEqual(parse("HTTP/1.1 200 OK\r\n"), .statusLine(200))
        XCTAssertEqual(parse("HTTP/2 404\r\n"), .statusLine(404))
        XCTAssertEqual(parse("HTTP/1.1  301  Moved\r\n"), .statusLine(301), "runs of spaces")
        XCTAssertEqual(parse("HTTP/1.1 abc\r\n"), .statusLine(nil), "a status that is not a number")
        XCTAssertEqual(parse("HTTP/1.1\r\n"), .statusLine(nil))
    }

    func testFieldsAreLowerCasedAndTrimmed() {
        XCTAssertEqual(parse("Content-Length: 1234\r\n"), .field("content-length", "1234"))
        XCTAssertEqual(parse("ETag:\t\"abc\"  \r\n"), .field("etag", "\"abc\""))
        XCTAssertEqual(parse("X-Empty:\r\n"), .field("x-empty", ""))
        XCTAssertEqual(parse("Location: http://h/a:b\r\n"), .field("location", "http://h/a:b"), "only the first colon splits")
        XCTAssertEqual(parse("X-Ünï: välue\r\n"), .field("x-Ünï", "välue"),
                       "non-ASCII bytes of a name are kept as they are")
    }

    func testLinesThatAreNeither() {
        XCTAssertNil(parse("\r\n"), "the blank line ending the headers")
        XCTAssertNil(parse("no colon here\r\n"))
        XCTAssertNil(parse(""))
    }
}
