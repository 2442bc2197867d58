// Photographer, title, orientation, pixel size and GPS rules, with the values cameras and broken files write.
import FolderImport
import XCTest

final class PhotoMetadataRulesTests: XCTestCase {
    func testPhotographerIsArtistElseCameraElseUnknown() {
        var exif = ExifFields()
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .unknown)
        exif.make = "Canon"
        exif.model = "Canon EOS R5"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("Canon EOS R5"))
        exif.make = "NIKON CORPORATION "
        exif.model = "NIKON D750"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("NIKON CORPORATION NIKON D750"))
        exif.make = "Apple"
        exif.model = "iPhone 15"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("Apple iPhone 15"))
        exif.artist = "   \u{0}\t"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("Apple iPhone 15"), "a blank artist is no artist")
        exif.artist = "Ada\nLovelace"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .artist("Ada Lovelace"))
        exif.artist = String(repeating: "x", count: 5_000_000)
        guard case .artist(let name) = PhotoMetadataRules.photographer(exif) else { return XCTFail("artist expected") }
        XCTAssertLessThanOrEqual(name.count, 1000)
    }

    func testTitleIsADescriptionThatSaysSomethingElseTheFileName() {
        var exif = ExifFields()
        func title() -> String {
            PhotoMetadataRules.metadata(exif: exif, fileName: "IMG_1234.JPG", modifiedWallClock: nil, now: 0,
                                        headerSize: nil).title
        }
        XCTAssertEqual(title(), "IMG_1234")
        for placeholder in ["OLYMPUS DIGITAL CAMERA", "  SONY DSC  ", "", "   ", "\u{0}\u{0}", "Exif_JPEG_PICTURE"] {
            exif.imageDescription = placeholder
            XCTAssertEqual(title(), "IMG_1234", placeholder)
        }
        exif.imageDescription = "Harbour at dawn"
        XCTAssertEqual(title(), "Harbour at dawn")
        XCTAssertEqual(PhotoMetadataRules.titleFromFileName(".jpg"), ".jpg")
        XCTAssertEqual(PhotoMetadataRules.titleFromFileName("a.b.heic"), "a.b")
    }

    func testOrientationAndPixelSize() {
        XCTAssertEqual(PhotoMetadataRules.orientation(nil), 1)
        XCTAssertEqual(PhotoMetadataRules.orientation(0), 1)
        XCTAssertEqual(PhotoMetadataRules.orientation(9), 1)
        XCTAssertEqual(PhotoMetadataRules.orientation(-3), 1)
        XCTAssertEqual(PhotoMetadataRules.orientation(6), 6)
        var exif = ExifFields()
        exif.pixelWidth = 4000
        exif.pixelHeight = 3000
        XCTAssertEqual(PhotoMetadataRules.pixelSize(header: (640, 480), exif: exif)?.width, 640)
        XCTAssertEqual(PhotoMetadataRules.pixelSize(header: (0, 480), exif: exif)?.width, 4000)
        exif.pixelWidth = 70_000
        XCTAssertNil(PhotoMetadataRules.pixelSize(header: nil, exif: exif))
        exif.pixelWidth = -1
        XCTAssertNil(PhotoMetadataRules.pixelSize(header: nil, exif: exif))
    }

    func testCoordinates() {
        var exif = ExifFields()
        exif.gpsLatitude = [48, 51, 24]
        exif.gpsLatitudeRef = "N"
        exif.gpsLongitude = [2, 21, 7.2]
        exif.gpsLongitudeRef = "E"
        let paris = PhotoMetadataRules.coordinates(exif)
        XCTAssertEqual(paris?.0 ?? 0, 48.856_67, accuracy: 0.0001)
        XCTAssertEqual(paris?.1 ?? 0, 2.352, accuracy: 0.0001)
        exif.gpsLatitudeRef = "S"
        exif.gpsLongitudeRef = "W"
        XCTAssertLessThan(PhotoMetadataRules.coordinates(exif)?.0 ?? 0, 0)
        XCTAssertLessThan(PhotoMetadataRules.coordinates(exif)?.1 ?? 0, 0)
        for bad in [[91.0, 0, 0], [90, 30, 0], [.nan, 0, 0], [.infinity, 0, 0], [-1, 0, 0], [10, 60, 0], [10, 0]] {
            exif.gpsLatitude = bad
            XCTAssertNil(PhotoMetadataRules.coordinates(exif), "\(bad)")
        }
        exif.gpsLatitude = [0, 0, 0]
        exif.gpsLongitude = [0, 0, 0]
        XCTAssertNil(PhotoMetadataRules.coordinates(exif), "0,0 is a GPS without a fix")
        exif.gpsLongitude = [181, 0, 0]
        XCTAssertNil(PhotoMetadataRules.coordinates(exif))
    }
}
