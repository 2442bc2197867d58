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
        _ = life.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: "\"a\"")
        _ = life.stored(4)
        _ = life.transferEnded()
        // The origin ignored Range: the whole photo again, the same version (ETag), from byte 0.
        XCTAssertEqual(try life.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil,
                                              etag: "\"a\"").get(), 0)
        _ = life.stored(10)
        XCTAssertEqual(life.transferEnded(), .complete)
    }

    // MARK: Versions (ETag)

    /// A lifecycle that stored `received` of 10 bytes from a first 200 carrying `firstETag`, and now waits.
    func interrupted(catalogETag: String?, firstETag: String?, received: Int = 4) -> DownloadLifecycle {
        var life = DownloadLifecycle(expectedSize: 10, expectedType: "image/jpeg", expectedETag: catalogETag)
        XCTAssertNoThrow(try life.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10,
                                                contentRange: nil, etag: firstETag).get())
        if received > 0 { XCTAssertNoThrow(try life.stored(received).get()) }
        XCTAssertEqual(life.transferEnded(), .waiting)
        return life
    }

    func testAnAnswerOfAnotherVersionThanTheCatalogsIsRefused() {
        var life = DownloadLifecycle(expectedSize: 10, expectedType: "image/jpeg", expectedETag: "\"v1\"")
        XCTAssertEqual(life.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: "\"v2\""),
                       .failure(.changedAtOrigin(expected: "\"v1\"", received: "\"v2\"")))
        XCTAssertEqual(life.phase, .failed(.changedAtOrigin(expected: "\"v1\"", received: "\"v2\"")))
        let description = "\(ContentError(kind: .changedAtOrigin(expected: "\"v1\"", received: "\"v2\""), photoID: "7", url: "http://h/p.jpg"))"
        XCTAssertTrue(description.contains("another version of the photo"), description)
    }

    func testTheCatalogsETagMatchesWeaklyAndAnAnswerWithoutOneIsAccepted() {
        var weak = DownloadLifecycle(expectedSize: 10, expectedType: "image/jpeg", expectedETag: "\"v1\"")
        XCTAssertEqual(weak.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil,
                                          etag: " W/\"v1\" "), .success(0))
        // A proxy that drops ETags: nothing to compare, size and type still checked.
        var none = DownloadLifecycle(expectedSize: 10, expectedType: "image/jpeg", expectedETag: "W/\"v1\"")
        XCTAssertEqual(none.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: nil),
                       .success(0))
        XCTAssertTrue(DownloadLifecycle.weaklyMatch("W/\"x\"", "\"x\""))
        XCTAssertFalse(DownloadLifecycle.weaklyMatch("\"x\"", "\"X\""))
        XCTAssertFalse(DownloadLifecycle.weaklyMatch("W/\"x\"", "\"x\"y"))
    }

    func testAResumeOfAnotherVersionThanTheFirstAnswerIsRefused() {
        var life = interrupted(catalogETag: nil, firstETag: "\"a\"")
        XCTAssertEqual(life.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 6,
                                          contentRange: "bytes 4-9/10", etag: "\"b\""),
                       .failure(.changedAtOrigin(expected: "\"a\"", received: "\"b\"")))
        XCTAssertTrue(life.isFinished)
        // A resume without an ETag after a first answer that had one cannot be proved the same version.
        var untagged = interrupted(catalogETag: nil, firstETag: "\"a\"")
        XCTAssertEqual(untagged.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 6,
                                              contentRange: "bytes 4-9/10", etag: nil),
                       .failure(.changedAtOrigin(expected: "\"a\"", received: "none")))
    }

    func testAResumeOfTheFirstAnswersVersionContinues() {
        var life = interrupted(catalogETag: nil, firstETag: "\"a\"")
        XCTAssertEqual(life.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 6,
                                          contentRange: "bytes 4-9/10", etag: "W/\"a\""), .success(4))
        _ = life.stored(6)
        XCTAssertEqual(life.transferEnded(), .complete)
        // Neither answer tagged: nothing to compare, the exact Content-Range is what is checked.
        var untagged = interrupted(catalogETag: nil, firstETag: nil)
        XCTAssertEqual(untagged.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 6,
                                              contentRange: "bytes 4-9/10", etag: nil), .success(4))
    }

    func testAWholeAnswerOverServedBytesMustBeTheFirstAnswersVersion() {
        // If-Range did not match: the origin sends the new version whole. Readers hold 4 old bytes: refuse.
        var changed = interrupted(catalogETag: nil, firstETag: "\"a\"")
        XCTAssertEqual(changed.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: "\"b\""),
                       .failure(.changedAtOrigin(expected: "\"a\"", received: "\"b\"")))
        // No ETag on either side: the bytes cannot be proved the same, so the download fails.
        var unprovable = interrupted(catalogETag: nil, firstETag: nil)
        XCTAssertEqual(unprovable.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: nil),
                       .failure(.changedAtOrigin(expected: "none", received: "none")))
        var untaggedRestart = interrupted(catalogETag: nil, firstETag: "\"a\"")
        XCTAssertEqual(untaggedRestart.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: nil),
                       .failure(.changedAtOrigin(expected: "\"a\"", received: "none")))
        // Nothing stored yet (the first answer broke before its first byte): any whole answer may start over
        // when neither is tagged.
        var empty = interrupted(catalogETag: nil, firstETag: nil, received: 0)
        XCTAssertEqual(empty.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: nil),
                       .success(0))
        var emptyTagged = interrupted(catalogETag: nil, firstETag: "\"a\"", received: 0)
        XCTAssertEqual(emptyTagged.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: nil),
                       .success(0))
        // ...but never a known other version, even with nothing stored.
        var emptyChanged = interrupted(catalogETag: nil, firstETag: "\"a\"", received: 0)
        XCTAssertEqual(emptyChanged.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: "\"b\""),
                       .failure(.changedAtOrigin(expected: "\"a\"", received: "\"b\"")))
        // A 200 carrying a tag after an untagged first answer over stored bytes: still unprovable.
        var tagLater = interrupted(catalogETag: nil, firstETag: nil)
        XCTAssertEqual(tagLater.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 10, contentRange: nil, etag: "\"a\""),
                       .failure(.changedAtOrigin(expected: "none", received: "\"a\"")))
    }

    func testIfRangeCarriesTheCatalogsETagElseTheFirstAnswersStrongOne() {
        XCTAssertNil(interrupted(catalogETag: nil, firstETag: "\"a\"", received: 0).ifRangeHeader, "no Range, no If-Range")
        XCTAssertEqual(interrupted(catalogETag: "\"c\"", firstETag: "\"c\"").ifRangeHeader, "If-Range: \"c\"")
        XCTAssertEqual(interrupted(catalogETag: nil, firstETag: "\"a\"").ifRangeHeader, "If-Range: \"a\"")
        XCTAssertEqual(interrupted(catalogETag: "W/\"a\"", firstETag: "\"a\"").ifRangeHeader, "If-Range: \"a\"")
        // RFC 9110 forbids a weak tag in If-Range; the 206's ETag is checked instead.
        XCTAssertNil(interrupted(catalogETag: nil, firstETag: "W/\"a\"").ifRangeHeader)
        XCTAssertNil(interrupted(catalogETag: nil, firstETag: nil).ifRangeHeader)
    }

    func testHostileETagsAreCutOrIgnored() {
        // A line break would forge a header when the tag goes back out in If-Range: treated as no tag.
        var forged = interrupted(catalogETag: "\"a\"\r\nX-Evil: 1", firstETag: "\"a\"")
        XCTAssertEqual(forged.ifRangeHeader, "If-Range: \"a\"")
        XCTAssertEqual(forged.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 6,
                                            contentRange: "bytes 4-9/10", etag: "\"a\""), .success(4))
        let long = "\"" + String(repeating: "x", count: 100_000) + "\""
        let cut = interrupted(catalogETag: nil, firstETag: long)
        XCTAssertEqual(cut.firstAnswerETag?.utf8.count, 256)
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
    // MARK: Ranges

    func testARangeAnswerEndsWithoutCompletingAndTheNextContinuesIt() {
        var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg", expectedETag: "\"v\"")
        XCTAssertEqual(life.rangeHeader(to: 30), "Range: bytes=0-29")
        XCTAssertNil(life.ifRangeHeader, "a first range needs no If-Range: the ETag itself is checked")
        XCTAssertFalse(life.isVerified)
        XCTAssertEqual(life.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 30,
                                          contentRange: "bytes 0-29/100", etag: "\"v\""), .success(0))
        XCTAssertTrue(life.isVerified)
        XCTAssertEqual(life.answerEnd, 30)
        XCTAssertFalse(life.answerDelivered)
        _ = life.stored(30)
        XCTAssertTrue(life.answerDelivered)
        XCTAssertEqual(life.transferEnded(), .waiting, "a range delivered is not the photo")
        XCTAssertEqual(life.rangeHeader(to: 60), "Range: bytes=30-59")
        XCTAssertEqual(life.rangeHeader(to: 100), "Range: bytes=30-")
        XCTAssertEqual(life.ifRangeHeader, "If-Range: \"v\"")
        // The origin may send less than was asked: its Content-Range says where this answer ends.
        XCTAssertEqual(life.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 20,
                                          contentRange: "bytes 30-49/100", etag: "\"v\""), .success(30))
        XCTAssertEqual(life.answerEnd, 50)
        _ = life.stored(20)
        XCTAssertEqual(life.transferEnded(), .waiting)
        XCTAssertEqual(life.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 50,
                                          contentRange: "bytes 50-99/100", etag: "\"v\""), .success(50))
        _ = life.stored(50)
        XCTAssertEqual(life.transferEnded(), .complete)
    }

    func testRangeHeadersNeverLeaveThePhoto() {
        var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg")
        XCTAssertNil(life.rangeHeader(to: 100), "the whole photo: no Range")
        XCTAssertNil(life.rangeHeader(to: 500))
        XCTAssertNil(life.rangeHeader(to: 0), "never a header asking for nothing: the whole photo")
        XCTAssertNil(life.rangeHeader(to: -5))
        _ = life.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 100, contentRange: nil)
        _ = life.stored(40)
        XCTAssertEqual(life.rangeHeader(to: 10), "Range: bytes=40-", "an end before the stored bytes asks for the rest")
        XCTAssertEqual(life.rangeHeader(to: .max), "Range: bytes=40-")
    }

    func testAnOriginIgnoringRangeSendsTheWholePhotoFromZero() {
        var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg")
        XCTAssertEqual(life.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 100, contentRange: nil), .success(0))
        XCTAssertEqual(life.answerEnd, 100, "a 200 runs to the end whatever was asked")
    }

    func testABodyOutrunningItsContentRangeIsRefused() {
        var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg")
        _ = life.responseBegan(status: 206, contentType: "image/jpeg", contentLength: nil, contentRange: "bytes 0-29/100")
        XCTAssertNoThrow(try life.stored(30).get())
        XCTAssertThrowsError(try life.stored(1).get())
        XCTAssertTrue(life.isFinished)
    }

    func testHostileContentRangesAreRefused() {
        for header in ["bytes 0-100/100", "bytes 0-99999999999999999999/100", "bytes 10-5/100", "bytes -1-5/100",
                       "bytes 0-/100", "bytes 0-5", "bytes 0-5/100/7", "bytes */100", "items 0-5/100", "bytes 0-5/-1",
                       "bytes 0-5-7/100", ""] {
            var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg")
            XCTAssertThrowsError(try life.responseBegan(status: 206, contentType: "image/jpeg", contentLength: nil,
                                                        contentRange: header).get(), header)
        }
        var missing = DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg")
        XCTAssertThrowsError(try missing.responseBegan(status: 206, contentType: "image/jpeg", contentLength: nil,
                                                       contentRange: nil).get())
    }

    func testAPrefixKeptFromAnEarlierRunResumesAsItsFirstAnswersVersion() {
        var life = DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg", expectedETag: nil,
                                     resumingAt: 40, answerETag: "\"a\"")
        XCTAssertTrue(life.isVerified, "an opener need not wait for the origin")
        XCTAssertEqual(life.received, 40)
        XCTAssertEqual(life.phase, .waiting)
        XCTAssertTrue(life.answerDelivered)
        XCTAssertEqual(life.rangeHeader(to: 70), "Range: bytes=40-69")
        XCTAssertEqual(life.ifRangeHeader, "If-Range: \"a\"")
        // The origin changed since: If-Range made it send the new version whole, which is refused.
        var changed = life
        XCTAssertEqual(changed.responseBegan(status: 200, contentType: "image/jpeg", contentLength: 100,
                                             contentRange: nil, etag: "\"b\""),
                       .failure(.changedAtOrigin(expected: "\"a\"", received: "\"b\"")))
        XCTAssertEqual(life.responseBegan(status: 206, contentType: "image/jpeg", contentLength: 30,
                                          contentRange: "bytes 40-69/100", etag: "\"a\""), .success(40))
        // Absurd or empty prefixes clamp: nothing stored is nothing verified.
        XCTAssertFalse(DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg", resumingAt: 0, answerETag: "\"a\"").isVerified)
        XCTAssertEqual(DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg", resumingAt: -7, answerETag: nil).received, 0)
        XCTAssertEqual(DownloadLifecycle(expectedSize: 100, expectedType: "image/jpeg", resumingAt: .max, answerETag: nil).received, 100)
    }
}
