// A real library with rows another program damaged, read through the catalog and built into every directory
// of the tree, as a mount does: the good photos are all listed, every name is valid, nothing traps.
import Foundation
import GRDB
import PhotoCatalog
import PhotoTree
import XCTest

final class HostileCatalogTreeTests: XCTestCase {
    final class WarningCount: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }

    func testEveryDirectoryOfADamagedLibraryListsItsGoodPhotosUnderValidNames() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-tree-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("library.sqlite").path

        let good = ["52000000001", "52000000002", "a/b", "../..", String(repeating: "9", count: 10_000)]
        _ = try Catalog(path: path).applyImport(places: [], photos: good.enumerated().map { index, id in
            let moment = 1_600_000_000 + Int64(index)
            let photo = PhotoRecord(id: id, title: index == 2 ? "../../etc/passwd" : "Same", momentAt: moment,
                                    momentYear: PhotoRecord.year(ofMoment: moment), originalURL: "http://o/\(index)",
                                    byteSize: 100, contentType: "image/jpeg")
            return ImportedPhoto(photo: photo, owner: index == 3 ? "own/er\u{0}" : "owner", ownerName: "\u{202E}Ann/")
        })
        var config = Configuration()
        config.foreignKeysEnabled = false
        let other = try DatabaseQueue(path: path, configuration: config)
        try other.write { db in
            try db.execute(sql: """
                INSERT INTO photo(id, title, photographer_id, region_id, moment_at, moment_year, original_url,
                                  byte_size, content_type)
                VALUES ('bad-size', 'X', 1, 1, 1600000100, 2020, 'u', -1, 'image/jpeg'),
                       ('bad-moment', 'X', 1, 1, -9223372036854775808, -292277022657, 'u', 100, 'image/jpeg'),
                       ('far-future', 'X', 1, 1, 9223372036854775807, 2020, 'u', 100, 'image/jpeg');
                INSERT INTO region(name, photo_count, photographer_count) VALUES ('Damaged', 1, -3);
                """)
        }
        try other.close()

        let catalog = try Catalog(path: path, mode: .mounting)
        let warnings = WarningCount()
        catalog.onBadRow = { _ in warnings.add() }
        var listings = [TreeBuilder.root(newest: try catalog.newestMomentAt()),
                        TreeBuilder.regions(try catalog.regions(), newest: try catalog.newestMomentAt()),
                        TreeBuilder.years(try catalog.years(), newest: try catalog.newestMomentAt())]
        var listedIDs: [String] = []
        for region in try catalog.regions() {
            listings.append(TreeBuilder.photographers(in: region, try catalog.photographers(inRegion: region.id)))
            for photographer in try catalog.photographers(inRegion: region.id) {
                let photos = try catalog.photos(inRegion: region.id, photographer: photographer.id)
                listedIDs += photos.map(\.id)
                listings.append(TreeBuilder.photos(photos, in: .photographer(region: region.id, photographer: photographer.id),
                                                   style: .title) { _ in 2 })
            }
        }
        for year in try catalog.years() {
            listings.append(TreeBuilder.photos(try catalog.photos(inYear: year.year), in: .year(year.year),
                                               style: .moment) { _ in 2 })
        }
        XCTAssertEqual(listedIDs.sorted(), good.sorted())
        XCTAssertEqual(try catalog.years().map(\.year), [2020])
        XCTAssertEqual(warnings.value, 4, "one warning per damaged row: three photos, one region")
        for listing in listings {
            XCTAssertEqual(Set(listing.entries.map(\.name)).count, listing.entries.count)
            for entry in listing.entries { XCTAssertTrue(isValidName(entry.name), entry.name.debugDescription) }
        }
    }
}
