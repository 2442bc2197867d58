// The API call budget without a network: the token bucket, holds for Retry-After, the limiter's waits and
// statistics on a hand-driven clock, and the retry decisions after a failed call.
import FlickrOrigin
import PhotoContent
import PhotoSources
import XCTest

final class APIRateLimiterTests: XCTestCase {
    let limit = APIRateLimit(callsPerSecond: 2, burst: 3)!

    // MARK: Limits

    func testLimitsOutsideTheirRangesAreRefused() {
        XCTAssertEqual(APIRateLimit.flickrDefault.callsPerSecond, 1)
        XCTAssertEqual(APIRateLimit.flickrDefault.burst, 60)
        XCTAssertEqual("\(APIRateLimit.flickrDefault)", "1 call/s, bursts of 60")
        for rate in [0, -1, .nan, .infinity, -.infinity, 100.5, 0.001] { XCTAssertNil(APIRateLimit(callsPerSecond: rate, burst: 5), "\(rate)") }
        for burst in [0, -1, 3601, .max, .min] { XCTAssertNil(APIRateLimit(callsPerSecond: 1, burst: burst), "\(burst)") }
        XCTAssertNotNil(APIRateLimit(callsPerSecond: 100, burst: 3600))
        XCTAssertNotNil(APIRateLimit(callsPerSecond: 0.002, burst: 1))
    }

    func testParsingAPIRate() {
        XCTAssertEqual(APIRateLimit.parse("0.5"), APIRateLimit(callsPerSecond: 0.5, burst: 60))
        XCTAssertEqual(APIRateLimit.parse("2/120"), APIRateLimit(callsPerSecond: 2, burst: 120))
        XCTAssertEqual(APIRateLimit.parse(" 3 / 7 "), APIRateLimit(callsPerSecond: 3, burst: 7))
        for bad in ["", "/", "1/", "/5", "a", "1/2/3", "nan", "inf", "1e999", "-1", "1/0", "1/9999999999999999999999"] {
            XCTAssertNil(APIRateLimit.parse(bad), bad)
        }
    }

    // MARK: The bucket

    func testAFullBucketLetsABurstThroughThenPacesAtTheRate() {
        var bucket = TokenBucket(limit: limit, now: 100)
        XCTAssertEqual(bucket.take(at: 100), 0)
        XCTAssertEqual(bucket.take(at: 100), 0)
        XCTAssertEqual(bucket.take(at: 100), 0)
        // Empty: each further caller is told when its permit comes, in the order they asked (2/s → 0.5 s apart).
        XCTAssertEqual(bucket.take(at: 100), 0.5, accuracy: 1e-9)
        XCTAssertEqual(bucket.take(at: 100), 1.0, accuracy: 1e-9)
        XCTAssertEqual(bucket.take(at: 100.25), 1.25, accuracy: 1e-9)
    }

    func testTheBucketRefillsAtTheRateAndNeverBeyondTheBurst() {
        var bucket = TokenBucket(limit: limit, now: 0)
        for _ in 0..<3 { XCTAssertEqual(bucket.take(at: 0), 0) }
        // 1 s later two permits came back.
        XCTAssertEqual(bucket.take(at: 1), 0)
        XCTAssertEqual(bucket.take(at: 1), 0)
        XCTAssertEqual(bucket.take(at: 1), 0.5, accuracy: 1e-9)
        // An hour idle fills it to the burst, not to 7200.
        var idle = TokenBucket(limit: limit, now: 0)
        XCTAssertEqual(idle.take(at: 3600), 0)
        XCTAssertEqual(idle.tokens, 2, accuracy: 1e-9)
        XCTAssertEqual(idle.take(at: 3600), 0)
        XCTAssertEqual(idle.take(at: 3600), 0)
        XCTAssertGreaterThan(idle.take(at: 3600), 0)
    }

    /// A clock reading that goes back (it must not, but) neither adds permits nor makes a negative wait.
    func testAClockThatGoesBackChangesNothing() {
        var bucket = TokenBucket(limit: limit, now: 50)
        for _ in 0..<3 { _ = bucket.take(at: 50) }
        XCTAssertEqual(bucket.take(at: 10), 40.5, accuracy: 1e-9)
        XCTAssertEqual(bucket.tokens, -1, accuracy: 1e-9)
    }

