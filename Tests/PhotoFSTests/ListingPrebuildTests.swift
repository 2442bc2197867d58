// The one-scan build of photo listings after mount: the same listings, entry for entry, as building each
// folder alone, on a library with clashing names, several regions, years and owners, and hostile rows.
import Foundation
import GRDB
import Logging
import PhotoCatalog
import PhotoContent
import PhotoFS
import PhotoTree
import XCTest

final class ListingPrebuildTests: XCTestCase {
    var root: URL!
    var catalog: Catalog!
    var cache: OriginalCache!

    override func setUpWithError() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("photofs-prebuild-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        catalog = try Catalog(path: root.appendingPathComponent("library.sqlite").path)
        let logger = Logger(label: "test")
        cache = try OriginalCache(directory: root.appendingPathComponent("cache"), http: HTTPClient(logger: logger), logger: logger)
        let places = [PlaceResolution(placeID: "sf", placeName: "San Francisco", regionName: "California"),
                      PlaceResolution(placeID: "kyoto", placeName: "Kyoto", regionName: "Kansai"),
                      PlaceResolution(placeID: "osaka", placeName: "Osaka", regionName: "Kansai")]
        // 300 photos: 7 titles (so names clash and get their id appended), 3 owners, 3 places and none, dates
        // over 4 years with equal moments (ordered by seq), one far in the past.
        let photos = (0..<300).map { index in
            var photo = PhotoRecord(id: "\(90_000 + index)", title: ["Fog", "Fog", "Bridge", "", "a/b", "Night train", "Fog"][index % 7],
                                    momentAt: 1_500_000_000 + Int64(index % 40) * 40_000_000 / 4, momentYear: 0,
                                    originalURL: "http://127.0.0.1:1/\(index).jpg", byteSize: Int64(1000 + index),
                                    contentType: index % 5 == 0 ? "image/png" : "image/jpeg")
            photo.placeID = [nil, "sf", "kyoto", "osaka"][index % 4]
            if index == 7 { photo.momentAt = -2_000_000_000 }
            photo.momentYear = Self.year(of: photo.momentAt)
            // A few public photos, all in San Francisco: a directory's mode says whether it holds one.
            photo.visibility = index % 4 == 1 && index % 11 == 0 ? .everyone : index % 3 == 0 ? .friends : .privateOnly
            return ImportedPhoto(photo: photo, owner: "owner\(index % 3)@N0\(index % 3)", ownerName: ["Ana", "Bo", "Ana"][index % 3])
        }
        _ = try catalog.applyImport(places: places, photos: photos)
        // Rows an import never writes but a damaged or hand-edited library holds: a year with a fraction, a
        // year that is not a number, a row the tree must skip, an unavailable photo.
        let other = try DatabaseQueue(path: catalog.path)
        try other.write { db in
            try db.execute(sql: "UPDATE photo SET moment_year = moment_year + 0.5 WHERE id = '90010'")
            try db.execute(sql: "UPDATE photo SET moment_year = 'soon' WHERE id = '90011'")
            try db.execute(sql: "UPDATE photo SET id = '' WHERE id = '90012'")
            try db.execute(sql: "UPDATE photo SET byte_size = NULL WHERE id = '90013'")
        }
        try other.close()
    }

