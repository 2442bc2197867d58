// Lets memory-hungry work (renders) start only while its estimated bytes fit a budget: urgent work first, then in arrival order.
import Foundation

public final class MemoryAdmission: @unchecked Sendable {
    /// Bytes the admitted work may hold at once, and how many may run at once.
    public let budget: Int
    public let slots: Int

    private let condition = NSCondition()
    private var state = State()

    /// What runs and who waits: kept apart from the locking so the rule can be tested as plain values.
    struct State {
        var running = 0
        var bytesInUse = 0
        /// The waiting callers, in arrival order, each with how to learn whether someone now waits for it.
        var waiting: [(ticket: UInt64, isUrgent: () -> Bool)] = []
        var nextTicket: UInt64 = 0

        /// Which waiter is next: the first urgent one, else the first to arrive.
        static func next(urgent: [Bool]) -> Int { urgent.firstIndex(of: true) ?? 0 }

        /// Whether work estimated at `bytes` may start now. Work larger than the whole budget still runs, but
        /// alone: refusing it would make the photo unrenderable, and it is rare (a 100 MP image).
        static func fits(_ bytes: Int, running: Int, bytesInUse: Int, slots: Int, budget: Int) -> Bool {
            running < slots && (running == 0 || bytes <= budget - bytesInUse)
        }
    }

    public init(budget: Int, slots: Int) {
        precondition(budget > 0 && slots > 0, "a budget and at least one slot")
        self.budget = budget
        self.slots = slots
    }

    /// Blocks until work of `bytes` may start, then counts it as running until `release(bytes)`. Urgent work
    /// (`isUrgent`, asked again at every change: a user may start waiting for a render queued in the
    /// background) goes first; otherwise in arrival order, so a large render is not passed over forever by a
    /// stream of small ones.
    public func admit(_ bytes: Int, isUrgent: @escaping () -> Bool = { false }) {
        let bytes = counted(bytes)
        condition.lock()
        defer { condition.unlock() }
        let ticket = state.nextTicket
        state.nextTicket &+= 1
        state.waiting.append((ticket, isUrgent))
        while true {
            let next = State.next(urgent: state.waiting.map { $0.isUrgent() })
            if state.waiting[next].ticket == ticket,
               State.fits(bytes, running: state.running, bytesInUse: state.bytesInUse, slots: slots, budget: budget) {
                state.waiting.remove(at: next)
                break
            }
            condition.wait()
        }
        state.running += 1
        state.bytesInUse += bytes
        // The next in line may fit beside this one.
        condition.broadcast()
    }

    public func release(_ bytes: Int) {
        condition.lock()
        state.running -= 1
        state.bytesInUse -= counted(bytes)
        condition.broadcast()
        condition.unlock()
    }

    /// What work estimated at `bytes` counts for: more than the budget runs alone whatever the excess, so it
    /// counts as the budget (and sums cannot overflow).
    private func counted(_ bytes: Int) -> Int { min(max(0, bytes), budget) }

    /// Runs `body` once admitted, and releases when it returns or throws.
    public func run<T>(estimatedBytes bytes: Int, isUrgent: @escaping () -> Bool = { false }, _ body: () throws -> T) rethrows -> T {
        admit(bytes, isUrgent: isUrgent)
        defer { release(bytes) }
        return try body()
    }

    /// Callers waiting to be admitted (tests poll it).
    public var waitingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return state.waiting.count
    }
}
