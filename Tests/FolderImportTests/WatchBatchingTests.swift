// When a watched folder's changes are imported: bursts are one import, a file being written is never imported.
import FolderImport
import XCTest

final class WatchBatchingTests: XCTestCase {
    func testNothingHappenedMeansNothingToImport() {
        XCTAssertEqual(WatchBatching().decision(at: 100), .idle)
    }

    func testOneChangeIsImportedAfterAQuietMoment() {
        var batching = WatchBatching()
        batching.finished("/p/a.jpg", at: 10)
        XCTAssertEqual(batching.decision(at: 10.1), .wait(until: 10.25))
        XCTAssertEqual(batching.decision(at: 10.25), .importNow(deferring: []))
        batching.imported(startedAt: 10.25)
        XCTAssertEqual(batching.decision(at: 11), .idle)
    }

    /// A camera copying 400 files, one every 10 ms: one import at the end, not 400.
    func testABurstIsOneImport() {
        var batching = WatchBatching()
        var imports = 0
        var time = 0.0
        for index in 0..<400 {
            batching.writing("/p/\(index).jpg", at: time)
            batching.finished("/p/\(index).jpg", at: time + 0.005)
            time += 0.01
            if case .importNow = batching.decision(at: time) { imports += 1; batching.imported(startedAt: time) }
        }
        XCTAssertEqual(imports, 0, "4 s of one burst: no import yet")
        XCTAssertEqual(batching.decision(at: time + 0.3), .importNow(deferring: []))
    }

    /// Changes that never stop still get imported, every `longest` seconds.
    func testEndlessChangesAreImportedEveryFiveSeconds() {
        var batching = WatchBatching()
        var imports: [Double] = []
        var time = 0.0
        while time < 12 {
            batching.finished("/p/x.jpg", at: time)
            if case .importNow = batching.decision(at: time) { imports.append(time); batching.imported(startedAt: time) }
            time += 0.1
        }
        XCTAssertEqual(imports.count, 2, "\(imports)")
        XCTAssertEqual(imports.first ?? 0, 5, accuracy: 0.11)
    }

    func testAFileBeingWrittenStartsNoImportAndIsDeferredUntilClosed() {
        var batching = WatchBatching()
        batching.writing("/p/big.jpg", at: 0)
        XCTAssertEqual(batching.decision(at: 1), .wait(until: 30), "only a stat after the close timeout")
        batching.finished("/p/other.jpg", at: 1)
        XCTAssertEqual(batching.decision(at: 1.25), .importNow(deferring: ["/p/big.jpg"]))
        batching.imported(startedAt: 1.25)
        batching.writing("/p/big.jpg", at: 2) // more bytes
        batching.finished("/p/big.jpg", at: 3) // IN_CLOSE_WRITE
        XCTAssertEqual(batching.decision(at: 3.25), .importNow(deferring: []))
    }

    /// Files found in a folder that appeared have no writer to wait for: two equal stats 1 s apart.
    func testAFileWithoutAWriterIsDoneWhenItsSizeSettles() {
        var batching = WatchBatching()
        batching.appeared("/p/new/a.jpg", at: 0)
        XCTAssertEqual(batching.decision(at: 0.25), .importNow(deferring: ["/p/new/a.jpg"]))
        batching.imported(startedAt: 0.25)
        XCTAssertEqual(batching.filesToStat(at: 0.5), [])
        XCTAssertEqual(batching.filesToStat(at: 1), ["/p/new/a.jpg"])
        batching.stamped("/p/new/a.jpg", .init(size: 100, mtimeNanos: 1), at: 1)
        batching.stamped("/p/new/a.jpg", .init(size: 200, mtimeNanos: 2), at: 2) // still growing
        XCTAssertEqual(batching.filesBeingWritten, ["/p/new/a.jpg"])
        batching.stamped("/p/new/a.jpg", .init(size: 200, mtimeNanos: 2), at: 3)
        XCTAssertEqual(batching.filesBeingWritten, [])
        XCTAssertEqual(batching.decision(at: 3.25), .importNow(deferring: []))
    }

