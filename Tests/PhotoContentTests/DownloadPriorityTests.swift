// The download engine's order: a person's downloads first, then prefetches, then thumbnailers', each
// thumbnailer process held to `perRequesterLimit` transfers at a time.
import FlickrOrigin
import Foundation
import Logging
@testable import PhotoContent
import XCTest

final class DownloadPriorityTests: XCTestCase {
    static let library = DemoLibrary.make(count: 8, scale: 8)
    var origin: FlickrOriginServer!

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: Self.library, apiKey: "k")
        try origin.start()
    }

    override func tearDown() { origin.stop() }

    func source(_ index: Int) -> ContentSource {
        let photo = Self.library.photos[index]
        return ContentSource(photoID: photo.id, url: "http://127.0.0.1:\(origin.port)" + origin.imagePath(photoID: photo.id)!,
                             expectedSize: Int64(photo.image.data.count), contentType: photo.image.contentType)
    }

    func testAPersonThenPrefetchesThenThumbnailersGoFirstWhateverTheOrderTheyCameIn() throws {
        let engine = DownloadEngine(http: HTTPClient(logger: Logger(label: "test")), maxTransfers: 1, logger: Logger(label: "test"))
        var order: [String] = []
        let lock = NSLock()
        engine.onComplete = { download in lock.lock(); order.append(download.key); lock.unlock() }
        // The one transfer thread is busy with photo 0 until the test lets go.
        let held = origin.hold(.request("GET", path: URL(string: source(0).url)!.path))
        let first = engine.start(key: "0", source: source(0), finalPath: "/nonexistent/0", priority: .user, want: .whole)
        XCTAssertTrue(held.waitForArrival(timeout: 10))
        // Queued while it waits, lowest priority first.
        let queued = [
            engine.start(key: "thumbnailer", source: source(1), finalPath: "/nonexistent/1", priority: .thumbnailer, requester: "process 1", want: .whole),
            engine.start(key: "prefetch", source: source(2), finalPath: "/nonexistent/2", priority: .prefetch, want: .whole),
            engine.start(key: "person", source: source(3), finalPath: "/nonexistent/3", priority: .user, want: .whole),
        ]
        held.release()
        _ = try first.waitUntilEnded()
        for download in queued { _ = try download.waitUntilEnded() }
        lock.lock()
        XCTAssertEqual(order, ["0", "person", "prefetch", "thumbnailer"])
        lock.unlock()
    }

    func testAThumbnailerProcessRunsTwoAtATimeAndAnotherProcessIsNotHeldBehindIt() throws {
        let engine = DownloadEngine(http: HTTPClient(logger: Logger(label: "test")), maxTransfers: 8, logger: Logger(label: "test"))
        let held = origin.hold(OriginRequestMatch { $0.method == "GET" })
        let first = (1...5).map { engine.start(key: "a\($0)", source: source($0), finalPath: "/nonexistent/a\($0)",
                                               priority: .thumbnailer, requester: "process A", want: .whole) }
        XCTAssertTrue(eventually { held.arrivals == 2 }, "process A's first two")
        let other = engine.start(key: "b", source: source(6), finalPath: "/nonexistent/b", priority: .thumbnailer,
                                 requester: "process B", want: .whole)
        XCTAssertTrue(eventually { held.arrivals == 3 }, "process B is not behind A's queue")
        // A person asking for one of A's queued photos takes it out of A's limit.
        let joined = engine.start(key: "a5", source: source(5), finalPath: "/nonexistent/a5", priority: .user, want: .whole)
        XCTAssertTrue(joined === first[4])
        XCTAssertTrue(eventually { held.arrivals == 4 }, "the person's photo starts at once")
        XCTAssertEqual(held.arrivals, 4, "A still has two running and two waiting")
        held.release()
        for download in first + [other] { _ = try download.waitUntilEnded() }
        XCTAssertEqual(held.arrivals, 6, "A's five (one of them the person's) and B's")
    }

    func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() && Date() < deadline { usleep(2_000) }
        return condition()
    }
}
