// Signed REST calls (OAuth 1.0a) against the loopback origin, which checks every signature as Flickr does.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import OAuth1
import PhotoContent
import PhotoSources
import XCTest

final class SignedCallsTests: XCTestCase {
    private let account = OriginAccount(nsid: "10000001@N01", username: "ansel", fullname: "Ansel Adams")
    private var origin: FlickrOriginServer!

    override func setUpWithError() throws {
        var library = DemoLibrary.make(count: 4, scale: 8)
        library.accounts = [account]
        origin = FlickrOriginServer(library: library, apiKey: "consumer-key-123", apiSecret: "consumer-secret-456")
        try origin.start()
    }

    override func tearDown() { origin.stop() }

    private func rest(_ credentials: SourceCredentials) -> FlickrREST {
        FlickrREST(endpoint: origin.endpoint, credentials: credentials, http: HTTPClient(),
                   redactor: credentials.redactor)
    }

    func testASignedCallIsAcceptedAndNamesItsAccount() throws {
        let token = origin.issueAccessToken(for: account.nsid)
        let answer = try rest(.oauth1(consumerKey: "consumer-key-123", consumerSecret: "consumer-secret-456",
                                      token: token.token, tokenSecret: token.secret)).call("flickr.test.login", [:])
        XCTAssertEqual(FlickrJSON.text(answer["user"]?["id"]), account.nsid)
        XCTAssertEqual(FlickrJSON.text(answer["user"]?["username"]), "ansel")
    }

    /// Parameters with every character class the encoding must get right are signed as they are sent.
    func testParametersThatNeedEncodingStillVerify() throws {
        let token = origin.issueAccessToken(for: account.nsid)
        let answer = try rest(.oauth1(consumerKey: "consumer-key-123", consumerSecret: "consumer-secret-456",
                                      token: token.token, tokenSecret: token.secret))
            .call("flickr.photos.search", ["text": "a+b c/d=é&~*", "tags": "x,y"])
        XCTAssertEqual(FlickrJSON.text(answer["stat"]), "ok")
    }

    func testEachWayOfGettingItWrongGetsFlickrsCode() throws {
        let token = origin.issueAccessToken(for: account.nsid)
        func code(_ credentials: SourceCredentials, _ method: String = "flickr.test.login") -> Int? {
            do { _ = try rest(credentials).call(method, [:]); return nil } catch let failure as FlickrREST.Failure {
                XCTAssertFalse(failure.message.contains("consumer-secret-456") || failure.message.contains(token.secret))
                return failure.code
            } catch { XCTFail("\(error)"); return nil }
        }
        XCTAssertEqual(code(.oauth1(consumerKey: "consumer-key-123", consumerSecret: "wrong-secret",
                                    token: token.token, tokenSecret: token.secret)), 96)
        XCTAssertEqual(code(.oauth1(consumerKey: "consumer-key-123", consumerSecret: "consumer-secret-456",
                                    token: token.token, tokenSecret: "wrong-token-secret")), 96)
        XCTAssertEqual(code(.oauth1(consumerKey: "consumer-key-123", consumerSecret: "consumer-secret-456",
                                    token: "never-issued", tokenSecret: token.secret)), 98)
        XCTAssertEqual(code(.oauth1(consumerKey: "another-key", consumerSecret: "consumer-secret-456",
                                    token: token.token, tokenSecret: token.secret)), 100)
        // The app's key alone reads public lists but is nobody: test.login needs a signed-in member.
        XCTAssertEqual(code(.apiKey("consumer-key-123")), 99)
        XCTAssertNil(code(.apiKey("consumer-key-123"), "flickr.photos.getRecent"))
        // oauth_* parameters without a signature: Flickr's "Missing signature".
        let unsigned = origin.endpoint + "?method=flickr.test.login&format=json&nojsoncallback=1"
            + "&oauth_consumer_key=consumer-key-123&oauth_token=\(OAuthPercent.encode(token.token))&oauth_nonce=n1"
            + "&oauth_timestamp=1&oauth_signature_method=HMAC-SHA1"
        XCTAssertTrue(String(decoding: try HTTPClient().get(unsigned).body, as: UTF8.self).contains("\"code\":97"))
        origin.revokeAccessTokens(of: account.nsid)
        XCTAssertEqual(code(.oauth1(consumerKey: "consumer-key-123", consumerSecret: "consumer-secret-456",
                                    token: token.token, tokenSecret: token.secret)), 98)
    }
}