    /// Over any window the calls let through stay within burst + rate × window: the property the issue's
    /// "never exceed the configured rate over any minute" rests on, checked over 10,000 calls asked for at
    /// random moments by callers that each use their permit when told.
    func testNoWindowEverSeesMoreThanBurstPlusRateTimesItsLength() {
        var generator = SeededGenerator(seed: 3600)
        let limit = APIRateLimit(callsPerSecond: 5, burst: 20)!
        var bucket = TokenBucket(limit: limit, now: 0)
        var now = 0.0
        var starts: [Double] = []
        for _ in 0..<10_000 {
            now += Double.random(in: 0...0.4, using: &generator)
            starts.append(now + bucket.take(at: now))
        }
        starts.sort()
        for window in [1.0, 10, 60] {
            var first = 0
            for last in starts.indices {
                while starts[last] - starts[first] > window { first += 1 }
                let inWindow = last - first + 1
                XCTAssertLessThanOrEqual(Double(inWindow), Double(limit.burst) + limit.callsPerSecond * window + 1e-6,
                                         "window \(window) s ending at \(starts[last])")
            }
        }
    }

    /// Flickr's default (1 call a second, bursts of 60): the first 60 calls go at once, and no 60 s window
    /// — any minute — ever holds more than 60, however the calls are asked for; so no hour holds more than 3600.
    func testAnyMinuteHoldsAtMostTheConfiguredRate() {
        var generator = SeededGenerator(seed: 3600)
        var bucket = TokenBucket(limit: .flickrDefault, now: 0)
        XCTAssertEqual(bucket.callsPerWindow, 60)
        var starts: [Double] = (0..<60).map { _ in bucket.take(at: 0) }
        XCTAssertEqual(starts, Array(repeating: 0, count: 60), "the burst goes at once")
        var now = 0.0
        for _ in 0..<4_000 {
            now += Double.random(in: 0...2, using: &generator)
            starts.append(now + bucket.take(at: now))
        }
        var first = 0
        for last in starts.indices {
            // `now + wait` may land an ulp before the instant the bucket computed: 1 µs of tolerance.
            while starts[last] - starts[first] >= 60 - 1e-6 { first += 1 }
            XCTAssertLessThanOrEqual(last - first + 1, 60, "the minute ending at \(starts[last])")
        }
        first = 0
        for last in starts.indices {
            while starts[last] - starts[first] >= 3600 - 1e-6 { first += 1 }
            XCTAssertLessThanOrEqual(last - first + 1, 3600, "the hour ending at \(starts[last])")
        }
        // A fast rate keeps its own bound: the window never holds it back below rate × 60.
        XCTAssertEqual(TokenBucket(limit: APIRateLimit(callsPerSecond: 20, burst: 3)!, now: 0).callsPerWindow, 1200)
    }

    /// Permits already promised when a server asks to wait move to the end of the hold, and the window counts
    /// them there: the minute after a hold still holds at most its share.
    func testAHoldKeepsTheMinuteWindowHonest() {
        var bucket = TokenBucket(limit: .flickrDefault, now: 0)
        var starts: [Double] = (0..<60).map { _ in bucket.take(at: 0) }
        starts.append(bucket.take(at: 0)) // waits for the window: at 60 s
        XCTAssertEqual(starts.last ?? 0, 60, accuracy: 1e-9)
        bucket.hold(for: 70, at: 0)      // the server asks for 70 s: that permit goes at 70 s
        starts[60] = 70
        for _ in 0..<120 { starts.append(bucket.take(at: 0)) }
        starts.sort()
        var first = 0
        for last in starts.indices {
            while starts[last] - starts[first] >= 60 - 1e-6 { first += 1 }
            XCTAssertLessThanOrEqual(last - first + 1, 60, "the minute ending at \(starts[last])")
        }
    }

