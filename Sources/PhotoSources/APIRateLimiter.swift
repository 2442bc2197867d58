// The API call budget of an import: a token bucket (1 call/s, bursts of 60 by default) shared by every call,
// which also holds all calls back when the server answers 429 with Retry-After, and counts the time waited.
import Foundation
import PhotoContent

/// Why a call waited, for progress lines ("waiting 12 s: the server asked (HTTP 429)").
public enum RateLimitWait: Sendable, Equatable {
    /// The bucket was empty: the configured rate.
    case rate(seconds: TimeInterval)
    /// The server answered 429 or 503 with Retry-After (or without: the client's own backoff).
    case serverAsked(seconds: TimeInterval, status: Int)
}

/// What the limiter has seen so far in this import.
public struct RateLimitStatistics: Sendable, Equatable {
    /// Permits taken (every API call, retries included).
    public var calls = 0
    /// Calls that waited for the bucket, and the seconds they waited in all.
    public var rateWaits = 0
    public var rateWaitSeconds: TimeInterval = 0
    /// Throttling answers (429/503) and the seconds every call was held back because of them.
    public var serverWaits = 0
    public var serverWaitSeconds: TimeInterval = 0

    public var totalWaitSeconds: TimeInterval { rateWaitSeconds + serverWaitSeconds }
}

/// The limiter every API call of one import goes through (`acquire()` before each HTTP request), shared by
/// all its threads. Waits happen on the caller's thread, on the injected clock; each is reported to
/// `observer` as it starts, so a progress bar can say why the import is idle.
public final class APIRateLimiter: @unchecked Sendable {
    public let limit: APIRateLimit
    private let clock: WaitClock
    private let observer: (@Sendable (RateLimitWait) -> Void)?
    private let lock = NSLock()
    private var bucket: TokenBucket
    private var stats = RateLimitStatistics()

    public init(limit: APIRateLimit = .flickrDefault, clock: WaitClock = SystemWaitClock(),
                observer: (@Sendable (RateLimitWait) -> Void)? = nil) {
        self.limit = limit
        self.clock = clock
        self.observer = observer
        bucket = TokenBucket(limit: limit, now: clock.now)
    }

    /// Takes one call permit, waiting as long as the rate (or a hold a server asked for) says. Returns the
    /// seconds waited.
    @discardableResult
    public func acquire() -> TimeInterval {
        lock.lock()
        let now = clock.now
        let held = bucket.holdRemaining(at: now)
        let wait = bucket.take(at: now)
        stats.calls += 1
        // The part of the wait the hold explains is counted where the hold was (`holdOff`); the rest is the rate's.
        let rateWait = max(0, wait - held)
        if rateWait > 0 { stats.rateWaits += 1; stats.rateWaitSeconds += rateWait }
        lock.unlock()
        if rateWait > 0 { observer?(.rate(seconds: rateWait)) }
        var waited: TimeInterval = 0
        if wait > 0 { clock.sleep(wait); waited += wait }
        // A hold that came while this caller slept applies to it too.
        while true {
            lock.lock()
            let more = bucket.holdRemaining(at: clock.now)
            lock.unlock()
            guard more > 0 else { return waited }
            clock.sleep(more)
            waited += more
        }
    }

    /// The server answered `status` (429, 503) asking for `seconds`: no call of this import starts before then.
    public func holdOff(_ seconds: TimeInterval, status: Int) {
        guard seconds.isFinite, seconds > 0 else { return }
        lock.lock()
        let now = clock.now
        let before = bucket.holdRemaining(at: now)
        bucket.hold(for: seconds, at: now)
        let added = bucket.holdRemaining(at: now) - before
        stats.serverWaits += 1
        stats.serverWaitSeconds += max(0, added)
        lock.unlock()
        observer?(.serverAsked(seconds: seconds, status: status))
    }

    public var statistics: RateLimitStatistics { lock.lock(); defer { lock.unlock() }; return stats }
}
