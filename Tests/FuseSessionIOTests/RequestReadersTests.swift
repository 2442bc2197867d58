// The request readers (request_readers.c): polling pauses after a request the reader slept in read(2) for longer
// than the window's ceiling (the kernel woke it beside the sender) and resumes after one that was waiting.
import CFuseSessionIO
import Foundation
import XCTest

final class RequestReadersTests: XCTestCase {
    let window: Int64 = 200_000
    let ceiling: Int64 = 1_000_000

    func paused(after previous: Bool, slept: Bool, waited: Int64) -> Bool {
        photofs_next_polling_paused(previous ? 1 : 0, slept ? 1 : 0, waited, ceiling) != 0
    }

    func testALongSleepPausesPolling() {
        XCTAssertTrue(paused(after: false, slept: true, waited: 1_200_000), "a cold read's release")
        XCTAssertTrue(paused(after: true, slept: true, waited: 60_000_000_000))
    }

    func testAShortSleepChangesNothing() {
        XCTAssertFalse(paused(after: false, slept: true, waited: 300_000), "a program pausing 150 µs per photo")
        XCTAssertFalse(paused(after: false, slept: true, waited: ceiling))
        XCTAssertTrue(paused(after: true, slept: true, waited: 20_000), "the open right after a cold release")
    }

    func testARequestAlreadyWaitingResumesPolling() {
        XCTAssertFalse(paused(after: true, slept: false, waited: 5_000))
        XCTAssertFalse(paused(after: true, slept: false, waited: 5_000_000), "however long its handler took")
        XCTAssertFalse(paused(after: false, slept: false, waited: 0))
    }

    func testAPausedReaderPollsForNothing() {
        XCTAssertEqual(photofs_poll_window_for_read(window, 1), 0)
        XCTAssertEqual(photofs_poll_window_for_read(window, 0), window)
    }

    // The readers themselves, over a pipe standing for /dev/fuse.

    func makePipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        return (ends[0], ends[1])
    }

    func readOne(_ readers: OpaquePointer, _ fd: Int32) -> Int {
        var byte: UInt8 = 0
        return photofs_request_readers_read(readers, fd, &byte, 1)
    }

    func testReadersPauseAfterALongSleepAndResumeWhenARequestWaits() throws {
        let readers = try XCTUnwrap(photofs_request_readers_create(window, 250_000))
        defer { photofs_request_readers_destroy(readers) }
        let ends = makePipe()
        defer { close(ends.read); close(ends.write) }
        XCTAssertEqual(photofs_request_readers_next_poll_window(readers), window, "a new mount polls")

        XCTAssertEqual(write(ends.write, "x", 1), 1)
        XCTAssertEqual(readOne(readers, ends.read), 1)
        XCTAssertEqual(photofs_request_readers_next_poll_window(readers), window, "a waiting request: polls on")

        // The next byte comes once this thread sleeps in read(2), and 2 ms (twice the ceiling) after it began
        // to sleep: a request after a pause, as a cold read's release is.
        let writer = Thread {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, !Self.aThreadSleepsInAPipeRead() { usleep(200) }
            let asleep = Date()
            while Date().timeIntervalSince(asleep) < 0.002 { usleep(200) }
            _ = write(ends.write, "x", 1)
        }
        writer.start()
        XCTAssertEqual(readOne(readers, ends.read), 1)
        XCTAssertEqual(photofs_request_readers_next_poll_window(readers), 0, "woken after a pause: no poll")

        XCTAssertEqual(write(ends.write, "x", 1), 1)
        XCTAssertEqual(readOne(readers, ends.read), 1)
        XCTAssertEqual(photofs_request_readers_next_poll_window(readers), window, "a waiting request: polls again")
    }

    /// Whether a thread of this process sleeps in a pipe's read(2) (state S, waiting in the kernel's
    /// `pipe_read` or `anon_pipe_read`), from /proc: only the test's reader reads a pipe.
    static func aThreadSleepsInAPipeRead() -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.contains { task in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")"),
                  let channel = try? String(contentsOfFile: "/proc/self/task/\(task)/wchan", encoding: .utf8)
            else { return false }
            return stat[stat.index(close, offsetBy: 2)...].hasPrefix("S") && channel.hasSuffix("pipe_read")
        }
    }
}
