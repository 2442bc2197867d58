// /events and /search as the filesystem answers them, without a kernel: lookups that make a query's directory,
// rmdir, names that are not queries, the recent 20 and what the kernel is told, events' parents and attributes.
import Foundation
import PhotoCatalog
@testable import PhotoFS
import PhotoTree
import XCTest

final class EventsAndSearchFilesystemTests: XCTestCase {
    func entry(_ reply: EntryReply) -> NodeAttributes? {
        if case .entry(let attributes, _, _) = reply { return attributes }
        return nil
    }

    func testALookupUnderSearchMakesTheQuerysDirectoryAndRmdirForgetsIt() throws {
        let fixture = try FilesystemFixture(photos: 6)
        let fs = fixture.filesystem
        XCTAssertEqual(try fs.listing(of: Node.search.inode).entries, [])
        let found = try XCTUnwrap(entry(try fs.lookup(parent: Node.search.inode, name: "year:2020")))
        guard case .searchResults(let number) = found.node else { return XCTFail("\(found.node)") }
        XCTAssertEqual(fs.parent(of: found.inode), Node.search.inode)
        let results = try fs.listing(of: found.inode)
        XCTAssertEqual(results.entries.count, 6, "every photo was taken in 2020")
        XCTAssertEqual(Set(results.entries.map(\.node)), Set(try fixture.yearEntries().map(\.node)), "the same photo nodes")
        XCTAssertEqual(try fs.listing(of: Node.search.inode).entries.map(\.name), ["year:2020"])
        // The same name again is the same directory.
        XCTAssertEqual(entry(try fs.lookup(parent: Node.search.inode, name: "year:2020"))?.node, .searchResults(number))

        try fs.removeDirectory(parent: Node.search.inode, nameBytes: Array("year:2020".utf8))
        XCTAssertEqual(try fs.listing(of: Node.search.inode).entries, [])
        XCTAssertThrowsError(try fs.listing(of: found.inode)) { XCTAssertEqual(($0 as? FilesystemError)?.code, .notFound) }
        XCTAssertThrowsError(try fs.removeDirectory(parent: Node.search.inode, nameBytes: Array("year:2020".utf8))) {
            XCTAssertEqual(($0 as? FilesystemError)?.code, .notFound)
        }
        XCTAssertThrowsError(try fs.removeDirectory(parent: Node.moments.inode, nameBytes: Array("2020".utf8))) {
            XCTAssertEqual(($0 as? FilesystemError)?.code, .readOnly)
        }
        // A new lookup of the forgotten name is a new directory, never the old number.
        XCTAssertNotEqual(entry(try fs.lookup(parent: Node.search.inode, name: "year:2020"))?.node, .searchResults(number))
    }

    /// /search and a query with no result are dated as the root is (the library's newest photo), not 1970.
    func testSearchFoldersAreDatedAsTheLibrarysNewestPhoto() throws {
        let fixture = try FilesystemFixture(photos: 6)
        let fs = fixture.filesystem
        let newest = try fs.listing(of: Node.root.inode).attributes.mtime
        XCTAssertGreaterThan(newest, 0)
        XCTAssertEqual(try fs.listing(of: Node.search.inode).attributes.mtime, newest)
        let nothing = try XCTUnwrap(entry(try fs.lookup(parent: Node.search.inode, name: "nothingmatchesthis")))
        XCTAssertEqual(try fs.listing(of: nothing.inode).entries, [])
        XCTAssertEqual(try fs.listing(of: nothing.inode).attributes.mtime, newest)
        XCTAssertEqual(nothing.mtime, newest)
    }

