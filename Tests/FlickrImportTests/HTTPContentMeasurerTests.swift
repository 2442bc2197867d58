// Measuring a photo over HTTP against a loopback origin: the size must be one the catalog accepts, and
// absurd validators (ETag, Last-Modified) are dropped rather than stored.
import FlickrOrigin
import PhotoCatalog
import PhotoContent
import PhotoSources
import XCTest

final class HTTPContentMeasurerTests: XCTestCase {
    /// A server answering every request with these headers and no body (a HEAD answer).
    func measure(headers: [(String, String)]) throws -> Result<MeasuredContent, MeasureFailure> {
        let server = LoopbackHTTPServer(handler: { _ in ServerResponse(status: 200, headers: headers) })
        try server.start()
        defer { server.stop() }
        var configuration = HTTPConfiguration()
        configuration.attempts = 1
        let measurer = HTTPContentMeasurer(http: HTTPClient(configuration: configuration), redactor: SecretRedactor(secrets: []))
        return measurer.measure("\(server.baseURL)/photos/1_o.jpg")
    }

    func testASizeBeyondTheCatalogsBoundIsAFailureWithAReason() throws {
        for size in ["9223372036854775807", String(CatalogLimits.maxByteSize + 1), "0"] {
            let result = try measure(headers: [("Content-Type", "image/jpeg"), ("Content-Length", size)])
            guard case .failure(let failure) = result else { return XCTFail("size \(size) was accepted") }
            XCTAssertTrue("\(failure)".contains(size), "\(failure)")
        }
    }

    func testTheLargestAcceptedSizeAndItsValidatorsAreKept() throws {
        let size = String(CatalogLimits.maxByteSize)
        let result = try measure(headers: [("Content-Type", "image/png"), ("Content-Length", size),
                                           ("ETag", "\"abc\""), ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")])
        let measured = try result.get()
        XCTAssertEqual(measured.size, CatalogLimits.maxByteSize)
        XCTAssertEqual(measured.etag, "\"abc\"")
        XCTAssertEqual(measured.lastModified, "Mon, 01 Jan 2024 00:00:00 GMT")
    }

    func testValidatorsLongerThan256BytesAreTreatedAsAbsent() throws {
        let long = "\"" + String(repeating: "e", count: 300) + "\""
        let edge = "\"" + String(repeating: "e", count: 254) + "\"" // 256 bytes: kept
        let measured = try measure(headers: [("Content-Type", "image/jpeg"), ("Content-Length", "10"),
                                             ("ETag", long), ("Last-Modified", String(repeating: "M", count: 257))]).get()
        XCTAssertNil(measured.etag)
        XCTAssertNil(measured.lastModified)
        let kept = try measure(headers: [("Content-Type", "image/jpeg"), ("Content-Length", "10"), ("ETag", edge)]).get()
        XCTAssertEqual(kept.etag, edge)
    }
}
