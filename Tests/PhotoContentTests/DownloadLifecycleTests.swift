// The download state machine without a network: verification of answers, resume, restart, completion.
import PhotoContent
import XCTest

final class DownloadLifecycleTests: XCTestCase {
    func testAWholeAnswerCompletes() {
        var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg")
        XCTAssertNil(life.rangeHeader)
        XCTAssertEqual(try life.responseBegan(status: 200, contentType: "image/jpeg; q=1", contentLength: 100, contentRange: nil).get(), 0)
        XCTAssertNoThrow(try life.stored(60).get())
        XCTAssertEqual(life.received, 60)
        XCTAssertNoThrow(try life.stored(40).get())
        XCTAssertEqual(life.transferEnded(), .complete)
    }

    func testAShortBodyWaitsForAResumeThatMustContinueExactly() {
        var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/png")
        _ = life.responseBegan(status: 200, contentType: "image/png", contentLength: 100, contentRange: nil)
        _ = life.stored(30)
        XCTAssertEqual(life.transferEnded(), .waiting)
        XCTAssertEqual(life.rangeHeader, "Range: bytes=30-")
        XCTAssertEqual(try life.responseBegan(status: 206, contentType: "image/png", contentLength: 70,
                                              contentRange: "bytes 30-99/100").get(), 30)
        _ = life.stored(70)
        XCTAssertEqual(life.transferEnded(), .complete)
        XCTAssertEqual(life.received, 100)
    }

    func testAResumeAtTheWrongPlaceOrOfAnotherSizeIsRefused() {
        var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/png")
        _ = life.responseBegan(status: 200, contentType: "image/png", contentLength: 100, contentRange: nil)
        _ = life.stored(30)
        _ = life.transferEnded()
        XCTAssertThrowsError(try life.responseBegan(status: 206, contentType: "image/png", contentLength: 70,
                                                    contentRange: "bytes 30-99/120").get())
        XCTAssertTrue(life.isFinished)
    }

    func testAFullAnswerAfterPartialBytesRestartsFromZero() {
        var life = DownloadLifecycle(expectedSize: 10, expectedType: "image/jpeg")
        _ = life.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil)
        _ = life.stored(4)
        _ = life.transferEnded()
        // The origin ignored Range (or If-Range failed): the whole photo again, from byte 0.
        XCTAssertEqual(try life.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil).get(), 0)
        _ = life.stored(10)
        XCTAssertEqual(life.transferEnded(), .complete)
    }

    func testWrongTypeWrongLengthAndExtraBytesAreRefused() {
        var html = DownloadLifecycle(expectedSize: 10, expectedType: "image/jpeg")
        XCTAssertEqual(html.responseBegan(status: 200, contentType: "text/html", contentLength: 10, contentRange: nil),
                       .failure(.wrongContentType("text/html")))
        var longer = DownloadLifecycle(expectedSize: 10, expectedType: "image/jpeg")
        XCTAssertEqual(longer.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 11, contentRange: nil),
                       .failure(.sizeMismatch(expected: 10, received: 11)))
        var chunked = DownloadLifecycle(expectedSize: 10, expectedType: "image/jpeg")
        _ = chunked.responseBegan(status: 200, contentType: "image/jpeg", contentLength: nil, contentRange: nil)
        XCTAssertNoThrow(try chunked.stored(10).get())
        XCTAssertThrowsError(try chunked.stored(1).get())
        XCTAssertTrue(chunked.isFinished)
    }
}
