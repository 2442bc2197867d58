// What extended attributes read from the catalog: a photo's details, a region's places, an album's
// description, the library's source kinds — and hostile rows read as unknown, never as a trap or an error.
import Foundation
import GRDB
import PhotoCatalog
import XCTest

final class PhotoDetailsTests: XCTestCase {
    private var scratch: ScratchDirectory!
    private var catalog: Catalog!
    private var library: String { scratch.path("library.sqlite") }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory("details")
        catalog = try Catalog(path: library)
        var described = importedPhoto("1", owner: "12345678@N01", place: "sf")
        described.photo.description = "Fog over the bay\nsecond line"
        described.photo.dateTaken = "2019-05-04 12:33:10"
        described.photo.latitude = 37.7749
        described.photo.longitude = -122.4194
        described.photo.tags = ["bay", "fog"]
        let places = [PlaceResolution(placeID: "sf", placeName: "San Francisco", regionName: "California"),
                      PlaceResolution(placeID: "la", placeName: "Los Angeles", regionName: "California"),
                      PlaceResolution(placeID: "empty", placeName: nil, regionName: "California")]
        _ = try catalog.applyImport(places: places, photos: [described, importedPhoto("2", place: "la"),
                                                             importedPhoto("3"), importedPhoto("4", place: "empty")])
        try catalog.applyAlbums([AlbumImport(sourceID: "b", title: "Second", description: "", updatedAt: 1, memberIDs: ["1"]),
                                 AlbumImport(sourceID: "a", title: "First", description: "Mornings by the water",
                                             updatedAt: 1, memberIDs: ["1", "2"])], keepingOnly: nil)
    }

    private func seq(_ id: String) throws -> Int64 { try XCTUnwrap(try catalog.photo(id: id)).seq }

    func testAPhotosDetailsComeInOneRead() throws {
        let details = try XCTUnwrap(try catalog.photoDetails(seq: try seq("1")))
        XCTAssertEqual(details.id, "1")
        XCTAssertEqual(details.title, "Photo 1")
        XCTAssertEqual(details.description, "Fog over the bay\nsecond line")
        XCTAssertEqual(details.dateTaken, "2019-05-04 12:33:10")
        XCTAssertEqual(details.latitude, 37.7749)
        XCTAssertEqual(details.longitude, -122.4194)
        XCTAssertEqual(details.tags, ["bay", "fog"])
        XCTAssertEqual(details.ownerID, "12345678@N01")
        XCTAssertEqual(details.photographerName, "12345678@N01".uppercased())
        XCTAssertEqual(details.regionName, "California")
        XCTAssertEqual(details.placeName, "San Francisco")
        XCTAssertEqual(details.albumTitles, ["Second", "First"], "the catalog's album order (first imported first)")
        XCTAssertEqual(details.sourceKinds, [], "no import recorded a source kind")
    }

    func testUnknownsStayUnknown() throws {
        let plain = try XCTUnwrap(try catalog.photoDetails(seq: try seq("3")))
        XCTAssertNil(plain.regionName, "the fallback region is no region the origin named")
        XCTAssertNil(plain.placeName)
        XCTAssertNil(plain.dateTaken)
        XCTAssertNil(plain.latitude)
        XCTAssertEqual(plain.tags, [])
        XCTAssertEqual(plain.albumTitles, [])
        XCTAssertEqual(try catalog.photoDetails(seq: try seq("4"))?.placeName, nil, "a place without a name")
        XCTAssertEqual(try catalog.photoDetails(seq: try seq("4"))?.regionName, "California")
        XCTAssertNil(try catalog.photoDetails(seq: 999))
    }

    func testSourceKindsComeFromTheImportsRecorded() throws {
        try catalog.saveSyncState(SyncState(listingKey: "flickr user 1", sourceKind: "flickr"))
        try catalog.saveSyncState(SyncState(listingKey: "flickr recent", sourceKind: "flickr"))
        XCTAssertEqual(try catalog.photoDetails(seq: try seq("1"))?.sourceKinds, ["flickr"])
        try catalog.saveSyncState(SyncState(listingKey: "folder /photos", sourceKind: "folder"))
        XCTAssertEqual(try catalog.photoDetails(seq: try seq("1"))?.sourceKinds, ["flickr", "folder"])
    }

    func testARegionListsThePlacesOfItsPhotos() throws {
        let california = try XCTUnwrap(try catalog.regions().first { $0.name == "California" })
        let details = try XCTUnwrap(try catalog.regionDetails(id: california.id))
        XCTAssertEqual(details.name, "California")
        XCTAssertEqual(details.placeNames, ["Los Angeles", "San Francisco"], "sorted; a place without a name left out")
        try catalog.removePhotos(ids: ["2"])
        XCTAssertEqual(try catalog.regionDetails(id: california.id)?.placeNames, ["San Francisco"],
                       "a place none of whose photos is left is not named")
        XCTAssertNil(try catalog.regionDetails(id: 9999))
    }

    func testARegionNamesOnlyThePlacesOfItsPublicPhotos() throws {
        var secret = importedPhoto("5", place: "home")
        secret.photo.visibility = .privateOnly
        _ = try catalog.applyImport(places: [PlaceResolution(placeID: "home", placeName: "Grandmother's street",
                                                             regionName: "California")], photos: [secret])
        let california = try XCTUnwrap(try catalog.regions().first { $0.name == "California" })
        XCTAssertEqual(try catalog.regionDetails(id: california.id)?.placeNames, ["Los Angeles", "San Francisco"],
                       "a private photo's place is not named to everyone who may read the region")
    }

    func testAnAlbumsDescription() throws {
        let albums = try catalog.albums()
        XCTAssertEqual(try catalog.albumDescription(id: try XCTUnwrap(albums.first { $0.title == "First" }).id),
                       "Mornings by the water")
        XCTAssertEqual(try catalog.albumDescription(id: try XCTUnwrap(albums.first { $0.title == "Second" }).id), "")
        XCTAssertNil(try catalog.albumDescription(id: 9999))
    }

    /// Another program stored blobs, numbers and NULLs where text belongs (a TEXT column turns numbers into text,
    /// so blobs are what can arrive there): each reads as unknown.
    func testHostileColumnsReadAsUnknown() throws {
        let one = try seq("1")
        try tamper(library, """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = replace(replace(sql, 'INTEGER NOT NULL', 'INTEGER'), 'TEXT NOT NULL', 'TEXT')
            WHERE type = 'table';
            PRAGMA writable_schema = OFF;
            """)
        try tamper(library, """
            UPDATE photo SET description = x'00ff', date_taken = x'3230313900', latitude = 'north', longitude = x'01',
                             tags = x'666f67' WHERE seq = \(one);
            UPDATE photographer SET owner = NULL, name = x'ff';
            UPDATE region SET name = CAST(id AS BLOB);
            UPDATE album SET title = NULL, description = x'00';
            INSERT INTO sync_state(listing_key, source_kind) VALUES ('odd', x'01');
            """)
        let catalog = try Catalog(path: library)
        let details = try XCTUnwrap(try catalog.photoDetails(seq: one))
        XCTAssertEqual(details.id, "1")
        XCTAssertEqual(details.description, "")
        XCTAssertNil(details.dateTaken)
        XCTAssertNil(details.latitude)
        XCTAssertNil(details.longitude)
        XCTAssertEqual(details.tags, [])
        XCTAssertNil(details.ownerID)
        XCTAssertNil(details.photographerName)
        XCTAssertNil(details.regionName)
        XCTAssertEqual(details.albumTitles, [])
        XCTAssertEqual(details.sourceKinds, [])
        XCTAssertEqual(try catalog.albumDescription(id: 1), "")
        XCTAssertEqual(try catalog.regionDetails(id: try XCTUnwrap(try catalog.regions().first).id)?.name, "")
    }
}
