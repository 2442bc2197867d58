// The /events tree: node numbers of the new kinds, year and event listings, photos named as in /moments.
import Foundation
import PhotoCatalog
@testable import PhotoTree
import XCTest

final class EventTreeTests: XCTestCase {
    func testNewNodesRoundTripAndKeepPhotosOneInode() {
        let nodes: [Node] = [.events, .search, .eventYear(1), .eventYear(9999), .event(1), .event((1 << 56) - 1),
                             .searchResults(1), .searchResults(42)]
        for node in nodes {
            XCTAssertEqual(Node(inode: node.inode), node, "\(node)")
            XCTAssertTrue(node.isDirectory)
        }
        let all: [Node] = nodes + [.root, .regions, .moments, .recent, .albums, .region(1), .year(1), .album(1),
                                   .photographer(region: 1, photographer: 1), .photo(seq: 1)]
        XCTAssertEqual(Set(all.map(\.inode)).count, all.count, "every kind has its own numbers")
        // Out-of-range payloads are cut, never trap.
        _ = Node.event(-1).inode
        _ = Node.searchResults(Int64.min).inode
        _ = Node.eventYear(Int.max).inode
    }

    func testEventListingsNamePhotosAsInMoments() {
        let at = EventClusteringTests.at
        let photos = (1...4).map { seq in
            PhotoRecord(seq: Int64(seq), id: "\(1000 + seq)", title: seq == 4 ? "Dinner" : "Tram",
                        momentAt: at(2019, 6, 7, 10 + seq, 0, 0), momentYear: 2019, originalURL: "",
                        byteSize: 100, contentType: "image/jpeg")
        }
        let eventPhotos = photos.map { EventPhoto(seq: $0.seq, time: $0.momentAt, placeName: "Lisbon") }
        let events = EventClustering.cluster(eventPhotos, stored: [], now: 0).events
        XCTAssertEqual(events.map(\.name), ["2019-06-07 Lisbon"])
        guard let event = events.first else { return }

        let root = EventTreeBuilder.years(events)
        XCTAssertEqual(root.entries.map(\.name), ["2019"])
        XCTAssertEqual(root.entries.first?.node, .eventYear(2019))
        let year = EventTreeBuilder.events(inYear: 2019, events)
        XCTAssertEqual(year.entries.map(\.name), ["2019-06-07 Lisbon"])
        XCTAssertEqual(year.entry(named: "2019-06-07 Lisbon")?.node, .event(event.key))
        XCTAssertTrue(EventTreeBuilder.events(inYear: 2020, events).entries.isEmpty)

        let listing = EventTreeBuilder.photos(of: event, photos.reversed() + [photos[0]]) { _ in 3 }
        let moments = TreeBuilder.photos(photos, in: .year(2019), style: .moment) { _ in 3 }
        XCTAssertEqual(listing.entries.map(\.name), moments.entries.map(\.name))
        XCTAssertEqual(listing.entries.map(\.node), moments.entries.map(\.node), "one inode per photo across trees")
        XCTAssertEqual(listing.attributes.node, .event(event.key))
        XCTAssertEqual(ExtendedAttributeBuilder.event(event).value(named: ExtendedAttributeBuilder.Name.comment),
                       Array("2019-06-07 11:00 – 2019-06-07 14:00; Lisbon; 4 photos".utf8))
    }
}
