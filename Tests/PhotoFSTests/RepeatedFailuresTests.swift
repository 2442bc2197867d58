// Which failed requests are logged: the first of a kind, then one a minute with the count left out.
import PhotoFS
import XCTest

final class RepeatedFailuresTests: XCTestCase {
    let second: UInt64 = 1_000_000_000

    func testTheFirstFailureOfAKindIsLoggedAndItsRepeatsWithinAMinuteAreNot() {
        var failures = RepeatedFailures()
        XCTAssertEqual(failures.failed("open 7 5", now: 0), .log(leftOut: 0))
        for tenth in 1...599 { XCTAssertEqual(failures.failed("open 7 5", now: UInt64(tenth) * second / 10), .leaveOut) }
        XCTAssertEqual(failures.failed("open 7 5", now: 60 * second), .log(leftOut: 599), "a minute on, with the count")
        XCTAssertEqual(failures.failed("open 7 5", now: 61 * second), .leaveOut)
        XCTAssertEqual(failures.failed("open 7 5", now: 200 * second), .log(leftOut: 1))
    }

    func testKindsAreCountedApart() {
        var failures = RepeatedFailures()
        XCTAssertEqual(failures.failed("open 7 5", now: 0), .log(leftOut: 0))
        XCTAssertEqual(failures.failed("open 8 5", now: 1), .log(leftOut: 0), "another inode")
        XCTAssertEqual(failures.failed("open 7 28", now: 2), .log(leftOut: 0), "another errno")
        XCTAssertEqual(failures.failed("read 7 5", now: 3), .log(leftOut: 0), "another operation")
        XCTAssertEqual(failures.failed("open 7 5", now: 4), .leaveOut)
    }

    func testPastItsLimitItForgetsAndLogsOnceMore() {
        var failures = RepeatedFailures(limit: 3)
        for inode in 0..<3 { XCTAssertEqual(failures.failed("open \(inode) 5", now: 0), .log(leftOut: 0)) }
        XCTAssertEqual(failures.failed("open 0 5", now: 1), .leaveOut)
        XCTAssertEqual(failures.failed("open 3 5", now: 2), .log(leftOut: 0), "a fourth kind: all forgotten")
        XCTAssertEqual(failures.failed("open 0 5", now: 3), .log(leftOut: 0))
    }
}
