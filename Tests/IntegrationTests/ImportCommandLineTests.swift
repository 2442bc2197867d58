// `photofs import` through the built binary: what its command line accepts, and that no argument traps it.
import FlickrOrigin
import Foundation
import PhotoCatalog
import XCTest

final class ImportCommandLineTests: XCTestCase {
    var harness: MountHarness!

    override func setUpWithError() throws {
        harness = try MountHarness(library: DemoLibrary.make(count: 4, scale: 8))
    }

    override func tearDown() {
        harness?.tearDown()
    }

    func runImport(_ extra: [String]) -> CommandResult {
        harness.photofs(["import", "flickr", harness.library, "--endpoint", harness.origin.endpoint,
                         "--method", "flickr.photos.search"] + extra,
                        environment: ["PHOTOFS_FLICKR_API_KEY": "test-key"])
    }

    /// `--param =` made `split` return no parts and the import trapped; `--param =v` used "v" as the key.
    func testAParameterWithoutAKeyIsRefusedWithAMessage() {
        for parameter in ["=", "=v", "novalue"] {
            let result = runImport(["--param", parameter])
            // ArgumentParser's usage error (64), not a signal from a trap.
            XCTAssertEqual(result.status, 64, "--param \(parameter): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("--param takes key=value with a non-empty key"), result.stderr)
            XCTAssertTrue(result.stderr.contains("\"\(parameter)\""), result.stderr)
        }
        XCTAssertEqual(harness.origin.requestCount(method: "GET", path: FlickrOriginServer.restPath), 0,
                       "a refused command line must not call the origin")
    }

    /// A value may hold "=" (split at the first one) or be empty; the import runs.
    func testAValueWithAnEqualsSignOrEmptyIsAccepted() throws {
        let result = runImport(["--param", "text=a=b", "--param", "tags="])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(harness.origin.requestCount(method: "GET", path: FlickrOriginServer.restPath), 1)
        // The origin filters search results by `text`: "a=b" is in no title, so the key and value were split
        // at the first "=" and nothing was imported.
        XCTAssertTrue(result.text.contains("imported 0 photos"), result.text)
    }
}
