// The thread that polls the catalog for changes made by another process (an import) and runs a check each time.
import Foundation
import PhotoContent

/// Runs `check` every `interval` seconds on its own thread until stopped. Knows nothing of what a check does
/// (`PhotoFilesystem.checkForCatalogChanges`): only when to run it and how to stop promptly.
final class CatalogWatcher: @unchecked Sendable {
    private let interval: TimeInterval
    /// Whether the watcher should run, under `wake`: the flag and the wait that watches it share one mutex, so
    /// a stop between the watcher's check and its wait cannot be missed (with the flag under another lock than
    /// the wait's, that stop's broadcast was lost and the stop waited out the poll interval). Its timed wait
    /// is on the monotonic clock: a clock step neither stretches nor skips a poll.
    private var watching = false
    private let wake = MonotonicCondition()
    /// Signalled by the thread as it ends, so `stop` returns only after it has.
    private let stopped = DispatchSemaphore(value: 0)

    init(interval: TimeInterval) { self.interval = interval }

    /// Starts the thread; `check` runs after each interval until `stop`. `check` must not call `stop`.
    func start(_ check: @escaping @Sendable () -> Void) {
        wake.withLock { watching = true }
        let thread = Thread { [self] in
            while waitForNextPoll() { check() }
            stopped.signal()
        }
        thread.name = "catalog-watch"
        thread.start()
    }

    /// Stops the thread and waits until it has ended (so nothing notifies a session being torn down).
    func stop() {
        let wasWatching = wake.withLock {
            let was = watching
            watching = false
            wake.broadcast()
            return was
        }
        if wasWatching { stopped.wait() }
    }

    /// Waits one poll interval, or less when stopped; whether the watcher should check and go on.
    private func waitForNextPoll() -> Bool {
        wake.lock()
        defer { wake.unlock() }
        let deadline = DispatchTime.now() + interval
        while watching && wake.wait(until: deadline) {}
        return watching
    }
}
