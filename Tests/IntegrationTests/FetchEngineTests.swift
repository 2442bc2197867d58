// The fetch engine through the kernel: single flight, streaming, retries, prefetch, the bounded cache,
// remounts, a daemon killed mid-download, and an origin that went away.
import FlickrOrigin
import Foundation
import XCTest

final class FetchEngineTests: MountedTestCase {
    static let library = DemoLibrary.make(count: 18, scale: 1)
    override class var originLibrary: OriginLibrary { FetchEngineTests.library }
    override class var mountsInSetUp: Bool { false }

    func photo(_ index: Int) -> OriginPhoto { FetchEngineTests.library.photos[index] }

    func paths(of photoID: String) throws -> [String] {
        try harness.files().filter { try harness.photoID(ofInode: harness.inode(of: $0)) == photoID }
    }

    func cachedFiles() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: harness.cacheDirectory + "/originals")) ?? []
    }

    func testTwoReadersShareOneDownload() throws {
        try harness.mount()
        let target = photo(2)
        harness.origin.setDelay(photoID: target.id, 0.5)
        let all = try paths(of: target.id)
        XCTAssertEqual(all.count, 3, "/regions, /moments, /events: \(all)")
        // Two readers through two of its names.
        let names = Array(all.prefix(2))
        guard names.count == 2 else { return }
        let group = DispatchGroup()
        var outputs = [Data](repeating: Data(), count: 2)
        let lock = NSLock()
        for (index, name) in names.enumerated() {
            group.enter()
            DispatchQueue.global().async {
                let data = Shell.run("cat", [name]).stdout
                lock.lock(); outputs[index] = data; lock.unlock()
                group.leave()
            }
        }
        group.wait()
        XCTAssertEqual(outputs, [target.image.data, target.image.data])
        XCTAssertEqual(harness.origin.requestCount(method: "GET", path: harness.origin.imagePath(photoID: target.id)!), 1)
    }

    func testFirstBytesArriveBeforeTheDownloadEnds() throws {
        try harness.mount(extra: ["--prefetch", "0"])
        let target = photo(4) // 1280×853 JPEG
        // About 8 s for the whole photo: head's open and first read have all of that before the download ends.
        let rate = max(8_000, target.image.data.count / 8)
        harness.origin.setRate(photoID: target.id, rate)
        let file = try XCTUnwrap(try paths(of: target.id).first)
        let head = Shell.run("head", ["-c", "100", file])
        XCTAssertEqual(head.stdout, target.image.data.prefix(100))
        // The first bytes came while the rest was still arriving: nothing in the cache yet, a partial file in tmp/.
        XCTAssertEqual(cachedFiles(), [], "the first bytes waited for the whole photo")
        let temporary = harness.cacheDirectory + "/tmp"
        let partial = ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).filter { $0.hasPrefix(target.id + "-") && $0.hasSuffix(".part") }
            .compactMap { try? FileManager.default.attributesOfItem(atPath: temporary + "/" + $0)[.size] as? Int }
        XCTAssertEqual(partial.count, 1, "one download under way")
        XCTAssertLessThan(partial.first ?? .max, target.image.data.count, "and not finished when head returned")
        XCTAssertEqual(Shell.run("cat", [file]).stdout, target.image.data)
    }

    func testServerErrorsAreRetriedAndWrongTypesNeverServed() throws {
        try harness.mount()
        let flaky = photo(5)
        harness.origin.scriptStatuses(photoID: flaky.id, [500])
        XCTAssertEqual(Shell.run("cat", [try paths(of: flaky.id)[0]]).stdout, flaky.image.data)
        XCTAssertEqual(harness.origin.requestCount(method: "GET", path: harness.origin.imagePath(photoID: flaky.id)!), 2)

        let html = photo(6)
        harness.origin.overrideContentType(photoID: html.id, "text/html")
        let refused = Shell.run("cat", [try paths(of: html.id)[0]])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stdout.isEmpty)
        XCTAssertTrue(harness.daemonLog.contains("text/html"), harness.daemonLog)
        XCTAssertFalse(cachedFiles().contains { $0.hasPrefix(html.id) })
    }

    func testOpeningAPhotoPrefetchesTheNextOnesInItsDirectory() throws {
        try harness.mount()
        let year = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: harness.path("moments")).sorted().first)
        let listing = Shell.run("ls", ["-U", harness.path("moments/" + year)]).text.split(separator: "\n").map(String.init)
        XCTAssertGreaterThanOrEqual(listing.count, 3)
        Shell.run("cat", [harness.path("moments/\(year)/\(listing[0])")])
        let next = try listing.dropFirst().prefix(2).map { try harness.photoID(ofInode: harness.inode(of: harness.path("moments/\(year)/\($0)")))! }
        _ = eventually(within: 5) { next.allSatisfy { id in cachedFiles().contains { $0.hasPrefix(id) } } }
        for id in next { XCTAssertTrue(cachedFiles().contains { $0.hasPrefix(id) }, "\(id) was not prefetched") }
    }

    func testARemountReusesTheCacheAndTheBoundHolds() throws {
        let sizes = FetchEngineTests.library.photos.map(\.image.data.count)
        let bound = sizes.reduce(0, +) / 2
        try harness.mount(extra: ["--cache-size", String(bound), "--prefetch", "0"])
        let files = harness.files(under: "regions")
        for file in files { XCTAssertEqual(Shell.run("cat", [file]).status, 0) }
        let cachedBytes = cachedFiles().reduce(0) { total, name in
            total + ((try? FileManager.default.attributesOfItem(atPath: harness.cacheDirectory + "/originals/" + name)[.size] as? Int) ?? 0)
        }
        XCTAssertLessThanOrEqual(cachedBytes, bound)
        XCTAssertGreaterThan(cachedBytes, 0)
        XCTAssertEqual(harness.unmount(), 0)
        // Per photo: a photo larger than a first request is fetched in more than one request.
        let photos = FetchEngineTests.library.photos
        func gets(_ photo: OriginPhoto) -> Int { harness.origin.requestCount(method: "GET", path: harness.origin.imagePath(photoID: photo.id)!) }
        let before = photos.map(gets)

        try harness.mount(extra: ["--prefetch", "0"])
        let kept = Set(cachedFiles().map { String($0.prefix { $0 != "-" }) })
        XCTAssertFalse(kept.isEmpty)
        for file in files { XCTAssertEqual(Shell.run("cat", [file]).status, 0) }
        let fetchedAgain = Set(photos.indices.filter { gets(photos[$0]) > before[$0] }.map { photos[$0].id })
        let read = Set(try files.compactMap { try harness.photoID(ofInode: harness.inode(of: $0)) })
        XCTAssertEqual(fetchedAgain, read.subtracting(kept), "a remount must not download what the cache holds")
        let stats = harness.photofs(["cache", "stats", harness.library, "--cache-dir", harness.cacheDirectory])
        XCTAssertTrue(stats.text.contains("hit rate"), stats.text)
    }

    func testAKilledDaemonNeverLeavesAPartialFileServed() throws {
        try harness.mount(extra: ["--prefetch", "0"])
        let target = photo(10)
        harness.origin.setRate(photoID: target.id, max(8_000, target.image.data.count / 6))
        let file = try XCTUnwrap(try paths(of: target.id).first)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [file]
        reader.standardOutput = FileHandle.nullDevice
        reader.standardError = FileHandle.nullDevice
        try reader.run()
        // Killed mid-download: once some bytes (not all) are in the temporary file.
        let temporary = harness.cacheDirectory + "/tmp"
        func partialBytes() -> Int {
            let parts = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
            return parts.compactMap { try? FileManager.default.attributesOfItem(atPath: temporary + "/" + $0)[.size] as? Int }.max() ?? 0
        }
        let deadline = Date().addingTimeInterval(10)
        while partialBytes() == 0 && Date() < deadline { usleep(20_000) }
        XCTAssertGreaterThan(partialBytes(), 0, "the download had begun")
        XCTAssertLessThan(partialBytes(), target.image.data.count, "and had not finished")
        kill(harness.daemon!.processIdentifier, SIGKILL)
        reader.waitUntilExit()
        XCTAssertNotNil(harness.waitForDaemon())
        Shell.run("fusermount3", ["-u", harness.mountpoint])
        harness.origin.setRate(photoID: target.id, nil)

        try harness.mount(extra: ["--prefetch", "0"])
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: harness.cacheDirectory + "/tmp")) ?? ["?"], [])
        XCTAssertEqual(Shell.run("cat", [file]).stdout, target.image.data)
    }

    func testWithTheOriginDownCachedPhotosReadAndOthersFailFast() throws {
        try harness.mount(extra: ["--prefetch", "0", "--connect-timeout", "2"])
        let cached = photo(12), uncached = photo(13)
        let cachedFile = try paths(of: cached.id)[0], uncachedFile = try paths(of: uncached.id)[0]
        XCTAssertEqual(Shell.run("cat", [cachedFile]).stdout, cached.image.data)
        harness.origin.stop()
        XCTAssertEqual(Shell.run("cat", [cachedFile]).stdout, cached.image.data)
        let failed = Shell.run("cat", [uncachedFile])
        XCTAssertNotEqual(failed.status, 0)
        XCTAssertTrue(failed.stderr.contains("Input/output error"), failed.stderr)
        // The EIO is the download's own failure (a refused connection, retried and given up), not a timeout.
        let failure = harness.daemonLog.split(separator: "\n").filter { $0.contains("download failed") && $0.contains(uncached.id) }
        XCTAssertFalse(failure.isEmpty, harness.daemonLog)
        XCTAssertFalse(failure.contains { $0.lowercased().contains("timed out") }, "\(failure)")
        XCTAssertEqual(Shell.run("ls", ["-lR", harness.mountpoint]).status, 0, "listings never need the origin")
    }
}
