// /search: remembered queries (at most 20, most recent first, forgotten by rmdir) and results named as in /moments.
import Foundation
import PhotoCatalog
@testable import PhotoTree
import XCTest

final class SearchTreeTests: XCTestCase {
    func testQueriesAreRememberedNumberedAndForgotten() throws {
        var searches = RecentSearches()
        let harbour = try XCTUnwrap(SearchQuery(name: "harbour 2019"))
        let first = searches.remember(harbour)
        XCTAssertEqual(first.node, .searchResults(1))
        XCTAssertNil(first.forgotten)
        XCTAssertEqual(searches.remember(harbour).node, .searchResults(1), "the same name is the same directory")
        XCTAssertEqual(searches.query(number: 1), harbour)
        for index in 0..<19 { _ = searches.remember(try XCTUnwrap(SearchQuery(name: "q\(index)"))) }
        XCTAssertEqual(searches.count, 20)
        XCTAssertEqual(searches.listing(newest: 0).entries.first?.name, "q18")
        // Harbour was used least recently: the 21st query pushes it out.
        let pushed = searches.remember(try XCTUnwrap(SearchQuery(name: "belem")))
        XCTAssertEqual(pushed.forgotten, .searchResults(1))
        XCTAssertNil(searches.node(named: "harbour 2019"), "not listed any more")
        XCTAssertEqual(searches.query(number: 1), harbour, "a name the kernel still holds lists its results")
        XCTAssertEqual(searches.count, 20)
        XCTAssertEqual(searches.forget(named: "belem"), .searchResults(21))
        XCTAssertNil(searches.forget(named: "belem"))
        XCTAssertNil(searches.query(number: 21), "rmdir forgets at once")
        XCTAssertEqual(searches.remember(harbour).node, .searchResults(22), "a number is never given twice")
        let listing = searches.listing(newest: 5)
        XCTAssertEqual(listing.entries.count, 20)
        XCTAssertEqual(listing.attributes.node, .search)
        XCTAssertEqual(listing.attributes.permissions, 0o755, "rmdir of a query needs /search's write bit for its owner")
        XCTAssertEqual(listing.entry(named: "harbour 2019")?.attributes.permissions, 0o555)
        XCTAssertEqual(listing.entry(named: "harbour 2019")?.node, .searchResults(22))
        XCTAssertEqual(searches.node(named: "q3"), listing.entry(named: "q3")?.node)
    }

    func testAQueryTypedOneCharacterAtATimeKeepsOnlyItsLastForm() throws {
        var searches = RecentSearches()
        _ = searches.remember(try XCTUnwrap(SearchQuery(name: "lisbon")))
        var previous: Node?
        for typed in ["h", "ha", "harb", "harbour", "harbour 2019"] {
            let remembered = searches.remember(try XCTUnwrap(SearchQuery(name: typed)))
            XCTAssertEqual(remembered.forgotten, previous, "\(typed) replaces the query it extends")
            previous = remembered.node
        }
        XCTAssertEqual(Set(searches.listing(newest: 0).entries.map(\.name)), ["lisbon", "harbour 2019"])
        // Going back to a shorter query is a new one; so is one that does not extend the most recent.
        XCTAssertNil(searches.remember(try XCTUnwrap(SearchQuery(name: "harbour"))).forgotten)
        XCTAssertNil(searches.remember(try XCTUnwrap(SearchQuery(name: "lisbon"))).forgotten)
        XCTAssertEqual(searches.count, 3)
    }

    func testNamesAreComparedAsBytes() throws {
        var searches = RecentSearches()
        let composed = try XCTUnwrap(SearchQuery(name: "bel\u{E9}m"))
        let first = searches.remember(composed).node
        _ = searches.remember(try XCTUnwrap(SearchQuery(name: "porto")))
        let nfd = try XCTUnwrap(SearchQuery(name: "bele\u{301}m"))
        XCTAssertNotEqual(searches.remember(nfd).node, first, "another spelling in bytes is another directory")
        XCTAssertEqual(searches.node(named: "bel\u{E9}m"), first)
        XCTAssertNotNil(searches.forget(named: "bele\u{301}m"))
        XCTAssertEqual(searches.node(named: "bel\u{E9}m"), first)
    }

    func testResultsAreBestFirstAndNamedAsInMoments() {
        let photos = [3, 1, 2].map { seq in
            PhotoRecord(seq: Int64(seq), id: "\(seq)", title: "Harbour", momentAt: 1_560_000_000 + Int64(seq),
                        momentYear: 2019, originalURL: "", byteSize: 1, contentType: "image/jpeg")
        }
        let listing = SearchTreeBuilder.results(number: 7, photos) { _ in 2 }
        XCTAssertEqual(listing.entries.map(\.node), [.photo(seq: 3), .photo(seq: 1), .photo(seq: 2)])
        XCTAssertEqual(listing.entries.map(\.name), ["2019-06-08 13.20.03 Harbour.jpg", "2019-06-08 13.20.01 Harbour.jpg",
                                                     "2019-06-08 13.20.02 Harbour.jpg"])
        XCTAssertEqual(listing.attributes.node, .searchResults(7))
    }
}
