// A value computed on a thread of its own while the caller does something else: the next listing page, a catalog read.
import Foundation

/// A value computed on its own thread; `value()` waits for it (and throws what computing it threw).
public final class BackgroundResult<Value>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var outcome: Result<Value, Error>?
    private var work: (() throws -> Value)?

    /// `work` is let go before the value is handed over: what it holds (a catalog) is closed by the caller's
    /// thread, not later by this one while the caller opens the library again.
    public init(threadName: String, _ work: @escaping @Sendable () throws -> Value) {
        self.work = work
        let thread = Thread { [self] in
            if let work = self.work {
                self.work = nil
                outcome = Result { try work() }
            }
            done.signal()
        }
        thread.name = threadName
        thread.start()
    }

    public func value() throws -> Value {
        done.wait()
        done.signal() // a second call returns the same
        guard let outcome else { throw CancellationError() } // set before the signal: cannot happen
        return try outcome.get()
    }
}