    func testNamesThatAreNoQueryAreNegativeEntries() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let fs = fixture.filesystem
        for name in [[UInt8(ascii: ".")], Array(".hidden".utf8), Array("harbour ".utf8), [0xFF, 0xFE], Array("*".utf8),
                     Array(repeating: UInt8(ascii: "x"), count: 256)] {
            XCTAssertEqual(try fs.lookup(parent: Node.search.inode, nameBytes: name), .negative(timeout: fs.options.timeouts.negativeEntry),
                           "\(name.prefix(8))")
        }
        // Not UTF-8 anywhere else: no listed name is, so no such entry.
        XCTAssertEqual(try fs.lookup(parent: Node.moments.inode, nameBytes: [0x32, 0xFF]), .negative(timeout: fs.options.timeouts.negativeEntry))
        XCTAssertEqual(try fs.listing(of: Node.search.inode).entries, [])
    }

    func testAQueryPushedOutOfTheRecentTwentyIsToldToTheKernelByTheNextCheck() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let fs = fixture.filesystem
        _ = fs.checkForCatalogChanges()
        for number in 0..<RecentSearches.capacity { _ = try fs.lookup(parent: Node.search.inode, name: "word\(number)") }
        _ = fs.checkForCatalogChanges()
        _ = try fs.lookup(parent: Node.search.inode, name: "one more")
        let told = fs.checkForCatalogChanges()
        XCTAssertTrue(told.contains(.entry(parent: Node.search.inode, name: "word0")), "\(told)")
        XCTAssertTrue(told.contains(.inode(Node.search.inode)), "\(told)")
        XCTAssertEqual(try fs.listing(of: Node.search.inode).entries.count, RecentSearches.capacity)
        XCTAssertEqual(fs.checkForCatalogChanges(), [], "told once")
    }

    func testEventsListTheirPhotosUnderTheirYearWithAComment() throws {
        let fixture = try FilesystemFixture(photos: 4)
        let fs = fixture.filesystem
        let root = try fs.listing(of: Node.root.inode)
        XCTAssertEqual(root.entries.map(\.name), ["regions", "moments", "recent", "albums", "people", "favorites", "events", "search"])
        let years = try fs.listing(of: Node.events.inode)
        XCTAssertEqual(years.entries.map(\.name), ["2020"])
        let year = try XCTUnwrap(years.entries.first)
        XCTAssertEqual(fs.parent(of: year.attributes.inode), Node.events.inode)
        let events = try fs.listing(of: year.attributes.inode)
        XCTAssertEqual(events.entries.count, 1, "four photos an hour apart and no place: one event")
        let event = try XCTUnwrap(events.entries.first)
        XCTAssertEqual(year.attributes.linkCount, 3, "2 + its one event")
        XCTAssertEqual(fs.parent(of: event.attributes.inode), year.attributes.inode)
        let photos = try fs.listing(of: event.attributes.inode)
        XCTAssertEqual(photos.entries.map(\.name), try fixture.yearEntries().map(\.name), "named as in /moments")
        XCTAssertEqual(photos.entries.map(\.node), try fixture.yearEntries().map(\.node))
        guard case .data(let comment) = try fs.getExtendedAttribute(inode: event.attributes.inode, name: "user.xdg.comment", size: 4096) else {
            return XCTFail("no comment")
        }
        XCTAssertTrue(String(decoding: comment, as: UTF8.self).hasSuffix("4 photos"), String(decoding: comment, as: UTF8.self))
        // stat of an event's photo counts its name in /events.
        XCTAssertEqual(try fs.attributes(of: try XCTUnwrap(photos.entries.first).attributes.inode).linkCount, 3)
    }

    func testAnImportShowsItsPhotosInTheirEventAfterTheNextCheck() throws {
        let fixture = try FilesystemFixture(photos: 3)
        let fs = fixture.filesystem
        let year = Node.eventYear(2020).inode
        let event = try XCTUnwrap(try fs.listing(of: year).entries.first)
        XCTAssertEqual(try fs.listing(of: event.attributes.inode).entries.count, 3)
        let late = PhotoRecord(id: "late", title: "Late", momentAt: 1_600_000_000 + 3600 + 600, momentYear: 2020,
                               originalURL: "http://127.0.0.1:1/late.jpg", byteSize: 5, contentType: "image/jpeg")
        _ = try fixture.catalog.applyImport(places: [], photos: [ImportedPhoto(photo: late, owner: "o@N01", ownerName: "O")])
        let told = fs.checkForCatalogChanges()
        XCTAssertEqual(try fs.listing(of: event.attributes.inode).entries.count, 4, "the settled event took a photo inside its span")
        XCTAssertEqual(try fs.listing(of: year).entries.map(\.name), [event.name], "and kept its name")
        XCTAssertTrue(told.contains(.inode(event.attributes.inode)), "\(told)")
    }
}
