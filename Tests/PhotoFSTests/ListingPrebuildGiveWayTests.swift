// The mount's build of listings gives way to folders being opened, and goes on as soon as a listing waits for it.
import Dispatch
import Foundation
@testable import PhotoFS
import XCTest

final class ListingPrebuildGiveWayTests: XCTestCase {
    /// Runs `body` on a thread; the expectation is fulfilled when it returns.
    private func onThread(_ body: @escaping @Sendable () -> Void) -> XCTestExpectation {
        let returned = expectation(description: "returned")
        Thread { body(); returned.fulfill() }.start()
        return returned
    }

    func testWithNoFolderOpenedTheBuildGoesOn() {
        let prebuild = ListingPrebuild()
        XCTAssertTrue(prebuild.begin())
        wait(for: [onThread { prebuild.giveWay(quiet: 60_000_000_000, until: .now() + 60) }], timeout: 30)
        prebuild.end()
    }

    /// Nanoseconds from a folder opened to the end of a build's giving way (`quiet` nanoseconds, `limit` seconds).
    private func givingWay(quiet: UInt64, limit: Double) -> UInt64 {
        let prebuild = ListingPrebuild()
        XCTAssertTrue(prebuild.begin())
        defer { prebuild.end() }
        // Taken before the folder is opened, so the pause the build waits for ends after `listed + quiet`.
        let listed = DispatchTime.now()
        prebuild.listed()
        wait(for: [onThread { prebuild.giveWay(quiet: quiet, until: listed + limit) }], timeout: 30)
        return DispatchTime.now().uptimeNanoseconds - listed.uptimeNanoseconds
    }

    // Lower bounds only: nothing but the deadline, or the pause, could end these waits.
    func testAFolderBeingOpenedHoldsTheBuildUntilItsDeadline() {
        XCTAssertGreaterThanOrEqual(givingWay(quiet: 60_000_000_000, limit: 0.3), 300_000_000)
    }

    func testAPauseInTheListingsEndsTheWait() {
        XCTAssertGreaterThanOrEqual(givingWay(quiet: 200_000_000, limit: 60), 200_000_000)
    }

    /// A listing that needs a folder the build has not made yet must not wait behind the build's giving way;
    /// and once one has waited, the rest of the build goes on without giving way (someone walks its folders).
    func testAListingWaitingForTheBuildEndsItsGivingWay() {
        let prebuild = ListingPrebuild()
        XCTAssertTrue(prebuild.begin())
        prebuild.startGivingWay()
        prebuild.listed()
        let gaveWay = onThread { prebuild.giveWay(quiet: 60_000_000_000, until: .now() + 60) }
        // The build asleep in its giving way first, so the listing's wait is what must wake it.
        guard eventually(within: 30, { prebuild.isGivingWay }) else { return XCTFail("the build never gave way") }
        let waited = onThread { prebuild.wait(timeout: 60) { false } }
        wait(for: [gaveWay], timeout: 30)
        prebuild.listed()
        wait(for: [onThread { prebuild.giveWay(quiet: 60_000_000_000, until: .now() + 60) }], timeout: 30)
        prebuild.end()
        wait(for: [waited], timeout: 30)
    }
}
