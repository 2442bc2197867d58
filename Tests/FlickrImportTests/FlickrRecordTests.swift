// Reading one Flickr photo: title and owner fallbacks, the original URL rule, numbers sent as strings.
@testable import FlickrImport
import Foundation
import PhotoSources
import XCTest

/// One record, written as a Swift dictionary, serialised by Foundation and read back the way the source
/// reads a page: through `JSONValue` and `FlickrRecord.read`.
func flickrRecord(_ json: [String: Any]) -> SourcePhoto? {
    guard let data = try? JSONSerialization.data(withJSONObject: json), let value = try? JSONValue.parse(data),
          case .success(let photo) = FlickrRecord.read(value) else { return nil }
    return photo
}

final class FlickrRecordTests: XCTestCase {
    func testTitleFallsBackToDescriptionThenUnknown() {
        XCTAssertEqual(flickrRecord(base(["title": "Pier"]))?.title, "Pier")
        XCTAssertEqual(flickrRecord(base(["title": "  ", "description": ["_content": "From the pier"]]))?.title,
                       "From the pier")
        XCTAssertEqual(flickrRecord(base(["title": "", "description": ["_content": ""]]))?.title, "Unknown")
    }

    func testNULIsNeverStored() {
        XCTAssertEqual(flickrRecord(base(["title": "nul\u{0}inside"]))?.title, "nul inside")
    }

    func testPhotographerIsOwnernameElseOwnerID() {
        XCTAssertEqual(flickrRecord(base(["ownername": "Ansel"]))?.ownerName, "Ansel")
        XCTAssertEqual(flickrRecord(base([:]))?.ownerName, "123@N01")
    }

    func testOriginalIsURLOElseTheLargestRendition() {
        XCTAssertEqual(flickrRecord(base(["url_o": "http://x/o.jpg", "url_l": "http://x/l.jpg"]))?.originalURL,
                       "http://x/o.jpg")
        let noOriginal = base(["url_m": "http://x/m.jpg", "width_m": "500", "height_m": 375,
                               "url_l": "http://x/l.jpg", "width_l": 1024, "height_l": "768",
                               "url_sq": "http://x/sq.jpg", "width_sq": 75, "height_sq": 75])
        XCTAssertEqual(flickrRecord(noOriginal)?.originalURL, "http://x/l.jpg")
        XCTAssertEqual(flickrRecord(noOriginal)?.thumbnailURL, "http://x/sq.jpg")
        // Without widths the suffix order decides.
        XCTAssertEqual(flickrRecord(base(["url_z": "http://x/z.jpg", "url_c": "http://x/c.jpg"]))?.originalURL,
                       "http://x/c.jpg")
        XCTAssertNil(flickrRecord(["id": "1", "title": "no urls"]))
    }

    func testEveryRenditionWithItsSizeIsKept() {
        let photo = flickrRecord(base(["url_o": "http://x/o.jpg", "width_o": "4000", "height_o": 3000,
                                            "url_z": "http://x/z.jpg", "width_z": 640, "height_z": "480",
                                            "url_sq": "http://x/sq.jpg", "width_sq": 75, "height_sq": 75,
                                            "url_m": "http://x/m.jpg", // no size: cannot be chosen by size
                                            "url_l": "http://x/l.jpg", "width_l": 0, "height_l": 0]))
        let kept = Set((photo?.renditions ?? []).map { "\($0.label) \($0.width)x\($0.height) \($0.url)" })
        XCTAssertEqual(kept, ["o 4000x3000 http://x/o.jpg", "z 640x480 http://x/z.jpg", "sq 75x75 http://x/sq.jpg"])
    }

    func testDatesAndLocation() {
        let photo = flickrRecord(base(["datetaken": "2019-05-04 12:33:10", "dateupload": "1700000000",
                                            "latitude": "37.5", "longitude": -122.25, "place_id": "abc"]))
        XCTAssertEqual(photo?.takenAt, 1_556_973_190)
        XCTAssertEqual(photo?.uploadedAt, 1_700_000_000)
        XCTAssertEqual(photo?.latitude, 37.5)
        XCTAssertEqual(photo?.placeID, "abc")
        let unknownDate = flickrRecord(base(["datetaken": "2001-01-01 00:00:00", "datetakenunknown": "1",
                                                  "latitude": 0, "longitude": 0]))
        XCTAssertNil(unknownDate?.takenAt)
        XCTAssertNil(unknownDate?.latitude)
        XCTAssertNil(flickrRecord(base(["datetaken": "2019-13-45 99:00:00"]))?.takenAt)
    }

    private func base(_ fields: [String: Any]) -> [String: Any] {
        var json: [String: Any] = ["id": 52_000_000_001 as Int, "owner": "123@N01", "title": "t", "url_o": "http://x/o.jpg"]
        if fields["url_o"] == nil && fields.keys.contains(where: { $0.hasPrefix("url_") }) { json["url_o"] = nil }
        json.merge(fields) { _, new in new }
        return json
    }
}
