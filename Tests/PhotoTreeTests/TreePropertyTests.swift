// Property-style: thousands of random catalog rows built from extreme numbers and hostile strings (fixed seed,
// so a failure reproduces) go through every TreeBuilder function: nothing traps, every name is valid and
// unique in its directory, and every entry is found again by its name.
import FlickrOrigin
import PhotoCatalog
import PhotoTree
import XCTest

final class TreePropertyTests: XCTestCase {
    var random = SeededGenerator(seed: 20_261_122)

    /// Pieces hostile text is made of: separators, dots, controls, bidi overrides, combining marks, emoji,
    /// full-width look-alikes, long runs.
    let pieces = ["/", ".", "..", " ", "\u{0}", "\n", "\t", "\u{7F}", "\u{85}", "\u{2028}", "\u{202E}", "\u{200F}",
                  "\u{0301}", "\u{FEFF}", "👨‍👩‍👧", "é", "e\u{0301}", "Ａ", "／", "a", "Sunset", "(123456)", " (1)",
                  "%", "\\", "*", "?", ":", "~", "-", String(repeating: "x", count: 300),
                  String(repeating: "é", count: 200), String(repeating: "\u{0301}", count: 300)]

    func text() -> String {
        (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    func number() -> Int64 {
        let edges: [Int64] = [.min, -1, 0, 1, .max, 1 << 28, 1 << 56, -62_135_596_801, 253_402_300_800, 1_600_000_000]
        return Bool.random(using: &random) ? edges.randomElement(using: &random)! : Int64.random(in: .min ... .max, using: &random)
    }

    func photo() -> PhotoRecord {
        // Mostly small seqs so that names collide and suffixes are exercised.
        let seq = Bool.random(using: &random) ? Int64.random(in: 1...40, using: &random) : number()
        let types: [String?] = ["image/jpeg", "image/png", nil, "text/html", "image/webp"]
        return PhotoRecord(seq: seq, id: Bool.random(using: &random) ? String(number()) : text(),
                           title: Bool.random(using: &random) ? "Sunset" : text(), momentAt: number(),
                           momentYear: Int(truncatingIfNeeded: number()), originalURL: "", byteSize: number(),
                           contentType: types.randomElement(using: &random)!)
    }

    func check(_ listing: DirectoryListing, file: StaticString = #filePath, line: UInt = #line) {
        var seen = Set<[UInt8]>()
        for entry in listing.entries {
            XCTAssertTrue(isValidName(entry.name), "invalid name \(entry.name.debugDescription)", file: file, line: line)
            XCTAssertTrue(seen.insert(Array(entry.name.lowercased().utf8)).inserted,
                          "duplicate name \(entry.name.debugDescription)", file: file, line: line)
            XCTAssertEqual(listing.entry(named: entry.name)?.node, entry.node, file: file, line: line)
            XCTAssertTrue((0...CatalogLimits.maxByteSize).contains(entry.attributes.size), file: file, line: line)
            _ = entry.attributes.inode
        }
        _ = listing.attributes.inode
    }

    func testRandomHostileRowsNeverTrapAndAlwaysGiveValidUniqueNames() {
        for _ in 0..<1_500 {
            let photos = (0..<Int.random(in: 0...25, using: &random)).map { _ in photo() }
            let extensions: [String?] = [nil, "png", "../x", "", String(repeating: "j", count: 40)]
            let style: PhotoNameStyle = Bool.random(using: &random) ? .title : .moment
            check(TreeBuilder.photos(photos, in: .year(Int(truncatingIfNeeded: number())), style: style,
                                     fileExtension: extensions.randomElement(using: &random)!) { _ in 3 })

            let regions = (0..<Int.random(in: 0...8, using: &random)).map { _ in
                RegionRecord(id: number(), name: text(), photoCount: Int(truncatingIfNeeded: number()),
                             photographerCount: Int(truncatingIfNeeded: number()), newestMomentAt: number())
            }
            check(TreeBuilder.regions(regions, newest: number()))
            let photographers = (0..<Int.random(in: 0...8, using: &random)).map { _ in
                PhotographerRecord(id: number(), owner: Bool.random(using: &random) ? "12345678@N00" : text(),
                                   name: Bool.random(using: &random) ? "Ann" : text(), newestMomentAt: number())
            }
            if let region = regions.first { check(TreeBuilder.photographers(in: region, photographers)) }
            let years = (0..<Int.random(in: 0...8, using: &random)).map { _ in
                YearRecord(year: Int(truncatingIfNeeded: number()), photoCount: 1, newestMomentAt: number())
            }
            check(TreeBuilder.years(years, newest: number()))
            check(TreeBuilder.root(newest: number()))
            for photo in photos {
                XCTAssertEqual(TreeBuilder.momentPrefix(photo.momentAt).utf8.count, 19)
                XCTAssertTrue(CatalogLimits.yearRange.contains(PhotoRecord.year(ofMoment: photo.momentAt)))
            }
        }
    }
}
