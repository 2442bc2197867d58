// DeferredReplies: each deferred reply is sent once, by its own thread or by the session's end, never after it.
@testable import PhotoFS
import XCTest

final class DeferredRepliesTests: XCTestCase {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func append(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
        var entries: [String] { lock.lock(); defer { lock.unlock() }; return items }
    }

    func testAnAnswerRepliesOnceAndTheEndHasNothingLeftToSettle() throws {
        let replies = DeferredReplies<String>()
        let ticket = try XCTUnwrap(replies.begin("read 1"))
        XCTAssertEqual(replies.pendingCount, 1)
        var sent: [String] = []
        XCTAssertTrue(replies.answer(ticket) { sent.append($0) })
        XCTAssertFalse(replies.answer(ticket) { sent.append($0) }, "a second answer sends nothing")
        XCTAssertEqual(sent, ["read 1"])
        XCTAssertEqual(replies.finish { sent.append("settled " + $0) }, 0)
        XCTAssertEqual(sent, ["read 1"])
    }

    func testTheEndSettlesWhatIsOwedInOrderAndLateAnswersSendNothing() throws {
        let replies = DeferredReplies<String>()
        let a = try XCTUnwrap(replies.begin("a")), b = try XCTUnwrap(replies.begin("b")), c = try XCTUnwrap(replies.begin("c"))
        var sent: [String] = []
        replies.answer(b) { sent.append($0) }
        XCTAssertEqual(replies.finish { sent.append("EIO " + $0) }, 2)
        XCTAssertEqual(sent, ["b", "EIO a", "EIO c"])
        // The downloads of a and c end after the session did: their threads must not reply.
        XCTAssertFalse(replies.answer(a) { sent.append($0) })
        XCTAssertFalse(replies.answer(c) { sent.append($0) })
        XCTAssertEqual(sent, ["b", "EIO a", "EIO c"])
        XCTAssertNil(replies.begin("d"), "nothing begins once the session ended")
        XCTAssertEqual(replies.pendingCount, 0)
    }

    /// A download thread in the middle of its reply when the loop ends: `finish` returns only after it.
    func testTheEndWaitsForAReplyUnderWay() throws {
        let replies = DeferredReplies<String>()
        let ticket = try XCTUnwrap(replies.begin("read"))
        let log = Log()
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            replies.answer(ticket) { request in
                entered.signal()
                release.wait()
                log.append("replied " + request)
            }
        }
        entered.wait()
        Thread.detachNewThread {
            replies.finish { log.append("settled " + $0) }
            log.append("finish returned")
            ended.signal()
        }
        XCTAssertTrue(eventually { replies.isFinished }, "finish began")
        release.signal()
        ended.wait()
        XCTAssertEqual(log.entries, ["replied read", "finish returned"])
    }

    /// Answers racing the end from four threads: every request gets exactly one reply, by one side or the other.
    func testAnswersRacingTheEndReplyExactlyOnceEach() {
        let replies = DeferredReplies<Int>()
        let count = 4_000
        let tickets = (0..<count).compactMap { replies.begin($0) }
        XCTAssertEqual(tickets.count, count)
        let log = Log()
        let group = DispatchGroup()
        for part in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                for index in stride(from: part, to: count, by: 4) { replies.answer(tickets[index]) { log.append("\($0)") } }
                group.leave()
            }
        }
        // The end comes once some answers went out, while others are still being sent.
        XCTAssertTrue(eventually { replies.pendingCount < count })
        replies.finish { log.append("\($0)") }
        group.wait()
        let sent = log.entries
        XCTAssertEqual(sent.count, count, "no reply lost, none sent twice")
        XCTAssertEqual(Set(sent).count, count)
    }
}
