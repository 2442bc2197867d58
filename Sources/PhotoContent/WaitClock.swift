// The clock that rate limits and backoff gates read and sleep on: the system's monotonic one, or a test's.
import Foundation

/// Seconds on a clock that never goes back, and a way to wait on it. Rate limits and backoff gates take one
/// so that tests drive time by hand instead of sleeping.
public protocol WaitClock: AnyObject, Sendable {
    /// Seconds since an arbitrary start; never decreases.
    var now: TimeInterval { get }
    /// Blocks the calling thread for `seconds` (nothing for 0 or less).
    func sleep(_ seconds: TimeInterval)
}

/// CLOCK_MONOTONIC (via `DispatchTime`): a wall clock set back by NTP or a user must not make a rate limit
/// wait an hour or let a burst through.
public final class SystemWaitClock: WaitClock, @unchecked Sendable {
    public init() {}
    public var now: TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    public func sleep(_ seconds: TimeInterval) {
        guard seconds.isFinite, seconds > 0 else { return }
        Thread.sleep(forTimeInterval: seconds)
    }
}

/// A clock that moves only when told to, or when someone sleeps on it (the sleep is the time passing). For
/// tests; thread-safe so that several "threads" of a test can share it.
public final class ManualWaitClock: WaitClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: TimeInterval
    private var slept: [TimeInterval] = []

    public init(start: TimeInterval = 1_000) { current = start }

    public var now: TimeInterval { lock.lock(); defer { lock.unlock() }; return current }

    /// Every sleep asked for, in order (0 and less are not recorded: they do not wait).
    public var sleeps: [TimeInterval] { lock.lock(); defer { lock.unlock() }; return slept }

    public func advance(_ seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        if seconds.isFinite, seconds > 0 { current += seconds }
    }

    public func sleep(_ seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        guard seconds.isFinite, seconds > 0 else { return }
        slept.append(seconds)
        current += seconds
    }
}
