// Per-host backoff: a host that answers 429 (or 503 with Retry-After) holds back every request to it for a while.
import Foundation

/// One host's throttling state, as a pure value. A throttling answer (429, or 503 with Retry-After) holds
/// the host back: no request to it starts before `notBefore`, which is `now` plus the larger of what the
/// host asked (Retry-After) and the escalation 1, 2, 4, 8, 16, 30 s for the 1st, 2nd... throttling answer
/// in a row; never more than `maxHold`. Each other answer takes one step off the escalation, so a host that
/// recovers is soon asked at full speed again, and one that keeps answering 429 is asked ever more slowly.
public struct HostBackoff: Sendable, Equatable {
    /// The first hold without a Retry-After; doubled per throttling answer in a row.
    public static let baseHold: TimeInterval = 1
    /// 30 s, the longest wait `HTTPConfiguration.retryMaxDelay` allows between two attempts: a longer hold
    /// would keep a reader waiting in open() beyond what it waits for any other retry.
    public static let defaultMaxHold: TimeInterval = 30

    public private(set) var strikes = 0
    public private(set) var notBefore: TimeInterval = -.infinity
    public let maxHold: TimeInterval

    public init(maxHold: TimeInterval = HostBackoff.defaultMaxHold) {
        self.maxHold = maxHold.isFinite && maxHold >= 0 ? maxHold : HostBackoff.defaultMaxHold
    }

    /// How long a request that wants to start at `now` must wait.
    public func wait(at now: TimeInterval) -> TimeInterval {
        let wait = notBefore - now
        return wait.isFinite && wait > 0 ? min(wait, maxHold) : 0
    }

    /// The hold the next throttling answer gets without a Retry-After.
    public var escalation: TimeInterval {
        guard strikes > 0 else { return 0 }
        return min(maxHold, HostBackoff.baseHold * pow(2, Double(min(strikes - 1, 30))))
    }

    /// The host throttled a request at `now`; `retryAfter` is what it asked for (seconds, nil when absent).
    public mutating func throttled(at now: TimeInterval, retryAfter: TimeInterval?) {
        strikes = min(strikes + 1, 32)
        let asked = retryAfter.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? 0
        let hold = min(maxHold, max(asked, escalation))
        notBefore = max(notBefore, now + hold)
    }

    /// The host answered something else (a photo, a 404): one step less escalation.
    public mutating func answered() { strikes = max(0, strikes - 1) }

    /// Nothing left to remember at `now`: the entry can go.
    public func isIdle(at now: TimeInterval) -> Bool { strikes == 0 && wait(at: now) == 0 }
}

/// The backoff of every host one HTTP client talks to. `HTTPClient` asks it before each request and tells it
/// each answer, so one image host's 429s slow every download to that host, whichever thread asks, while
/// other hosts go at full speed.
public final class HostBackoffGate: @unchecked Sendable {
    private let lock = NSLock()
    private let clock: WaitClock
    private let maxHold: TimeInterval
    private var hosts: [String: HostBackoff] = [:]
    private var waited: TimeInterval = 0
    private var waitCount = 0
    /// Entries kept at most: a library names a handful of hosts; a hostile one naming thousands must not grow
    /// this without bound. Past it, idle entries go first, then any.
    static let maxHosts = 1024

    public init(clock: WaitClock = SystemWaitClock(), maxHold: TimeInterval = HostBackoff.defaultMaxHold) {
        self.clock = clock
        self.maxHold = maxHold
    }

    /// Waits until a request to `url`'s host may start; returns the seconds waited.
    @discardableResult
    public func waitTurn(for url: String) -> TimeInterval {
        guard let host = HostBackoffGate.hostKey(url) else { return 0 }
        lock.lock()
        let wait = hosts[host]?.wait(at: clock.now) ?? 0
        if wait > 0 { waited += wait; waitCount += 1 }
        lock.unlock()
        clock.sleep(wait)
        return wait
    }

    /// Records the answer to a request to `url`: HTTP `status`, and the Retry-After it carried.
    public func record(url: String, status: Int, retryAfter: TimeInterval?) {
        guard let host = HostBackoffGate.hostKey(url) else { return }
        let throttling = status == 429 || (status == 503 && retryAfter != nil)
        lock.lock()
        defer { lock.unlock() }
        let now = clock.now
        if throttling {
            var state = hosts[host] ?? HostBackoff(maxHold: maxHold)
            state.throttled(at: now, retryAfter: retryAfter)
            hosts[host] = state
            if hosts.count > HostBackoffGate.maxHosts { trim(now: now, keeping: host) }
        } else if var state = hosts[host] {
            state.answered()
            hosts[host] = state.isIdle(at: now) ? nil : state
        }
    }

    /// The state of `url`'s host (nil: never throttled, or recovered).
    public func state(for url: String) -> HostBackoff? {
        guard let host = HostBackoffGate.hostKey(url) else { return nil }
        lock.lock(); defer { lock.unlock() }
        return hosts[host]
    }

    /// Total seconds requests waited at this gate, and how many waited.
    public var waits: (count: Int, seconds: TimeInterval) { lock.lock(); defer { lock.unlock() }; return (waitCount, waited) }

    private func trim(now: TimeInterval, keeping host: String) {
        hosts = hosts.filter { $0.key == host || !$0.value.isIdle(at: now) }
        while hosts.count > HostBackoffGate.maxHosts, let other = hosts.keys.first(where: { $0 != host }) {
            hosts[other] = nil
        }
    }

    /// "scheme://host:port", lower-cased: the unit a server throttles.
    static func hostKey(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}
