// MonotonicCondition: timed waits end at their deadline or when signalled, whatever the deadline's size.
import PhotoContent
import XCTest

final class MonotonicConditionTests: XCTestCase {
    /// State the condition guards (read and written only with its lock held).
    final class Flag: @unchecked Sendable { var raised = false }

    func testADeadlineAlreadyPastDoesNotWait() {
        let condition = MonotonicCondition()
        condition.lock()
        XCTAssertFalse(condition.wait(until: .now()))
        XCTAssertFalse(condition.wait(until: DispatchTime(uptimeNanoseconds: 1)))
        condition.unlock()
    }

    func testAWaitWithNoSignalEndsAtItsDeadline() {
        let condition = MonotonicCondition()
        let deadline = DispatchTime.now() + 0.02
        condition.lock()
        // Spurious wake-ups return true; the loop is how callers use it.
        while condition.wait(until: deadline) {}
        condition.unlock()
        XCTAssertGreaterThanOrEqual(DispatchTime.now(), deadline, "it returned false only once the deadline passed")
    }

    /// A waiter with the farthest deadline there is (which must not overflow the timespec) wakes on a broadcast.
    func testABroadcastWakesAWaiterWithADistantDeadline() {
        let condition = MonotonicCondition()
        let ready = Flag()
        let woke = expectation(description: "woke")
        Thread.detachNewThread {
            condition.lock()
            while !ready.raised { condition.wait(until: .distantFuture) }
            condition.unlock()
            woke.fulfill()
        }
        condition.withLock {
            ready.raised = true
            condition.broadcast()
        }
        // A safety net for a broken wake-up (the test would hang), not a measure of speed.
        wait(for: [woke], timeout: 60)
    }
}
