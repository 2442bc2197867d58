// Retry-After as servers send it (seconds, the three HTTP-date forms) and as hostile ones might.
import FlickrOrigin
import Foundation
import PhotoContent
import XCTest

final class RetryAfterTests: XCTestCase {
    /// RFC 9110 §5.6.7's example instant, Sun, 06 Nov 1994 08:49:37 GMT.
    let example = Date(timeIntervalSince1970: 784_111_777)

    func testDelaySeconds() {
        XCTAssertEqual(RetryAfter.delay("120"), 120)
        XCTAssertEqual(RetryAfter.delay("0"), 0)
        XCTAssertEqual(RetryAfter.delay(" 7 "), 7)
        XCTAssertEqual(RetryAfter.delay("000000000000000000000000000000005"), 999_999_999, "many digits: read as very long")
        XCTAssertEqual(RetryAfter.delay("99999999999999999999999"), 999_999_999)
        XCTAssertEqual(RetryAfter.delay("999999999"), 999_999_999)
    }

    func testTheThreeDateFormsAreOneInstant() {
        let before = example.addingTimeInterval(-90)
        for form in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            XCTAssertEqual(RetryAfter.httpDate(form, now: example), example, form)
            XCTAssertEqual(RetryAfter.delay(form, now: before), 90, form)
        }
        // A date already past asks for no wait.
        XCTAssertEqual(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: example.addingTimeInterval(3600)), 0)
    }

    /// RFC 850's two-digit year: more than 50 years ahead means the century before.
    func testTwoDigitYears() {
        let in2026 = Date(timeIntervalSince1970: 1_767_225_600) // 2026-01-01
        XCTAssertEqual(RetryAfter.httpDate("Thursday, 01-Jan-26 00:00:00 GMT", now: in2026), in2026)
        let nineties = RetryAfter.httpDate("Sunday, 06-Nov-94 08:49:37 GMT", now: in2026)
        XCTAssertEqual(nineties, example, "94 read in 2026 is 1994, not 2094")
        XCTAssertEqual(RetryAfter.httpDate("Monday, 01-Jan-74 00:00:00 GMT", now: in2026).map { $0 > in2026 }, true,
                       "74 read in 2026 is 2074: 48 years ahead, not more than 50")
        XCTAssertEqual(RetryAfter.httpDate("Saturday, 01-Jan-77 00:00:00 GMT", now: in2026).map { $0 < in2026 }, true,
                       "77 read in 2026 is 1977: 2077 would be 51 years ahead")
    }

    func testWhatIsNeitherFormCountsAsAbsent() {
        let garbage = ["", "  ", "-5", "+5", "1.5", "1e3", "inf", "nan", "0x10", "soon", "5 s",
                       "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37", "Sun, 32 Nov 1994 08:49:37 GMT",
                       "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
                       "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
                       "Sunday, 06-Nov-1994 08:49:37 GMT", "Sunday, 06-Nov-x4 08:49:37 GMT", "Sun Nov  6 08:49:37 94",
                       "Sun, 06 Nov 19944 08:49:37 GMT", String(repeating: "9", count: 65), "٣", "１２"]
        for value in garbage { XCTAssertNil(RetryAfter.delay(value, now: example), value) }
        XCTAssertNil(RetryAfter.delay(nil))
    }

    func testAServerAnswerCarriesItIntoTheError() throws {
        let origin = FlickrOriginServer(library: DemoLibrary.make(count: 1, scale: 16), apiKey: "k")
        try origin.start()
        defer { origin.stop() }
        let photo = try XCTUnwrap(origin.photos.first)
        origin.scriptStatuses(photoID: photo.id, [429])
        origin.setScriptedRetryAfter("Sun, 06 Nov 2094 08:49:37 GMT")
        var configuration = HTTPConfiguration()
        configuration.attempts = 1
        let url = "http://127.0.0.1:\(origin.port)\(try XCTUnwrap(origin.imagePath(photoID: photo.id)))"
        XCTAssertThrowsError(try HTTPClient(configuration: configuration).get(url)) { error in
            guard let error = error as? HTTPError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .status(429))
            XCTAssertGreaterThan(error.retryAfter ?? 0, 60 * 365 * 86_400, "a date decades ahead")
        }
    }
}
