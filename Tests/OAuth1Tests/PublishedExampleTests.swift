// The signer against the other published worked examples: RFC 5849 §3.4.1 and Flickr's OAuth documentation.
import OAuth1
import XCTest

final class PublishedExampleTests: XCTestCase {
    // MARK: RFC 5849 §3.4.1.1: POST http://example.com/request with a query, a form body and oauth_* parameters

    /// The request of §3.4.1.1, as the RFC prints it:
    ///
    ///     POST /request?b5=%3D%253D&a3=a&c%40=&a2=r%20b HTTP/1.1
    ///     Host: example.com
    ///     Content-Type: application/x-www-form-urlencoded
    ///     Authorization: OAuth realm="Example", oauth_consumer_key="9djdj82h48djs9d2", oauth_token="kkk9d7dh3k39sjv7",
    ///       oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="7d8f3e4a",
    ///       oauth_signature="bYT5CMsGcbgUdFHObYMEfcx6bsw%3D"
    ///
    ///     c2&a3=2+q
    static let rfcURL = "http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b"
    static let rfcBody = "c2&a3=2+q"
    /// `realm` is not a signed parameter (§3.4.1.3.1) and `oauth_signature` is left out by the signer.
    static let rfcProtocolParameters: [OAuthSignature.Parameter] = [
        ("oauth_consumer_key", "9djdj82h48djs9d2"), ("oauth_token", "kkk9d7dh3k39sjv7"),
        ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "137131201"), ("oauth_nonce", "7d8f3e4a"),
        ("oauth_signature", "bYT5CMsGcbgUdFHObYMEfcx6bsw="),
    ]

    /// §3.4.1.1's base string, which the RFC prints over five lines "for display purposes only".
    static let rfcBaseString = "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q"
        + "%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9dj"
        + "dj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1"
        + "%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7"

    func testRFC5849Section3_4_1_1BaseString() throws {
        let body = try XCTUnwrap(OAuthPercent.parseForm(PublishedExampleTests.rfcBody))
        // The form body's "c2" (no "=") is an empty value and "+" a space, as §3.4.1.3.1 reads it.
        XCTAssertEqual(body.map { "\($0.name)=\($0.value)" }, ["c2=", "a3=2 q"])
        let base = OAuthSignature.baseString(method: "POST", url: PublishedExampleTests.rfcURL,
                                             parameters: body + PublishedExampleTests.rfcProtocolParameters)
        XCTAssertEqual(base, PublishedExampleTests.rfcBaseString)
        // The method is upper-cased whatever the caller wrote.
        XCTAssertEqual(OAuthSignature.baseString(method: "post", url: PublishedExampleTests.rfcURL,
                                                 parameters: body + PublishedExampleTests.rfcProtocolParameters),
                       PublishedExampleTests.rfcBaseString)
    }

    /// §3.4.1.3.1 lists the request's parameters as decoded pairs; §3.4.1.3.2 prints them normalized.
    func testRFC5849Section3_4_1_3_2NormalizedParameters() {
        let decoded: [OAuthSignature.Parameter] = [
            ("b5", "=%3D"), ("a3", "a"), ("c@", ""), ("a2", "r b"), ("oauth_consumer_key", "9djdj82h48djs9d2"),
            ("oauth_token", "kkk9d7dh3k39sjv7"), ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "137131201"), ("oauth_nonce", "7d8f3e4a"), ("c2", ""), ("a3", "2 q"),
        ]
        let expected = "a2=r%20b&a3=2%20q&a3=a&b5=%3D%253D&c%40=&c2=&oauth_consumer_key=9djdj82h48djs9d2"
            + "&oauth_nonce=7d8f3e4a&oauth_signature_method=HMAC-SHA1&oauth_timestamp=137131201"
            + "&oauth_token=kkk9d7dh3k39sjv7"
        XCTAssertEqual(OAuthSignature.normalizedParameters(decoded), expected)
        // Order of collection does not matter; equal names sort by value ("2%20q" before "a").
        XCTAssertEqual(OAuthSignature.normalizedParameters(decoded.reversed()), expected)
        // The query of the RFC's URL decodes to the same pairs it lists.
        XCTAssertEqual(OAuthSignature.queryParameters(PublishedExampleTests.rfcURL).map { "\($0.name)=\($0.value)" },
                       ["b5==%3D", "a3=a", "c@=", "a2=r b"])
    }

    /// §3.4.1.2's two examples of a base string URI.
    func testRFC5849Section3_4_1_2BaseStringURI() {
        XCTAssertEqual(OAuthSignature.baseURI("http://EXAMPLE.COM:80/r%20v/X?id=123"), "http://example.com/r%20v/X")
        XCTAssertEqual(OAuthSignature.baseURI("https://www.example.net:8080/?q=1"), "https://www.example.net:8080/")
        XCTAssertEqual(OAuthSignature.baseURI("https://www.example.net:443"), "https://www.example.net/")
        XCTAssertNil(OAuthSignature.baseURI("no scheme or host"))
    }

    /// The signature of §3.4.1.1's request verifies against itself and fails with any other secret; the RFC
    /// prints the signature but not the secrets it was made with, so that value cannot be checked here.
    func testRFC5849Section3_4_1_1SignatureRoundTrip() throws {
        let body = try XCTUnwrap(OAuthPercent.parseForm(PublishedExampleTests.rfcBody))
        let unsigned = PublishedExampleTests.rfcProtocolParameters.filter { $0.name != "oauth_signature" }
        let base = try XCTUnwrap(OAuthSignature.baseString(method: "POST", url: PublishedExampleTests.rfcURL,
                                                           parameters: body + unsigned))
        let signature = OAuthSignature.hmacSHA1(baseString: base, consumerSecret: "j49sk3j29djd", tokenSecret: "dh893hdasih9")
        let received = OAuthSignature.queryParameters(PublishedExampleTests.rfcURL) + body + unsigned
            + [("oauth_signature", signature)]
        XCTAssertTrue(OAuthSignature.isValid(method: "POST", url: "http://example.com/request", parameters: received,
                                             consumerSecret: "j49sk3j29djd", tokenSecret: "dh893hdasih9"))
        XCTAssertFalse(OAuthSignature.isValid(method: "POST", url: "http://example.com/request", parameters: received,
                                              consumerSecret: "j49sk3j29djd", tokenSecret: "other"))
        XCTAssertFalse(OAuthSignature.isValid(method: "GET", url: "http://example.com/request", parameters: received,
                                              consumerSecret: "j49sk3j29djd", tokenSecret: "dh893hdasih9"))
    }

    // MARK: Flickr's "User Authentication" page (www.flickr.com/services/api/auth.oauth.html)

    /// "Signing Requests": the request_token request with nonce 89601180 and its base string, as the page
    /// printed it in 2011 with an http:// endpoint (Flickr has been https-only since 2014; several client
    /// libraries still test against this exact text). Flickr's examples send `oauth_version=1.0`.
    func testFlickrSigningRequestsBaseString() {
        let parameters: [OAuthSignature.Parameter] = [
            ("oauth_nonce", "89601180"), ("oauth_timestamp", "1305583298"),
            ("oauth_consumer_key", "653e7a6ecc1d528c516cc8f92cf98611"), ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_version", "1.0"), ("oauth_callback", "http://www.example.com"),
        ]
        let printed = "GET&http%3A%2F%2Fwww.flickr.com%2Fservices%2Foauth%2Frequest_token&oauth_callback%3Dhttp%253A%252F%252F"
            + "www.example.com%26oauth_consumer_key%3D653e7a6ecc1d528c516cc8f92cf98611%26oauth_nonce%3D89601180%26"
            + "oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1305583298%26oauth_version%3D1.0"
        XCTAssertEqual(OAuthSignature.baseString(method: "GET", url: "http://www.flickr.com/services/oauth/request_token",
                                                 parameters: parameters), printed)
        // Today's https endpoint changes only the encoded URI.
        XCTAssertEqual(OAuthSignature.baseString(method: "GET", url: "https://www.flickr.com/services/oauth/request_token",
                                                 parameters: parameters),
                       printed.replacingOccurrences(of: "GET&http%3A", with: "GET&https%3A"))
    }

    /// "Getting a Request Token": nonce 95613465, timestamp 1305586162, callback http://www.example.com, and
    /// the published `oauth_signature=7w18YS2bONDPL%2FzgyzP5XTr5af4%3D`. The page does not print the consumer
    /// secret; "a9567d986a7539fe" is the one flickcurl's own test pairs with this example, and it reproduces
    /// the signature only over the http:// URI the page used then (and only with oauth_version=1.0 signed).
    func testFlickrRequestTokenSignature() throws {
        let consumer = OAuthConsumer(key: "653e7a6ecc1d528c516cc8f92cf98611", secret: "a9567d986a7539fe")
        func signature(url: String, includeVersion: Bool) throws -> String? {
            let signed = try XCTUnwrap(OAuthSignature.sign(
                method: "GET", url: url, parameters: [], consumer: consumer, token: nil,
                extra: [("oauth_callback", "http://www.example.com")], nonce: "95613465", timestamp: 1_305_586_162,
                includeVersion: includeVersion))
            return signed.first { $0.name == "oauth_signature" }?.value
        }
        let published = try XCTUnwrap(OAuthPercent.decode("7w18YS2bONDPL%2FzgyzP5XTr5af4%3D"))
        XCTAssertEqual(published, "7w18YS2bONDPL/zgyzP5XTr5af4=")
        XCTAssertEqual(try signature(url: "http://www.flickr.com/services/oauth/request_token", includeVersion: true), published)
        // Why the page's value does not match a signer pointed at today's URL, or one that leaves out the
        // optional oauth_version: both change the base string.
        XCTAssertEqual(try signature(url: "https://www.flickr.com/services/oauth/request_token", includeVersion: true),
                       "2zL7aYEzEEY0IvEgQjT7IqB518U=")
        XCTAssertNotEqual(try signature(url: "http://www.flickr.com/services/oauth/request_token", includeVersion: false), published)

        // The request as the page prints it verifies at the origin's side.
        let query = "oauth_nonce=95613465&oauth_timestamp=1305586162&oauth_consumer_key=653e7a6ecc1d528c516cc8f92cf98611"
            + "&oauth_signature_method=HMAC-SHA1&oauth_version=1.0&oauth_signature=7w18YS2bONDPL%2FzgyzP5XTr5af4%3D"
            + "&oauth_callback=http%3A%2F%2Fwww.example.com"
        let received = try XCTUnwrap(OAuthPercent.parseForm(query))
        XCTAssertTrue(OAuthSignature.isValid(method: "GET", url: "http://www.flickr.com/services/oauth/request_token",
                                             parameters: received, consumerSecret: "a9567d986a7539fe", tokenSecret: nil))
    }
}
