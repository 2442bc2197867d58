// Per-host backoff: one host's 429s hold back every request to that host, escalate while they go on, and
// leave other hosts alone; checked as a pure value, on a hand-driven clock, and through HTTPClient.
import FlickrOrigin
import Foundation
import PhotoContent
import XCTest

final class HostBackoffGateTests: XCTestCase {
    // MARK: The pure state

    func testThrottlingAnswersEscalateAndOtherAnswersUnwind() {
        var host = HostBackoff()
        XCTAssertEqual(host.wait(at: 0), 0)
        var holds: [TimeInterval] = []
        var now: TimeInterval = 0
        for _ in 0..<7 {
            host.throttled(at: now, retryAfter: nil)
            holds.append(host.wait(at: now))
            now += host.wait(at: now)
        }
        XCTAssertEqual(holds, [1, 2, 4, 8, 16, 30, 30], "doubling up to 30 s")
        // Good answers take one step off each.
        host.answered(); host.answered()
        XCTAssertEqual(host.strikes, 5)
        host.throttled(at: now, retryAfter: nil)
        XCTAssertEqual(host.wait(at: now), 30)
        for _ in 0..<10 { host.answered() }
        XCTAssertEqual(host.strikes, 0)
        XCTAssertTrue(host.isIdle(at: now + 30))
        XCTAssertFalse(host.isIdle(at: now), "the hold in force still applies")
    }

    func testRetryAfterIsHonouredUpToTheCap() {
        var host = HostBackoff()
        host.throttled(at: 100, retryAfter: 12)
        XCTAssertEqual(host.wait(at: 100), 12, "more than the escalation's 1 s")
        XCTAssertEqual(host.wait(at: 110), 2)
        var capped = HostBackoff()
        capped.throttled(at: 0, retryAfter: 3600)
        XCTAssertEqual(capped.wait(at: 0), 30, "never more than 30 s, whatever the host asks")
        for nonsense in [-1, .nan, .infinity, -.infinity] as [TimeInterval] {
            var odd = HostBackoff()
            odd.throttled(at: 0, retryAfter: nonsense)
            XCTAssertEqual(odd.wait(at: 0), 1, "\(nonsense) counts as absent")
        }
        // A shorter Retry-After later does not cut a longer hold short.
        host.throttled(at: 101, retryAfter: 0)
        XCTAssertEqual(host.wait(at: 101), 11)
    }

    // MARK: The gate on a hand-driven clock

    func testTheGateHoldsOneHostAndNotAnother() {
        let clock = ManualWaitClock(start: 0)
        let gate = HostBackoffGate(clock: clock)
        let a = "https://farm1.example/photos/1.jpg", sameHost = "https://FARM1.example:443/photos/2.jpg"
        let other = "https://farm2.example/photos/1.jpg", otherPort = "https://farm1.example:8443/photos/1.jpg"
        gate.record(url: a, status: 429, retryAfter: 5)
        XCTAssertEqual(gate.waitTurn(for: other), 0)
        XCTAssertEqual(gate.waitTurn(for: otherPort), 0)
        XCTAssertEqual(gate.waitTurn(for: sameHost), 5, "another photo of the throttled host waits")
        XCTAssertEqual(clock.now, 5)
        XCTAssertEqual(gate.waitTurn(for: a), 0, "the hold is over")
        gate.record(url: a, status: 200, retryAfter: nil)
        XCTAssertNil(gate.state(for: a), "a recovered host is forgotten")
        // A 503 counts only with Retry-After; a 500 or 404 never does.
        gate.record(url: a, status: 503, retryAfter: nil)
        gate.record(url: a, status: 500, retryAfter: nil)
        gate.record(url: a, status: 404, retryAfter: nil)
        XCTAssertNil(gate.state(for: a))
        gate.record(url: a, status: 503, retryAfter: 2)
        XCTAssertEqual(gate.state(for: a)?.strikes, 1)
        XCTAssertEqual(gate.waits.count, 1)
        XCTAssertEqual(gate.waits.seconds, 5)
        // What is not a URL with a host is never held.
        gate.record(url: "not a url", status: 429, retryAfter: 9)
        XCTAssertEqual(gate.waitTurn(for: "not a url"), 0)
    }

    /// A hostile library naming thousands of hosts that all answer 429 cannot grow the table without bound.
    func testTheTableOfHostsIsBounded() {
        let gate = HostBackoffGate(clock: ManualWaitClock(start: 0))
        for index in 0..<3000 { gate.record(url: "http://h\(index).example/x", status: 429, retryAfter: nil) }
        let remembered = (0..<3000).filter { gate.state(for: "http://h\($0).example/x") != nil }.count
        XCTAssertLessThanOrEqual(remembered, 1024)
        XCTAssertNotNil(gate.state(for: "http://h2999.example/x"), "the latest is kept")
    }

    // MARK: Through HTTPClient and a real origin

    func testAnImageHostThatKeepsAnswering429SlowsEveryRequestToIt() throws {
        let library = DemoLibrary.make(count: 3, scale: 16)
        let origin = FlickrOriginServer(library: library, apiKey: "k")
        let elsewhere = FlickrOriginServer(library: library, apiKey: "k")
        try origin.start(); try elsewhere.start()
        defer { origin.stop(); elsewhere.stop() }
        let photos = origin.photos
        func url(_ server: FlickrOriginServer, _ index: Int) throws -> String {
            "http://127.0.0.1:\(server.port)\(try XCTUnwrap(server.imagePath(photoID: photos[index].id)))"
        }
        let clock = ManualWaitClock(start: 0)
        var configuration = HTTPConfiguration()
        configuration.attempts = 1 // the gate's waits only, on the hand-driven clock
        let http = HTTPClient(configuration: configuration, backoff: HostBackoffGate(clock: clock))

        // Photo 0 answers 429 four times without Retry-After, then its bytes.
        origin.scriptStatuses(photoID: photos[0].id, [429, 429, 429, 429])
        for _ in 0..<4 { XCTAssertThrowsError(try http.get(try url(origin, 0))) }
        // Each refused request waited for the hold the one before earned: 1, 2, 4 s.
        XCTAssertEqual(clock.sleeps, [1, 2, 4])
        // Photo 1 has never been refused, but it is on the same host: it waits out the 8 s hold too.
        XCTAssertEqual(try http.get(try url(origin, 1)).body, photos[1].image.data)
        XCTAssertEqual(clock.sleeps, [1, 2, 4, 8])
        // The other host was never slowed.
        XCTAssertEqual(try http.head(try url(elsewhere, 2)).status, 200)
        XCTAssertEqual(clock.sleeps.count, 4)
        // Answers that are not 429 unwind the escalation one step each, without waiting, until it is gone.
        for _ in 0..<3 { XCTAssertEqual(try http.head(try url(origin, 1)).status, 200) }
        XCTAssertNil(http.backoff.state(for: try url(origin, 1)))
        XCTAssertEqual(clock.sleeps.count, 4)

        // With Retry-After the host gets what it asked for (HEADs of an import are held the same way).
        origin.setScriptedRetryAfter("6")
        origin.scriptStatuses(photoID: photos[2].id, [429])
        XCTAssertThrowsError(try http.get(try url(origin, 2))) { error in
            XCTAssertEqual((error as? HTTPError)?.retryAfter, 6)
        }
        XCTAssertEqual(try http.head(try url(origin, 0)).status, 200)
        XCTAssertEqual(clock.sleeps.last, 6, "Retry-After 6 beats the 1 s escalation of a first 429")
    }
}
