// Bad input through the real mount: a 404 or truncated photo fails with EIO (never garbage, never a hang),
// a bad key or malformed answer leaves the library as it was.
import FlickrOrigin
import Foundation
import PhotoCatalog
import XCTest

final class FailureTests: MountedTestCase {
    static let library = DemoLibrary.make(count: 10, scale: 4)
    override class var originLibrary: OriginLibrary { FailureTests.library }
    override class var mountsInSetUp: Bool { false }

    func file(of photoID: String) throws -> String {
        try XCTUnwrap(harness.files(under: "regions").first { (try? harness.photoID(ofInode: harness.inode(of: $0))) == photoID })
    }

    func testA404PhotoFailsWithEIOAndOthersStillRead() throws {
        try harness.mount()
        let gone = FailureTests.library.photos[2]
        harness.origin.setMissing(photoID: gone.id)
        let result = Shell.run("cat", [try file(of: gone.id)])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("Input/output error"), result.stderr)
        XCTAssertTrue(result.stdout.isEmpty, "no garbage bytes")
        XCTAssertEqual(harness.origin.requestCount(method: "GET", path: harness.origin.imagePath(photoID: gone.id)!), 1,
                       "a 404 is final: asked once, not retried")
        XCTAssertTrue(harness.daemonLog.contains(gone.id) && harness.daemonLog.contains("404")
                      && harness.daemonLog.contains(harness.origin.imagePath(photoID: gone.id)!), harness.daemonLog)
        let other = FailureTests.library.photos[3]
        XCTAssertEqual(Shell.run("cat", [try file(of: other.id)]).stdout, other.image.data)
    }

    func testATruncatedDownloadIsNeverServedNorCached() throws {
        try harness.mount()
        let photo = FailureTests.library.photos[4]
        harness.origin.setTruncated(photoID: photo.id)
        let result = Shell.run("cat", [try file(of: photo.id)])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("Input/output error"), result.stderr)
        // Reads stream while the download runs, so a reader may get the bytes that did arrive — the photo's
        // real first bytes, never anything else — before the failure.
        XCTAssertLessThan(result.stdout.count, photo.image.data.count)
        XCTAssertEqual(result.stdout, photo.image.data.prefix(result.stdout.count))
        let cached = (try? FileManager.default.contentsOfDirectory(atPath: harness.cacheDirectory + "/originals")) ?? []
        XCTAssertEqual(cached, [])
        harness.origin.setTruncated(photoID: photo.id, false)
        XCTAssertEqual(Shell.run("cat", [try file(of: photo.id)]).stdout, photo.image.data)
    }

    func testBadKeyAndMalformedAnswersLeaveTheLibraryUnchanged() throws {
        let before = try harness.catalog().allPhotos()
        harness.origin.replaceLibrary(DemoLibrary.make(count: 14, scale: 4))
        let badKey = harness.importLibrary(key: "not-the-key")
        XCTAssertNotEqual(badKey.status, 0)
        XCTAssertTrue(badKey.stderr.contains("Invalid API Key"), badKey.stderr)
        XCTAssertTrue(badKey.stderr.contains("library unchanged"), badKey.stderr)
        XCTAssertEqual(try harness.catalog().allPhotos(), before)

        harness.origin.malformedAnswers = true
        let malformed = harness.importLibrary()
        XCTAssertNotEqual(malformed.status, 0)
        XCTAssertTrue(malformed.stderr.contains("malformed JSON"), malformed.stderr)
        XCTAssertEqual(try harness.catalog().allPhotos(), before)
    }

    func testReimportAddsNothing() throws {
        let again = harness.importLibrary()
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.text.contains("0 new, 0 updated, 10 unchanged"), again.text)
        XCTAssertEqual(try harness.catalog().allPhotos().count, 10)
    }
}
