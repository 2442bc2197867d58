// Which extended attributes a photo or directory carries, their exact bytes and order, and what hostile
// catalog values (separators, non-ASCII, huge text, odd numbers) become.
import PhotoCatalog
@testable import PhotoTree
import XCTest

final class ExtendedAttributeBuilderTests: XCTestCase {
    typealias Name = ExtendedAttributeBuilder.Name

    private func text(_ list: ExtendedAttributeList) -> [(String, String)] {
        list.attributes.map { ($0.name, String(decoding: $0.value, as: UTF8.self)) }
    }

    private var full: PhotoDetails {
        var details = PhotoDetails(seq: 7, id: "52000768143", title: "Fog", description: "Fog over the bay",
                                   dateTaken: "2019-05-04 12:33:10", latitude: 37.7749, longitude: -122.4194, tags: ["bay", "fog"],
                                   ownerID: "12345678@N01", photographerName: "Ansel Adams", regionName: "California",
                                   placeName: "San Francisco", albumTitles: ["Harbour walks", "Family"], sourceKinds: ["flickr"])
        details.personNames = ["Ada", "Line\nbreak"]
        details.isFavorite = true
        return details
    }

    func testAPhotoCarriesEverythingKnownInListingOrder() {
        let list = ExtendedAttributeBuilder.photo(full)
        let expected: [(String, String)] = [
            (Name.originURL, "https://www.flickr.com/photos/12345678@N01/52000768143/"),
            (Name.comment, "Fog over the bay"),
            (Name.tags, "bay,fog"),
            (Name.creator, "Ansel Adams"),
            (Name.id, "52000768143"),
            (Name.taken, "2019-05-04T12:33:10"),
            (Name.region, "California"),
            (Name.place, "San Francisco"),
            (Name.latitude, "37.7749"),
            (Name.longitude, "-122.4194"),
            (Name.albums, "Harbour walks\nFamily"),
            (Name.people, "Ada\nLine break"),
            (Name.favorite, "1"),
        ]
        XCTAssertEqual(text(list).map(\.0), expected.map(\.0))
        XCTAssertEqual(text(list).map(\.1), expected.map(\.1))
        XCTAssertEqual(list.attributes.map(\.name), ExtendedAttributeBuilder.photoNames, "every possible name, in order")
        XCTAssertEqual(list.value(named: Name.creator), Array("Ansel Adams".utf8))
        XCTAssertNil(list.value(named: "user.xdg.publisher"))
        let listBytes = list.listBytes
        XCTAssertEqual(listBytes.last, 0)
        XCTAssertEqual(listBytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }, expected.map(\.0))
    }

    func testOnlyWhatIsKnownIsPresent() {
        let bare = ExtendedAttributeBuilder.photo(PhotoDetails(seq: 1, id: "1"))
        XCTAssertEqual(text(bare).map(\.0), [Name.id], "no owner: no origin URL; empty texts and lists: nothing")
        var details = full
        details.description = ""
        details.tags = []
        details.albumTitles = []
        details.personNames = []
        details.isFavorite = false
        details.dateTaken = nil
        details.latitude = nil
        details.placeName = nil
        XCTAssertEqual(text(ExtendedAttributeBuilder.photo(details)).map(\.0),
                       [Name.originURL, Name.creator, Name.id, Name.region, Name.longitude])
    }

    func testTheOriginURLComesOnlyFromAFlickrLibraryAndURLSafeIds() {
        var details = full
        details.sourceKinds = []
        XCTAssertNotNil(ExtendedAttributeBuilder.originURL(details), "a library that records no source: Flickr, as always")
        details.sourceKinds = ["flickr", "smugmug"]
        XCTAssertNil(ExtendedAttributeBuilder.originURL(details), "which source a photo came from is unknown")
        details.sourceKinds = ["flickr", "folder"]
        XCTAssertNotNil(ExtendedAttributeBuilder.originURL(details), "a folder's photos have file:// URLs: this one is Flickr's")
        details.originalURL = "file:///home/me/Pictures/a%20b.jpg"
        XCTAssertEqual(ExtendedAttributeBuilder.originURL(details), "file:///home/me/Pictures/a%20b.jpg", "a folder's photo: its file")
        details.originalURL = "file:///home/me/a b\n.jpg"
        XCTAssertNil(ExtendedAttributeBuilder.originURL(details), "unescaped: not what an import writes")
        details.originalURL = nil
        details.sourceKinds = ["flickr"]
        details.ownerID = "a%2Fb"
        XCTAssertEqual(ExtendedAttributeBuilder.originURL(details), "https://www.flickr.com/photos/a%2Fb/52000768143/",
                       "an import percent-encodes owners")
        for hostile in ["a/b", "x?y=1", "", "évé", "a b", String(repeating: "1", count: 65)] {
            details.ownerID = hostile
            XCTAssertNil(ExtendedAttributeBuilder.originURL(details), hostile)
            details.ownerID = "1@N01"
            details.id = hostile
            XCTAssertNil(ExtendedAttributeBuilder.originURL(details), hostile)
            details.id = "5"
        }
        details.id = "5%2F"
        XCTAssertNil(ExtendedAttributeBuilder.originURL(details), "photo ids are never encoded")
    }

    func testTakenIsISO8601LocalTimeOrAbsent() {
        XCTAssertEqual(ExtendedAttributeBuilder.isoDateTaken("2019-05-04 12:33:10"), "2019-05-04T12:33:10")
        XCTAssertEqual(ExtendedAttributeBuilder.isoDateTaken("19-5-4 1:2:3"), "0019-05-04T01:02:03")
        for bad in ["", "2019-05-04", "2019-05-04T12:33:10", "2019-13-04 12:33:10", "2019-05-04 24:00:00",
                    "0000-00-00 00:00:00", "99999-05-04 12:33:10", "2019-05-04 12:33:1x", "２０１９-05-04 12:33:10",
                    "2019-05-04  12:33:10", "-2019-05-04 12:33"] {
            XCTAssertNil(ExtendedAttributeBuilder.isoDateTaken(bad), bad)
        }
    }

    func testCoordinatesArePlainDecimalsInRange() {
        let cases: [(Double, String?)] = [
            (37.7749, "37.7749"), (-37.7749, "-37.7749"), (0, "0"), (-0.0, "0"), (90, "90"), (-90, "-90"),
            (0.00001, "0.00001"), (1e-9, "0"), (-1e-9, "0"), (12.3456789, "12.345679"), (45.9999996, "46"),
            (90.0000001, nil), (-91, nil), (.nan, nil), (.infinity, nil), (-.infinity, nil),
        ]
        for (degrees, expected) in cases {
            XCTAssertEqual(ExtendedAttributeBuilder.coordinate(degrees, limit: 90), expected, "\(degrees)")
        }
        XCTAssertEqual(ExtendedAttributeBuilder.coordinate(-122.4194, limit: 180), "-122.4194")
        XCTAssertEqual(ExtendedAttributeBuilder.coordinate(-180, limit: 180), "-180")
        XCTAssertNil(ExtendedAttributeBuilder.coordinate(180.5, limit: 180))
        XCTAssertNil(ExtendedAttributeBuilder.coordinate(.greatestFiniteMagnitude, limit: 180))
    }

    func testSeparatorsInsideListItemsBecomeSpaces() {
        var details = full
        details.tags = ["a,b", "c", ","]
        details.albumTitles = ["Line\nbreak", "Plain"]
        let list = ExtendedAttributeBuilder.photo(details)
        XCTAssertEqual(list.value(named: Name.tags), Array("a b,c, ".utf8))
        XCTAssertEqual(list.value(named: Name.albums), Array("Line break\nPlain".utf8))
    }

    func testHostileTextIsKeptByteForByteUpToTheCap() {
        var details = full
        details.description = "Zeile 1\nZeile 2\t\u{1B}[31m日本の夏 🌅\r\n"
        details.photographerName = "李小龍"
        let list = ExtendedAttributeBuilder.photo(details)
        XCTAssertEqual(list.value(named: Name.comment), Array(details.description.utf8))
        XCTAssertEqual(list.value(named: Name.creator), Array("李小龍".utf8))
    }

    func testLongValuesAreCutAtXATTR_SIZE_MAXOnACharacterBoundary() {
        let limit = ExtendedAttributeBuilder.valueLimit
        XCTAssertEqual(limit, 65_536)
        XCTAssertEqual(ExtendedAttributeBuilder.capped(String(repeating: "a", count: limit)).count, limit, "exactly fits")
        XCTAssertEqual(ExtendedAttributeBuilder.capped(String(repeating: "a", count: limit + 1)).count, limit)
        // "é" is 2 bytes, "日" 3, "🌅" 4: for each alignment the cut lands before the character it would split.
        for prefix in 0..<4 {
            for character in ["é", "日", "🌅"] {
                let text = String(repeating: "a", count: prefix) + String(repeating: character, count: limit)
                let cut = ExtendedAttributeBuilder.capped(text)
                XCTAssertLessThanOrEqual(cut.count, limit)
                XCTAssertGreaterThan(cut.count, limit - character.utf8.count)
                XCTAssertNotNil(String(validating: cut, as: UTF8.self), "valid UTF-8 after the cut")
            }
        }
        var details = full
        details.description = String(repeating: "日", count: 30_000)
        XCTAssertEqual(ExtendedAttributeBuilder.photo(details).value(named: Name.comment)?.count, 65_535)
    }

    func testDirectoriesCarryACommentWhereItMeansSomething() {
        let region = ExtendedAttributeBuilder.region(RegionDetails(id: 1, name: "California",
                                                                   placeNames: ["Los Angeles", "San Francisco"]))
        XCTAssertEqual(text(region).map(\.0), [Name.comment])
        XCTAssertEqual(text(region).map(\.1), ["Los Angeles, San Francisco"])
        XCTAssertEqual(ExtendedAttributeBuilder.region(RegionDetails(id: 2, name: "Unknown Region", placeNames: [])), .empty)
        XCTAssertEqual(text(ExtendedAttributeBuilder.album(description: "Mornings\nby the water")).map(\.1),
                       ["Mornings\nby the water"])
        XCTAssertEqual(ExtendedAttributeBuilder.album(description: ""), .empty)
        XCTAssertEqual(ExtendedAttributeList.empty.listBytes, [])
    }

    func testWhichNodesCanCarryWhichNames() {
        XCTAssertEqual(ExtendedAttributeBuilder.possibleNames(of: .photo(seq: 1)), ExtendedAttributeBuilder.photoNames)
        XCTAssertEqual(ExtendedAttributeBuilder.possibleNames(of: .region(1)), [Name.comment])
        XCTAssertEqual(ExtendedAttributeBuilder.possibleNames(of: .album(1)), [Name.comment])
        for node: Node in [.root, .regions, .moments, .recent, .albums, .photographer(region: 1, photographer: 1), .year(2020)] {
            XCTAssertEqual(ExtendedAttributeBuilder.possibleNames(of: node), [], "\(node)")
        }
        XCTAssertTrue((ExtendedAttributeBuilder.photoNames + ExtendedAttributeBuilder.directoryNames).allSatisfy {
            $0.hasPrefix("user.") && $0.allSatisfy(\.isASCII)
        })
    }
}
