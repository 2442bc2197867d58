// File kinds, header sizes, and libexif/libheif readers on hostile bytes: every one gives a value, none traps.
import FolderImport
import PhotoContent
import XCTest

final class ImageFileTests: XCTestCase {
    func testKindsByName() {
        XCTAssertEqual(ImageFileKind.fromName("a.JPG"), .jpeg)
        XCTAssertEqual(ImageFileKind.fromName("a.JpEg"), .jpeg)
        XCTAssertEqual(ImageFileKind.fromName("a.png"), .png)
        XCTAssertEqual(ImageFileKind.fromName("a.HEIC"), .heic)
        XCTAssertEqual(ImageFileKind.fromName("a.heif"), .heic)
        XCTAssertEqual(ImageFileKind.fromName("a.MOV"), .video)
        XCTAssertEqual(ImageFileKind.fromName("a.CR2"), .raw)
        XCTAssertEqual(ImageFileKind.fromName("a.txt"), .other)
        XCTAssertEqual(ImageFileKind.fromName(".jpg"), .other)
        XCTAssertEqual(ImageFileKind.fromName("jpg"), .other)
    }

    /// A photo followed by 300 MiB of zeros (a download never finished): imported, reading at most the first
    /// 64 MiB to check it decodes (it read the whole file, up to 1 GiB, into two buffers).
    func testAJPEGWithAHugeTailIsCheckedFromItsBeginningOnly() throws {
        let folder = NSTemporaryDirectory() + "photofs-huge-tail-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/big.jpg"
        try PhotoFixtures.jpeg(seed: 3).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(truncate(path, 300 << 20), 0)
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        let file = WalkedFile(path: path, root: folder, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                              size: Int64(info.st_size), mtimeNanos: 0, kind: .jpeg)
        func bytesRead() throws -> Int {
            let io = try String(contentsOfFile: "/proc/self/io", encoding: .utf8)
            let line = try XCTUnwrap(io.split(separator: "\n").first { $0.hasPrefix("rchar:") })
            return try XCTUnwrap(Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)))
        }
        let before = try bytesRead()
        let reading = try PhotoFileReader.read(file)
        XCTAssertEqual(reading.file.kind, .jpeg)
        XCTAssertLessThan(try bytesRead() - before, 80 << 20, "at most 64 MiB and the head and tail")
    }

    /// A JPEG whose first segment's length runs past the file's end, though it ends with an end-of-image
    /// marker: refused as corrupt (no frame header to be found, and no decode), not imported to fail every render.
    func testAJPEGWhoseSegmentRunsPastItsEndIsRefused() throws {
        let folder = NSTemporaryDirectory() + "photofs-past-end-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let photo = [UInt8](try PhotoFixtures.jpeg(seed: 5))
        // SOI, an APP1 claiming 65,535 bytes, 4,000 bytes of it, then the photo's own end marker.
        let corrupt: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF] + Array(repeating: 0x20, count: 4000) + [0xFF, 0xD9]
        for (name, bytes, refused) in [("good.jpg", photo, false), ("corrupt.jpg", corrupt, true)] {
            let path = folder + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            var info = stat()
            XCTAssertEqual(stat(path, &info), 0)
            let file = WalkedFile(path: path, root: folder, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                                  size: Int64(info.st_size), mtimeNanos: 0, kind: .jpeg)
            if refused {
                XCTAssertThrowsError(try PhotoFileReader.read(file), name) { error in
                    XCTAssertEqual((error as? FileReadFailure)?.isAboutContent, true, "\(error)")
                    XCTAssertTrue("\(error)".contains("corrupt JPEG"), "\(error)")
                }
            } else {
                XCTAssertEqual(try PhotoFileReader.read(file).headerSize?.width, 96, name)
            }
        }
    }

    /// A name replaced by a FIFO since the walk: no block in open(2), and no verdict on its content (a file
    /// refused for its content is skipped unread by later imports).
    func testAFIFOInPlaceOfAPhotoIsAChangeNotARefusal() throws {
        let folder = NSTemporaryDirectory() + "fifo-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/photo.jpg"
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        let file = WalkedFile(path: path, root: folder, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                              size: 1000, mtimeNanos: 0, kind: .jpeg)
        XCTAssertThrowsError(try PhotoFileReader.read(file)) { error in
            XCTAssertEqual((error as? FileReadFailure)?.isAboutContent, false, "\(error)")
        }
    }

    func testHeaderSizesOfRealEncodedImages() throws {
        let image = PixelImage(width: 37, height: 21, channels: 3, pixels: [UInt8](repeating: 90, count: 37 * 21 * 3))
        let jpeg = [UInt8](try ImageCodec.encodeJPEG(image, quality: 80))
        XCTAssertEqual(ImageHeaderSize.jpeg(jpeg)?.width, 37)
        XCTAssertEqual(ImageHeaderSize.jpeg(jpeg)?.height, 21)
        let png = [UInt8](try ImageCodec.encodePNG(image))
        XCTAssertEqual(ImageHeaderSize.png(png)?.width, 37)
        XCTAssertTrue(ImageFileKind.bytesMatch(.jpeg, jpeg))
        XCTAssertFalse(ImageFileKind.bytesMatch(.png, jpeg))
        // Every prefix of a real JPEG: a size or nil, never a trap.
        for length in 0..<min(jpeg.count, 700) { _ = ImageHeaderSize.jpeg(Array(jpeg.prefix(length))) }
        XCTAssertNil(ImageHeaderSize.jpeg([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00]), "a segment length below 2")
        XCTAssertNil(ImageHeaderSize.png(Array(png.prefix(20))))
    }

    /// EXIF in an APP1 segment after a comment (COM), an XMP APP1 and an ICC APP2, as ImageMagick and then
    /// exiftool leave a photo that had a comment ("Created with GIMP"): read wherever it is before the image
    /// data (libexif alone gave up at the comment, and the photo lost its date, title and camera).
    func testExifIsReadWhicheverSegmentsComeBeforeIt() throws {
        let photo = try PhotoFixtures.jpegBytes(exif: ["-DateTimeOriginal=2019:09:09 09:09:09",
                                                       "-ImageDescription=Segment test", "-Make=FUJIFILM", "-Model=X-T4"])
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let comment = segment(0xFE, Array("Created with GIMP".utf8))
        let xmp = segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>".utf8))
        let icc = segment(0xE2, Array("ICC_PROFILE\0".utf8) + [1, 1] + [UInt8](repeating: 7, count: 300))
        for before in [[], comment, comment + xmp + icc, xmp + comment, [0xFF] + comment] {
            let bytes = Array(photo[..<2]) + before + Array(photo[2...])
            let fields = ExifReader.fields(from: bytes)
            XCTAssertEqual(fields.dateTimeOriginal, "2019:09:09 09:09:09", "\(before.count) bytes of segments before")
            XCTAssertEqual(fields.imageDescription, "Segment test")
            XCTAssertEqual(fields.make, "FUJIFILM")
            XCTAssertEqual(fields.model, "X-T4")
            XCTAssertEqual(ImageHeaderSize.jpeg(bytes)?.width, 96, "the frame size is read past them too")
        }
        // The comment, then the image data (SOS) with no EXIF segment before it: no fields.
        let scan = try XCTUnwrap(photo.indices.dropLast().first { photo[$0] == 0xFF && photo[$0 + 1] == 0xDA })
        XCTAssertEqual(ExifReader.fields(from: Array(photo[..<2]) + comment + Array(photo[scan...])), ExifFields())
    }

    /// EXIF whose parts point outside its block: the tags libexif dropped are a warning (a trial's photos lost
    /// their date and title without a word); a sound block, a real photo's as exiftool wrote it, is none.
    func testADamagedExifBlockIsAWarning() throws {
        let sound = ExifReader.fields(from: try PhotoFixtures.jpegBytes(exif: ["-DateTimeOriginal=2019:09:09 09:09:09",
                                                                              "-ImageDescription=Sound"]))
        XCTAssertEqual(sound.corruptions, 0)
        XCTAssertFalse(PhotoMetadataRules.unusableValues(sound, now: 0).contains { $0.contains("damaged") })

        let header: [UInt8] = Array("Exif".utf8) + [0, 0, 0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]
        // ImageDescription, 20 ASCII bytes at an offset far past the block's end.
        let valueOutside = header + [0, 1, 0x01, 0x0E, 0, 2, 0, 0, 0, 20, 0x7F, 0xFF, 0xFF, 0x00, 0, 0, 0, 0]
        // 65,535 entries in a block that holds one.
        let countTooLarge = header + [0xFF, 0xFF, 0x01, 0x0E, 0, 2, 0, 0, 0, 2, 0x41, 0, 0, 0, 0, 0, 0, 0]
        for block in [valueOutside, countTooLarge] {
            let fields = ExifReader.fields(from: block)
            XCTAssertGreaterThan(fields.corruptions, 0)
            XCTAssertTrue(PhotoMetadataRules.unusableValues(fields, now: 0).contains { $0.contains("block damaged") })
        }
    }

    func testExifReaderOnHostileBlocks() {
        var generator = SystemRandomNumberGenerator()
        XCTAssertEqual(ExifReader.fields(from: []), ExifFields())
        for size in [1, 6, 14, 100, 4096] {
            for _ in 0..<50 {
                let noise = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                _ = ExifReader.fields(from: Array("Exif".utf8) + [0, 0] + noise)
                _ = ExifReader.fields(from: [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF] + Array("Exif".utf8) + [0, 0] + noise)
            }
        }
        // A TIFF header whose first IFD offset points far outside the block.
        let tiff: [UInt8] = Array("Exif".utf8) + [0, 0, 0x4D, 0x4D, 0x00, 0x2A, 0xFF, 0xFF, 0xFF, 0xF0]
        XCTAssertEqual(ExifReader.fields(from: tiff), ExifFields())
        // An IFD entry claiming 2^32-1 ASCII components at an offset past the end.
        let entry: [UInt8] = Array("Exif".utf8) + [0, 0, 0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 1,
                                                    0x01, 0x0E, 0, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]
        XCTAssertNil(ExifReader.fields(from: entry).imageDescription)
    }

    func testHeifBlockOffsets() throws {
        XCTAssertThrowsError(try HeifReader.read(path: "/nonexistent.heic"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("heif-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = directory.appendingPathComponent("fake.heic")
        try Data([0, 0, 0, 24] + Array("ftypheic".utf8) + [UInt8](repeating: 0, count: 12)).write(to: fake)
        XCTAssertThrowsError(try HeifReader.read(path: fake.path), "an ftyp box and nothing else: no primary image")
    }
}
