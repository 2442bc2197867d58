// A mutex and condition variable whose timed waits run on CLOCK_MONOTONIC, which a clock step cannot move.
import Foundation

/// `NSCondition` with timed waits that a wall-clock step cannot stretch or skip. Foundation's
/// `NSCondition.wait(until: Date)` waits on CLOCK_REALTIME: NTP or a user setting the clock back an hour made
/// a 1 s poll wait an hour, forward made a 30 s idle timeout end at once. Here the condition variable is
/// created with `pthread_condattr_setclock(CLOCK_MONOTONIC)` and deadlines are `DispatchTime` (monotonic).
///
/// Use it as `NSCondition`: `lock()`, check the state the condition guards, `wait` in a loop, `unlock()`.
public final class MonotonicCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits until signalled (or a spurious wake-up). Call with the lock held.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits until signalled or `deadline` passed; false when it returned because the deadline passed. Call
    /// with the lock held, in a loop that checks the state (wake-ups may be spurious).
    @discardableResult
    public func wait(until deadline: DispatchTime) -> Bool {
        // The remaining time is measured on DispatchTime's clock and added to CLOCK_MONOTONIC's now, so the
        // deadline means the same whichever monotonic clock DispatchTime reads.
        let now = DispatchTime.now()
        guard deadline > now else { return false }
        let remaining = deadline.uptimeNanoseconds - now.uptimeNanoseconds
        var current = timespec()
        clock_gettime(CLOCK_MONOTONIC, &current)
        // Capped at about 68 years (Int32 seconds): DispatchTime.distantFuture must not overflow tv_sec.
        let seconds = Int(min(remaining / 1_000_000_000, UInt64(Int32.max)))
        var nanoseconds = current.tv_nsec + Int(remaining % 1_000_000_000)
        var wholeSeconds = current.tv_sec + seconds
        if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            wholeSeconds += 1
        }
        var until = timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
        return pthread_cond_timedwait(condition, mutex, &until) != ETIMEDOUT
    }

    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}
