// What a download asks the origin for, without a network: an open's first request, a reader reading on, a whole
// reader, a whole-photo want, nobody left, and when a running request is cut short.
import PhotoContent
import XCTest

final class DownloadDemandTests: XCTestCase {
    static let kib: Int64 = 1 << 10
    static let mib: Int64 = 1 << 20
    let kib = DownloadDemandTests.kib, mib = DownloadDemandTests.mib

    /// A 10 MiB photo (a camera original) with the default tuning: first request 256 KiB, lookahead 256 KiB,
    /// whole reader at 2 MiB, cut above 1 MiB.
    func camera() -> DownloadDemand { DownloadDemand(size: 10 * mib) }

    func testNobodyWantingAnythingParksAndAWholePhotoCompletes() {
        let demand = camera()
        XCTAssertEqual(demand.next(received: 0), .park, "no reader, no whole want: nothing is asked for")
        XCTAssertEqual(demand.next(received: 10 * mib), .complete)
        XCTAssertEqual(demand.next(received: 11 * mib), .complete, "more than the size is complete, never a request")
    }

    func testAnOpenAsksForTheFirstRequestOnly() {
        var demand = camera()
        demand.opened()
        XCTAssertEqual(demand.readers, 1)
        XCTAssertEqual(demand.next(received: 0), .request(from: 0, to: 256 * kib))
        // A header read of 64 KiB, 8 KiB at a time, reaches the daemon as reads up to 240 KiB (the kernel's
        // readahead): within the first request, nothing more.
        demand.read(upTo: 240 * kib)
        XCTAssertEqual(demand.next(received: 256 * kib), .idle, "the reader has what it asked for")
        XCTAssertFalse(demand.readsWhole)
    }

    func testAReaderReadingOnGetsALookaheadPastItsFurthestRead() {
        var demand = camera()
        demand.opened()
        demand.read(upTo: 384 * kib)
        XCTAssertEqual(demand.next(received: 256 * kib), .request(from: 256 * kib, to: 640 * kib))
        // Reads inside what is stored ask for nothing.
        demand.read(upTo: 500 * kib)
        XCTAssertEqual(demand.next(received: 640 * kib), .idle)
        demand.read(upTo: 768 * kib)
        XCTAssertEqual(demand.next(received: 640 * kib), .request(from: 640 * kib, to: 1024 * kib))
    }

    /// Pillow's `Image.open(p).size` through a 1 MiB buffer: 128 KiB reads up to 1.125 MiB. Every request it
    /// causes ends within a lookahead of its furthest read, so the origin sends about 1.4 MiB, not the photo.
    func testABufferedHeaderReadStaysWithinALookaheadOfWhatItRead() {
        var demand = camera()
        demand.opened()
        var received: Int64 = 0
        var asked: Int64 = 0
        var end: Int64 = 128 * kib
        while end <= 1152 * kib {
            demand.read(upTo: end)
            if case .request(let from, let to) = demand.next(received: received) {
                XCTAssertEqual(from, received)
                asked = to
                received = to
            }
            end += 128 * kib
        }
        XCTAssertFalse(demand.readsWhole)
        XCTAssertLessThanOrEqual(asked, 1152 * kib + 256 * kib)
        demand.closed()
        XCTAssertEqual(demand.next(received: received), .park)
    }

    func testAWholeReaderGetsTheRestInOneRequest() {
        var demand = camera()
        demand.opened()
        demand.read(upTo: 2 * mib)
        XCTAssertTrue(demand.readsWhole)
        XCTAssertEqual(demand.next(received: 1 * mib), .request(from: 1 * mib, to: 10 * mib))
    }

    func testASmallPhotoReadToItsEndIsReadWhole() {
        var demand = DownloadDemand(size: 600 * kib)
        demand.opened()
        XCTAssertFalse(demand.readsWhole, "the open's own expectation is not reading")
        demand.read(upTo: 600 * kib)
        XCTAssertTrue(demand.readsWhole)
        XCTAssertEqual(demand.next(received: 256 * kib), .request(from: 256 * kib, to: 600 * kib))
    }

