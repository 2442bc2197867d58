// The tree never traps on a value the catalog type can hold: negative and huge ids, years, moments, counts,
// sizes, and ids that are no names. Each clamp written in the code is checked here.
import PhotoCatalog
import PhotoTree
import XCTest

/// Whether `name` can be a Linux directory entry that `ls` shows: non-empty, at most 255 bytes, no "/" or NUL,
/// not "." or "..", not hidden.
func isValidName(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= FileNaming.maxNameBytes && !name.utf8.contains(0x2F)
        && !name.utf8.contains(0) && name != "." && name != ".." && !name.hasPrefix(".")
}

final class ExtremeValuesTests: XCTestCase {
    let extremes: [Int64] = [.min, .min + 1, -62_135_596_801, -1, 0, 1, 253_402_300_800, Int64(Int32.max) + 1,
                             1 << 56, (1 << 56) - 1, .max - 1, .max]

    func testInodeNumbersOfAnyValueDoNotTrapAndInRangeOnesRoundTrip() {
        for value in extremes {
            _ = Node.photo(seq: value).inode
            _ = Node.region(value).inode
            _ = Node.photographer(region: value, photographer: value).inode
            _ = Node.year(Int(value)).inode
        }
        // The largest values the catalog admits still round trip: the inode fields hold them.
        let largest: [Node] = [.photo(seq: CatalogLimits.seqRange.upperBound),
                               .region(CatalogLimits.directoryIDRange.upperBound),
                               .photographer(region: CatalogLimits.directoryIDRange.upperBound,
                                             photographer: CatalogLimits.directoryIDRange.upperBound),
                               .year(CatalogLimits.yearRange.upperBound)]
        for node in largest { XCTAssertEqual(Node(inode: node.inode), node) }
        XCTAssertEqual(Set(largest.map(\.inode)).count, largest.count)
    }

    func testMomentPrefixClampsToYears1Through9999() {
        XCTAssertEqual(TreeBuilder.momentPrefix(.min), "0001-01-01 00.00.00")
        XCTAssertEqual(TreeBuilder.momentPrefix(-62_135_596_801), "0001-01-01 00.00.00")
        XCTAssertEqual(TreeBuilder.momentPrefix(-62_135_596_800), "0001-01-01 00.00.00")
        XCTAssertEqual(TreeBuilder.momentPrefix(-1), "1969-12-31 23.59.59")
        XCTAssertEqual(TreeBuilder.momentPrefix(253_402_300_799), "9999-12-31 23.59.59")
        XCTAssertEqual(TreeBuilder.momentPrefix(.max), "9999-12-31 23.59.59")
        for value in extremes { XCTAssertEqual(TreeBuilder.momentPrefix(value).utf8.count, 19) }
    }

    func testYearOfAnyMomentIsAYearANameCanShow() {
        XCTAssertEqual(PhotoRecord.year(ofMoment: .min), 1)
        XCTAssertEqual(PhotoRecord.year(ofMoment: .max), 9999)
        XCTAssertEqual(PhotoRecord.year(ofMoment: -1), 1969)
        for value in extremes { XCTAssertTrue(CatalogLimits.yearRange.contains(PhotoRecord.year(ofMoment: value))) }
    }

    func testOnlyYearsThatFourDigitsShowGetADirectory() {
        let years = [-5, 0, 1, 42, 2020, 9999, 10_000, .max, .min, 2020].map {
            YearRecord(year: $0, photoCount: 1, newestMomentAt: 0)
        }
        let listing = TreeBuilder.years(years, newest: 0)
        XCTAssertEqual(listing.entries.map(\.name), ["0001", "0042", "2020", "9999"])
        XCTAssertEqual(listing.attributes.linkCount, 6)
        XCTAssertEqual(TreeBuilder.yearName(-3), "0001")
        XCTAssertEqual(TreeBuilder.yearName(123_456), "9999")
    }

