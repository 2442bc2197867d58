// Base class of the integration tests: a harness per test with the class's library imported, and
// optionally mounted; torn down (with the daemon's log after a failure) whatever happened.
import FlickrOrigin
import XCTest

class MountedTestCase: XCTestCase {
    var harness: MountHarness!

    /// The library the loopback origin serves for this class's tests.
    class var originLibrary: OriginLibrary { DemoLibrary.make(count: 12, scale: 4) }
    /// false: the tests mount themselves (with their own options).
    class var mountsInSetUp: Bool { true }

    override func setUpWithError() throws {
        harness = try MountHarness(library: Self.originLibrary)
        let imported = harness.importLibrary()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        if Self.mountsInSetUp { try harness.mount() }
    }

    override func tearDown() {
        harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0)
    }
}
