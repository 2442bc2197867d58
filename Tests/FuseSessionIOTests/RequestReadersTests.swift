// The request readers (request_readers.c): polling pauses after a request the reader slept over the window's
// ceiling for (the kernel woke it beside the sender), and resumes after one that was waiting or after 4 quick ones.
import CFuseSessionIO
import Foundation
import XCTest

final class RequestReadersTests: XCTestCase {
    let window: Int64 = 200_000
    /// Five times the window: request_readers.c's PHOTOFS_POLL_WINDOW_GROWTH.
    var ceiling: Int64 { 5 * window }
    let polling = photofs_poll_pause(paused: 0, quick_requests: 0)

    func next(_ pause: photofs_poll_pause, slept: Bool, waited: Int64) -> photofs_poll_pause {
        photofs_next_poll_pause(pause, slept ? 1 : 0, waited, window, ceiling)
    }

    func testARequestAfterAPauseOfTheProgramPausesPolling() {
        XCTAssertEqual(next(polling, slept: true, waited: 1_200_000).paused, 1, "a cold read's release")
        XCTAssertEqual(next(polling, slept: true, waited: 60_000_000_000).paused, 1)
    }

    func testAShortSleepAloneChangesNothing() {
        XCTAssertEqual(next(polling, slept: true, waited: 300_000).paused, 0, "a program pausing 150 µs a photo")
        XCTAssertEqual(next(polling, slept: true, waited: ceiling).paused, 0)
    }

    func testARequestFoundWaitingResumesPolling() {
        let paused = next(polling, slept: true, waited: 2_000_000)
        XCTAssertEqual(next(paused, slept: false, waited: 5_000).paused, 0)
        XCTAssertEqual(next(paused, slept: false, waited: 5_000_000).paused, 0, "however long its handler took")
    }

    func testFourQuickRequestsInARowResumePolling() {
        // A Python open after a pause (lookup, open, ioctl) stays paused through its disk read; a stat or
        // getxattr loop, whose every request waits for its answer, polls again from its fourth request.
        var pause = next(polling, slept: true, waited: 2_000_000)
        var paused: [Int32] = []
        for _ in 0..<4 {
            pause = next(pause, slept: true, waited: 20_000)
            paused.append(pause.paused)
        }
        XCTAssertEqual(paused, [1, 1, 1, 0])
    }

    func testARequestAfterTheWindowStartsTheCountAgain() {
        var pause = next(polling, slept: true, waited: 2_000_000)
        pause = next(pause, slept: true, waited: 20_000)
        pause = next(pause, slept: true, waited: 20_000)
        pause = next(pause, slept: true, waited: 500_000)
        XCTAssertEqual(pause.paused, 1)
        XCTAssertEqual(pause.quick_requests, 0)
        for _ in 0..<3 { pause = next(pause, slept: true, waited: 20_000) }
        XCTAssertEqual(pause.paused, 1, "three quick ones since")
    }

    func testAPausedReaderPollsForNothing() {
        XCTAssertEqual(photofs_poll_window_for_read(window, photofs_poll_pause(paused: 1, quick_requests: 2)), 0)
        XCTAssertEqual(photofs_poll_window_for_read(window, polling), window)
    }

    // The readers themselves, over a pipe standing for /dev/fuse.

    func readOne(_ readers: OpaquePointer, _ fd: Int32) -> Int {
        var byte: UInt8 = 0
        return photofs_request_readers_read(readers, fd, &byte, 1)
    }

    func testReadersStopPollingAfterAPauseAndPollAgainOnceARequestWaits() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/proc/self/task/\(gettidFromProc())/wchan"),
                          "needs /proc/<pid>/task/<tid>/wchan to see the reader asleep")
        let readers = try XCTUnwrap(photofs_request_readers_create(window, 250_000))
        defer { photofs_request_readers_destroy(readers) }
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        defer { close(ends[0]); close(ends[1]) }

        XCTAssertEqual(write(ends[1], "x", 1), 1)
        XCTAssertEqual(readOne(readers, ends[0]), 1)
        XCTAssertEqual(photofs_request_readers_last_poll_window(readers), window, "a new mount polls")

        // A request after a pause: read by a thread of its own, whose id tells /proc's entry that shows when it
        // sleeps in read(2); the byte is written twice the ceiling after that.
        let started = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        var readerID = "", slept = 0
        let reader = Thread {
            readerID = self.gettidFromProc()
            started.signal()
            slept = self.readOne(readers, ends[0])
            done.signal()
        }
        reader.start()
        XCTAssertEqual(started.wait(timeout: .now() + .seconds(10)), .success)
        let deadline = DispatchTime.now() + .seconds(10)
        while DispatchTime.now() < deadline, !Self.sleepsInAPipeRead(thread: readerID) { usleep(200) }
        XCTAssertTrue(Self.sleepsInAPipeRead(thread: readerID), "the reader never slept in read(2)")
        let asleep = DispatchTime.now().uptimeNanoseconds
        while DispatchTime.now().uptimeNanoseconds - asleep < UInt64(2 * ceiling) { usleep(200) }
        XCTAssertEqual(write(ends[1], "x", 1), 1)
        XCTAssertEqual(done.wait(timeout: .now() + .seconds(10)), .success)
        XCTAssertEqual(slept, 1)

        XCTAssertEqual(write(ends[1], "x", 1), 1)
        XCTAssertEqual(readOne(readers, ends[0]), 1)
        XCTAssertEqual(photofs_request_readers_last_poll_window(readers), 0, "after the pause: no poll")

        XCTAssertEqual(write(ends[1], "x", 1), 1)
        XCTAssertEqual(readOne(readers, ends[0]), 1)
        XCTAssertGreaterThan(photofs_request_readers_last_poll_window(readers), 0,
                             "after a request that was waiting: polls again")
    }

    /// This thread's id, from /proc/thread-self (Swift's Glibc does not export gettid).
    func gettidFromProc() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))
            .map { URL(fileURLWithPath: $0).lastPathComponent } ?? "self"
    }

    /// Whether thread `id` of this process sleeps in a pipe's read(2) (state S, waiting in the kernel's
    /// `pipe_read` or `anon_pipe_read`), from /proc.
    static func sleepsInAPipeRead(thread id: String) -> Bool {
        let path = "/proc/self/task/\(id)"
        guard let stat = try? String(contentsOfFile: path + "/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")"),
              let channel = try? String(contentsOfFile: path + "/wchan", encoding: .utf8)
        else { return false }
        return stat[stat.index(close, offsetBy: 2)...].hasPrefix("S") && channel.hasSuffix("pipe_read")
    }
}
