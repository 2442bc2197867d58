// IDListingDecision, every path: when the origin's photo count may stand in for the id listing.
import PhotoSources
import XCTest

final class IDListingDecisionTests: XCTestCase {
    func decide(_ mode: ImportReport.Mode = .changes, everyKeptPhotoListed: Bool = true, leftOut: Int = 0, origin: Int?,
                library: Int, stored: Int?) -> IDListingDecision {
        IDListingDecision.decide(mode: mode, everyKeptPhotoListed: everyKeptPhotoListed, recordsLeftOut: leftOut,
                                 originCount: origin, libraryCount: library, storedDifference: stored)
    }

    func testNoCountLists() {
        XCTAssertEqual(decide(origin: nil, library: 10, stored: 0), .list(.noCount))
        XCTAssertEqual(decide(.full, origin: nil, library: 10, stored: nil), .list(.noCount))
    }

    func testChangesListingWithTheStoredDifferenceSkips() {
        XCTAssertEqual(decide(origin: 10, library: 10, stored: 0), .skip(difference: 0))
        // Two images the import cannot use, counted by the origin since the last id listing: still two.
        XCTAssertEqual(decide(origin: 12, library: 10, stored: 2), .skip(difference: 2))
        // In a changes listing, library photos that were not listed are expected (they did not change).
        XCTAssertEqual(decide(everyKeptPhotoListed: false, origin: 12, library: 10, stored: 2), .skip(difference: 2))
    }

    func testAPurgeMovesTheDifference() {
        // One photo purged unseen: the origin counts one fewer, the library still holds it.
        XCTAssertEqual(decide(origin: 9, library: 10, stored: 0), .list(.countsDiffer))
        XCTAssertEqual(decide(origin: 11, library: 10, stored: 2), .list(.countsDiffer))
        // A photo added after the listing (the library lacks it): listed too, never a wrong skip.
        XCTAssertEqual(decide(origin: 11, library: 10, stored: 0), .list(.countsDiffer))
    }

    func testARecordLeftOutListsWhateverTheCounts() {
        // The bug this rule fixes: a photo purged while an image the import cannot use was added; the origin's
        // count is unchanged, and so is the difference. The left-out record in the listing is what shows it.
        XCTAssertEqual(decide(leftOut: 1, origin: 10, library: 10, stored: 0), .list(.recordsLeftOut))
        XCTAssertEqual(decide(.full, leftOut: 1, origin: 10, library: 10, stored: 0), .list(.recordsLeftOut))
    }

    func testChangesListingWithoutStoredDifferenceLists() {
        // A library from before the difference was kept, or whose last id listing was not whole.
        XCTAssertEqual(decide(origin: 10, library: 10, stored: nil), .list(.noStoredDifference))
    }

    func testFullListing() {
        // Every library photo listed and nothing left out: the listing saw all the origin counts, so the
        // difference must be 0 whatever was stored before (a stale one is replaced).
        XCTAssertEqual(decide(.full, origin: 10, library: 10, stored: nil), .skip(difference: 0))
        XCTAssertEqual(decide(.full, origin: 10, library: 10, stored: 3), .skip(difference: 0))
        XCTAssertEqual(decide(.full, origin: 12, library: 10, stored: 2), .list(.countsDiffer), "a photo the listing missed")
        XCTAssertEqual(decide(.full, everyKeptPhotoListed: false, origin: 10, library: 10, stored: 0), .list(.notEveryPhotoListed))
    }

    func testDifferenceToStore() {
        XCTAssertEqual(IDListingDecision.differenceToStore(originCount: 12, listedOwnPhotos: 12, libraryCountAfter: 10), 2)
        XCTAssertEqual(IDListingDecision.differenceToStore(originCount: 10, listedOwnPhotos: 10, libraryCountAfter: 10), 0)
        // The listing and the count disagree (a change between the two requests): nothing trusted.
        XCTAssertNil(IDListingDecision.differenceToStore(originCount: 12, listedOwnPhotos: 11, libraryCountAfter: 10))
        XCTAssertNil(IDListingDecision.differenceToStore(originCount: nil, listedOwnPhotos: 11, libraryCountAfter: 10))
    }
}
