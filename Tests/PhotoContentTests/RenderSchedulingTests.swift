// Choosing the rendition a variant is made from, and the render pool's order and single flight.
import PhotoCatalog
import PhotoContent
import XCTest

final class RenditionChoiceTests: XCTestCase {
    let original = "http://x/o.jpg"
    let renditions = [Rendition(label: "sq", url: "http://x/sq.jpg", width: 75, height: 75),
                      Rendition(label: "q", url: "http://x/q.jpg", width: 150, height: 150),
                      Rendition(label: "z", url: "http://x/z.jpg", width: 640, height: 427),
                      Rendition(label: "b", url: "http://x/b.jpg", width: 683, height: 1024),
                      Rendition(label: "o", url: "http://x/o.jpg", width: 4000, height: 2667)]

    func choose(_ spec: VariantSpec, type: String = "image/jpeg") -> String? {
        RenditionChoice.source(for: spec, among: renditions, originalURL: original, originalType: type)?.label
    }

    func testTheSmallestRenditionThatIsBigEnoughIsChosen() {
        XCTAssertEqual(choose(.square(75)), "sq", "Flickr's 75 px square serves square:75 directly")
        XCTAssertEqual(choose(.square(40)), "sq")
        XCTAssertEqual(choose(.square(100)), "q")
        XCTAssertEqual(choose(.square(400)), "z", "short edge 427 ≥ 400")
        XCTAssertEqual(choose(.square(500)), "b", "short edge 683 ≥ 500 (a portrait rendition is fine)")
        XCTAssertEqual(choose(.fit(640)), "z")
        XCTAssertEqual(choose(.fit(1000)), "b", "long edge 1024")
        XCTAssertNil(choose(.fit(100)).flatMap { $0 == "sq" || $0 == "q" ? $0 : nil }, "square crops never serve fit")
        XCTAssertEqual(choose(.fit(100)), "z")
        XCTAssertNil(choose(.fit(2000)), "nothing but the original is big enough")
        XCTAssertNil(choose(.square(256), type: "image/png"), "a PNG original (maybe with alpha) is its own source")
    }

    func desktopSource(_ renditions: [Rendition], cached: Bool = false) -> RenditionChoice.ThumbnailSource? {
        RenditionChoice.desktopThumbnailSource(edge: 256, among: renditions, originalURL: original, originalCached: cached)
    }

    func testDesktopThumbnailsComeFromTheSmallestBigEnoughRenditionNeverAnUncachedOriginal() {
        let n = Rendition(label: "n", url: "http://x/n.jpg", width: 320, height: 213)
        let m = Rendition(label: "m", url: "http://x/m.jpg", width: 240, height: 160)
        XCTAssertEqual(desktopSource(renditions + [n, m]), .rendition(n), "320 px is the smallest ≥ 256")
        XCTAssertEqual(desktopSource(renditions), .rendition(renditions[2]), "z when there is no n")
        XCTAssertEqual(desktopSource(renditions + [n], cached: true), .original, "a cached original costs no download")
        XCTAssertEqual(desktopSource([renditions[0], m, renditions[4]]), .rendition(m),
                       "nothing ≥ 256 but m: the largest smaller one, never the original")
        XCTAssertEqual(desktopSource([renditions[0], renditions[1], renditions[4]]), .original,
                       "only square crops (and the original itself): the original")
        XCTAssertEqual(desktopSource([]), .original)
    }
}

final class PriorityWorkPoolTests: XCTestCase {
    /// Polls `condition` until it holds or 10 s pass.
    func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() && Date() < deadline { usleep(1_000) }
        return condition()
    }

    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var entries: [String] = []
        func add(_ entry: String) { lock.lock(); entries.append(entry); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return entries }
    }

    func testOneKeyIsWorkedOnceHoweverManyAskForIt() throws {
        let pool = PriorityWorkPool<Int>(width: 2, name: "test")
        defer { pool.stop() }
        let log = Log()
        let gate = DispatchSemaphore(value: 0)
        let results = Log()
        let group = DispatchGroup()
        // Threads, not Dispatch: on 2 cores Dispatch may not start four blocked workers at once.
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                let value = try? pool.run(key: "photo", priority: .user) {
                    log.add("work")
                    gate.wait()
                    return 42
                }
                results.add("\(value ?? -1)")
                group.leave()
            }
        }
        XCTAssertTrue(eventually { pool.waitingCount(for: "photo") == 4 }, "all four have asked")
        gate.signal()
        XCTAssertEqual(group.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(log.all, ["work"])
        XCTAssertEqual(results.all, ["42", "42", "42", "42"])
    }

    func testWhatAUserWaitsForGoesBeforeQueuedBackgroundWork() throws {
        let pool = PriorityWorkPool<Int>(width: 1, name: "test")
        defer { pool.stop() }
        let log = Log()
        let gate = DispatchSemaphore(value: 0)
        pool.submit(key: "busy", priority: .background) { gate.wait(); return 0 }
        XCTAssertTrue(eventually { pool.isWorking(on: "busy") }, "the one thread is busy")
        for name in ["a", "b", "c"] {
            pool.submit(key: name, priority: .background) { log.add(name); return 0 }
        }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? pool.run(key: "b", priority: .user) { log.add("b-user"); return 0 } // joins b, moves it up
            done.signal()
        }
        Thread.detachNewThread {
            _ = try? pool.run(key: "d", priority: .user) { log.add("d"); return 0 }
            done.signal()
        }
        XCTAssertTrue(eventually { pool.waitingCount(for: "b") == 1 && pool.waitingCount(for: "d") == 1 },
                      "both users are waiting while the thread is still busy")
        gate.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        // A last background job runs after everything queued before it (one thread, FIFO within a priority).
        _ = try pool.run(key: "end", priority: .background) { 0 }
        XCTAssertFalse(log.all.contains("b-user"), "b ran once, as the background job it joined")
        XCTAssertEqual(log.all.count, 4)
        XCTAssertEqual(Set(log.all.prefix(2)), ["b", "d"], "what users wait for runs before queued background work")
        XCTAssertEqual(Array(log.all.suffix(2)), ["a", "c"])
    }

    func testFailuresReachEveryWaiterAndStopFailsWhatIsQueued() throws {
        struct Broken: Error {}
        let pool = PriorityWorkPool<Int>(width: 1, name: "test")
        XCTAssertThrowsError(try pool.run(key: "x", priority: .user) { throw Broken() })
        pool.stop()
        XCTAssertThrowsError(try pool.run(key: "y", priority: .user) { 1 })
    }
}
