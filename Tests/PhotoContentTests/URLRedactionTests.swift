// URLRedaction: credentials leave URLs before they reach a log line or an error, however they are spelled.
import FlickrOrigin
import Logging
@testable import PhotoContent
import TestRequirements
import XCTest

final class URLRedactionTests: XCTestCase {
    func testSensitiveQueryValuesAreReplaced() {
        XCTAssertEqual(URLRedaction.redacted("https://api.flickr.com/services/rest/?method=flickr.photos.search&api_key=SECRET&page=2"),
                       "https://api.flickr.com/services/rest/?method=flickr.photos.search&api_key=…&page=2")
        let oauth = "https://x.test/a?oauth_consumer_key=C1&oauth_token=T1&oauth_signature=S1&oauth_verifier=V1&oauth_nonce=n&format=json"
        XCTAssertEqual(URLRedaction.redacted(oauth),
                       "https://x.test/a?oauth_consumer_key=…&oauth_token=…&oauth_signature=…&oauth_verifier=…&oauth_nonce=n&format=json")
        // Any name containing secret, token, signature, key, password; upper case too.
        XCTAssertEqual(URLRedaction.redacted("http://h/p?My_Client_Secret=a&X-Auth-Token=b&API_KEY=c&user_password=d&q=e"),
                       "http://h/p?My_Client_Secret=…&X-Auth-Token=…&API_KEY=…&user_password=…&q=e")
        XCTAssertEqual(URLRedaction.redacted("http://h/p?api_sig=abc;auth_token=xyz"), "http://h/p?api_sig=…;auth_token=…")
    }

    func testPercentEncodedAndPlusEncodedNamesAreRecognised() {
        XCTAssertEqual(URLRedaction.redacted("http://h/p?api%5Fkey=SECRET"), "http://h/p?api%5Fkey=…")
        XCTAssertEqual(URLRedaction.redacted("http://h/p?api%5fKEY=SECRET&x=1"), "http://h/p?api%5fKEY=…&x=1")
        XCTAssertEqual(URLRedaction.redacted("http://h/p?%61pi_secret=SECRET"), "http://h/p?%61pi_secret=…")
        XCTAssertEqual(URLRedaction.redacted("http://h/p?oauth%20token=SECRET"), "http://h/p?oauth%20token=…")
    }

    func testUserInformationAndFragmentsAreRedacted() {
        XCTAssertEqual(URLRedaction.redacted("https://alice:hunter2@example.com:8443/photos/1_o.jpg"),
                       "https://…@example.com:8443/photos/1_o.jpg")
        XCTAssertEqual(URLRedaction.redacted("https://token@example.com/?a=1"), "https://…@example.com/?a=1")
        // An "@" later in the path is not user information.
        XCTAssertEqual(URLRedaction.redacted("https://example.com/@alice/photo"), "https://example.com/@alice/photo")
        XCTAssertEqual(URLRedaction.redacted("https://example.com/cb#access_token=SECRET&state=s"),
                       "https://example.com/cb#access_token=…&state=s")
    }

    func testOrdinaryURLsAreUnchanged() {
        for url in ["https://live.staticflickr.com/65535/52000000000_abcdef1234_o.jpg",
                    "http://127.0.0.1:8080/photos/1_o.png?size=large", "not a url", "", "?", "http://", "a@b"] {
            XCTAssertEqual(URLRedaction.redacted(url), url)
        }
    }

    func testHostileInputNeverTraps() {
        let samples = ["http://h/?%", "http://h/?%z", "http://h/?%5", "http://h/?&&==&key", "http://h/?key==x=y",
                       "http://@@@/?token=%ff%fe", "http://h/?\u{0}key=\u{0}", "://?#", "#token=x", "http://h#",
                       String(repeating: "%", count: 1000) + "?key=v", "http://h/?k\u{301}ey=é"]
        for sample in samples { _ = URLRedaction.redacted(sample) }
        XCTAssertEqual(URLRedaction.redacted("http://h/?key==x=y"), "http://h/?key=…")
        XCTAssertEqual(URLRedaction.redacted("#token=x"), "#token=…")
    }

    func testErrorsCarryOnlyTheRedactedURL() {
        let url = "https://api.flickr.com/services/rest/?api_key=SECRET123&oauth_token=TOK456"
        let http = HTTPError(kind: .status(503), url: url)
        XCTAssertFalse(http.description.contains("SECRET123"))
        XCTAssertFalse(http.url.contains("TOK456"))
        let content = ContentError(kind: .httpStatus(404), photoID: "1", url: url)
        XCTAssertFalse("\(content)".contains("SECRET123"))
        XCTAssertTrue("\(content)".contains("api_key=…"))
    }

    /// The retry lines of `HTTPClient` and `DownloadEngine`, and the failure line, against a real origin.
    func testRetriesAndFailuresLogNoSecret() throws {
        let library = DemoLibrary.make(count: 1, scale: 8)
        let origin = FlickrOriginServer(library: library, apiKey: "k")
        try origin.start()
        defer { origin.stop() }
        let photo = library.photos[0]
        let url = "http://user:PASSWORD9@127.0.0.1:\(origin.port)\(origin.imagePath(photoID: photo.id)!)?api_key=SECRET123"
        let recorder = LogRecorder()
        var configuration = HTTPConfiguration()
        configuration.retryBaseDelay = 0.001
        let client = HTTPClient(configuration: configuration, logger: recorder.logger())

        origin.scriptStatuses(photoID: photo.id, [500, 503, 500])
        XCTAssertThrowsError(try client.get(url)) { error in
            XCTAssertFalse("\(error)".contains("SECRET123"))
            XCTAssertFalse("\(error)".contains("PASSWORD9"))
        }
        XCTAssertEqual(recorder.count(containing: "retrying"), 2)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("redaction-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try OriginalCache(directory: directory, http: client, logger: recorder.logger())
        origin.scriptStatuses(photoID: photo.id, [500, 503, 500])
        let source = ContentSource(photoID: photo.id, url: url, expectedSize: Int64(photo.image.data.count),
                                   contentType: photo.image.contentType)
        XCTAssertThrowsError(try cache.fetch(source)) { error in XCTAssertFalse("\(error)".contains("SECRET123")) }
        XCTAssertEqual(recorder.count(containing: "retrying download"), 2)
        XCTAssertEqual(recorder.count(containing: "download failed"), 1)
        let leaks = recorder.lines.filter { $0.contains("SECRET123") || $0.contains("PASSWORD9") }
        XCTAssertEqual(leaks, [])
        XCTAssertGreaterThan(recorder.count(containing: "api_key=…"), 0)
    }
}
