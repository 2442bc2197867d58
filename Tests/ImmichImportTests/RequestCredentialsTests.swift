// The x-api-key header goes to its own server's API only, and never prints.
import PhotoContent
import XCTest

final class RequestCredentialsTests: XCTestCase {
    func testHeadersOnlyForTheirServer() {
        var credentials = RequestCredentials()
        XCTAssertTrue(credentials.add(prefix: "HTTP://Photos.Example.org:2283/api", name: "x-api-key", value: "s3cret-key-value"))
        XCTAssertEqual(credentials.headers(for: "http://photos.example.org:2283/api/assets/x/original"), ["x-api-key: s3cret-key-value"])
        XCTAssertEqual(credentials.headers(for: "http://PHOTOS.example.org:2283/api/search/metadata"), ["x-api-key: s3cret-key-value"])
        for other in ["http://photos.example.org:2284/api/x", "https://photos.example.org:2283/api/x", "http://photos.example.org:2283/apix",
                      "http://photos.example.org.evil:2283/api/x", "http://evil/?u=http://photos.example.org:2283/api/",
                      "http://user@photos.example.org:2283/api/x", "not a url"] {
            XCTAssertEqual(credentials.headers(for: other), [], other)
        }
        XCTAssertFalse(credentials.add(prefix: "http://a/api/", name: "x-api-key", value: "line\r\nInjected: 1"))
        XCTAssertFalse(credentials.add(prefix: "ftp://a/", name: "x-api-key", value: "k"))
        for shown in ["\(credentials)", String(reflecting: credentials), { var t = ""; dump(credentials, to: &t); return t }()] {
            XCTAssertFalse(shown.contains("s3cret"), shown)
        }
    }
}
