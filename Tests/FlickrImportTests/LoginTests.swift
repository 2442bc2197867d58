// Signing in against the loopback origin, which follows Flickr's OAuth flow and checks every signature: the
// whole flow, each way it is refused (with Flickr's oauth_problem), and no secret in any error.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import Logging
import OAuth1
import PhotoContent
import PhotoSources
import XCTest

final class LoginTests: XCTestCase {
    static let key = "login-consumer-key-0123456789"
    static let secret = "login-consumer-secret-4567"
    let ansel = OriginAccount(nsid: "10000001@N01", username: "ansel", fullname: "Ansel Adams")
    let dorothea = OriginAccount(nsid: "20000002@N02", username: "dorothea", fullname: "Dorothea Lange")
    var origin: FlickrOriginServer!

    override func setUpWithError() throws {
        var library = DemoLibrary.make(count: 2, scale: 16)
        library.accounts = [ansel, dorothea]
        origin = FlickrOriginServer(library: library, apiKey: LoginTests.key, apiSecret: LoginTests.secret)
        try origin.start()
    }

    override func tearDown() { origin.stop() }

    func login(secret: String = LoginTests.secret, key: String = LoginTests.key) throws -> FlickrLogin {
        FlickrLogin(endpoints: try FlickrEndpoints(rest: origin.endpoint), consumerKey: key, consumerSecret: secret,
                    logger: Logger(label: "test"))
    }

