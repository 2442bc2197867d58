// The API call budget of an import: a token bucket (1 call/s, bursts of 60 by default) shared by every call,
// which also holds all calls back when the server answers 429 with Retry-After, and counts the time waited.
import Foundation
import PhotoContent

/// How fast a source may call its API. Flickr allows 3600 calls an hour per key (its API terms); 1 call a
/// second is that budget spread evenly, and a burst of 60 lets a small import (a few pages and places)
/// finish without waiting at all. A token bucket alone lets `burst + rate × T` calls through any window of
/// T seconds (120 in a minute); the limiter also keeps any 60 s to at most `max(burst, rate × 60)` calls, so
/// the configured rate holds over every minute (60 by default, and 3600 over every hour), while a small
/// import still gets its burst at once.
public struct APIRateLimit: Sendable, Equatable, CustomStringConvertible {
    public static let flickrDefault = APIRateLimit(uncheckedCallsPerSecond: 1, burst: 60)
    /// Limits a user can ask for: a rate above 100/s is no limit at all for an API, and below one call in
    /// 10 minutes an import never finishes; a burst above 3600 is Flickr's whole hour at once.
    public static let rates: ClosedRange<Double> = 0.001_6...100
    public static let bursts: ClosedRange<Int> = 1...3600

    public let callsPerSecond: Double
    public let burst: Int

    /// nil for a rate or burst outside `rates` / `bursts` (NaN and infinities included).
    public init?(callsPerSecond: Double, burst: Int) {
        guard callsPerSecond.isFinite, APIRateLimit.rates.contains(callsPerSecond), APIRateLimit.bursts.contains(burst) else {
            return nil
        }
        self.init(uncheckedCallsPerSecond: callsPerSecond, burst: burst)
    }

    private init(uncheckedCallsPerSecond: Double, burst: Int) {
        callsPerSecond = uncheckedCallsPerSecond
        self.burst = burst
    }

    /// "1 call/s, bursts of 60".
    public var description: String {
        let rate = callsPerSecond == callsPerSecond.rounded() ? String(Int(callsPerSecond)) : String(callsPerSecond)
        return "\(rate) call\(callsPerSecond == 1 ? "" : "s")/s, bursts of \(burst)"
    }

    /// Reads `--api-rate`: "RATE" (calls per second, burst kept) or "RATE/BURST", e.g. "0.5" or "2/120".
    /// nil for anything else.
    public static func parse(_ text: String, defaultBurst: Int = APIRateLimit.flickrDefault.burst) -> APIRateLimit? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let rate = Double(parts[0].trimmingCharacters(in: .whitespaces)) else { return nil }
        let burst = parts.count == 2 ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : defaultBurst
        return burst.flatMap { APIRateLimit(callsPerSecond: rate, burst: $0) }
    }
}

/// The bucket itself, as a pure value over a monotonic clock reading (seconds). It starts full. Taking a
/// permit when the bucket is empty is allowed: the bucket goes into debt and the taker is told how long to
/// wait, so concurrent callers queue in the order they asked. A server's Retry-After holds every permit
/// until then; the bucket does not fill during the hold, so after it one call goes at once and the next
/// come at the rate, not in a burst that would earn another 429.
public struct TokenBucket: Sendable, Equatable {
    public let limit: APIRateLimit
    /// Permits available at `updated` (negative: permits already promised to waiting callers).
    public private(set) var tokens: Double
    public private(set) var updated: TimeInterval
    /// No permit may be used before this (a server's Retry-After).
    public private(set) var heldUntil: TimeInterval = -.infinity
    /// When each permit of the last `window` seconds may be used, oldest first (permits go out in order).
    private var granted: [TimeInterval] = []
    /// The window the rate must hold over, and how many calls it may hold.
    public static let window: TimeInterval = 60
    public var callsPerWindow: Int {
        let perWindow = (limit.callsPerSecond * TokenBucket.window).rounded(.up)
        return max(limit.burst, perWindow >= Double(Int32.max) ? Int(Int32.max) : Int(perWindow))
    }

    public init(limit: APIRateLimit, now: TimeInterval) {
        self.limit = limit
        tokens = Double(limit.burst)
        updated = now
    }

    /// Takes one permit asked for at `now`; returns how long the caller must wait before using it (0: now).
    public mutating func take(at now: TimeInterval) -> TimeInterval {
        refill(to: now)
        tokens -= 1
        var ready = max(updated + (tokens < 0 ? -tokens / limit.callsPerSecond : 0), now, heldUntil)
        if let last = granted.last { ready = max(ready, last) }
        // The window: the permit waits until the call `callsPerWindow` before it is a window old.
        let cap = callsPerWindow
        if granted.count >= cap { ready = max(ready, granted[granted.count - cap] + TokenBucket.window) }
        granted.append(ready)
        let stale = granted.firstIndex { $0 > ready - TokenBucket.window } ?? granted.count
        if stale > 0 { granted.removeFirst(min(stale, max(0, granted.count - cap))) }
        return max(0, ready - now)
    }

    /// How long a permit already granted must still wait because of a hold that came after it was granted.
    public func holdRemaining(at now: TimeInterval) -> TimeInterval {
        let remaining = heldUntil - now
        return remaining.isFinite && remaining > 0 ? remaining : 0
    }

    /// Nothing may be called for `seconds` from `now` (the server said so); the bucket earns nothing meanwhile.
    public mutating func hold(for seconds: TimeInterval, at now: TimeInterval) {
        guard seconds.isFinite, seconds > 0 else { return }
        refill(to: now)
        let until = now + seconds
        heldUntil = max(heldUntil, until)
        // Permits already promised for before `until` now go at `until` (their takers sleep on): the window
        // must count them there, or a minute after a hold could hold more than its share.
        for index in granted.indices where granted[index] > now && granted[index] < until { granted[index] = until }
        // After the hold one call goes at once (permits already promised still go), then calls come at the
        // rate: the permits saved up are not spent in a burst that would earn the next 429.
        tokens = tokens < 0 ? tokens : 1
        updated = max(updated, until)
    }

    private mutating func refill(to now: TimeInterval) {
        guard now > updated else { return }
        tokens = min(Double(limit.burst), tokens + (now - updated) * limit.callsPerSecond)
        updated = now
    }
}

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
