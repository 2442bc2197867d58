// Issue 9, acceptance 5: the API calls of an import, as they arrive at the origin, never exceed the token
// bucket `--api-rate RATE/BURST` over any window; an HTTP 429 with Retry-After holds the next call that long
// and the import still finishes.
import FlickrOrigin
import Foundation
import XCTest

final class AccountRateLimitCommandLineTests: XCTestCase {
    var harness: MountHarness!

    override func setUpWithError() throws {
        // 72 demo photos: the account's 10 photos, its albums, and the places they were taken at.
        harness = try MountHarness(library: DemoLibrary.account(count: 72, scale: 8))
        try harness.signIn()
        harness.origin.resetCounters()
    }

    override func tearDown() { harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    func testAPICallsStayWithinTheRateAndBurstOverEveryWindow() throws {
        let (rate, burst) = (20.0, 3)
        // One photo a page: 10 listing pages, new places, the id listing, the album list and 4 albums' members.
        let imported = harness.importAccount(["--api-rate", "\(Int(rate))/\(burst)", "--per-page", "1"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let times = harness.origin.restArrivalTimes
        XCTAssertGreaterThan(times.count, 15, "enough calls to exceed the burst several times: \(harness.origin.restCallCounts)")
        // A token bucket lets at most BURST + RATE × (t_j − t_i) calls start in [t_i, t_j]. Arrival times are
        // taken at the origin, after the loopback hop and the scheduler: one call more is allowed for that
        // jitter and the clock's granularity. Without the limiter 20-odd calls arrive within ~0.1 s.
        var worst = (excess: -Double.infinity, window: "")
        for i in times.indices {
            for j in times.indices where j > i {
                let calls = Double(j - i + 1)
                let allowed = Double(burst) + rate * (times[j] - times[i]) + 1
                if calls - allowed > worst.excess {
                    worst = (calls - allowed, "\(j - i + 1) calls in \(String(format: "%.3f", times[j] - times[i])) s")
                }
            }
        }
        XCTAssertLessThanOrEqual(worst.excess, 0, "over the rate: \(worst.window)")
        // And the whole import took as long as the rate says it must.
        let span = try XCTUnwrap(times.last) - times[0]
        XCTAssertGreaterThanOrEqual(span, Double(times.count - burst - 1) / rate, "\(times.count) calls in \(span) s")
    }

    func testA429WithRetryAfterHoldsTheNextCallThatLong() throws {
        harness.origin.setScriptedRetryAfter("1")
        harness.origin.scriptRESTStatuses([429])
        // 20 calls/s: after a hold the bucket starts again from one permit (no burst that would earn another
        // 429), so at the default 1/s this import would take 15 s.
        let rate = 20.0
        let imported = harness.importAccount(["--api-rate", "\(Int(rate))/60"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.text.contains("imported 10 photos"), imported.text)
        XCTAssertTrue(imported.text.contains("waited for the rate limit or the server"), imported.text)
        let log = harness.origin.restCallLog
        XCTAssertGreaterThan(log.count, 2)
        XCTAssertEqual(log[1].method, log[0].method, "the refused call is asked again")
        // 50 ms less than asked for: the two arrival times are stamped after different loopback hops.
        XCTAssertGreaterThanOrEqual(log[1].arrivedAt - log[0].arrivedAt, 1 - 0.05, "Retry-After: 1 honoured")
        // After the hold: one call at once, then the rate, not the burst of 60 the bucket had (one call more
        // allowed for arrival jitter, as above).
        let after = log.dropFirst().map(\.arrivedAt)
        for i in after.indices {
            for j in after.indices where j > i {
                XCTAssertLessThanOrEqual(Double(j - i + 1), 1 + rate * (after[j] - after[i]) + 1,
                                         "calls \(i)...\(j) after the 429 came in a burst")
            }
        }

        let status = harness.photofs(["status", harness.library])
        XCTAssertTrue(status.text.contains("photos: 10 shown (4 private)"), status.text)
        XCTAssertTrue(status.text.contains("albums: 3"), status.text)
    }
}
