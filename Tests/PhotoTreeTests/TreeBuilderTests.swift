// Listings built from catalog rows: inode numbers, attributes, moments names, lookup by exact bytes.
import PhotoCatalog
import PhotoTree
import XCTest

final class TreeBuilderTests: XCTestCase {
    func testInodeNumbersRoundTripAndDoNotCollide() {
        let nodes: [Node] = [.root, .regions, .moments, .recent, .region(7), .photographer(region: 7, photographer: 9),
                             .year(2021), .photo(seq: 1), .photo(seq: 7), .region(1), .year(1)]
        for node in nodes { XCTAssertEqual(Node(inode: node.inode), node) }
        XCTAssertEqual(Set(nodes.map(\.inode)).count, nodes.count)
        XCTAssertEqual(Node.root.inode, 1)
        XCTAssertNil(Node(inode: 99))
    }

    func testMomentNamesSortChronologically() {
        // 2019-05-04 12:33:10 UTC
        XCTAssertEqual(TreeBuilder.momentPrefix(1_556_973_190), "2019-05-04 12.33.10")
        let photos = [photo(seq: 1, title: "Late", at: 1_556_973_190), photo(seq: 2, title: "Early", at: 1_556_900_000)]
        let listing = TreeBuilder.photos(photos.sorted { $0.momentAt < $1.momentAt }, in: .year(2019), style: .moment) { _ in 2 }
        XCTAssertEqual(listing.entries.map(\.name), ["2019-05-03 16.13.20 Early.jpg", "2019-05-04 12.33.10 Late.jpg"])
        XCTAssertEqual(listing.attributes.mtime, 1_556_973_190)
    }

    /// Names go to photos in seq order whatever order they are listed in, and a seq given twice is listed once,
    /// where it first appears: the same names in an event (time order) as in its photographer's folder (seq order).
    func testNamesFollowSeqOrderAndASeqGivenTwiceIsListedOnce() {
        let first = photo(seq: 3, title: "Fog", at: 300), second = photo(seq: 9, title: "Fog", at: 100)
        let bySeq = TreeBuilder.photos([first, second], in: .photographer(region: 1, photographer: 1), style: .title) { _ in 3 }
        let byTime = TreeBuilder.photos([second, first, second], in: .event(3), style: .title) { _ in 3 }
        XCTAssertEqual(bySeq.entries.map(\.name), ["Fog.jpg", "Fog (id9).jpg"])
        XCTAssertEqual(byTime.entries.map(\.name), ["Fog (id9).jpg", "Fog.jpg"])
        XCTAssertEqual(byTime.entries.map(\.attributes.inode), [Node.photo(seq: 9).inode, Node.photo(seq: 3).inode])
    }

    func testPhotoAttributesAreExactAndReadOnly() {
        let listing = TreeBuilder.photos([photo(seq: 5, title: "A", at: 100, size: 12345)], in: .year(1970), style: .title) { _ in 2 }
        let entry = listing.entries[0]
        XCTAssertEqual(entry.attributes.size, 12345)
        XCTAssertEqual(entry.attributes.mtime, 100)
        XCTAssertEqual(entry.attributes.permissions, 0o444)
        XCTAssertEqual(entry.attributes.inode, Node.photo(seq: 5).inode)
        XCTAssertEqual(listing.attributes.permissions, 0o555)
    }

    func testLookupMatchesExactBytesOnly() {
        let composed = "Caf\u{E9}"          // é as one scalar (NFC)
        let decomposed = "Cafe\u{301}"      // e + combining accent (NFD): equal as Swift Strings
        let listing = TreeBuilder.photos([photo(seq: 1, title: composed, at: 0)], in: .recent, style: .title) { _ in 3 }
        XCTAssertNotNil(listing.entry(named: composed + ".jpg"))
        XCTAssertNil(listing.entry(named: decomposed + ".jpg"), "a name ls never showed must not resolve")
    }

    func testRegionsWithTheSameSanitisedNameStayApart() {
        let regions = [RegionRecord(id: 1, name: "A/B", photoCount: 1, photographerCount: 1, newestMomentAt: 5),
                       RegionRecord(id: 2, name: "A／B", photoCount: 1, photographerCount: 2, newestMomentAt: 9)]
        let listing = TreeBuilder.regions(regions, newest: 9)
        XCTAssertEqual(Set(listing.entries.map(\.name)), ["A／B", "A／B (2)"])
        XCTAssertEqual(listing.attributes.linkCount, 4)
    }

    private func photo(seq: Int64, title: String, at: Int64, size: Int64 = 10) -> PhotoRecord {
        PhotoRecord(seq: seq, id: "id\(seq)", title: title, momentAt: at, originalURL: "http://x/\(seq).jpg",
                    byteSize: size, contentType: "image/jpeg")
    }
}