    func testAHoldStopsEveryPermitUntilItEndsAndTheBucketEarnsNothingMeanwhile() {
        var bucket = TokenBucket(limit: limit, now: 0)
        XCTAssertEqual(bucket.take(at: 0), 0)
        bucket.hold(for: 30, at: 1)
        XCTAssertEqual(bucket.holdRemaining(at: 1), 30)
        XCTAssertEqual(bucket.holdRemaining(at: 31), 0)
        // The first caller after the hold goes when it ends, the next at the rate: no burst of saved permits.
        XCTAssertEqual(bucket.take(at: 1), 30, accuracy: 1e-9)
        XCTAssertEqual(bucket.take(at: 1), 30.5, accuracy: 1e-9)
        XCTAssertEqual(bucket.take(at: 31), 1.0, accuracy: 1e-9)
        // A shorter hold inside a longer one changes nothing; nonsense holds are ignored.
        var other = TokenBucket(limit: limit, now: 0)
        other.hold(for: 10, at: 0)
        other.hold(for: 2, at: 1)
        for nonsense in [0, -5, .nan, .infinity] { other.hold(for: nonsense, at: 1) }
        XCTAssertEqual(other.holdRemaining(at: 0), 10)
        XCTAssertEqual(other.heldUntil, 10)
    }

    // MARK: The limiter on a hand-driven clock

    func testTheLimiterSleepsOnItsClockAndCountsWhy() {
        let clock = ManualWaitClock(start: 0)
        let seen = WaitLog()
        let limiter = APIRateLimiter(limit: limit, clock: clock, observer: { seen.append($0) })
        for _ in 0..<3 { XCTAssertEqual(limiter.acquire(), 0) }
        XCTAssertEqual(limiter.acquire(), 0.5, accuracy: 1e-9)
        XCTAssertEqual(clock.now, 0.5, accuracy: 1e-9)
        limiter.holdOff(10, status: 429)
        XCTAssertEqual(limiter.acquire(), 10, accuracy: 1e-9)
        XCTAssertEqual(clock.now, 10.5, accuracy: 1e-9)
        let stats = limiter.statistics
        XCTAssertEqual(stats.calls, 5)
        XCTAssertEqual(stats.rateWaits, 1)
        XCTAssertEqual(stats.rateWaitSeconds, 0.5, accuracy: 1e-9)
        XCTAssertEqual(stats.serverWaits, 1)
        XCTAssertEqual(stats.serverWaitSeconds, 10, accuracy: 1e-9)
        XCTAssertEqual(stats.totalWaitSeconds, 10.5, accuracy: 1e-9)
        XCTAssertEqual(seen.waits, [.rate(seconds: 0.5), .serverAsked(seconds: 10, status: 429)])
    }

    /// A hold that comes while a caller is already waiting for its permit holds that caller too.
    func testAHoldReachesACallerAlreadyWaiting() {
        let clock = HoldingClock(start: 0)
        let limiter = APIRateLimiter(limit: APIRateLimit(callsPerSecond: 1, burst: 1)!, clock: clock)
        XCTAssertEqual(limiter.acquire(), 0)
        // The next caller must wait 1 s; during that sleep another thread learns of a 429 asking for 20 s.
        clock.duringNextSleep = { limiter.holdOff(20, status: 429) }
        XCTAssertEqual(limiter.acquire(), 21, accuracy: 1e-9)
        XCTAssertEqual(clock.now, 21, accuracy: 1e-9)
    }

    /// Many threads share one limiter at one instant: the burst goes at once, every other caller gets its
    /// own place in the queue (waits of 0.01, 0.02 ... 1.90 s at 100/s), none twice, none lost.
    func testConcurrentCallersQueueWithoutSharingAPermit() {
        let clock = FrozenClock()
        let limiter = APIRateLimiter(limit: APIRateLimit(callsPerSecond: 100, burst: 10)!, clock: clock)
        DispatchQueue.concurrentPerform(iterations: 200) { _ in limiter.acquire() }
        XCTAssertEqual(limiter.statistics.calls, 200)
        XCTAssertEqual(limiter.statistics.rateWaits, 190)
        let waits = clock.sleeps.sorted()
        XCTAssertEqual(waits.count, 190)
        for (index, wait) in waits.enumerated() { XCTAssertEqual(wait, Double(index + 1) / 100, accuracy: 1e-9) }
    }

    // MARK: Retry decisions

