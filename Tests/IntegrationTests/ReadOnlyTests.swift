// Every way of writing fails with EROFS ("Read-only file system"), and nothing changes.
import FlickrOrigin
import Foundation
import TestRequirements
import XCTest

final class ReadOnlyTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 12, scale: 4) }

    func testWritesFailWithEROFS() throws {
        let file = try XCTUnwrap(harness.files(under: "regions").first)
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        let attempts: [[String]] = [
            ["touch", directory + "/new.jpg"], ["mkdir", directory + "/sub"], ["rm", "-f", file],
            ["mv", file, directory + "/renamed.jpg"], ["chmod", "644", file], ["truncate", "-s", "0", file],
            ["ln", file, directory + "/link.jpg"], ["ln", "-s", file, directory + "/symlink.jpg"],
            ["sh", "-c", "echo x >> '\(file)'"], ["cp", "/etc/hostname", directory + "/"], ["rmdir", directory],
            ["touch", "-d", "2001-01-01", file],
        ]
        func assertRefused(_ command: [String]) {
            let result = Shell.run(command[0], Array(command.dropFirst()))
            XCTAssertNotEqual(result.status, 0, "\(command) succeeded")
            XCTAssertTrue(result.stderr.contains("Read-only file system"), "\(command): \(result.stderr)")
        }
        for command in attempts { assertRefused(command) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: file))
        XCTAssertEqual(harness.files(under: "regions").count, 12)
        // Last, so that without the package the attempts above still ran before the skip.
        try TestRequirement.program("/usr/bin/setfattr", package: "attr")
        assertRefused(["setfattr", "-n", "user.x", "-v", "1", file])
    }
}
