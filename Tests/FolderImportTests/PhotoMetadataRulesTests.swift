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
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("NIKON D750"), "the model names the make's first word")
        exif.make = "OLYMPUS IMAGING CORP."
        exif.model = "E-M10"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("OLYMPUS IMAGING CORP. E-M10"))
        exif.make = "Apple"
        exif.model = "iPhone 15"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("Apple iPhone 15"))
        exif.artist = "   \u{0}\t"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("Apple iPhone 15"), "a blank artist is no artist")
        for dots in [".", "..", " - ", "?!"] {
            exif.artist = dots
            XCTAssertEqual(PhotoMetadataRules.photographer(exif), .camera("Apple iPhone 15"), "\(dots): no letter or digit names nobody")
        }
        exif.artist = "Ada\nLovelace"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .artist("Ada Lovelace"))
        exif.artist = "李"
        XCTAssertEqual(PhotoMetadataRules.photographer(exif), .artist("李"))
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
        for placeholder in ["OLYMPUS DIGITAL CAMERA", "  SONY DSC  ", "", "   ", "\u{0}\u{0}", "Exif_JPEG_PICTURE",
                            "SAMSUNG CAMERA PICTURES", "HUAWEI", "IMG_1234.JPG", "DCIM\\100MEDIA\\DJI_0001.JPG", ".", ".."] {
            exif.imageDescription = placeholder
            XCTAssertEqual(title(), "IMG_1234", placeholder)
        }
        exif.imageDescription = "Harbour at dawn"
        XCTAssertEqual(title(), "Harbour at dawn")
        exif.imageDescription = "Scan of photo.jpg"
        XCTAssertEqual(title(), "Scan of photo.jpg", "words, not a file name")
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
        exif.gpsLongitude = [9, 5, 60] // exiftool's own rounding of 9.1°
        XCTAssertEqual(PhotoMetadataRules.coordinates(exif)?.1 ?? 0, -9.1, accuracy: 0.000_001)
        for bad in [[91.0, 0, 0], [90, 30, 0], [.nan, 0, 0], [.infinity, 0, 0], [-1, 0, 0], [10, 61, 0], [10, 0, 60.5], [10, 0]] {
            exif.gpsLatitude = bad
            XCTAssertNil(PhotoMetadataRules.coordinates(exif), "\(bad)")
        }
        exif.gpsLatitude = [0, 0, 0]
        exif.gpsLongitude = [0, 0, 0]
        XCTAssertNil(PhotoMetadataRules.coordinates(exif), "0,0 is a GPS without a fix")
        exif.gpsLongitude = [181, 0, 0]
        XCTAssertNil(PhotoMetadataRules.coordinates(exif))
    }

    func testAReferenceOtherThanItsTwoLettersMakesNoPosition() {
        var exif = ExifFields()
        exif.gpsLatitude = [38, 43, 0]
        exif.gpsLongitude = [9, 8, 0]
        exif.gpsLatitudeRef = "n "
        exif.gpsLongitudeRef = nil
        XCTAssertNotNil(PhotoMetadataRules.coordinates(exif), "lower case, padded, or missing: read as exiftool reads them")
        exif.gpsLongitudeRef = "Z"
        XCTAssertNil(PhotoMetadataRules.coordinates(exif), "Z is neither east nor west")
        exif.gpsLongitudeRef = "W"
        exif.gpsLatitudeRef = "Q"
        XCTAssertNil(PhotoMetadataRules.coordinates(exif))
    }

    /// Values present but unusable each give a phrase (a warning of the import); a camera's "no value" none.
    func testUnusableValuesAreNamed() {
        let now = Int64(1_795_000_000) // 2026
        var exif = ExifFields()
        exif.dateTimeOriginal = "0000:00:00 00:00:00"
        exif.dateTimeDigitized = "    :  :     :  :  "
        exif.dateTime = "2019:06:08 09:30:12"
        exif.offsetTimeOriginal = "+02:00"
        XCTAssertEqual(PhotoMetadataRules.unusableValues(exif, now: now), [])
        exif.dateTimeOriginal = "2019:13:45 10:00:00"
        exif.dateTimeDigitized = "9999:01:01 00:00:00"
        exif.offsetTimeOriginal = "+99:00"
        exif.gpsLatitude = [95, 0, 0]
        exif.gpsLatitudeRef = "N"
        exif.gpsLongitude = [9, 8, 0]
        exif.gpsLongitudeRef = "W"
        exif.cutTexts = [.init(name: "Artist", bytes: 1_100_000)]
        exif.blockBytes = 1_200_000
        let found = PhotoMetadataRules.unusableValues(exif, now: now)
        XCTAssertEqual(found.count, 6, "\(found)")
        XCTAssertTrue(found[0].hasPrefix("DateTimeOriginal \"2019:13:45 10:00:00\" is not a valid date"), found[0])
        XCTAssertTrue(found[1].hasPrefix("DateTimeDigitized \"9999:01:01 00:00:00\""), found[1])
        XCTAssertTrue(found[2].hasPrefix("OffsetTimeOriginal \"+99:00\" is not a time zone offset"), found[2])
        XCTAssertTrue(found[3].hasPrefix("GPS position (latitude 95 0 0 \"N\", longitude 9 8 0 \"W\")"), found[3])
        XCTAssertEqual(found[4], "block of 1200000 bytes: only its first 65534 are read, tags stored beyond them are lost")
        XCTAssertEqual(found[5], "Artist of 1100000 bytes cut to its first 4096")
        // The rest still imports: the date falls back to DateTime.
        let metadata = PhotoMetadataRules.metadata(exif: exif, fileName: "x.jpg", modifiedWallClock: nil, now: now, headerSize: nil)
        XCTAssertEqual(metadata.captured?.origin, .dateTime)
        XCTAssertNil(metadata.latitude)
        // Control characters (C0 and C1) and long values are shown escaped and cut.
        var odd = ExifFields()
        odd.dateTime = "\u{1}\u{9B}" + String(repeating: "x", count: 100)
        let shown = PhotoMetadataRules.unusableValues(odd, now: now).first ?? ""
        XCTAssertTrue(shown.hasPrefix("DateTime \"\\u{1}\\u{9b}xxx"), shown)
        XCTAssertFalse(shown.unicodeScalars.contains("\u{9B}"), "no control sequence reaches a terminal")
        XCTAssertTrue(shown.contains("…\""), shown)
        // A camera without a fix: references and no position, or a position of zeros, is no value.
        var noFix = ExifFields()
        noFix.gpsLatitudeRef = "N"
        noFix.gpsLongitudeRef = "E"
        XCTAssertEqual(PhotoMetadataRules.unusableValues(noFix, now: now), [])
        noFix.gpsLatitude = [0, 0, 0]
        noFix.gpsLongitude = [0, 0, 0]
        XCTAssertEqual(PhotoMetadataRules.unusableValues(noFix, now: now), [])
    }
}