    func testRetryDecisions() {
        let policy = APIRetryPolicy()
        var http = HTTPConfiguration()
        http.attempts = 3
        func error(_ status: Int, _ retryAfter: TimeInterval? = nil) -> HTTPError {
            HTTPError(kind: .status(status), url: "https://api.example/rest/?api_key=k", retryAfter: retryAfter)
        }
        XCTAssertEqual(policy.decide(after: error(429, 7), attempt: 1, throttledSoFar: 0, http: http), .retry(after: 7, hold: true))
        XCTAssertEqual(policy.decide(after: error(503, 3), attempt: 1, throttledSoFar: 0, http: http), .retry(after: 3, hold: true))
        // No Retry-After: 2, 4, 8... s, capped at the longest wait.
        XCTAssertEqual(policy.decide(after: error(429), attempt: 1, throttledSoFar: 0, http: http), .retry(after: 2, hold: true))
        XCTAssertEqual(policy.decide(after: error(429), attempt: 3, throttledSoFar: 2, http: http), .retry(after: 8, hold: true))
        XCTAssertEqual(policy.decide(after: error(429), attempt: 5, throttledSoFar: 4, http: http), .retry(after: 32, hold: true))
        var short = policy
        short.maxServerWait = 5
        XCTAssertEqual(short.decide(after: error(429), attempt: 5, throttledSoFar: 4, http: http), .retry(after: 5, hold: true))
        // Throttling is bounded by its own count, not the HTTP client's.
        if case .giveUp(let reason?) = policy.decide(after: error(429, 1), attempt: 6, throttledSoFar: 5, http: http) {
            XCTAssertTrue(reason.contains("after 6 attempts"), reason)
        } else { XCTFail("six throttled attempts are the limit") }
        // A Retry-After beyond the longest wait stops at once, saying when to come back.
        if case .giveUp(let reason?) = policy.decide(after: error(429, 3600), attempt: 1, throttledSoFar: 0, http: http) {
            XCTAssertTrue(reason.contains("asked to wait 3600 s"), reason)
            XCTAssertTrue(reason.contains("longer than the 60 s"), reason)
        } else { XCTFail("an hour is not waited for") }
        // A Retry-After that is not a duration (only a hand-built error can carry one) counts as absent.
        for nonsense in [TimeInterval.nan, .infinity, -.infinity, -3] {
            XCTAssertEqual(policy.decide(after: error(429, nonsense), attempt: 1, throttledSoFar: 0, http: http),
                           .retry(after: 2, hold: true), "\(nonsense)")
        }
        // 503 without Retry-After and other 5xx: the HTTP client's attempts and backoff, no hold.
        guard case .retry(let wait, false) = policy.decide(after: error(503), attempt: 1, throttledSoFar: 0, http: http) else {
            return XCTFail("a 503 without Retry-After is an ordinary failure")
        }
        XCTAssertLessThanOrEqual(wait, http.retryMaxDelay)
        XCTAssertEqual(policy.decide(after: error(500), attempt: 3, throttledSoFar: 0, http: http), .giveUp(reason: "3 attempts"))
        XCTAssertEqual(policy.decide(after: error(404), attempt: 1, throttledSoFar: 0, http: http), .giveUp(reason: nil))
        XCTAssertEqual(policy.decide(after: HTTPError(kind: .invalidURL, url: "x"), attempt: 1, throttledSoFar: 0, http: http),
                       .giveUp(reason: nil))
    }
}

/// Collects the waits an observer is told of (from any thread).
final class WaitLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [RateLimitWait] = []
    func append(_ wait: RateLimitWait) { lock.lock(); items.append(wait); lock.unlock() }
    var waits: [RateLimitWait] { lock.lock(); defer { lock.unlock() }; return items }
}

/// A clock that never moves (sleeps are recorded, not waited): every caller asks at the same instant.
final class FrozenClock: WaitClock, @unchecked Sendable {
    private let lock = NSLock()
    private var slept: [TimeInterval] = []
    var now: TimeInterval { 0 }
    func sleep(_ seconds: TimeInterval) { lock.lock(); if seconds > 0 { slept.append(seconds) }; lock.unlock() }
    var sleeps: [TimeInterval] { lock.lock(); defer { lock.unlock() }; return slept }
}

/// A manual clock that runs something in the middle of the next sleep, as another thread would.
final class HoldingClock: WaitClock, @unchecked Sendable {
    private let inner: ManualWaitClock
    var duringNextSleep: (() -> Void)?
    init(start: TimeInterval) { inner = ManualWaitClock(start: start) }
    var now: TimeInterval { inner.now }
    func sleep(_ seconds: TimeInterval) {
        let action = duringNextSleep
        duringNextSleep = nil
        inner.sleep(seconds)
        action?()
    }
}
