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

    func testAFolderBeingOpenedHoldsTheBuildUntilItsDeadline() {
        let prebuild = ListingPrebuild()
        XCTAssertTrue(prebuild.begin())
        prebuild.listed()
        let started = DispatchTime.now()
        wait(for: [onThread { prebuild.giveWay(quiet: 60_000_000_000, until: started + 0.3) }], timeout: 30)
        // A lower bound only: nothing but the deadline could end this wait.
        XCTAssertGreaterThanOrEqual(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds, 300_000_000)
        prebuild.end()
    }

    func testAPauseInTheListingsEndsTheWait() {
        let prebuild = ListingPrebuild()
        XCTAssertTrue(prebuild.begin())
        prebuild.listed()
        let listed = DispatchTime.now()
        wait(for: [onThread { prebuild.giveWay(quiet: 200_000_000, until: .now() + 60) }], timeout: 30)
        XCTAssertGreaterThanOrEqual(DispatchTime.now().uptimeNanoseconds - listed.uptimeNanoseconds, 200_000_000)
        prebuild.end()
    }

    /// A listing that needs a folder the build has not made yet must not wait behind the build's giving way.
    func testAListingWaitingForTheBuildEndsItsGivingWay() {
        let prebuild = ListingPrebuild()
        XCTAssertTrue(prebuild.begin())
        prebuild.listed()
        let gaveWay = onThread { prebuild.giveWay(quiet: 60_000_000_000, until: .now() + 60) }
        let waited = onThread { prebuild.wait(timeout: 60) { false } }
        wait(for: [gaveWay], timeout: 30)
        prebuild.end()
        wait(for: [waited], timeout: 30)
    }
}