    func testARemainderShorterThanALookaheadComesWithTheRequestBeforeIt() {
        // 300 KiB: after the first 256 KiB only 44 KiB would be left, less than a lookahead: one request.
        var small = DownloadDemand(size: 300 * kib)
        small.opened()
        XCTAssertEqual(small.next(received: 0), .request(from: 0, to: 300 * kib))
        // Past the first request the same: 1 MiB with a reader at 600 KiB asks for the end, not 600 + 256 KiB.
        var demand = DownloadDemand(size: 1 * mib)
        demand.opened()
        demand.read(upTo: 600 * kib)
        XCTAssertEqual(demand.next(received: 256 * kib), .request(from: 256 * kib, to: 1 * mib))
        var tiny = DownloadDemand(size: 100 * kib)
        tiny.opened()
        XCTAssertEqual(tiny.next(received: 0), .request(from: 0, to: 100 * kib), "never past the photo")
    }

    func testAWholeWantCompletesWhoeverReads() {
        var demand = camera()
        demand.wantWhole()
        XCTAssertTrue(demand.keepsWhole)
        XCTAssertEqual(demand.next(received: 0), .request(from: 0, to: 10 * mib))
        XCTAssertEqual(demand.next(received: 3 * mib), .request(from: 3 * mib, to: 10 * mib))
        demand.opened()
        demand.closed()
        XCTAssertEqual(demand.next(received: 3 * mib), .request(from: 3 * mib, to: 10 * mib), "a closing reader does not stop it")
        XCTAssertFalse(demand.shouldCut(received: 3 * mib, requestEnd: 10 * mib))
    }

    func testTheLastCloseParksAndOtherReadersKeepItGoing() {
        var demand = camera()
        demand.opened()
        demand.opened()
        demand.read(upTo: 640 * kib)
        demand.closed()
        XCTAssertEqual(demand.readers, 1)
        XCTAssertEqual(demand.next(received: 128 * kib), .request(from: 128 * kib, to: 896 * kib), "one reader is left")
        XCTAssertFalse(demand.shouldCut(received: 128 * kib, requestEnd: 10 * mib))
        demand.closed()
        XCTAssertEqual(demand.next(received: 128 * kib), .park)
        demand.closed()
        XCTAssertEqual(demand.readers, 0, "a close too many does not go below zero")
    }

    func testARequestNobodyWantsIsCutOnlyWhenMuchOfItIsLeft() {
        var demand = camera()
        demand.opened()
        XCTAssertFalse(demand.shouldCut(received: 0, requestEnd: 10 * mib), "a reader is open")
        demand.closed()
        XCTAssertTrue(demand.shouldCut(received: 2 * mib, requestEnd: 10 * mib), "8 MiB left: cut")
        XCTAssertFalse(demand.shouldCut(received: 9 * mib, requestEnd: 10 * mib), "1 MiB left: finished, the connection kept")
        XCTAssertFalse(demand.shouldCut(received: 0, requestEnd: 256 * kib), "a first request is never cut")
        XCTAssertTrue(demand.shouldCut(received: 0, requestEnd: .max), "no overflow at the extremes")
    }

    func testTuningIsHonouredAndHostileValuesDoNotTrap() {
        var tuning = DownloadDemand.Tuning()
        tuning.firstRequest = 1 * mib
        tuning.lookahead = 0
        tuning.wholeReader = 4 * mib
        tuning.cutAbove = 0
        var demand = DownloadDemand(size: 10 * mib, tuning: tuning)
        demand.opened()
        XCTAssertEqual(demand.next(received: 0), .request(from: 0, to: 1 * mib))
        demand.read(upTo: 3 * mib)
        XCTAssertEqual(demand.next(received: 1 * mib), .request(from: 1 * mib, to: 3 * mib), "no lookahead")
        demand.read(upTo: 4 * mib)
        XCTAssertEqual(demand.next(received: 3 * mib), .request(from: 3 * mib, to: 10 * mib))
        demand.closed()
        XCTAssertTrue(demand.shouldCut(received: 9 * mib, requestEnd: 10 * mib))

        var extreme = DownloadDemand(size: .max)
        extreme.opened()
        extreme.read(upTo: .max - 1)
        XCTAssertEqual(extreme.next(received: 0), .request(from: 0, to: .max))
        var negative = DownloadDemand(size: -5)
        negative.opened()
        negative.read(upTo: -1)
        XCTAssertEqual(negative.next(received: 0), .complete)
    }
}
