// CoalescingWriter: batches, visibility until written, and no lost wakeup for values that arrive mid-write.
import Foundation
import PhotoFS
import XCTest

/// A scheduler the test fires by hand, so every interleaving is deterministic.
final class ManualScheduler: @unchecked Sendable {
    private let lock = NSLock()
    private var timers: [() -> Void] = []
    var armedCount: Int { lock.lock(); defer { lock.unlock() }; return timers.count }
    lazy var schedule: CoalescingWriter<Int, String>.Scheduler = { [unowned self] _, body in
        lock.lock(); timers.append(body); lock.unlock()
    }
    /// Fires the oldest timer on this thread; false when none is armed.
    @discardableResult
    func fireNext() -> Bool {
        lock.lock()
        guard !timers.isEmpty else { lock.unlock(); return false }
        let body = timers.removeFirst()
        lock.unlock()
        body()
        return true
    }
}

final class CoalescingWriterTests: XCTestCase {
    func testTheFirstValueArmsOneTimerAndTheBatchIsWrittenWhole() {
        let scheduler = ManualScheduler()
        var batches: [[Int: String]] = []
        let writer = CoalescingWriter<Int, String>(delay: 0.2, schedule: scheduler.schedule) { batches.append($0) }
        writer.submit("a", for: 1)
        writer.submit("b", for: 2)
        writer.submit("b2", for: 2)
        XCTAssertEqual(scheduler.armedCount, 1)
        XCTAssertEqual(writer.value(for: 2), "b2")
        XCTAssertTrue(batches.isEmpty)
        XCTAssertTrue(scheduler.fireNext())
        XCTAssertEqual(batches, [[1: "a", 2: "b2"]])
        XCTAssertNil(writer.value(for: 1))
        XCTAssertEqual(writer.unwrittenCount, 0)
        XCTAssertFalse(scheduler.fireNext(), "nothing left to arm a timer for")
    }

    /// The bug this replaces: a value submitted while a batch was being written found the batch non-empty,
    /// armed nothing, and stayed unwritten until unmount.
    func testAValueSubmittedDuringAWriteIsWrittenByItsOwnTimer() {
        let scheduler = ManualScheduler()
        var batches: [[Int: String]] = []
        var writer: CoalescingWriter<Int, String>!
        writer = CoalescingWriter<Int, String>(delay: 0.2, schedule: scheduler.schedule) { batch in
            if batches.isEmpty {
                // Still visible while its batch is written.
                XCTAssertEqual(writer.value(for: 1), "first")
                writer.submit("during", for: 2)
            }
            batches.append(batch)
        }
        writer.submit("first", for: 1)
        scheduler.fireNext()
        XCTAssertEqual(batches, [[1: "first"]])
        XCTAssertEqual(writer.value(for: 2), "during")
        XCTAssertEqual(scheduler.armedCount, 1, "the value that came mid-write armed a timer")
        scheduler.fireNext()
        XCTAssertEqual(batches, [[1: "first"], [2: "during"]])
        XCTAssertEqual(writer.unwrittenCount, 0)
    }

    /// A batch that could not be written (the library busy) is written with the next one, and never
    /// overwrites a newer value submitted while it failed.
    func testAFailedBatchIsRetriedBehindNewerValues() {
        let scheduler = ManualScheduler()
        var batches: [[Int: String]] = []
        var writer: CoalescingWriter<Int, String>!
        writer = CoalescingWriter<Int, String>(delay: 0.2, schedule: scheduler.schedule) { batch in
            batches.append(batch)
            if batches.count == 1 {
                writer.submit("newer", for: 1)
                writer.retry(batch) // this write failed
            }
        }
        writer.submit("old", for: 1)
        writer.submit("other", for: 2)
        scheduler.fireNext()
        XCTAssertEqual(scheduler.armedCount, 1)
        scheduler.fireNext()
        XCTAssertEqual(batches, [[1: "old", 2: "other"], [1: "newer", 2: "other"]])
        XCTAssertEqual(writer.unwrittenCount, 0)
    }

    func testFlushWritesNowAndATimerFiringLaterFindsNothing() {
        let scheduler = ManualScheduler()
        var batches: [[Int: String]] = []
        let writer = CoalescingWriter<Int, String>(delay: 0.2, schedule: scheduler.schedule) { batches.append($0) }
        writer.submit("a", for: 1)
        writer.flush()
        XCTAssertEqual(batches, [[1: "a"]])
        scheduler.fireNext()
        XCTAssertEqual(batches.count, 1, "an empty batch is never written")
        writer.submit("b", for: 1)
        XCTAssertEqual(scheduler.armedCount, 1, "the fired timer disarmed, so a new value arms again")
    }

    func testStopWritesWhatIsPendingAndArmsNoMoreTimers() {
        let scheduler = ManualScheduler()
        var batches: [[Int: String]] = []
        let writer = CoalescingWriter<Int, String>(delay: 0.2, schedule: scheduler.schedule) { batches.append($0) }
        writer.submit("a", for: 1)
        scheduler.fireNext()
        writer.submit("b", for: 2)
        writer.stop()
        XCTAssertEqual(batches, [[1: "a"], [2: "b"]])
        writer.submit("c", for: 3)
        scheduler.fireNext() // the timer "b" armed before stop
        XCTAssertEqual(scheduler.armedCount, 0)
    }

    /// With real timers and many threads: everything submitted is written exactly once, in finite time.
    func testManyThreadsWithRealTimersLoseNothing() {
        let lock = NSLock()
        var written: [Int: Int] = [:]
        let writer = CoalescingWriter<Int, Int>(delay: 0.005) { batch in
            usleep(2_000) // a write takes a while, so submits land during writes
            lock.lock()
            for (key, _) in batch { written[key, default: 0] += 1 }
            lock.unlock()
        }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<250 {
                writer.submit(index, for: thread * 1000 + index)
                if index % 50 == 0 { usleep(3_000) }
            }
        }
        let deadline = Date().addingTimeInterval(20)
        while writer.unwrittenCount > 0 && Date() < deadline { usleep(5_000) }
        lock.lock()
        defer { lock.unlock() }
        XCTAssertEqual(writer.unwrittenCount, 0)
        XCTAssertEqual(written.count, 2000)
        XCTAssertEqual(Set(written.values), [1], "each value written once")
    }
}
