// The catalog's part in sized mounts: renditions kept per photo, variant sizes and thumbnails stored, and both
// dropped when what they were made from changes.
import PhotoCatalog
import XCTest

final class VariantCatalogTests: XCTestCase {
    var directory: URL!
    var catalog: Catalog!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("variants-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
    }

    override func tearDownWithError() throws {
        catalog = nil
        try? FileManager.default.removeItem(at: directory)
    }

    let renditions = [Rendition(label: "o", url: "http://origin/1.jpg", width: 4000, height: 3000),
                      Rendition(label: "z", url: "http://origin/1_z.jpg", width: 640, height: 480),
                      Rendition(label: "sq", url: "http://origin/1_sq.jpg", width: 75, height: 75)]

    func imported(title: String = "Photo", size: Int64 = 100, renditions: [Rendition]? = nil) -> ImportedPhoto {
        let photo = PhotoRecord(id: "1", title: title, momentAt: 1_600_000_000, momentYear: 2020,
                                originalURL: "http://origin/1.jpg", byteSize: size, contentType: "image/jpeg")
        return ImportedPhoto(photo: photo, owner: "o", ownerName: "O", renditions: renditions ?? self.renditions)
    }

    func variant(_ seq: Int64, spec: String = "square:64", size: Int64 = 5000) -> VariantRecord {
        VariantRecord(seq: seq, spec: spec, sourceURL: "http://origin/1_z.jpg", byteSize: size, width: 64, height: 64,
                      contentType: "image/png", unchanged: false)
    }

    func seq() throws -> Int64 { try XCTUnwrap(try catalog.photo(id: "1")).seq }

    func testRenditionsAreKeptSmallestFirst() throws {
        _ = try catalog.applyImport(places: [], photos: [imported()])
        XCTAssertEqual(try catalog.renditions(seq: try seq()).map(\.label), ["sq", "z", "o"])
    }

    func testVariantsAndThumbnailsAreStoredWithoutMovingTheChangeCounter() throws {
        _ = try catalog.applyImport(places: [], photos: [imported()])
        let generation = try catalog.generation()
        let photo = try XCTUnwrap(try catalog.photo(id: "1"))
        try catalog.saveVariants([(variant(try seq()), Data([1, 2, 3]), photo), (variant(99_999), nil, photo)])
        XCTAssertEqual(try catalog.variantSizes(spec: "square:64"), [try seq(): 5000], "a photo that is gone is skipped")
        XCTAssertEqual(try catalog.variant(seq: try seq(), spec: "square:64"), variant(try seq()))
        XCTAssertEqual(try catalog.thumbnail(seq: try seq(), spec: "square:64"), Data([1, 2, 3]))
        XCTAssertEqual(try catalog.variantSizes(spec: "fit:1024"), [:])
        XCTAssertEqual(try catalog.generation(), generation, "rendering must not make mounts rebuild listings")
    }

    func testAChangedOriginalDropsItsVariantsButANewTitleDoesNot() throws {
        _ = try catalog.applyImport(places: [], photos: [imported()])
        try catalog.saveVariants([(variant(try seq()), Data([1]), try XCTUnwrap(try catalog.photo(id: "1")))])
        _ = try catalog.applyImport(places: [], photos: [imported(title: "Renamed")])
        XCTAssertEqual(try catalog.variantSizes(spec: "square:64").count, 1)
        _ = try catalog.applyImport(places: [], photos: [imported(title: "Renamed", size: 200)])
        XCTAssertEqual(try catalog.variantSizes(spec: "square:64"), [:])
        XCTAssertNil(try catalog.thumbnail(seq: try seq(), spec: "square:64"))
    }

    func testChangedRenditionsReplaceTheOldAndDropVariants() throws {
        _ = try catalog.applyImport(places: [], photos: [imported()])
        try catalog.saveVariants([(variant(try seq()), nil, try XCTUnwrap(try catalog.photo(id: "1")))])
        let same = try catalog.applyImport(places: [], photos: [imported()])
        XCTAssertEqual(same.unchanged, 1)
        XCTAssertEqual(try catalog.variantSizes(spec: "square:64").count, 1)
        let fewer = Array(renditions.prefix(2))
        let changed = try catalog.applyImport(places: [], photos: [imported(renditions: fewer)])
        XCTAssertEqual(changed.updated, 1)
        XCTAssertEqual(try catalog.renditions(seq: try seq()).map(\.label), ["z", "o"])
        XCTAssertEqual(try catalog.variantSizes(spec: "square:64"), [:])
    }

    func testAVariantOfAReplacedOriginalIsNotSaved() throws {
        _ = try catalog.applyImport(places: [], photos: [imported()])
        let renderedFrom = try XCTUnwrap(try catalog.photo(id: "1"))
        // An import replaces the original while the variant waits to be written.
        _ = try catalog.applyImport(places: [], photos: [imported(size: 200)])
        try catalog.saveVariants([(variant(try seq()), Data([1]), renderedFrom)])
        XCTAssertEqual(try catalog.variantSizes(spec: "square:64"), [:])
        XCTAssertNil(try catalog.thumbnail(seq: try seq(), spec: "square:64"))
    }

    func testDeletingAPhotoDeletesItsRenditionsAndVariants() throws {
        _ = try catalog.applyImport(places: [], photos: [imported()])
        let seq = try seq()
        try catalog.saveVariants([(variant(seq), Data([1]), try XCTUnwrap(try catalog.photo(id: "1")))])
        try catalog.removePhotos(ids: ["1"])
        XCTAssertEqual(try catalog.renditions(seq: seq), [])
        XCTAssertEqual(try catalog.variantSizes(spec: "square:64"), [:])
        XCTAssertNil(try catalog.thumbnail(seq: seq, spec: "square:64"))
    }
}
