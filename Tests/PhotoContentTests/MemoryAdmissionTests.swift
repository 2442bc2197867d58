// Renders start while their estimated memory fits the budget, one per slot, a larger one alone, in arrival order.
@testable import PhotoContent
import XCTest

final class MemoryAdmissionTests: XCTestCase {
    func testTheRuleFitsWorkBesideWhatRunsAndLetsWorkLargerThanTheBudgetRunAlone() {
        typealias State = MemoryAdmission.State
        XCTAssertTrue(State.fits(60, running: 0, bytesInUse: 0, slots: 2, budget: 100))
        XCTAssertTrue(State.fits(40, running: 1, bytesInUse: 60, slots: 2, budget: 100), "exactly the budget")
        XCTAssertFalse(State.fits(41, running: 1, bytesInUse: 60, slots: 2, budget: 100))
        XCTAssertFalse(State.fits(1, running: 2, bytesInUse: 2, slots: 2, budget: 100), "no slot left")
        XCTAssertTrue(State.fits(500, running: 0, bytesInUse: 0, slots: 2, budget: 100), "alone, though above the budget")
        XCTAssertFalse(State.fits(500, running: 1, bytesInUse: 1, slots: 2, budget: 100))
    }

    func testAWaiterThatSeesAnotherAsNextAndRoomForItWakesTheOthers() {
        typealias State = MemoryAdmission.State
        func turn(_ position: Int, _ urgent: [Bool], running: Int = 0, bytesInUse: Int = 0) -> State.Turn {
            State.turn(of: position, bytes: [10, 10], urgent: urgent, running: running, bytesInUse: bytesInUse,
                       slots: 1, budget: 100)
        }
        XCTAssertEqual(turn(0, [false, false]), .start)
        XCTAssertEqual(turn(1, [false, false]), .wakeTheNextAndWait, "the first could start: it may be asleep")
        XCTAssertEqual(turn(1, [false, true]), .start, "someone waits for the second")
        // The hang: the first looked while the second was next, then the second looked when it no longer was;
        // with nothing running, only the waiter that looks last can wake the one that is next.
        XCTAssertEqual(turn(0, [false, true]), .wakeTheNextAndWait)
        XCTAssertEqual(turn(0, [false, false], running: 1, bytesInUse: 10), .wait, "no room: a release wakes them")
        XCTAssertEqual(turn(1, [false, false], running: 1, bytesInUse: 10), .wait)
    }

    /// A waiter becomes urgent right after it looked, while the slot was freed: in some runs the other waiter then
    /// looks, sees it next and goes to sleep too. Before the fix both slept for good (a sized mount's renders).
    func testWorkThatBecomesUrgentWhileTheOthersLookIsStillAdmitted() {
        for _ in 0..<200 {
            let gate = MemoryAdmission(budget: 100, slots: 1)
            let log = Log()
            final class Urgency: @unchecked Sendable {
                let lock = NSLock()
                var looks = 0
                var urgent = false
                /// Not urgent at its first two looks (on arrival, after the release), urgent from then on.
                func look() -> Bool {
                    lock.lock(); defer { lock.unlock() }
                    looks += 1
                    defer { if looks >= 2 { urgent = true } }
                    return urgent
                }
            }
            let urgency = Urgency()
            gate.admit(10)
            admitInBackground(gate, 10, log: log, name: "first")
            XCTAssertTrue(eventually { gate.waitingCount == 1 })
            admitInBackground(gate, 10, log: log, name: "second", isUrgent: { urgency.look() })
            XCTAssertTrue(eventually { gate.waitingCount == 2 })
            gate.release(10)
            XCTAssertTrue(eventually { log.entries.count == 1 }, "one of them starts")
            gate.release(10)
            XCTAssertTrue(eventually { log.entries.count == 2 }, "then the other")
            gate.release(10)
        }
    }

