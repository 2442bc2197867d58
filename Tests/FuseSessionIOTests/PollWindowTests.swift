// The request reader's poll window (request_readers.c): kept while requests come within it, doubled up to its
// ceiling while they come just after it, halved back to the window asked for after a longer pause.
import CFuseSessionIO
import XCTest

final class PollWindowTests: XCTestCase {
    let asked: Int64 = 200_000
    let ceiling: Int64 = 1_000_000

    func next(_ window: Int64, waited: Int64) -> Int64 {
        photofs_next_poll_window(window, asked, ceiling, waited)
    }

    func testARequestWithinTheWindowKeepsIt() {
        XCTAssertEqual(next(asked, waited: 0), asked)
        XCTAssertEqual(next(asked, waited: asked), asked)
        XCTAssertEqual(next(800_000, waited: 799_999), 800_000)
    }

    func testRequestsJustAfterTheWindowGrowItToItsCeiling() {
        // A program reading each photo whole: its next request 300 µs after the last.
        var window = asked
        var windows: [Int64] = []
        for _ in 0..<4 {
            window = next(window, waited: 300_000)
            windows.append(window)
        }
        XCTAssertEqual(windows, [400_000, 400_000, 400_000, 400_000], "grown once, the requests come within it")
        XCTAssertEqual(next(400_000, waited: 900_000), 800_000)
        XCTAssertEqual(next(800_000, waited: 950_000), ceiling, "never past the ceiling")
        XCTAssertEqual(next(ceiling, waited: ceiling), ceiling)
    }

    func testLongerPausesHalveItBackToTheWindowAskedFor() {
        XCTAssertEqual(next(ceiling, waited: 5_000_000), 500_000)
        XCTAssertEqual(next(500_000, waited: 5_000_000), 250_000)
        XCTAssertEqual(next(250_000, waited: 5_000_000), asked)
        XCTAssertEqual(next(asked, waited: 60_000_000_000), asked, "never below the window asked for")
    }
}