    /// What a member does in the browser: open the page, read the code it shows.
    func verifier(shownAt url: String) throws -> String {
        let page = String(decoding: try HTTPClient().get(url).body, as: UTF8.self)
        let range = try XCTUnwrap(page.range(of: #"[0-9]{3}-[0-9]{3}-[0-9]{3}"#, options: .regularExpression), page)
        return String(page[range])
    }

    func testTheWholeFlowSignsInTheMemberWhoAuthorized() throws {
        let flow = try login()
        let authorization = try flow.start()
        XCTAssertTrue(authorization.url.hasPrefix(origin.oauthEndpoint + "authorize?oauth_token="), authorization.url)
        XCTAssertTrue(authorization.url.hasSuffix("&perms=read"), authorization.url)
        XCTAssertEqual(origin.pendingRequestTokenCount, 1)
        let code = try verifier(shownAt: authorization.url)
        let account = try flow.finish(authorization, verifier: " \(code)\n")
        XCTAssertEqual(account.nsid, ansel.nsid)
        XCTAssertEqual(account.username, "ansel")
        XCTAssertEqual(account.fullname, "Ansel Adams")
        XCTAssertEqual(account.restEndpoint, origin.endpoint)
        XCTAssertEqual(account.oauthEndpoint, origin.oauthEndpoint)
        XCTAssertEqual(origin.pendingRequestTokenCount, 0, "the request token is spent")
        XCTAssertEqual(origin.requestCount(method: "GET", path: "/services/oauth/request_token"), 1)
        XCTAssertEqual(origin.requestCount(method: "GET", path: "/services/oauth/access_token"), 1)
        XCTAssertEqual(origin.requestCount(method: "GET", path: FlickrOriginServer.restPath), 1, "flickr.test.login")

        // The account's credentials sign calls the origin accepts as that member.
        let source = FlickrSource(options: account.sourceOptions, credentials: account.credentials, logger: Logger(label: "test"))
        XCTAssertEqual(FlickrJSON.text(try source.call("flickr.test.login", [:])["user"]?["id"]), ansel.nsid)
        // Nothing about the account prints a secret.
        for text in ["\(account)", String(reflecting: account), "\(authorization)", String(reflecting: authorization)] {
            assertNoSecret(text, account: account)
        }
        var dumped = ""
        dump(account, to: &dumped)
        assertNoSecret(dumped, account: account)
        XCTAssertTrue(dumped.contains(ansel.nsid), dumped)
    }

    func testTheAuthorizingMemberIsConfigurable() throws {
        origin.setAuthorizingAccount(nsid: dorothea.nsid)
        let flow = try login()
        let authorization = try flow.start()
        let account = try flow.finish(authorization, verifier: try verifier(shownAt: authorization.url))
        XCTAssertEqual(account.nsid, dorothea.nsid)
        XCTAssertEqual(account.username, "dorothea")
    }

    func testAWrongSecretFailsWithFlickrsMessageAndNoSecret() throws {
        let wrong = "not-the-secret-at-all"
        XCTAssertThrowsError(try login(secret: wrong).start()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("oauth_problem=signature_invalid"), text)
            XCTAssertTrue(text.contains("API secret"), text)
            // Flickr's answer carries the base string (debug_sbs) with the key in it: none of it is shown.
            XCTAssertFalse(text.contains("debug_sbs"), text)
            for secret in [LoginTests.key, LoginTests.secret, wrong] { XCTAssertFalse(text.contains(secret), text) }
        }
        XCTAssertEqual(origin.pendingRequestTokenCount, 0)
        XCTAssertThrowsError(try login(key: "another-app-key-000").start()) { error in
            XCTAssertTrue("\(error)".contains("oauth_problem=consumer_key_unknown"), "\(error)")
            XCTAssertFalse("\(error)".contains("another-app-key-000"), "\(error)")
        }
    }

    /// A wrong code spends the request token (so codes cannot be guessed by trying again); the right code
    /// after it, or any second exchange, is Flickr's token_rejected.
    func testAWrongVerifierAndAUsedTokenAreRefused() throws {
        let flow = try login()
        let authorization = try flow.start()
        let code = try verifier(shownAt: authorization.url)
        let wrong = code == "000-000-000" ? "111-111-111" : "000-000-000"
        XCTAssertThrowsError(try flow.finish(authorization, verifier: wrong)) { error in
            XCTAssertTrue("\(error)".contains("oauth_problem=verifier_invalid"), "\(error)")
        }
        XCTAssertThrowsError(try flow.finish(authorization, verifier: code)) { error in
            XCTAssertTrue("\(error)".contains("oauth_problem=token_rejected"), "\(error)")
        }
        let second = try flow.start()
        let secondCode = try verifier(shownAt: second.url)
        _ = try flow.finish(second, verifier: secondCode)
        XCTAssertThrowsError(try flow.finish(second, verifier: secondCode)) { error in
            XCTAssertTrue("\(error)".contains("oauth_problem=token_rejected"), "\(error)")
            XCTAssertFalse("\(error)".contains(LoginTests.secret), "\(error)")
        }
    }

    func testATokenNobodyAuthorizedIsRefused() throws {
        let flow = try login()
        let authorization = try flow.start()
        XCTAssertThrowsError(try flow.finish(authorization, verifier: "123-456-789")) { error in
            XCTAssertTrue("\(error)".contains("oauth_problem=permission_unknown"), "\(error)")
        }
        for bad in ["", "   ", "123 456 789", "12\u{0}3", String(repeating: "1", count: 300)] {
            XCTAssertThrowsError(try flow.finish(authorization, verifier: bad), bad.debugDescription)
        }
    }

    func testTheAuthorizePageRefusesWhatFlickrWouldRefuse() throws {
        let flow = try login()
        let authorization = try flow.start()
        let http = HTTPClient()
        XCTAssertEqual(try http.getAnswer(origin.oauthEndpoint + "authorize?oauth_token=never-issued&perms=read").status, 400)
        XCTAssertEqual(try http.getAnswer(authorization.url.replacingOccurrences(of: "perms=read", with: "perms=root")).status, 400)
        // Without any account, nobody can say yes.
        origin.replaceLibrary(OriginLibrary(photos: [], places: []))
        let page = try http.getAnswer(authorization.url)
        XCTAssertEqual(page.status, 400)
        XCTAssertTrue(String(decoding: page.body, as: UTF8.self).contains("Nobody is signed in"))
    }

    // MARK: Endpoints

    func testEndpointDefaultsAndDerivation() throws {
        let flickr = try FlickrEndpoints()
        XCTAssertEqual(flickr.rest, "https://api.flickr.com/services/rest/")
        XCTAssertEqual(flickr.oauth, "https://www.flickr.com/services/oauth/")
        XCTAssertEqual(try FlickrEndpoints(rest: "https://api.flickr.com/services/rest").oauth, FlickrEndpoints.defaultOAuth,
                       "Flickr's own REST endpoint, however spelled, keeps Flickr's OAuth host")
        XCTAssertEqual(try FlickrEndpoints(rest: "http://127.0.0.1:8080/services/rest/").oauth, "http://127.0.0.1:8080/services/oauth/")
        XCTAssertEqual(try FlickrEndpoints(rest: "https://photos.example.org/api/rest?x=1#y").oauth,
                       "https://photos.example.org/services/oauth/")
        XCTAssertEqual(try FlickrEndpoints(rest: "http://user:pw@[::1]:9000/r/").oauth, "http://[::1]:9000/services/oauth/")
        XCTAssertEqual(try FlickrEndpoints(rest: "http://a.example/r/", oauth: "http://b.example/o").oauth, "http://b.example/o/")
        XCTAssertEqual(try FlickrEndpoints(rest: "http://a.example/r/").url("access_token"), "http://a.example/services/oauth/access_token")
        for bad in ["ftp://a.example/", "a.example/rest", "http:///rest", "http://a b/", ""] {
            XCTAssertThrowsError(try FlickrEndpoints(rest: bad), bad)
        }
        XCTAssertThrowsError(try FlickrEndpoints(rest: "http://a.example/", oauth: "file:///etc/"))
    }

    // MARK: A hostile OAuth server

    func testHostileAnswersEndInASentenceWithoutTheirContent() throws {
        let canned = CannedServer()
        defer { canned.stop() }
        let flow = FlickrLogin(endpoints: try FlickrEndpoints(rest: canned.base + "/services/rest/"), consumerKey: LoginTests.key,
                               consumerSecret: LoginTests.secret, logger: Logger(label: "test"))
        let cases: [(Int, String, String)] = [
            (401, "oauth_problem=signature_invalid&debug_sbs=GET&x&oauth_consumer_key%3D\(LoginTests.key)", "oauth_problem=signature_invalid"),
            (401, "oauth_problem=<script>\(LoginTests.key)", "HTTP 401"),
            (401, "oauth_problem=" + String(repeating: "a", count: 500), "HTTP 401"),
            (500, "\(LoginTests.key) \(LoginTests.secret)", "HTTP 500"),
            (200, "oauth_token=t&oauth_token_secret=s", "does not confirm the callback"),
            (200, "oauth_callback_confirmed=true&oauth_token=has space&oauth_token_secret=s", "no usable oauth_token"),
            (200, "%zz not a form", "does not confirm the callback"),
            (200, String(repeating: "x", count: 100_000), "request_token failed"),
        ]
        for (status, body, expected) in cases {
            canned.answer = (status, body)
            XCTAssertThrowsError(try flow.start()) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(expected), "\(status) \(body.prefix(40)): \(text)")
                XCTAssertFalse(text.contains(LoginTests.key) || text.contains(LoginTests.secret), text)
                XCTAssertFalse(text.contains("<script>"), text)
            }
        }
    }

    func assertNoSecret(_ text: String, account: FlickrAccount, file: StaticString = #filePath, line: UInt = #line) {
        for secret in [account.consumer.key, account.consumer.secret, account.token.token, account.token.secret] {
            XCTAssertFalse(text.contains(secret), "secret in: \(text)", file: file, line: line)
        }
    }
}

/// An OAuth endpoint that answers whatever the test sets.
final class CannedServer: @unchecked Sendable {
    private let lock = NSLock()
    private var current: (Int, String) = (200, "")
    private var server: LoopbackHTTPServer!

    init() {
        server = LoopbackHTTPServer { [unowned self] _ in
            let (status, body) = self.answer
            return ServerResponse(status: status, headers: [("Content-Type", "text/plain")], body: Data(body.utf8))
        }
        try? server.start()
    }

    var answer: (Int, String) {
        get { lock.lock(); defer { lock.unlock() }; return current }
        set { lock.lock(); current = newValue; lock.unlock() }
    }
    var base: String { server.baseURL }
    func stop() { server.stop() }
}
