// rsync -a of the whole mount, twice: the second run transfers nothing and the origin sees no image request.
import FlickrOrigin
import Foundation
import XCTest

final class BackupTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 30, scale: 4) }

    func testSecondRsyncCopiesNothingAndDownloadsNothing() throws {
        let backup = harness.root.appendingPathComponent("backup").path
        let first = Shell.run("rsync", ["-a", "--stats", harness.mountpoint + "/", backup + "/"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.text.contains("Number of regular files transferred: 90"), first.text + first.stderr)
        let downloads = harness.origin.requestCount(method: "GET")
        XCTAssertEqual(downloads, 30, "each photo downloaded once although it has three names")

        let second = Shell.run("rsync", ["-a", "--stats", harness.mountpoint + "/", backup + "/"])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.text.contains("Number of regular files transferred: 0"), second.text)
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), downloads)

        // rsync's reads are a backup's, not a person's: /recent stays empty.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: harness.path("recent")), [])
        for tree in ["regions", "moments", "events"] {
            let diff = Shell.run("diff", ["-r", harness.path(tree), backup + "/" + tree])
            XCTAssertEqual(diff.status, 0, diff.text + diff.stderr)
        }
    }
}