    /// Starts `admit(bytes)` on its own thread, which writes `name` to `log` once admitted.
    private func admitInBackground(_ gate: MemoryAdmission, _ bytes: Int, log: Log, name: String,
                                   isUrgent: @escaping @Sendable () -> Bool = { false }) {
        Thread.detachNewThread {
            gate.admit(bytes, isUrgent: isUrgent)
            log.append(name)
        }
    }

    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var raised = false
        func raise() { lock.lock(); raised = true; lock.unlock() }
        var isRaised: Bool { lock.lock(); defer { lock.unlock() }; return raised }
    }

    func testWorkSomeoneStartedWaitingForGoesBeforeWorkThatArrivedEarlier() {
        let gate = MemoryAdmission(budget: 100, slots: 1)
        let log = Log()
        let userWaits = Flag()
        gate.admit(10) // the one slot is taken
        admitInBackground(gate, 10, log: log, name: "background")
        XCTAssertTrue(eventually { gate.waitingCount == 1 })
        admitInBackground(gate, 10, log: log, name: "opened", isUrgent: { userWaits.isRaised })
        XCTAssertTrue(eventually { gate.waitingCount == 2 })
        // Queued as background work, then someone opens the photo: asked again when the slot frees.
        userWaits.raise()
        gate.release(10)
        XCTAssertTrue(eventually { log.entries == ["opened"] && gate.waitingCount == 1 }, "\(log.entries)")
        gate.release(10)
        XCTAssertTrue(eventually { log.entries == ["opened", "background"] }, "\(log.entries)")
    }

    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []
        func append(_ name: String) { lock.lock(); names.append(name); lock.unlock() }
        var entries: [String] { lock.lock(); defer { lock.unlock() }; return names }
    }

    func testWorkWaitsForRoomAndIsAdmittedInArrivalOrder() {
        let gate = MemoryAdmission(budget: 100, slots: 2)
        let log = Log()
        gate.admit(70)
        // 50 does not fit beside 70; 10 would, but arrived after 50 and waits its turn.
        admitInBackground(gate, 50, log: log, name: "50")
        XCTAssertTrue(eventually { gate.waitingCount == 1 })
        admitInBackground(gate, 10, log: log, name: "10")
        XCTAssertTrue(eventually { gate.waitingCount == 2 })
        // Both are queued (10 behind 50), so neither can have been admitted while 70 runs.
        XCTAssertEqual(log.entries, [])
        gate.release(70)
        // Both fit together now; their threads log in either order.
        XCTAssertTrue(eventually { log.entries.sorted() == ["10", "50"] }, "\(log.entries)")
        XCTAssertEqual(gate.waitingCount, 0)
    }

    func testWorkAboveTheBudgetWaitsUntilNothingRunsThenRunsAlone() {
        let gate = MemoryAdmission(budget: 100, slots: 2)
        let log = Log()
        gate.admit(10)
        admitInBackground(gate, 150, log: log, name: "150")
        XCTAssertTrue(eventually { gate.waitingCount == 1 })
        admitInBackground(gate, 5, log: log, name: "5")
        XCTAssertTrue(eventually { gate.waitingCount == 2 })
        gate.release(10)
        XCTAssertTrue(eventually { log.entries == ["150"] && gate.waitingCount == 1 }, "\(log.entries)")
        gate.release(150)
        XCTAssertTrue(eventually { log.entries == ["150", "5"] }, "\(log.entries)")
    }

    func testAnEstimateNearIntMaxCountsAsTheWholeBudgetAndCannotOverflowTheSum() {
        let gate = MemoryAdmission(budget: 100, slots: 2)
        gate.admit(Int.max)
        gate.release(Int.max)
        gate.admit(60)
        // Had Int.max been counted (or subtracted) as itself, the 60 in use would now be wrong.
        XCTAssertFalse(MemoryAdmission.State.fits(Int.max, running: 1, bytesInUse: 60, slots: 2, budget: 100))
        XCTAssertEqual(gate.run(estimatedBytes: 40) { 1 }, 1)
        gate.release(60)
    }

    func testRunReleasesWhenTheWorkThrows() {
        struct Failure: Error {}
        let gate = MemoryAdmission(budget: 100, slots: 1)
        XCTAssertThrowsError(try gate.run(estimatedBytes: 90) { throw Failure() })
        // Admitted at once: the failed work gave back its slot and its bytes.
        XCTAssertEqual(gate.run(estimatedBytes: 100) { 7 }, 7)
    }

    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() && Date() < deadline { usleep(1_000) }
        return condition()
    }
}