    static func year(of seconds: Int64) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.component(.year, from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: root)
    }

    func filesystem() -> PhotoFilesystem {
        var options = FilesystemOptions()
        options.prefetchCount = 0
        return PhotoFilesystem(catalog: catalog, cache: cache, options: options, logger: Logger(label: "test"))
    }

    /// Every directory under the root, each with its listing's entries, as the kernel would walk them.
    func walk(_ filesystem: PhotoFilesystem) throws -> [UInt64: [DirectoryEntry]] {
        var found: [UInt64: [DirectoryEntry]] = [:]
        var pending = [Node.root.inode]
        while let inode = pending.popLast() {
            let entries = try filesystem.listing(of: inode).entries
            found[inode] = entries
            pending += entries.filter { $0.node.isDirectory }.map(\.attributes.inode)
        }
        return found
    }

    func testPrebuiltListingsEqualThoseBuiltFolderByFolder() throws {
        let prebuilt = filesystem()
        let stored = prebuilt.prebuildPhotoListings()
        let folders = try walk(filesystem()).keys.compactMap { Node(inode: $0) }
        let scanned = folders.filter {
            switch $0 {
            case .recent, .album, .search, .searchResults, .people, .favorites, .person: return false
            default: return true
            }
        }
        XCTAssertGreaterThan(folders.filter { if case .photographer = $0 { true } else { false } }.count, 6,
                             "the fixture spreads photos over many folders")
        XCTAssertGreaterThan(folders.filter { if case .event = $0 { true } else { false } }.count, 1)
        XCTAssertEqual(stored, scanned.count, "every folder but /recent, albums', people's, favourites' and /search's comes from the scan")
        XCTAssertEqual(try walk(prebuilt), try walk(filesystem()))
        // Entries carry the aggregates (sizes, times, modes, link counts): the same down to them.
        let regions = try prebuilt.listing(of: Node.regions.inode)
        XCTAssertEqual(regions.entries.map(\.attributes), try filesystem().listing(of: Node.regions.inode).entries.map(\.attributes))
        XCTAssertEqual(Set(regions.entries.map(\.attributes.isPrivate)).count, 2, "some regions hold a public photo, some do not")
        let fog = try walk(prebuilt).values.joined().filter { $0.name.hasPrefix("Fog") }
        XCTAssertGreaterThan(Set(fog.map(\.name)).count, 10, "clashing titles got distinct names")
    }

    func testListingsAskedForDuringTheScanWaitForItAndAreTheSame() throws {
        let reference = try walk(filesystem())
        let prebuilt = filesystem()
        let scan = Thread { prebuilt.prebuildPhotoListings() }
        scan.start()
        // Whenever the walk starts relative to the scan, it sees the same tree.
        XCTAssertEqual(try walk(prebuilt), reference)
    }

    /// A scan's listings are stamped like any build (StampedCacheTests): after an import and the check that
    /// follows, the tree is the new catalog's, whether the check or a new scan built it.
    func testAfterAnImportTheListingsAreTheNewCatalogs() throws {
        let prebuilt = filesystem()
        XCTAssertGreaterThan(prebuilt.prebuildPhotoListings(), 0)
        let extra = PhotoRecord(id: "late", title: "Late", momentAt: 1_600_000_000, momentYear: 2020,
                                originalURL: "http://127.0.0.1:1/late.jpg", byteSize: 5, contentType: "image/jpeg")
        _ = try catalog.applyImport(places: [], photos: [ImportedPhoto(photo: extra, owner: "o@N01", ownerName: "O")])
        _ = prebuilt.checkForCatalogChanges()
        prebuilt.prebuildPhotoListings()
        XCTAssertEqual(try walk(prebuilt), try walk(filesystem()))
        XCTAssertTrue(try walk(prebuilt).values.joined().contains { $0.name == "Late.jpg" })
    }

    /// The mount's scan also clusters the events (`settlingEvents`): every listing, /events included, is the
    /// one a mount that built each folder alone shows, whether the scan had to settle events (the first time)
    /// or only read them (after), and whenever a walk runs beside it.
    func testListingsOfAScanThatSettlesEventsAreTheSame() throws {
        let first = filesystem()
        let walks = DispatchGroup()
        var firstWalk: [UInt64: [DirectoryEntry]]?
        DispatchQueue.global().async(group: walks) { firstWalk = try? self.walk(first) }
        XCTAssertGreaterThan(first.prebuildPhotoListings(settlingEvents: true), 0)
        XCTAssertGreaterThan(try catalog.storedEventCount(), 0, "the fixture's photos are years old: their events settle")
        let reference = try walk(filesystem())
        XCTAssertEqual(try walk(first), reference)
        walks.wait()
        XCTAssertEqual(firstWalk, reference, "a walk beside the scan sees the same tree")

        let second = filesystem()
        let settled = try catalog.storedEvents()
        var secondWalk: [UInt64: [DirectoryEntry]]?
        DispatchQueue.global().async(group: walks) { secondWalk = try? self.walk(second) }
        XCTAssertGreaterThan(second.prebuildPhotoListings(settlingEvents: true), 0)
        XCTAssertEqual(try walk(second), reference)
        walks.wait()
        XCTAssertEqual(secondWalk, reference)
        XCTAssertEqual(try catalog.storedEvents(), settled, "nothing new to settle: nothing written")
    }
}
