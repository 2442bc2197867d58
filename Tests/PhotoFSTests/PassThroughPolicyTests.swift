// PassThroughPolicy: one backing per inode while it is open, never next to another version or a page-cache reader;
// idle backings of known files kept for the next open, within a count and an age.
import PhotoFS
import XCTest

final class PassThroughPolicyTests: XCTestCase {
    /// A release of `inode`: the backing it closed, if any (at most one here).
    private func closing(_ policy: inout PassThroughPolicy, _ inode: UInt64, passedThrough: Bool = true,
                         now: UInt64 = 0) -> Int32? {
        policy.closed(inode: inode, passedThrough: passedThrough, now: now)
        let closed = policy.takeBackingsToClose()
        XCTAssertLessThanOrEqual(closed.count, 1)
        return closed.first
    }

    private func file(_ inode: UInt64, size: Int64 = 100, modified: Int64 = 5) -> PassThroughPolicy.File {
        PassThroughPolicy.File(device: 1, inode: inode, size: size, modifiedNanos: modified)
    }

    private let second: UInt64 = 1_000_000_000

    func testAKnownFilesBackingStaysIdleAfterItsLastCloseAndIsReusedWhileItsPathNamesIt() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1", file: file(70), now: 0), .register)
        policy.registered(inode: 7, identity: "v1", file: file(70), id: 3)
        XCTAssertNil(closing(&policy, 7, now: 1), "the last release keeps a known file's backing")
        XCTAssertEqual(policy.idleCount, 1)
        XCTAssertEqual(policy.reusable(inode: 7), PassThroughPolicy.Reusable(file: file(70), identity: "v1"))
        XCTAssertNil(policy.reusing(inode: 7, identity: "v2", file: file(70), now: 2), "another version")
        XCTAssertNil(policy.reusing(inode: 7, identity: "v1", file: file(71), now: 2), "another file at the path")
        XCTAssertNil(policy.reusing(inode: 7, identity: "v1", file: file(70, modified: 6), now: 2), "edited in place")
        XCTAssertEqual(policy.takeBackingsToClose(), [], "a failed reuse changes nothing")
        XCTAssertEqual(policy.reusing(inode: 7, identity: "v1", file: file(70), now: 2), 3)
        XCTAssertEqual(policy.idleCount, 0)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1", file: file(70), now: 3), .backing(3),
                       "an open beside the reused handle shares its backing")
        XCTAssertNil(closing(&policy, 7, now: 4))
        XCTAssertNil(closing(&policy, 7, now: 4))
        XCTAssertEqual(policy.idleCount, 1)
    }

    func testAnIdleBackingOfAnotherVersionOrFileIsClosedAndTheOpenRegistersAfresh() {
        var policy = PassThroughPolicy()
        _ = policy.opening(inode: 7, identity: "v1", file: file(70))
        policy.registered(inode: 7, identity: "v1", file: file(70), id: 3)
        XCTAssertNil(closing(&policy, 7))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1", file: file(71)), .register,
                       "the path names another file now (replaced with the same size and mtime)")
        XCTAssertEqual(policy.takeBackingsToClose(), [3])
        policy.registered(inode: 7, identity: "v1", file: file(71), id: 4)
        XCTAssertNil(closing(&policy, 7))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2", file: file(71, size: 200)), .register, "re-imported")
        XCTAssertEqual(policy.takeBackingsToClose(), [4])
    }

    func testAnIdleBackingIsNotTakenForAFileTheOpenCouldNotIdentify() {
        var policy = PassThroughPolicy()
        _ = policy.opening(inode: 7, identity: "v1", file: file(70))
        policy.registered(inode: 7, identity: "v1", file: file(70), id: 3)
        XCTAssertNil(closing(&policy, 7))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1", file: nil), .register, "its fstat failed: unknown")
        XCTAssertEqual(policy.takeBackingsToClose(), [3])
    }

    func testAnotherFileIsRefusedWhileTheOldOneIsPassedThrough() {
        var policy = PassThroughPolicy()
        _ = policy.opening(inode: 7, identity: "v1", file: file(70))
        policy.registered(inode: 7, identity: "v1", file: file(70), id: 3)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1", file: file(71)), .refuse,
                       "the kernel reads the old file for the open handle; the new one cannot be served beside it")
    }

    func testAPageCacheReaderClosesAnIdleBacking() {
        var policy = PassThroughPolicy()
        _ = policy.opening(inode: 7, identity: "v1", file: file(70))
        policy.registered(inode: 7, identity: "v1", file: file(70), id: 3)
        XCTAssertNil(closing(&policy, 7))
        XCTAssertEqual(policy.openingWithoutFile(inode: 7), .daemon, "an idle backing holds no open in the kernel")
        XCTAssertEqual(policy.takeBackingsToClose(), [3])
        XCTAssertNil(policy.reusable(inode: 7))
    }

    func testIdleBackingsAreClosedPastTheirLimitLeastRecentlyReleasedFirst() {
        var policy = PassThroughPolicy(idleLimit: 2)
        for inode: UInt64 in 1...3 {
            _ = policy.opening(inode: inode, identity: "v", file: file(inode))
            policy.registered(inode: inode, identity: "v", file: file(inode), id: Int32(inode))
        }
        XCTAssertNil(closing(&policy, 2))
        XCTAssertNil(closing(&policy, 1))
        XCTAssertEqual(policy.reusing(inode: 2, identity: "v", file: file(2), now: 0), 2)
        XCTAssertNil(closing(&policy, 2), "reused and released again: now the most recent")
        XCTAssertEqual(closing(&policy, 3), 1, "the third idle one pushes out the least recently released")
        XCTAssertEqual(policy.idleCount, 2)
        XCTAssertNil(policy.reusable(inode: 1))
    }

    func testIdleBackingsAreClosedOnceTheyAreOlderThanTheirAge() {
        var policy = PassThroughPolicy(idleSeconds: 30)
        for inode: UInt64 in 1...2 {
            _ = policy.opening(inode: inode, identity: "v", file: file(inode), now: 0)
            policy.registered(inode: inode, identity: "v", file: file(inode), id: Int32(inode))
        }
        XCTAssertNil(policy.idleExpiry)
        XCTAssertNil(closing(&policy, 1, now: 10 * second))
        XCTAssertNil(closing(&policy, 2, now: 20 * second))
        XCTAssertEqual(policy.idleExpiry, 40 * second, "the oldest idle one's")
        policy.closeExpired(now: 40 * second)
        XCTAssertEqual(policy.takeBackingsToClose(), [], "30 s to the nanosecond is not past its age")
        XCTAssertEqual(policy.opening(inode: 9, identity: "w", file: file(9), now: 40 * second), .register)
        XCTAssertEqual(policy.takeBackingsToClose(), [], "both idle for 30 s or less")
        XCTAssertNil(policy.reusing(inode: 1, identity: "v", file: file(1), now: 41 * second), "idle 31 s")
        XCTAssertEqual(policy.takeBackingsToClose(), [1])
        XCTAssertEqual(policy.reusing(inode: 2, identity: "v", file: file(2), now: 41 * second), 2)
        XCTAssertNil(policy.idleExpiry, "none idle")
        XCTAssertNil(closing(&policy, 2, now: 45 * second))
        policy.closeExpired(now: 75 * second + 1)
        XCTAssertEqual(policy.takeBackingsToClose(), [2], "a timer at its expiry closes it with no open or release")
        XCTAssertEqual(policy.registeredCount, 0)
    }

    func testABackingOfAnUnknownFileOrWithoutIdleRoomIsClosedWithItsLastRelease() {
        var policy = PassThroughPolicy(idleLimit: 0)
        _ = policy.opening(inode: 7, identity: "v1", file: file(70))
        policy.registered(inode: 7, identity: "v1", file: file(70), id: 3)
        XCTAssertEqual(closing(&policy, 7), 3)
        XCTAssertEqual(policy.registeredCount, 0)
    }

    func testTheFirstOpenRegistersAndLaterOpensShareItsBackingUntilTheLastClose() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register)
        policy.registered(inode: 7, identity: "v1", id: 3)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .backing(3))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .backing(3))
        XCTAssertNil(closing(&policy, 7, passedThrough: true))
        XCTAssertNil(closing(&policy, 7, passedThrough: true))
        XCTAssertEqual(closing(&policy, 7, passedThrough: true), 3, "the last release closes the backing")
        XCTAssertEqual(policy.registeredCount, 0)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register, "a closed backing is registered again")
    }

    func testEachInodeHasItsOwnBacking() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "a"), .register)
        policy.registered(inode: 7, identity: "a", id: 1)
        XCTAssertEqual(policy.opening(inode: 8, identity: "b"), .register)
        policy.registered(inode: 8, identity: "b", id: 2)
        XCTAssertEqual(closing(&policy, 7, passedThrough: true), 1)
        XCTAssertEqual(policy.opening(inode: 8, identity: "b"), .backing(2))
    }

    func testAnotherVersionIsRefusedWhileTheOldOneIsPassedThrough() {
        var policy = PassThroughPolicy()
        _ = policy.opening(inode: 7, identity: "v1")
        policy.registered(inode: 7, identity: "v1", id: 4)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2"), .refuse)
        XCTAssertEqual(closing(&policy, 7, passedThrough: true), 4, "a refused open holds nothing")
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2"), .register)
    }

    func testAFailedRegistrationTurnsItOffButKeepsTheBackingsStillOpen() {
        var policy = PassThroughPolicy()
        _ = policy.opening(inode: 7, identity: "v1")
        policy.registered(inode: 7, identity: "v1", id: 5)
        XCTAssertEqual(policy.opening(inode: 8, identity: "w"), .register)
        policy.registrationFailed(inode: 8, everywhere: true)
        XCTAssertFalse(policy.isOn)
        XCTAssertEqual(policy.opening(inode: 9, identity: "x"), .daemon)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .backing(5),
                       "an inode with a backing must keep being passed through, or the kernel fails its opens")
        XCTAssertNil(closing(&policy, 7, passedThrough: true))
        XCTAssertEqual(closing(&policy, 7, passedThrough: true), 5)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .daemon)
        XCTAssertNil(closing(&policy, 9, passedThrough: false), "a handle read through the daemon holds no backing")
    }

    func testAnOpenBesideAnotherVersionsPageCacheReadersIsNotPassedThrough() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2", bypassingPageCache: true), .daemon)
        XCTAssertEqual(policy.registeredCount, 0)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2"), .daemon, "its reader through the daemon is still open")
        XCTAssertNil(closing(&policy, 7, passedThrough: false))
        XCTAssertNil(closing(&policy, 7, passedThrough: false))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2"), .register)
    }

    func testAFileRefusedAsABackingIsReadThroughTheDaemonUntilItsReadersClose() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register)
        policy.registrationFailed(inode: 7, everywhere: false)
        XCTAssertTrue(policy.isOn, "one file refused (ELOOP) leaves the others passed through")
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .daemon,
                       "registering now would fail the open beside the handle reading through the page cache")
        XCTAssertEqual(policy.opening(inode: 8, identity: "w"), .register)
        XCTAssertNil(closing(&policy, 7, passedThrough: false))
        XCTAssertNil(closing(&policy, 7, passedThrough: false))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register, "tried again once none is open")
    }

    func testOffFromTheStartNeverRegisters() {
        var policy = PassThroughPolicy(isOn: false)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .daemon)
    }

    /// A handle with no file of its own (a variant, a cached download) cannot share an inode's backing: the kernel
    /// would fail it with EIO, so it is refused while one is open; without one it is read through the daemon and
    /// keeps the inode from being passed through until it closes.
    func testAnOpenWithoutAFileIsRefusedBesideABackingAndOtherwiseCounted() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register)
        policy.registered(inode: 7, identity: "v1", id: 3)
        XCTAssertEqual(policy.openingWithoutFile(inode: 7), .refuse)
        XCTAssertEqual(closing(&policy, 7, passedThrough: true), 3)
        XCTAssertEqual(policy.openingWithoutFile(inode: 7), .daemon)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .daemon, "a page-cache reader of the inode is open")
        XCTAssertNil(closing(&policy, 7, passedThrough: false))
        XCTAssertNil(closing(&policy, 7, passedThrough: false))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register, "once they are closed")
    }
}
