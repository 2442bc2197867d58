// The signer against RFC 5849's own worked example (§1.2); more vectors live beside it.
import OAuth1
import XCTest

final class SignatureTests: XCTestCase {
    /// RFC 5849 §1.2: GET http://photos.example.net/photos?file=vacation.jpg&size=original with the
    /// printer's token; the RFC gives the signature "MdpQcU8iPSUjWoN/UDMsK2sui9I=".
    func testRFC5849Section1_2Example() throws {
        let signed = try XCTUnwrap(OAuthSignature.sign(
            method: "GET", url: "http://photos.example.net/photos?file=vacation.jpg&size=original", parameters: [],
            consumer: OAuthConsumer(key: "dpf43f3p2l4k3l03", secret: "kd94hf93k423kf44"),
            token: OAuthToken(token: "nnch734d00sl2jdk", secret: "pfkkdhi9sl3r4s00"),
            nonce: "chapoH", timestamp: 137_131_202, includeVersion: false))
        XCTAssertEqual(signed.first { $0.name == "oauth_signature" }?.value, "MdpQcU8iPSUjWoN/UDMsK2sui9I=")
        XCTAssertTrue(OAuthSignature.isValid(
            method: "GET", url: "http://photos.example.net/photos",
            parameters: [("file", "vacation.jpg"), ("size", "original")] + signed,
            consumerSecret: "kd94hf93k423kf44", tokenSecret: "pfkkdhi9sl3r4s00"))
        XCTAssertFalse(OAuthSignature.isValid(
            method: "GET", url: "http://photos.example.net/photos",
            parameters: [("file", "vacation.jpg"), ("size", "original")] + signed,
            consumerSecret: "wrong", tokenSecret: "pfkkdhi9sl3r4s00"))
    }
}
