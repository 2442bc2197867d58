// PassThroughPolicy: one backing per inode while it is open, never next to another version or a page-cache reader.
import PhotoFS
import XCTest

final class PassThroughPolicyTests: XCTestCase {
    func testTheFirstOpenRegistersAndLaterOpensShareItsBackingUntilTheLastClose() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register)
        policy.registered(inode: 7, identity: "v1", id: 3)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .backing(3))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .backing(3))
        XCTAssertNil(policy.closed(inode: 7, passedThrough: true))
        XCTAssertNil(policy.closed(inode: 7, passedThrough: true))
        XCTAssertEqual(policy.closed(inode: 7, passedThrough: true), 3, "the last release closes the backing")
        XCTAssertEqual(policy.registeredCount, 0)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register, "a closed backing is registered again")
    }

    func testEachInodeHasItsOwnBacking() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "a"), .register)
        policy.registered(inode: 7, identity: "a", id: 1)
        XCTAssertEqual(policy.opening(inode: 8, identity: "b"), .register)
        policy.registered(inode: 8, identity: "b", id: 2)
        XCTAssertEqual(policy.closed(inode: 7, passedThrough: true), 1)
        XCTAssertEqual(policy.opening(inode: 8, identity: "b"), .backing(2))
    }

    func testAnotherVersionIsRefusedWhileTheOldOneIsPassedThrough() {
        var policy = PassThroughPolicy()
        _ = policy.opening(inode: 7, identity: "v1")
        policy.registered(inode: 7, identity: "v1", id: 4)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2"), .refuse)
        XCTAssertEqual(policy.closed(inode: 7, passedThrough: true), 4, "a refused open holds nothing")
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
        XCTAssertNil(policy.closed(inode: 7, passedThrough: true))
        XCTAssertEqual(policy.closed(inode: 7, passedThrough: true), 5)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .daemon)
        XCTAssertNil(policy.closed(inode: 9, passedThrough: false), "a handle read through the daemon holds no backing")
    }

    func testAnOpenBesideAnotherVersionsPageCacheReadersIsNotPassedThrough() {
        var policy = PassThroughPolicy()
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2", bypassingPageCache: true), .daemon)
        XCTAssertEqual(policy.registeredCount, 0)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v2"), .daemon, "its reader through the daemon is still open")
        XCTAssertNil(policy.closed(inode: 7, passedThrough: false))
        XCTAssertNil(policy.closed(inode: 7, passedThrough: false))
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
        XCTAssertNil(policy.closed(inode: 7, passedThrough: false))
        XCTAssertNil(policy.closed(inode: 7, passedThrough: false))
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
        XCTAssertEqual(policy.closed(inode: 7, passedThrough: true), 3)
        XCTAssertEqual(policy.openingWithoutFile(inode: 7), .daemon)
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .daemon, "a page-cache reader of the inode is open")
        XCTAssertNil(policy.closed(inode: 7, passedThrough: false))
        XCTAssertNil(policy.closed(inode: 7, passedThrough: false))
        XCTAssertEqual(policy.opening(inode: 7, identity: "v1"), .register, "once they are closed")
    }
}
