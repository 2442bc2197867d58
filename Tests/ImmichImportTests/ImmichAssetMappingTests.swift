// The Immich mapping rules on hostile JSON: one bad asset is one skipped record, never a trap or a failed page.
import ImmichImport
import PhotoCatalog
import PhotoContent
import PhotoSources
import XCTest

final class ImmichAssetMappingTests: XCTestCase {
    let mapping = ImmichAssetMapping(server: "http://127.0.0.1:2283")
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e"
    let owner = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

    func asset(_ changes: [String: Any] = [:], exif: [String: Any] = [:]) throws -> JSONValue {
        var object: [String: Any] = [
            "id": id, "ownerId": owner, "type": "IMAGE", "originalFileName": "IMG_0042.JPG", "originalMimeType": "image/jpeg",
            "localDateTime": "2024-07-14T09:30:12.000Z", "fileCreatedAt": "2024-07-14T00:30:12.000Z",
            "updatedAt": "2024-08-01T10:00:00.000Z", "checksum": Data(repeating: 7, count: 20).base64EncodedString(),
            "isFavorite": true, "isTrashed": false, "visibility": "timeline", "width": 4000, "height": 3000,
        ]
        var info: [String: Any] = ["description": "", "state": "Tokyo", "country": "Japan", "fileSizeInByte": 123_456]
        for (key, value) in exif { info[key] = value }
        object["exifInfo"] = info
        for (key, value) in changes { object[key] = value }
        return try JSONValue.parse(JSONSerialization.data(withJSONObject: object))
    }

    func mapped(_ value: JSONValue, file: StaticString = #filePath, line: UInt = #line) -> (SourcePhoto, PhotoMarks, String?)? {
        guard case .photo(let photo, let marks, _, let region) = mapping.map(value, ownerName: { _ in "Ada" }) else {
            XCTFail("not a photo: \(mapping.map(value, ownerName: { _ in nil }))", file: file, line: line)
            return nil
        }
        return (photo, marks, region)
    }

    func testTheRules() throws {
        let (photo, marks, region) = try XCTUnwrap(mapped(try asset()))
        XCTAssertEqual(photo.id, id)
        XCTAssertEqual(photo.title, "IMG_0042", "blank description: the file name without its extension")
        XCTAssertEqual(photo.ownerName, "Ada")
        XCTAssertEqual(photo.dateTaken, "2024-07-14 09:30:12", "localDateTime is the wall clock, used as it is")
        XCTAssertEqual(photo.momentAt, MomentRange.seconds(year: 2024, month: 7, day: 14, hour: 9, minute: 30, second: 12))
        XCTAssertEqual(region, "Tokyo")
        XCTAssertEqual(photo.placeID, ImmichAssetMapping.placeID("Tokyo"))
        XCTAssertEqual(photo.content?.size, 123_456)
        XCTAssertEqual(photo.content?.contentType, "image/jpeg")
        XCTAssertEqual(photo.originalURL, "http://127.0.0.1:2283/api/assets/\(id)/original#sha1=" + String(repeating: "07", count: 20))
        XCTAssertEqual(photo.visibility, .privateOnly)
        XCTAssertTrue(marks.isFavorite)
        XCTAssertEqual(photo.renditions.map(\.label), ["thumbnail", "preview"])
        XCTAssertEqual(photo.renditions.map { [$0.width, $0.height] }, [[333, 250], [1920, 1440]], "short sides 250 and 1440")
        XCTAssertEqual(photo.renditions.first?.url.hasSuffix("/thumbnail?size=thumbnail"), true)

        let described = try XCTUnwrap(mapped(try asset(exif: ["description": "Harbour at dawn", "state": NSNull()])))
        XCTAssertEqual(described.0.title, "Harbour at dawn")
        XCTAssertEqual(described.2, "Japan", "no state: the country")
        let nowhere = try XCTUnwrap(mapped(try asset(exif: ["description": "  \n", "state": "  ", "country": NSNull()])))
        XCTAssertEqual(nowhere.0.title, "IMG_0042")
        XCTAssertNil(nowhere.2)
        XCTAssertNil(nowhere.0.placeID)
        let png = try XCTUnwrap(mapped(try asset(["originalMimeType": NSNull(), "originalFileName": "scan.PNG"])))
        XCTAssertEqual(png.0.content?.contentType, "image/png", "the type from the extension when Immich gives none")
        XCTAssertNil(photo.camera)
        let canon = try XCTUnwrap(mapped(try asset(exif: ["make": "Canon", "model": "Canon EOS 80D"])))
        XCTAssertEqual(canon.0.camera, "Canon EOS 80D", "the model alone when it starts with the make")
        let fuji = try XCTUnwrap(mapped(try asset(exif: ["make": "FUJIFILM", "model": "X-T30"])))
        XCTAssertEqual(fuji.0.camera, "FUJIFILM X-T30")
        let blank = try XCTUnwrap(mapped(try asset(exif: ["make": " ", "model": 7])))
        XCTAssertNil(blank.0.camera)
    }

