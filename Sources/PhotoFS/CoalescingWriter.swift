// Batches many small catalog writes into one transaction a short delay after the first, without lost wakeups.
import Foundation

/// Collects values by key and hands them to `write` in batches.
///
/// The first value submitted arms a timer; when it fires, everything pending is written in one call. Values
/// that arrive while a batch is being written arm the timer again, so nothing waits for a later submit (or an
/// unmount) to be written. Whether the timer is armed is its own state, not derived from "the batch is
/// empty": the writer this replaces armed only on an empty batch, and the batch stayed non-empty while it was
/// being written, so a render finishing during a write was never flushed (a `make test` failure, 12 of 20).
///
/// Values stay visible to `value(for:)` from submit until their batch is written, so a reader that comes
/// right after (an open after a listing rendered its photo) finds what is not in the catalog yet.
public final class CoalescingWriter<Key: Hashable, Value>: @unchecked Sendable {
    /// Runs `body` after `delay` seconds, on any thread. Tests pass one that they fire by hand.
    public typealias Scheduler = (_ delay: TimeInterval, _ body: @escaping () -> Void) -> Void

    private let delay: TimeInterval
    private let write: ([Key: Value]) -> Void
    private let schedule: Scheduler
    private let lock = NSLock()
    /// Serialises writes: a timer firing while `flush()` writes waits its turn instead of writing beside it.
    private let writeLock = NSLock()
    private var pending: [Key: Value] = [:]
    /// The batch being written right now (still visible to readers until the write returns).
    private var writing: [Key: Value] = [:]
    private var armed = false
    private var stopped = false

    /// `write` is called with each batch, never concurrently with itself, and never with an empty batch.
    public init(delay: TimeInterval, schedule: Scheduler? = nil, write: @escaping ([Key: Value]) -> Void) {
        self.delay = delay
        self.write = write
        self.schedule = schedule ?? { delay, body in
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay, execute: body)
        }
    }

    /// Queues `value` under `key` (a newer value for the same key replaces the older one).
    public func submit(_ value: Value, for key: Key) {
        lock.lock()
        pending[key] = value
        let arm = !armed && !stopped
        if arm { armed = true }
        lock.unlock()
        if arm { schedule(delay) { [weak self] in self?.timerFired() } }
    }

    /// Puts back values whose write failed (to be written with the next batch), behind any newer value
    /// submitted for the same key meanwhile. Safe to call from inside `write`.
    public func retry(_ batch: [Key: Value]) {
        lock.lock()
        for (key, value) in batch where pending[key] == nil { pending[key] = value }
        let arm = !armed && !stopped && !pending.isEmpty
        if arm { armed = true }
        lock.unlock()
        if arm { schedule(delay) { [weak self] in self?.timerFired() } }
    }

    /// The value submitted for `key` that is not written yet, if any.
    public func value(for key: Key) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        return pending[key] ?? writing[key]
    }

    /// Everything submitted and not yet written (pending and in the batch being written).
    public var unwrittenCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return pending.count + writing.count
    }

    /// Writes everything pending now, on the calling thread; returns when it is written.
    public func flush() {
        writeLock.lock()
        defer { writeLock.unlock() }
        writeBatch()
    }

    /// Writes what is pending and accepts no more timers (values submitted later are written only by an
    /// explicit `flush`). Called at unmount, before the catalog closes.
    public func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        flush()
    }

    /// Disarms before writing: a value submitted while this batch is written arms a timer of its own.
    private func timerFired() {
        lock.lock()
        armed = false
        lock.unlock()
        flush()
    }

    /// Moves `pending` to `writing`, writes it, then forgets it. Called with `writeLock` held.
    private func writeBatch() {
        lock.lock()
        let batch = pending
        pending = [:]
        writing = batch
        lock.unlock()
        guard !batch.isEmpty else { return }
        write(batch)
        lock.lock()
        writing = [:]
        lock.unlock()
    }
}