    func testLinkCountsOfAnyStoredCount() {
        XCTAssertEqual(TreeBuilder.directoryAttributes(.regions, newest: 0, subdirectories: -5).linkCount, 2)
        XCTAssertEqual(TreeBuilder.directoryAttributes(.regions, newest: 0, subdirectories: .min).linkCount, 2)
        XCTAssertEqual(TreeBuilder.directoryAttributes(.regions, newest: 0, subdirectories: 7).linkCount, 9)
        XCTAssertEqual(TreeBuilder.directoryAttributes(.regions, newest: 0, subdirectories: .max).linkCount, .max)
        XCTAssertEqual(TreeBuilder.directoryAttributes(.regions, newest: 0, subdirectories: Int(UInt32.max) - 2).linkCount,
                       .max)
        let regions = [RegionRecord(id: 1, name: "A", photoCount: -1, photographerCount: .min, newestMomentAt: .min),
                       RegionRecord(id: -4, name: "B", photoCount: .max, photographerCount: .max, newestMomentAt: .max)]
        let listing = TreeBuilder.regions(regions, newest: .max)
        XCTAssertEqual(listing.entries.map(\.attributes.linkCount), [2, .max])
    }

    func testPhotoSizesStayWithinOneTebibyte() {
        func size(_ bytes: Int64?) -> Int64 {
            let photo = PhotoRecord(seq: 1, id: "1", title: "A", originalURL: "", byteSize: bytes, contentType: "image/jpeg")
            return TreeBuilder.photoAttributes(photo, linkCount: 2).size
        }
        XCTAssertEqual(size(.max), CatalogLimits.maxByteSize)
        XCTAssertEqual(size(.max - 1), 1 << 40)
        XCTAssertEqual(size(-1), 0)
        XCTAssertEqual(size(.min), 0)
        XCTAssertEqual(size(nil), 0)
        XCTAssertEqual(size(12345), 12345)
    }

    func testIDsThatAreNoNamesStillGiveValidSuffixes() {
        let ids = ["../../etc/passwd", "a/b", "\u{0}\u{1}\u{7F}", String(repeating: "9", count: 10_000),
                   String(repeating: "é/", count: 5_000), "", ".", "..", " ", "\u{202E}gpj", "12345678@N00"]
        for id in ids {
            for suffix in FileNaming.suffixes(forID: id) {
                XCTAssertFalse(suffix.contains("/") || suffix.utf8.contains(0), suffix)
                XCTAssertLessThanOrEqual(suffix.utf8.count, 64 + 3)
            }
            var namer = UniqueNamer()
            // Same stem thrice: plain, short suffix, full id (then the counter).
            for _ in 0..<4 {
                let name = namer.claim(stem: "Sunset", id: id, extension: "jpg")
                XCTAssertTrue(isValidName(name), "\(name.debugDescription) for id \(id.prefix(20).debugDescription)")
            }
        }
        XCTAssertEqual(FileNaming.suffixes(forID: "a/b"), [" (a／b)"])
    }

    func testComposeAlwaysGivesAValidName() {
        let zalgo = "Z" + String(repeating: "\u{0301}", count: 400) // one grapheme of 801 bytes
        XCTAssertEqual(FileNaming.compose(stem: zalgo, extension: "jpg"), "Untitled.jpg")
        XCTAssertEqual(FileNaming.compose(stem: zalgo, suffix: " (42)", extension: "jpg"), "Untitled (42).jpg")
        XCTAssertEqual(FileNaming.compose(stem: "", extension: "jpg"), "Untitled.jpg")
        XCTAssertEqual(FileNaming.compose(stem: "A", extension: "../x"), "A", "an extension that is no plain word is dropped")
        let long = FileNaming.compose(stem: "A", suffix: String(repeating: "s", count: 1000), extension: "jpg")
        XCTAssertTrue(isValidName(long))
        XCTAssertTrue(long.hasPrefix("A"))
    }

    func testAPhotoListedTwiceGetsOneEntry() {
        let photo = PhotoRecord(seq: 3, id: "3", title: "Twice", momentAt: 0, originalURL: "", byteSize: 1,
                                contentType: "image/jpeg")
        let listing = TreeBuilder.photos([photo, photo], in: .recent, style: .title) { _ in 3 }
        XCTAssertEqual(listing.entries.map(\.name), ["Twice.jpg"])
    }
}