    func testWhatIsNotAPhoto() throws {
        XCTAssertEqual(mapping.map(try asset(["type": "VIDEO"]), ownerName: { _ in nil }), .video)
        XCTAssertEqual(mapping.map(try asset(["isTrashed": true]), ownerName: { _ in nil }), .trashed(id))
        XCTAssertEqual(mapping.map(try asset(["visibility": "locked"]), ownerName: { _ in nil }), .locked(id))
        guard case .skipped(let raw) = mapping.map(try asset(["originalMimeType": "image/x-adobe-dng"]), ownerName: { _ in nil }) else {
            return XCTFail("a raw file is not shown")
        }
        XCTAssertEqual(raw.field, "originalMimeType")
        guard case .skipped(let badID) = mapping.map(try asset(["id": "../../etc/passwd"]), ownerName: { _ in nil }) else {
            return XCTFail("an id that is no UUID")
        }
        XCTAssertEqual(badID.field, "id")
        guard case .skipped(let notObject) = mapping.map(.array([]), ownerName: { _ in nil }) else { return XCTFail("an array") }
        XCTAssertEqual(notObject.field, "record")
    }

    func testAbsurdValuesAreDroppedNotTrusted() throws {
        let text = """
            {"id": "\(id)", "type": "IMAGE", "ownerId": 5, "originalFileName": ["x"], "originalMimeType": "image/jpeg",
             "localDateTime": "99999-01-01T00:00:00Z", "fileCreatedAt": "0000-00-00T00:00:00Z", "updatedAt": "\\ud800",
             "checksum": "not base64!!", "width": 1e400, "height": -3, "isFavorite": "yes",
             "exifInfo": {"fileSizeInByte": 99999999999999999999999, "latitude": 1e999, "longitude": "east",
                          "description": "nul\\u0000inside", "state": 12, "country": "\\ud800x"},
             "people": [{"id": "not-a-uuid", "name": "X"}, 7, {"id": "\(owner)", "name": "  "}, {"id": "\(owner)", "name": "Grace", "isHidden": true}]}
            """
        let (photo, marks, region) = try XCTUnwrap(mapped(try JSONValue.parse(text)))
        XCTAssertEqual(photo.momentAt, 0, "no usable date: 1970, as for any source")
        XCTAssertNil(photo.content, "a size past belief is measured instead")
        XCTAssertNil(photo.latitude)
        XCTAssertEqual(photo.title, "nul inside")
        XCTAssertEqual(region, "\u{FFFD}x")
        XCTAssertTrue(photo.renditions.isEmpty)
        XCTAssertFalse(marks.isFavorite)
        XCTAssertTrue(marks.personIDs.isEmpty)
        XCTAssertFalse(photo.originalURL.contains("#"), "no checksum, no version in the URL")
    }

    /// Thousands of mutated assets: every one maps to something, nothing traps.
    func testSeededMutationsNeverTrap() throws {
        let base = try asset()
        guard case .object(let fields) = base else { return XCTFail() }
        let hostile: [JSONValue] = [.null, .bool(true), .string(""), .string(String(repeating: "é", count: 5000)),
                                    .string("\u{202E}\u{0}/.."), .number(JSONNumber(text: "-1e400")),
                                    .number(JSONNumber(text: "18446744073709551616")), .array([.null]), .object(["a": .null])]
        var generator = SystemRandomNumberGenerator()
        var photos = 0
        for _ in 0..<3000 {
            var mutated = fields
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let key = fields.keys.randomElement(using: &generator) ?? "id"
                mutated[key] = hostile.randomElement(using: &generator)
            }
            if case .photo(let photo, _, _, _) = mapping.map(.object(mutated), ownerName: { _ in nil }) {
                photos += 1
                XCTAssertTrue(SourceURL.isUsable(photo.originalURL))
                XCTAssertTrue((MomentRange.earliest...MomentRange.latest).contains(photo.momentAt))
            }
        }
        XCTAssertGreaterThan(photos, 0)
    }

    func testDates() {
        XCTAssertEqual(ImmichDate.parse("2024-07-14T09:30:12.123+09:00")?.wallClock,
                       MomentRange.seconds(year: 2024, month: 7, day: 14, hour: 9, minute: 30, second: 12))
        XCTAssertEqual(ImmichDate.parse("2024-07-14T09:30:12+09:00")?.instant,
                       MomentRange.seconds(year: 2024, month: 7, day: 14, hour: 0, minute: 30, second: 12))
        for bad in ["", "2024", "2024-02-30T00:00:00Z", "2024-07-14T25:00:00Z", "2024-07-14T09:30:12+99:00", "２０２４-07-14T09:30:12Z"] {
            XCTAssertNil(ImmichDate.parse(bad), bad)
        }
    }
}
