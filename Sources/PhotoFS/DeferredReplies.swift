// The replies a session still owes from other threads: each sent once, and all settled before the session ends.
import Foundation

/// Requests whose replies were deferred to another thread — a read whose bytes are still downloading is
/// answered by the download's thread — kept so that the session can settle them before it is unmounted and
/// destroyed: a download finishing after `fuse_session_destroy` would otherwise reply through freed memory.
///
/// Each deferred reply is `begin`-ed with its request, then either `answer`-ed by the thread that has the
/// result or settled by `finish` at the end of the session; whichever comes first replies, the other does
/// nothing. `finish` also waits for replies already under way on other threads, so once it returns nothing
/// replies any more. Generic over the request so the bookkeeping is tested without a kernel.
public final class DeferredReplies<Request>: @unchecked Sendable {
    /// One deferred reply.
    public struct Ticket: Hashable, Sendable {
        let number: UInt64
    }

    private let condition = NSCondition()
    private var pending: [UInt64: Request] = [:]
    private var next: UInt64 = 0
    /// Replies running right now (taken by `answer`, not yet returned): `finish` waits for them.
    private var replying = 0
    private var finished = false

    public init() {}

    /// Registers a reply that will come later; nil once `finish` began (the caller then answers at once, with
    /// an error: the session is ending).
    public func begin(_ request: Request) -> Ticket? {
        condition.lock()
        defer { condition.unlock() }
        guard !finished else { return nil }
        // UInt64: at a million reads a second, 584,000 years before it could wrap.
        next &+= 1
        pending[next] = request
        return Ticket(number: next)
    }

    /// Runs `reply` with the ticket's request unless the reply was already sent (by `finish`); returns whether
    /// it ran. `reply` runs without the lock held (it may take a while: a read copies its bytes first).
    @discardableResult
    public func answer(_ ticket: Ticket, _ reply: (Request) -> Void) -> Bool {
        condition.lock()
        guard let request = pending.removeValue(forKey: ticket.number) else {
            condition.unlock()
            return false
        }
        replying += 1
        condition.unlock()
        reply(request)
        condition.lock()
        replying -= 1
        if replying == 0 { condition.broadcast() }
        condition.unlock()
        return true
    }

    /// Ends the bookkeeping: every reply still owed is sent now through `settle` (in the order they began),
    /// replies under way on other threads are waited for, and later `begin`s and `answer`s do nothing.
    /// Returns how many were settled here.
    @discardableResult
    public func finish(_ settle: (Request) -> Void) -> Int {
        condition.lock()
        finished = true
        let owed = pending.sorted { $0.key < $1.key }.map(\.value)
        pending = [:]
        condition.unlock()
        for request in owed { settle(request) }
        condition.lock()
        while replying > 0 { condition.wait() }
        condition.unlock()
        return owed.count
    }

    /// Replies begun and not yet sent.
    public var pendingCount: Int { condition.lock(); defer { condition.unlock() }; return pending.count }

    /// Whether `finish` began (for tests that need to know it is waiting).
    public var isFinished: Bool { condition.lock(); defer { condition.unlock() }; return finished }
}
