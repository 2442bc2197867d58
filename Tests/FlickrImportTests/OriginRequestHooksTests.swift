// The loopback origin's request hooks: a status answer for one page of one method however often it is asked
// (and only for it), and a hold that keeps a request unanswered until the test releases it.
import FlickrOrigin
import Foundation
import PhotoContent
import XCTest

final class OriginRequestHooksTests: XCTestCase {
    var fixture: AccountFixture!

    override func setUpWithError() throws { fixture = try AccountFixture() }
    override func tearDown() { fixture.stop() }

    /// The owner's public photos, unsigned (the app's key), one photo a page.
    func publicPage(_ page: Int, extras: Bool = true) -> String {
        "\(fixture.origin.endpoint)?method=flickr.people.getPublicPhotos&api_key=\(AccountFixture.key)&format=json"
            + "&nojsoncallback=1&user_id=10000001@N01&per_page=1&page=\(page)" + (extras ? "&extras=media,url_o" : "&extras=media")
    }

    func status(_ url: String) -> Int {
        (try? HTTPClient().getAnswer(url).status) ?? -1
    }

    func testAStatusAnswerHitsOnlyTheMatchingPageUntilCleared() throws {
        fixture.origin.answer(.rest("flickr.people.getPublicPhotos", page: 3, withExtras: true), status: 500)
        XCTAssertEqual(status(publicPage(3)), 500)
        XCTAssertEqual(status(publicPage(3)), 500, "every time it is asked")
        XCTAssertEqual(status(publicPage(2)), 200)
        XCTAssertEqual(status(publicPage(3, extras: false)), 200, "an id listing of the same page is another call")
        XCTAssertEqual(fixture.origin.restCallLog.filter { $0.parameters["page"] == "3" }.count, 3, "refused calls are logged")
        fixture.origin.clearRequestHooks()
        XCTAssertEqual(status(publicPage(3)), 200)
    }

    func testAHeldRequestIsAnsweredOnlyAfterRelease() throws {
        let photo = try XCTUnwrap(fixture.ownerPhotos { $0.isPublic }.first)
        let path = try XCTUnwrap(fixture.origin.imagePath(photoID: photo.id))
        let held = fixture.origin.hold(.request("HEAD", path: path))
        XCTAssertFalse(held.waitForArrival(timeout: 0.05), "nothing arrived yet")
        let answered = DispatchSemaphore(value: 0)
        let url = fixture.origin.baseURL + path
        final class Box: @unchecked Sendable { var status = -1 }
        let box = Box()
        Thread.detachNewThread {
            box.status = (try? HTTPClient().head(url).status) ?? -2
            answered.signal()
        }
        XCTAssertTrue(held.waitForArrival(timeout: 10))
        XCTAssertEqual(held.arrivals, 1)
        XCTAssertEqual(answered.wait(timeout: .now()), .timedOut, "held: no answer yet")
        XCTAssertEqual(status(fixture.origin.baseURL + path), 200, "a GET of the same path is not held")
        held.release()
        XCTAssertEqual(answered.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.status, 200)
        XCTAssertEqual(fixture.origin.requestCount(method: "HEAD", path: path), 1)
    }
}
