// An import from answers full of absurd values, wrong types and hostile strings succeeds, skips what cannot
// be used with a warning each, and the mount lists and reads every imported photo; the daemon never dies.
import FlickrOrigin
import Foundation
import XCTest

final class HostileImportTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 16, scale: 4) }
    override class var mountsInSetUp: Bool { false }

    private func url(_ photo: OriginPhoto) -> String {
        "http://127.0.0.1:\(harness.origin.port)\(harness.origin.imagePath(photoID: photo.id)!)"
    }

    func testHostileRecordsAreSkippedOrRepairedAndEveryImportedPhotoReads() throws {
        let photos = harness.origin.photos
        let origin = harness.origin
        // Unusable: skipped with a warning each.
        origin.setRawRecord(photoID: photos[0].id, json: #"{"title": "no id", "url_o": "\#(url(photos[0]))"}"#)
        origin.setRawRecord(photoID: photos[1].id, json: #"{"id": "../../etc", "url_o": "\#(url(photos[1]))"}"#)
        origin.setRawRecord(photoID: photos[2].id, json: #"[1, 2, 3]"#)
        // Usable once clamped: what trapped the daemon or failed the import before.
        origin.setRawRecord(photoID: photos[3].id, json: #"""
            {"id": "\#(photos[3].id)", "owner": "own/er\u0000x", "ownername": "a/b\u202e", "title": "lone \ud800 / \u0007",
             "dateupload": -5, "datetaken": "0000-00-00 00:00:00", "width_o": 9223372036854775807,
             "height_o": 99999999999999999999, "url_o": "\#(url(photos[3]))"}
            """#)
        origin.setRawRecord(photoID: photos[4].id, json: #"""
            {"id": \#(photos[4].id), "owner": 12345, "title": {"_content": 3.5e300}, "dateupload": "9999999999999",
             "datetaken": "99999-12-31 23:59:59", "place_id": "x/y", "latitude": "1e999", "url_o": "\#(url(photos[4]))"}
            """#)
        origin.setRawRecord(photoID: photos[5].id, json: #"""
            {"id": "\#(photos[5].id)", "title": "\#(String(repeating: "\\u00e9", count: 400))", "dateupload": 0,
             "datetaken": "1850-02-29 25:61:61", "datetakenunknown": "maybe", "url_o": "\#(url(photos[5]))"}
            """#)
        origin.setRawRecord(photoID: photos[6].id, json: #"""
            {"id": "\#(photos[6].id)", "title": ".", "dateupload": "-62135596801", "datetaken": "0001-01-01 00:00:00",
             "url_o": "\#(url(photos[6]))"}
            """#)

        let imported = harness.importLibrary()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.text.contains("3 record(s) skipped"), imported.text)
        let warnings = imported.stderr.split(separator: "\n").filter { $0.contains("record skipped") }
        XCTAssertEqual(warnings.count, 3, imported.stderr)

        try harness.mount()
        let listing = Shell.run("ls", ["-lRa", harness.mountpoint])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        let files = harness.files()
        // All 16 photos, each under /regions, /moments and /events: the setup imported the library cleanly
        // first, and a record skipped by this second import leaves the photo as the first one wrote it.
        XCTAssertEqual(files.count, 48, "\(files)")
        for file in files {
            let name = (file as NSString).lastPathComponent
            XCTAssertFalse(name.isEmpty || name == "." || name == ".." || name.utf8.count > 255, name)
            var info = stat()
            XCTAssertEqual(lstat(file, &info), 0, file)
            let read = Shell.run("cat", [file])
            XCTAssertEqual(read.status, 0, "\(file): \(read.stderr)")
            XCTAssertEqual(read.stdout.count, Int(info.st_size), file)
        }
        let hostileIDs = photos[0...6].map(\.id)
        for id in hostileIDs {
            let bytes = try XCTUnwrap(origin.imageBytes(photoID: id))
            XCTAssertTrue(files.contains { file in Shell.run("cat", [file]).stdout == bytes }, "photo \(id) not readable")
        }
        XCTAssertTrue(harness.daemon?.isRunning ?? false, "the daemon died: \(harness.daemonLog)")
        XCTAssertTrue(harness.isMounted)
    }
}
