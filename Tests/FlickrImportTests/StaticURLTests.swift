// Records without any url_* (1 in 20 of a real search answer): URLs built by Flickr's documented scheme from
// server, id and secret, served by the origin, and nothing hostile spliced into them.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import PhotoSources
import XCTest

final class StaticURLTests: XCTestCase {
    func read(_ json: String, host: String = FlickrSourceOptions.defaultStaticHost) throws -> Result<SourcePhoto, SkippedRecord> {
        FlickrRecord.read(try JSONValue.parse(json), context: FlickrRecordContext(staticHost: host, account: nil))
    }

    func testTheDocumentedSchemeAndItsExample() throws {
        // misc.urls.html's example: server 7372, photo 12502775644, secret acfd415fa7.
        let photo = try read(#"{"id": "12502775644", "owner": "1@N01", "server": "7372", "secret": "acfd415fa7", "farm": 8}"#).get()
        XCTAssertEqual(photo.originalURL, "https://live.staticflickr.com/7372/12502775644_acfd415fa7_b.jpg",
                       "no original secret: the largest size that shares the photo's secret")
        XCTAssertEqual(photo.thumbnailURL, "https://live.staticflickr.com/7372/12502775644_acfd415fa7_s.jpg")
        XCTAssertEqual(photo.renditions.map { "\($0.label) \($0.width)x\($0.height)" }, ["sq 75x75", "q 150x150"])
        XCTAssertTrue(photo.renditions.allSatisfy(\.isSquareCrop))
        let original = try read(#"{"id": 12502775644, "server": 7372, "secret": "acfd415fa7", "originalsecret": "0fe1d2c3b4", "originalformat": "PNG"}"#).get()
        XCTAssertEqual(original.originalURL, "https://live.staticflickr.com/7372/12502775644_0fe1d2c3b4_o.png")
        // A record with url_* keeps them: the scheme is the fallback only.
        XCTAssertEqual(try read(#"{"id": "1", "server": "7372", "secret": "acfd415fa7", "url_z": "http://x/z.jpg"}"#).get().originalURL,
                       "http://x/z.jpg")
    }

    func testNothingHostileIsSplicedIntoAURL() throws {
        for fields in [#""server": "../etc", "secret": "abc""#, #""server": "7372", "secret": "a?b""#,
                       #""server": "7372", "secret": "a/b""#, #""server": "", "secret": "abc""#,
                       #""server": "7372", "secret": ["abc"]"#, #""server": {"_content": {"_content": {"_content": "1"}}}, "secret": "abc""#,
                       #""server": "7372""#, #""secret": "abc""#, #""server": "7372", "secret": "ab c""#,
                       #""server": "7372", "secret": ""# + String(repeating: "a", count: 65) + #"""#] {
            let result = try read(#"{"id": "52000000001", "# + fields + "}")
            guard case .failure(let skipped) = result else { return XCTFail("built a URL from \(fields): \(result)") }
            XCTAssertEqual(skipped.field, "url", fields)
        }
        // A bad original secret or format falls back to the shared secret's size, not to a broken URL.
        let fallback = try read(#"{"id": "5", "server": "1", "secret": "abc", "originalsecret": "x/y", "originalformat": "jpg"}"#).get()
        XCTAssertEqual(fallback.originalURL, "https://live.staticflickr.com/1/5_abc_b.jpg")
        let format = try read(#"{"id": "5", "server": "1", "secret": "abc", "originalsecret": "def", "originalformat": "jpg?x=1"}"#).get()
        XCTAssertEqual(format.originalURL, "https://live.staticflickr.com/1/5_abc_b.jpg")
        // An id that is no identifier, or a host that is no http(s) URL, builds nothing.
        for (json, host) in [(#"{"id": "../1", "server": "1", "secret": "abc"}"#, FlickrSourceOptions.defaultStaticHost),
                             (#"{"id": "1", "server": "1", "secret": "abc"}"#, "file:///etc"),
                             (#"{"id": "1", "server": "1", "secret": "abc"}"#, "https://host with space")] {
            guard case .failure(let skipped) = try read(json, host: host) else { return XCTFail("\(json) at \(host)") }
            XCTAssertEqual(skipped.field, "url")
        }
    }

    func testTheOriginServesTheURLsBuiltForItsRecords() throws {
        let fixture = try AccountFixture()
        defer { fixture.stop() }
        // The owner's public photo with an original, and a photo whose photographer hides originals.
        let withOriginal = try XCTUnwrap(fixture.ownerPhotos { $0.isPublic && $0.hasOriginal && !$0.isVideo }.first)
        let hidden = try XCTUnwrap(fixture.origin.photos.first { !$0.hasOriginal && !$0.isVideo && $0.isPublic })
        fixture.origin.setWithoutURLs(photoID: withOriginal.id)
        fixture.origin.setWithoutURLs(photoID: hidden.id)

        let account = fixture.source(user: "me")
        let listed = try XCTUnwrap(try allPages(account.listPage).flatMap(\.photos).first { $0.id == withOriginal.id })
        XCTAssertEqual(listed.originalURL, fixture.origin.baseURL + withOriginal.staticOriginalPath)
        let query = fixture.source(user: nil, signedInAs: nil, perPage: 500)
        let hiddenListed = try XCTUnwrap(try query.listPage(nil).photos.first { $0.id == hidden.id })
        XCTAssertEqual(hiddenListed.originalURL, fixture.origin.baseURL + hidden.staticPath("b"))
        XCTAssertFalse(hiddenListed.originalURL.contains("/photos/"))

        for (photo, origin) in [(listed, withOriginal), (hiddenListed, hidden)] {
            guard case .success(let measured) = account.measure(photo.originalURL) else {
                return XCTFail("\(photo.originalURL) must be served")
            }
            XCTAssertEqual(measured.size, Int64(origin.image.data.count))
            XCTAssertEqual(measured.etag, origin.image.etag)
            let thumbnail = try XCTUnwrap(photo.thumbnailURL)
            guard case .success(let square) = account.measure(thumbnail) else { return XCTFail("\(thumbnail) must be served") }
            XCTAssertEqual(square.size, Int64(try XCTUnwrap(origin.thumbnail).data.count))
        }
        XCTAssertGreaterThan(fixture.origin.requestCount(method: "HEAD"), 3, "static paths count as image requests")
    }
}
