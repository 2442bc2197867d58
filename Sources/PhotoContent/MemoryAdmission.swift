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
        /// The waiting callers, in arrival order, each with its bytes and how to learn whether someone now waits
        /// for it.
        var waiting: [(ticket: UInt64, bytes: Int, isUrgent: () -> Bool)] = []
        var nextTicket: UInt64 = 0

        /// Which waiter is next: the first urgent one, else the first to arrive.
        static func next(urgent: [Bool]) -> Int { urgent.firstIndex(of: true) ?? 0 }

        /// Whether work estimated at `bytes` may start now. Work larger than the whole budget still runs, but
        /// alone: refusing it would make the photo unrenderable, and it is rare (a 100 MP image).
        static func fits(_ bytes: Int, running: Int, bytesInUse: Int, slots: Int, budget: Int) -> Bool {
            running < slots && (running == 0 || bytes <= budget - bytesInUse)
        }

        /// What a waiter does when it looks.
        enum Turn: Equatable {
            case start
            case wait
            /// Another waiter is next and could start: wake the waiters, then wait.
            case wakeTheNextAndWait
        }

        /// The turn of the waiter at `position` of `waiting` (bytes each, in arrival order; `urgent` alike):
        /// it starts when it is next and fits. Otherwise it waits, waking the others first when the next one
        /// could start now: urgency changes without a release (a lookup starts waiting for a render queued in
        /// the background), so the next one may have looked while another was next and gone to sleep, and with
        /// nothing running no release would wake it again. A sized mount hung so, every render waiting and none
        /// running (a new-user trial, 1 run in 12).
        static func turn(of position: Int, bytes: [Int], urgent: [Bool], running: Int, bytesInUse: Int,
                         slots: Int, budget: Int) -> Turn {
            let next = next(urgent: urgent)
            guard bytes.indices.contains(next),
                  fits(bytes[next], running: running, bytesInUse: bytesInUse, slots: slots, budget: budget) else { return .wait }
            return next == position ? .start : .wakeTheNextAndWait
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
        state.waiting.append((ticket, bytes, isUrgent))
        waiting: while true {
            // Only this caller removes its ticket.
            guard let position = state.waiting.firstIndex(where: { $0.ticket == ticket }) else { break waiting }
            switch State.turn(of: position, bytes: state.waiting.map(\.bytes), urgent: state.waiting.map { $0.isUrgent() },
                              running: state.running, bytesInUse: state.bytesInUse, slots: slots, budget: budget) {
            case .start:
                state.waiting.remove(at: position)
                break waiting
            case .wakeTheNextAndWait:
                condition.broadcast()
                condition.wait()
            case .wait:
                condition.wait()
            }
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
