// Each record validated on its own: wrong types read as JSON allows, absurd numbers and dates made unknown,
// ids and owners that could break a name rejected or encoded, unusable records skipped with their field.
@testable import FlickrImport
import FlickrOrigin
import PhotoCatalog
import PhotoSources
import XCTest

final class RecordValidationTests: XCTestCase {
    /// A record from JSON text, through the same reader as a page.
    func read(_ json: String) throws -> Result<SourcePhoto, SkippedRecord> {
        FlickrRecord.read(try JSONValue.parse(json))
    }

    func photo(_ fields: String) throws -> SourcePhoto {
        let result = try read(#"{"id": "52000000001", "owner": "1@N01", "url_o": "http://x/o.jpg""# + (fields.isEmpty ? "" : ", " + fields) + "}")
        switch result {
        case .success(let photo): return photo
        case .failure(let skipped): throw skipped
        }
    }

    func skipped(_ json: String) throws -> SkippedRecord? {
        if case .failure(let skipped) = try read(json) { return skipped }
        return nil
    }

    func testNumbersWhereStringsAreExpectedAndBack() throws {
        let p = try photo(#""title": 42, "dateupload": 1700000000, "datetakenunknown": 0, "latitude": "37.5", "longitude": -122.25, "width_o": "4000", "height_o": 3000.0"#)
        XCTAssertEqual(p.title, "42")
        XCTAssertEqual(p.uploadedAt, 1_700_000_000)
        XCTAssertEqual(p.latitude, 37.5)
        XCTAssertEqual(p.renditions.map(\.width), [4000])
        XCTAssertEqual(p.renditions.map(\.height), [3000])
        let numericID = try read(#"{"id": 52000000001, "url_o": "http://x/o.jpg"}"#)
        XCTAssertEqual(try numericID.get().id, "52000000001")
    }

    func testWrongTypesForOptionalFieldsAreDroppedNotFatal() throws {
        let p = try photo(#""title": {"x": 1}, "description": [1, 2], "ownername": true, "dateupload": {"_content": "x"}, "datetaken": 7, "latitude": [], "place_id": {}, "url_sq": 5"#)
        XCTAssertEqual(p.title, "Unknown")
        XCTAssertEqual(p.description, "")
        XCTAssertEqual(p.ownerName, "1@N01")
        XCTAssertNil(p.uploadedAt)
        XCTAssertNil(p.takenAt)
        XCTAssertNil(p.latitude)
        XCTAssertNil(p.placeID)
        XCTAssertNil(p.thumbnailURL)
    }

    func testAbsurdSizesCannotOverflow() throws {
        let p = try photo(#""width_o": 9223372036854775807, "height_o": "9223372036854775807", "url_l": "http://x/l.jpg", "width_l": 1e400, "height_l": -1"#)
        XCTAssertEqual(p.originalURL, "http://x/o.jpg")
        XCTAssertTrue(p.renditions.isEmpty, "no size to trust: \(p.renditions)")
        // Without url_o the largest by pixels wins, and huge edges count as "not given".
        let q = try read(#"{"id": "1", "url_l": "http://x/l.jpg", "width_l": 9223372036854775807, "height_l": 9223372036854775807, "url_z": "http://x/z.jpg", "width_z": 640, "height_z": 480}"#)
        XCTAssertEqual(try q.get().originalURL, "http://x/z.jpg")
    }

    func testUploadDatesOutOfRangeAreUnknown() throws {
        for value in ["0", "-1", "-9223372036854775808", "9223372036854775807", "253402300800", "1e400", "\"abc\"", "1.5"] {
            XCTAssertNil(try photo(#""dateupload": "# + value).uploadedAt, value)
        }
        XCTAssertEqual(try photo(#""dateupload": "253402300799""#).uploadedAt, MomentRange.latest)
        XCTAssertEqual(try photo(#""dateupload": " 1700000000 ""#).uploadedAt, 1_700_000_000)
    }

    func testDatesTakenFlickrCannotMeanAreUnknownAndFallBackToTheUploadDate() throws {
        for text in ["0000-00-00 00:00:00", "10000-01-01 00:00:00", "2019-02-29 00:00:00", "2019-04-31 12:00:00",
                     "2019-00-10 00:00:00", "2019-01-01 24:00:00", "2019-01-01 00:60:00", "2019-01-01",
                     "99999999999999999999-01-01 00:00:00", "2019-01-01 00:00:00 extra", "-2019-01-01 00:00:00", ""] {
            let p = try photo(#""dateupload": "1700000000", "datetaken": ""# + text + #"""#)
            XCTAssertNil(p.takenAt, text)
            XCTAssertNil(p.dateTaken, text)
            XCTAssertEqual(p.momentAt, 1_700_000_000, text)
        }
        XCTAssertEqual(try photo(#""datetaken": "2020-02-29 23:59:59""#).takenAt, 1_583_020_799)
        XCTAssertEqual(try photo(#""datetaken": "0001-01-01 00:00:00""#).takenAt, MomentRange.earliest)
        XCTAssertEqual(try photo(#""datetaken": "9999-12-31 23:59:59""#).takenAt, MomentRange.latest)
        // No date at all: 1970, as before.
        XCTAssertEqual(try photo("").momentAt, 0)
    }

    func testMomentSecondsAgreeWithTimegm() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            let year = Int.random(in: 1...9999, using: &generator), month = Int.random(in: 1...12, using: &generator)
            let day = Int.random(in: 1...28, using: &generator), hour = Int.random(in: 0...23, using: &generator)
            let minute = Int.random(in: 0...59, using: &generator), second = Int.random(in: 0...59, using: &generator)
            var fields = tm()
            fields.tm_year = Int32(year - 1900); fields.tm_mon = Int32(month - 1); fields.tm_mday = Int32(day)
            fields.tm_hour = Int32(hour); fields.tm_min = Int32(minute); fields.tm_sec = Int32(second)
            XCTAssertEqual(MomentRange.seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second),
                           Int64(timegm(&fields)), "\(year)-\(month)-\(day) \(hour):\(minute):\(second)")
            XCTAssertEqual(PhotoRecord.year(ofMoment: Int64(timegm(&fields))), year)
        }
    }

    func testIDsThatCouldBreakANameAreRejectedWithTheirField() throws {
        for id in [#""a/b""#, #""1\u0000""#, #""..""#, #""""#, #""12 34""#, #""\u202e1""#, #""é1""#,
                   "\"" + String(repeating: "9", count: 65) + "\""] {
            let skipped = try XCTUnwrap(try skipped(#"{"id": "# + id + #", "url_o": "http://x/o.jpg"}"#), id)
            XCTAssertEqual(skipped.field, "id", id)
            // The id in the warning is printable: no control, bidi or separator characters, one line.
            XCTAssertFalse(skipped.id?.unicodeScalars.contains { $0.value < 0x20 || $0.value > 0x7E } ?? false, id)
        }
        XCTAssertEqual(try skipped(#"{"title": "no id", "url_o": "http://x/o.jpg"}"#)?.field, "id")
        XCTAssertEqual(try skipped(#"{"id": ["1"], "url_o": "http://x/o.jpg"}"#)?.reason, "not a string or number but an array")
        XCTAssertEqual(try skipped(#"{"id": "1@N01.x_y-z", "url_o": "http://x/o.jpg"}"#), nil)
    }

    func testOwnersAreEncodedSoTheyNeverBreakANameAndNeverMerge() throws {
        let slash = try read(#"{"id": "1", "owner": "a/b", "url_o": "http://x/o.jpg"}"#).get()
        let underscore = try read(#"{"id": "2", "owner": "a%2Fb", "url_o": "http://x/o.jpg"}"#).get()
        XCTAssertEqual(slash.owner, "a%2Fb")
        XCTAssertEqual(underscore.owner, "a%252Fb")
        XCTAssertEqual(slash.ownerName, "a%2Fb", "no ownername: the encoded owner id")
        XCTAssertEqual(try read(#"{"id": "1", "url_o": "http://x/o.jpg"}"#).get().owner, "unknown")
        let long = try skipped(#"{"id": "1", "owner": ""# + String(repeating: "/", count: 30) + #"", "url_o": "http://x/o.jpg"}"#)
        XCTAssertEqual(long?.field, "owner")
        XCTAssertEqual(long?.id, "1")
    }

    func testRecordsWithoutAUsableImageURLAreSkipped() throws {
        for urls in [#""url_o": """#, #""url_o": "ftp://x/o.jpg""#, #""url_o": "http://x/a b.jpg""#,
                     #""url_o": "http://x/\n.jpg""#, #""url_o": 5"#, #""url_o": {"_content": "javascript:x"}"#,
                     #""url_o": ""# + "http://x/" + String(repeating: "a", count: 2100) + #"""#, #""url_q": null"#] {
            let skipped = try skipped(#"{"id": "1", "#  + urls + "}")
            XCTAssertEqual(skipped?.field, "url", urls)
            XCTAssertEqual(skipped?.id, "1", urls)
        }
        // A bad url_o does not hide a good url_l.
        XCTAssertEqual(try read(#"{"id": "1", "url_o": "x", "url_l": "HTTPS://x/l.jpg"}"#).get().originalURL, "HTTPS://x/l.jpg")
    }

    func testARecordThatIsNotAnObjectIsSkipped() throws {
        for json in [#""52000000001""#, "42", "null", "[]", "true"] {
            let skipped = try XCTUnwrap(try skipped(json), json)
            XCTAssertEqual(skipped.field, "record")
            XCTAssertNil(skipped.id)
        }
    }

    func testCoordinatesOutOfRangeAreNoLocation() throws {
        for (lat, lon) in [("91", "0.5"), ("1e400", "1"), ("\"NaN\"", "1"), ("10", "-181"), ("0", "0")] {
            let p = try photo(#""latitude": "# + lat + #", "longitude": "# + lon)
            XCTAssertNil(p.latitude, "\(lat) \(lon)")
            XCTAssertNil(p.longitude, "\(lat) \(lon)")
        }
    }

    func testLongTextIsCutAndNULReplaced() throws {
        let title = String(repeating: "é", count: 5000)
        let p = try photo(#""title": ""# + title + #"", "description": {"_content": "a\u0000b"}"#)
        XCTAssertEqual(p.title.count, SourceText.nameLimit)
        XCTAssertEqual(p.description, "a b")
    }

    func testPlaceIDsThatAreNotIdentifiersAreNoPlace() throws {
        XCTAssertEqual(try photo(#""place_id": "7.MJR8tTVrIO1EgB""#).placeID, "7.MJR8tTVrIO1EgB")
        XCTAssertNil(try photo(#""place_id": "../etc""#).placeID)
    }
}
