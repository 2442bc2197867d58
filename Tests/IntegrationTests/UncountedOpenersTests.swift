// Browsing a folder in a file manager (which reads every photo to draw thumbnails) leaves /recent as it was.
import FlickrOrigin
import Foundation
import XCTest

final class UncountedOpenersTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 12, scale: 4) }

    private func recent() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: harness.path("recent"))) ?? []).sorted()
    }

    /// Runs `/bin/cat` under another command name, as a file manager or thumbnailer process would read.
    private func readAll(as command: String, _ files: [String]) throws {
        let program = harness.root.appendingPathComponent(command).path
        if !FileManager.default.fileExists(atPath: program) {
            try FileManager.default.copyItem(atPath: "/bin/cat", toPath: program)
        }
        let result = Shell.run(program, files)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.count, files.map { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0 }.reduce(0, +))
    }

    func testFileManagersAndThumbnailersLeaveRecentAsItWas() throws {
        let files = harness.files(under: "moments")
        XCTAssertEqual(files.count, 12)
        for command in ["pcmanfm", "tumblerd", "nautilus", "ffmpegthumbnailer"] { try readAll(as: command, files) }
        // A person opens one photo: it is written in the same batch as, or a later one than, every open above,
        // so once it shows, the file managers' opens have been decided too.
        let viewed = files[1]
        Shell.run("cat", [viewed])
        _ = eventually(within: 10) { !recent().isEmpty }
        XCTAssertEqual(recent().count, 1, "\(recent())")
        XCTAssertEqual(harness.inode(of: harness.path("recent/" + (recent().first ?? ""))), harness.inode(of: viewed))
    }
}
