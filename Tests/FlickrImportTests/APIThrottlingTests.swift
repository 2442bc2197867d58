// REST calls against a throttling origin: 429 with Retry-After holds every call for as long as asked, retries
// are bounded and signed anew, a long Retry-After stops the import with a date, and the rate is kept in real time.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import Logging
import PhotoContent
import PhotoSources
import XCTest

final class APIThrottlingTests: XCTestCase {
    static let key = "throttle-key-0123456789abcdef"
    var origin: FlickrOriginServer!

    override func setUpWithError() throws {
        var library = DemoLibrary.make(count: 6, scale: 16)
        library.accounts = [OriginAccount(nsid: "10000001@N01", username: "ansel", fullname: "Ansel Adams")]
        origin = FlickrOriginServer(library: library, apiKey: APIThrottlingTests.key, apiSecret: "throttle-secret-42")
        try origin.start()
    }

    override func tearDown() { origin.stop() }

    /// A REST client whose limiter and HTTP backoff gate both run on `clock`.
    func rest(_ clock: WaitClock, limit: APIRateLimit = .flickrDefault, credentials: SourceCredentials? = nil,
              logger: Logger = Logger(label: "test")) -> FlickrREST {
        let credentials = credentials ?? .apiKey(APIThrottlingTests.key)
        return FlickrREST(endpoint: origin.endpoint, credentials: credentials,
                          http: HTTPClient(backoff: HostBackoffGate(clock: clock)), redactor: credentials.redactor,
                          limiter: APIRateLimiter(limit: limit, clock: clock), logger: logger)
    }

    func testA429WithRetryAfterHoldsTheCallsAndIsCounted() throws {
        let clock = ManualWaitClock(start: 0)
        let client = rest(clock)
        origin.setScriptedRetryAfter("3")
        origin.scriptRESTStatuses([429, 429])
        XCTAssertEqual(FlickrJSON.text(try client.call("flickr.photos.getRecent", [:])["stat"]), "ok")
        XCTAssertEqual(origin.restArrivalTimes.count, 3, "two refusals, then the answer")
        XCTAssertEqual(clock.now, 6, "waited 3 s after each refusal, on the limiter's clock")
        let stats = client.limiter.statistics
        XCTAssertEqual(stats.calls, 3, "every attempt took a permit")
        XCTAssertEqual(stats.serverWaits, 2)
        XCTAssertEqual(stats.serverWaitSeconds, 6)
        // After a hold the bucket has not refilled: the next call comes at the rate (1 s), not in a burst.
        _ = try client.call("flickr.photos.getRecent", [:])
        XCTAssertEqual(clock.now, 7)
    }

    /// Each attempt carries a fresh nonce (Flickr refuses a replayed one): the retry lines name two nonces,
    /// and the third attempt is accepted; no secret is in those lines.
    func testSignedCallsAreSignedAnewForEachAttempt() throws {
        let token = origin.issueAccessToken(for: "10000001@N01")
        let clock = ManualWaitClock(start: 0)
        let log = CapturedLog()
        let client = rest(clock, credentials: .oauth1(consumerKey: APIThrottlingTests.key, consumerSecret: "throttle-secret-42",
                                                      token: token.token, tokenSecret: token.secret), logger: log.logger())
        origin.setScriptedRetryAfter("1")
        origin.scriptRESTStatuses([429, 503])
        XCTAssertEqual(FlickrJSON.text(try client.call("flickr.test.login", [:])["user"]?["id"]), "10000001@N01")
        let nonces = log.text.components(separatedBy: "oauth_nonce=").dropFirst().map { $0.prefix(32) }
        XCTAssertEqual(nonces.count, 4, "two retry lines, each with the URL twice: \(log.text)")
        XCTAssertEqual(Set(nonces).count, 2, log.text)
        for secret in [APIThrottlingTests.key, "throttle-secret-42", token.token, token.secret] {
            XCTAssertFalse(log.text.contains(secret), log.text)
        }
    }

    func testALongRetryAfterStopsWithWhenToComeBack() throws {
        let clock = ManualWaitClock(start: 0)
        let client = rest(clock)
        origin.setScriptedRetryAfter("3600")
        origin.scriptRESTStatuses([429])
        XCTAssertThrowsError(try client.call("flickr.photos.getRecent", [:])) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("flickr.photos.getRecent failed: HTTP 429"), text)
            XCTAssertTrue(text.contains("asked to wait 3600 s"), text)
            XCTAssertFalse(text.contains(APIThrottlingTests.key), text)
        }
        XCTAssertEqual(origin.restArrivalTimes.count, 1, "no retry before the time asked")
        XCTAssertEqual(clock.now, 0)
    }

    func testAServerThatNeverStopsThrottlingIsGivenUpOn() throws {
        let clock = ManualWaitClock(start: 0)
        let client = rest(clock)
        origin.setScriptedRetryAfter("Thu, 01 Jan 1970 00:00:00 GMT") // a date in the past: no wait, still a refusal
        origin.scriptRESTStatuses(Array(repeating: 429, count: 10))
        XCTAssertThrowsError(try client.call("flickr.photos.getRecent", [:])) { error in
            XCTAssertTrue("\(error)".contains("still answered HTTP 429 after 6 attempts"), "\(error)")
        }
        XCTAssertEqual(origin.restArrivalTimes.count, 6)
        // Without Retry-After the client's own waits grow: 2, 4, 8, 16, 32 s.
        origin.setScriptedRetryAfter(nil)
        origin.scriptRESTStatuses(Array(repeating: 429, count: 10))
        let quiet = ManualWaitClock(start: 0)
        XCTAssertThrowsError(try rest(quiet).call("flickr.photos.getRecent", [:]))
        XCTAssertEqual(quiet.now, 2 + 4 + 8 + 16 + 32)
    }

    /// In real time: 25 calls at 20/s with bursts of 5 take at least (25 − 5) / 20 = 1 s, and no second of
    /// arrivals at the origin holds more than 5 + 20 of them (+1 for the network's jitter between the moment
    /// a permit is used and the moment the request arrives).
    func testTheRateHoldsInRealTime() throws {
        let limit = APIRateLimit(callsPerSecond: 20, burst: 5)!
        let client = rest(SystemWaitClock(), limit: limit)
        let started = Date()
        for _ in 0..<25 { _ = try client.call("flickr.photos.getRecent", ["per_page": "1"]) }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.95)
        let arrivals = origin.restArrivalTimes
        XCTAssertEqual(arrivals.count, 25)
        var first = 0
        for last in arrivals.indices {
            while arrivals[last] - arrivals[first] > 1 { first += 1 }
            XCTAssertLessThanOrEqual(last - first + 1, 5 + 20 + 1)
        }
        XCTAssertEqual(client.limiter.statistics.calls, 25)
        // Calls 6 to 25 each waited for their permit, unless a slow answer (over 50 ms on a loaded machine)
        // let the bucket refill meanwhile.
        XCTAssertGreaterThanOrEqual(client.limiter.statistics.rateWaits, 15)
    }
}
