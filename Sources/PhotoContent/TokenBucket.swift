// A rate as calls per second with a burst, and the token bucket that keeps it over a monotonic clock: the API
// budget of an import (APIRateLimiter) and the renditions a mount fetches for desktop thumbnails both use it.
import Foundation

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