    /// With what the walk that found it saw, one more stat decides: 1 s later for a folder made in place,
    /// 0.25 s for one moved in.
    func testTheWalksStatIsTheFirstOfTheTwo() {
        var batching = WatchBatching()
        let stamp = WatchBatching.FileStamp(size: 100, mtimeNanos: 1)
        batching.appeared("/p/new/a.jpg", at: 0, stamp: stamp)
        batching.appeared("/p/moved/b.jpg", at: 0, modifiedAgo: 0.1, stamp: stamp, movedIn: true)
        XCTAssertEqual(batching.filesToStat(at: 0.25), ["/p/moved/b.jpg"])
        batching.stamped("/p/moved/b.jpg", stamp, at: 0.25)
        XCTAssertEqual(batching.filesBeingWritten, ["/p/new/a.jpg"])
        XCTAssertEqual(batching.filesToStat(at: 1), ["/p/new/a.jpg"])
        batching.stamped("/p/new/a.jpg", .init(size: 150, mtimeNanos: 2), at: 1) // grew since the walk
        XCTAssertEqual(batching.filesBeingWritten, ["/p/new/a.jpg"])
        XCTAssertEqual(batching.filesToStat(at: 1.5), [], "judged again a second later")
        batching.stamped("/p/new/a.jpg", .init(size: 150, mtimeNanos: 2), at: 2)
        XCTAssertEqual(batching.filesBeingWritten, [])
        // A folder moved in whose file is written again under the new watch waits for its close.
        batching.appeared("/p/moved/c.jpg", at: 3, modifiedAgo: 0, stamp: stamp, movedIn: true)
        batching.writing("/p/moved/c.jpg", at: 3.1)
        XCTAssertEqual(batching.filesToStat(at: 3.5), [])
        XCTAssertEqual(batching.filesBeingWritten, ["/p/moved/c.jpg"])
    }

    /// A file created and never written to (a hard link) is judged by its size a second after it was made; one
    /// written to after its creation waits for its close.
    func testAFileCreatedWithoutWritesIsJudgedBySize() {
        var batching = WatchBatching()
        let stamp = WatchBatching.FileStamp(size: 100, mtimeNanos: 1)
        batching.created("/p/link.jpg", at: 0, stamp: stamp)
        batching.created("/p/written.jpg", at: 0, stamp: .init(size: 0, mtimeNanos: 1))
        batching.created("/p/empty.jpg", at: 0, stamp: .init(size: 0, mtimeNanos: 1)) // its writer is slow
        batching.writing("/p/written.jpg", at: 0.01)
        XCTAssertEqual(batching.decision(at: 0.5), .wait(until: 1), "no import for a creation alone")
        XCTAssertEqual(batching.filesToStat(at: 1), ["/p/link.jpg"])
        batching.stamped("/p/link.jpg", stamp, at: 1)
        XCTAssertEqual(batching.decision(at: 1.25), .importNow(deferring: ["/p/written.jpg", "/p/empty.jpg"]))
    }

    /// A folder moved in holds files written long before: complete at once, no stats to wait for.
    func testFilesOfAFolderMovedInAreCompleteUnlessJustModified() {
        var batching = WatchBatching()
        batching.appeared("/p/moved/old.jpg", at: 0, modifiedAgo: 3600)
        batching.appeared("/p/moved/fresh.jpg", at: 0, modifiedAgo: 0.2)
        XCTAssertEqual(batching.filesBeingWritten, ["/p/moved/fresh.jpg"])
        XCTAssertEqual(batching.decision(at: 0.25), .importNow(deferring: ["/p/moved/fresh.jpg"]))
    }

    /// A folder renamed inside the watched folders: its files whose writes were seen are complete at once, one
    /// still being written stays so under its new path.
    func testFilesOfAFolderRenamedInsideKeepWhatWasSeenOfThem() {
        var batching = WatchBatching()
        batching.writing("/p/new/a.jpg", at: 0)
        batching.finished("/p/new/a.jpg", at: 0.1) // closed
        batching.writing("/p/new/b.jpg", at: 0.1) // still open
        batching.moved(from: "/p/new/a.jpg", to: "/p/trip/a.jpg", at: 0.2)
        batching.moved(from: "/p/new/b.jpg", to: "/p/trip/b.jpg", at: 0.2)
        XCTAssertEqual(batching.filesBeingWritten, ["/p/trip/b.jpg"])
        XCTAssertEqual(batching.decision(at: 0.45), .importNow(deferring: ["/p/trip/b.jpg"]))
    }

    /// A writer that stops writing without closing (or whose close was lost) is judged by size after 30 s.
    func testAStalledWriterIsJudgedBySizeAfterTheCloseTimeout() {
        var batching = WatchBatching()
        batching.writing("/p/a.jpg", at: 0)
        XCTAssertEqual(batching.filesToStat(at: 29), [])
        XCTAssertEqual(batching.filesToStat(at: 30), ["/p/a.jpg"])
        batching.stamped("/p/a.jpg", nil, at: 30) // gone
        XCTAssertEqual(batching.filesBeingWritten, [])
    }

    func testAChangeDuringAnImportStaysPending() {
        var batching = WatchBatching()
        batching.finished("/p/a.jpg", at: 0)
        batching.finished("/p/b.jpg", at: 0.5) // while the batch that started at 0.25 ran
        batching.imported(startedAt: 0.25)
        XCTAssertEqual(batching.decision(at: 0.75), .importNow(deferring: []))
    }
}
