// A folder import into a real library, from real photos with EXIF written by exiftool: metadata, places,
// and identity across renames, moves, edits, duplicates and deletions.
import FolderImport
import Logging
import PhotoCatalog
import PhotoSources
import TestRequirements
import XCTest

final class FolderImporterTests: XCTestCase {
    var directory: URL!
    var photos: String { directory.appendingPathComponent("photos").path }
    var library: String { directory.appendingPathComponent("library.sqlite").path }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("folder-import-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: photos + "/trip", withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    func write(_ name: String, seed: UInt8, tags: [String] = []) throws -> String {
        let path = photos + "/" + name
        try PhotoFixtures.jpeg(seed: seed).write(to: URL(fileURLWithPath: path))
        if !tags.isEmpty { try PhotoFixtures.exiftool(path, tags) }
        return path
    }

    @discardableResult
    func importFolder(deferring deferred: Set<String> = []) throws -> FolderImportReport {
        let catalog = try Catalog(path: library)
        return try FolderImporter(catalog: catalog, roots: [photos], logger: Logger(label: "test"), progress: nil,
                                  deferred: deferred).run()
    }

    func photo(titled title: String) throws -> PhotoRecord? {
        try Catalog(path: library).allPhotos().first { $0.title == title }
    }

    func testMetadataFromRealExif() throws {
        try write("trip/tokyo.jpg", seed: 1, tags: [
            "-DateTimeOriginal=2024:07:14 09:30:12", "-OffsetTimeOriginal=+09:00", "-GPSLatitude=35.6895",
            "-GPSLatitudeRef=N", "-GPSLongitude=139.6917", "-GPSLongitudeRef=E", "-Artist=Ada Lovelace",
            "-ImageDescription=Shinjuku at night", "-Make=Canon", "-Model=Canon EOS 80D",
        ])
        try write("trip/P1010001.JPG", seed: 2, tags: [
            "-DateTimeOriginal=2023:12:31 23:59:59", "-OffsetTimeOriginal=+99:00", "-Make=OLYMPUS IMAGING CORP.",
            "-Model=E-M10", "-ImageDescription=OLYMPUS DIGITAL CAMERA", "-GPSLatitude=-33.8688", "-GPSLatitudeRef=S",
            "-GPSLongitude=151.2093", "-GPSLongitudeRef=E",
        ])
        try write("IMG_20220102_030405.jpg", seed: 3)
        try write("bogus.jpg", seed: 4, tags: ["-DateTimeOriginal=0000:00:00 00:00:00", "-GPSLatitude=0.5",
                                               "-GPSLatitudeRef=N", "-GPSLongitude=-140", "-GPSLongitudeRef=W"])
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: photos + "/notes.txt"))
        try Data().write(to: URL(fileURLWithPath: photos + "/empty.jpg"))
        try Data([0xFF, 0xD8, 0xFF, 0xE0]).write(to: URL(fileURLWithPath: photos + "/clip.MOV"))
        let full = try PhotoFixtures.jpeg(width: 300, height: 200, seed: 9)
        try full.prefix(full.count / 2).write(to: URL(fileURLWithPath: photos + "/truncated.jpg"))

        let report = try importFolder()
        XCTAssertEqual(report.counts.new, 4)
        XCTAssertEqual(report.counts.skipped["video"], 1)
        XCTAssertEqual(report.counts.skipped["other"], 1)
        XCTAssertEqual(report.counts.skipped["unreadable"], 2, "the empty and the truncated JPEG")
        XCTAssertEqual(report.counts.filesRead, 6, "the four photos, and the two that turned out unreadable")

        let tokyo = try XCTUnwrap(photo(titled: "Shinjuku at night"))
        XCTAssertEqual(tokyo.dateTaken, "2024-07-14 09:30:12+09:00")
        XCTAssertEqual(tokyo.momentYear, 2024)
        XCTAssertEqual(tokyo.momentAt, MomentRange.seconds(year: 2024, month: 7, day: 14, hour: 9, minute: 30, second: 12))
        XCTAssertTrue(tokyo.originalURL.hasPrefix("file:///"))
        XCTAssertTrue(tokyo.id.hasPrefix("file-"))
        XCTAssertEqual(tokyo.contentType, "image/jpeg")
        let catalog = try Catalog(path: library)
        let details = try XCTUnwrap(catalog.photoDetails(seq: tokyo.seq))
        XCTAssertEqual(details.photographerName, "Ada Lovelace")
        XCTAssertEqual(details.regionName, "Tokyo")
        XCTAssertEqual(try catalog.searchPhotos(XCTUnwrap(SearchQuery(name: "camera:canon"))), [tokyo.seq],
                       "an Artist's photo has its camera too")

        let olympus = try XCTUnwrap(photo(titled: "P1010001"), "a placeholder description is no title")
        XCTAssertEqual(olympus.dateTaken, "2023-12-31 23:59:59", "an offset of +99:00 is dropped")
        XCTAssertEqual(try catalog.photoDetails(seq: olympus.seq)?.photographerName, "OLYMPUS IMAGING CORP. E-M10")
        // The camera is searchable whoever the photographer is (`camera:` or any word of it).
        for name in ["camera:olympus", "olympus e-m10", "E-M10"] {
            XCTAssertEqual(try catalog.searchPhotos(XCTUnwrap(SearchQuery(name: name))), [olympus.seq], name)
        }
        XCTAssertEqual(try catalog.photoDetails(seq: olympus.seq)?.regionName, "New South Wales")

        let named = try XCTUnwrap(photo(titled: "IMG_20220102_030405"))
        XCTAssertEqual(named.dateTaken, "2022-01-02 03:04:05")
        XCTAssertEqual(try catalog.photoDetails(seq: named.seq)?.photographerName, "Unknown Photographer")

        let bogus = try XCTUnwrap(photo(titled: "bogus"))
        XCTAssertNil(try catalog.photoDetails(seq: bogus.seq)?.regionName, "far from any city: no region")
        XCTAssertNotNil(bogus.dateTaken, "the file's mtime")
    }

    func testHeicWithExif() throws {
        let jpeg = try write("source.jpg", seed: 5, tags: ["-DateTimeOriginal=2021:05:06 07:08:09", "-Artist=Grace"])
        try PhotoFixtures.heic(from: jpeg, to: photos + "/phone.HEIC")
        try FileManager.default.removeItem(atPath: jpeg)
        try importFolder()
        let heic = try XCTUnwrap(photo(titled: "phone"))
        XCTAssertEqual(heic.contentType, "image/heic")
        XCTAssertEqual(heic.dateTaken, "2021-05-06 07:08:09")
        XCTAssertEqual(try Catalog(path: library).photoDetails(seq: heic.seq)?.photographerName, "Grace")
    }

    /// A name that is not UTF-8 (Latin-1 from an old disk) is skipped with a warning that says so, not "No such
    /// file or directory"; two names that are one text in two Unicode forms (NFC, NFD) are not merged into one
    /// photo: the second is skipped with a warning naming the first.
    func testNamesNotUTF8AndNamesInTwoUnicodeFormsAreWarnedOf() throws {
        let latin1 = Array((photos + "/caf").utf8) + [0xE9] + Array(".jpg".utf8)
        let jpeg = try PhotoFixtures.jpeg(seed: 60)
        let fd = (latin1 + [0]).withUnsafeBufferPointer { path in
            path.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) }
        }
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(jpeg.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }, jpeg.count)
        close(fd)
        // A Latin-1 name the import would not take anyway: counted, no warning.
        let pdf = Array((photos + "/r").utf8) + [0xE9] + Array("sum\u{E9}.pdf".utf8)
        let pdfFD = (pdf + [0]).withUnsafeBufferPointer { path in
            path.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o644) }
        }
        XCTAssertGreaterThanOrEqual(pdfFD, 0)
        close(pdfFD)
        try write("caf\u{E9}.jpg", seed: 61) // NFC
        try write("cafe\u{301}.jpg", seed: 62) // NFD: another photo, one name to a String comparison
        let messages = LogRecorder()
        let catalog = try Catalog(path: library)
        let report = try FolderImporter(catalog: catalog, roots: [photos], logger: messages.logger(), progress: nil).run()
        XCTAssertEqual(report.counts.new, 1, "one of the two Unicode forms")
        XCTAssertEqual(report.counts.warnings, 2)
        XCTAssertEqual(report.counts.skipped["other"], 1, "the PDF")
        XCTAssertEqual(report.counts.skipped["names to fix"], 2, "both photos left out are counted in the summary")
        XCTAssertTrue(messages.lines.contains { $0.contains("caf\\xE9.jpg: its name is not UTF-8") }, messages.lines.joined(separator: "\n"))
        XCTAssertTrue(messages.lines.contains { $0.contains("in another Unicode form") }, messages.lines.joined(separator: "\n"))
        XCTAssertFalse(messages.lines.contains { $0.contains("No such file") })
    }

    /// A file is public (0444 in a mount that allows others) only when others may read it where it is: readable
    /// by them, in folders they may pass through, up to /.
    func testAFileInAFolderOthersCannotEnterIsPrivate() throws {
        guard FolderWalk.othersMayEnter(photos) else { throw XCTSkip("the scratch folder is not open to others: \(photos)") }
        try FileManager.default.createDirectory(atPath: photos + "/private", withIntermediateDirectories: true)
        try write("trip/open.jpg", seed: 63, tags: ["-ImageDescription=Open"])
        try write("private/closed.jpg", seed: 64, tags: ["-ImageDescription=Closed"])
        try write("unreadable.jpg", seed: 65, tags: ["-ImageDescription=Unreadable"])
        XCTAssertEqual(chmod(photos + "/private", 0o700), 0)
        XCTAssertEqual(chmod(photos + "/unreadable.jpg", 0o600), 0)
        try importFolder()
        XCTAssertEqual(try photo(titled: "Open")?.visibility.isPublic, true)
        XCTAssertEqual(try photo(titled: "Closed")?.visibility.isPublic, false, "a 0644 file in a 0700 folder")
        XCTAssertEqual(try photo(titled: "Unreadable")?.visibility.isPublic, false)
        XCTAssertFalse(FolderWalk.othersMayEnter(photos + "/private"))
        XCTAssertTrue(FolderWalk.othersMayEnter("/"))
    }

    /// A PNG's EXIF is its `eXIf` chunk, where exiftool writes it: its date, place and title are read.
    func testAPngsExifIsRead() throws {
        let path = photos + "/screenshot.png"
        try PhotoFixtures.png().write(to: URL(fileURLWithPath: path))
        try PhotoFixtures.exiftool(path, ["-DateTimeOriginal=2019:06:08 10:11:12", "-ImageDescription=Red square",
                                          "-GPSLatitude=38.7223", "-GPSLatitudeRef=N", "-GPSLongitude=9.1393",
                                          "-GPSLongitudeRef=W"])
        // The same file with its eXIf chunk's length made absurd: imported without EXIF, nothing read past its end.
        var hostile = try Data(contentsOf: URL(fileURLWithPath: path))
        let chunk = try XCTUnwrap(hostile.range(of: Data("eXIf".utf8)))
        hostile.replaceSubrange(chunk.lowerBound - 4 ..< chunk.lowerBound, with: [0x7F, 0xFF, 0xFF, 0xF0])
        hostile.append(contentsOf: [0x00]) // unique bytes: another photo
        try hostile.write(to: URL(fileURLWithPath: photos + "/hostile.png"))
        let report = try importFolder()
        XCTAssertEqual(report.counts.new, 2)
        let png = try XCTUnwrap(photo(titled: "Red square"))
        XCTAssertEqual(png.dateTaken, "2019-06-08 10:11:12")
        XCTAssertEqual(try Catalog(path: library).photoDetails(seq: png.seq)?.regionName, "Lisbon District")
        XCTAssertNotNil(try photo(titled: "hostile"), "no EXIF read: the file name is its title")
    }

    /// A file whose bytes are another image kind than its name says (a HEIC exported as `.jpg`, a JPEG
    /// downloaded as `.png`) is imported as what it is; one whose bytes are no image is refused.
    func testAnImageNamedAsAnotherKindIsTakenAsWhatItIs() throws {
        let jpeg = try write("source.jpg", seed: 6, tags: ["-DateTimeOriginal=2021:05:06 07:08:09"])
        try PhotoFixtures.heic(from: jpeg, to: photos + "/exported.JPG")
        try FileManager.default.moveItem(atPath: jpeg, toPath: photos + "/downloaded.png")
        try Data("<html>not found</html>".utf8).write(to: URL(fileURLWithPath: photos + "/error-page.jpg"))
        let report = try importFolder()
        XCTAssertEqual(report.counts.new, 2)
        XCTAssertEqual(report.counts.skipped["unreadable"], 1, "the HTML page named .jpg")
        XCTAssertEqual(try photo(titled: "exported")?.contentType, "image/heic")
        XCTAssertEqual(try photo(titled: "downloaded")?.contentType, "image/jpeg")
        XCTAssertEqual(try photo(titled: "downloaded")?.dateTaken, "2021-05-06 07:08:09", "its EXIF read as a JPEG's")
    }

    func testIdentityAcrossRenamesEditsDuplicatesAndDeletions() throws {
        let a = try write("a.jpg", seed: 10, tags: ["-ImageDescription=Alpha"])
        let b = try write("b.jpg", seed: 11)
        try write("c.jpg", seed: 12)
        try importFolder()
        let alpha = try XCTUnwrap(photo(titled: "Alpha"))
        let beta = try XCTUnwrap(photo(titled: "b"))

        let again = try importFolder()
        XCTAssertEqual(again.counts.unchanged, 3)
        XCTAssertEqual(again.counts.filesRead, 0, "an unchanged folder reads no image bytes")
        XCTAssertEqual(again.written.added + again.written.updated, 0)
        XCTAssertTrue(again.changedNothing, "so the CLI does not cluster the events again")

        // Rename and move; copy c (a duplicate); edit b; delete nothing yet.
        try FileManager.default.moveItem(atPath: a, toPath: photos + "/trip/renamed.jpg")
        try FileManager.default.copyItem(atPath: photos + "/c.jpg", toPath: photos + "/trip/c-copy.jpg")
        try PhotoFixtures.jpeg(seed: 99).write(to: URL(fileURLWithPath: b))
        let changed = try importFolder()
        XCTAssertEqual(changed.counts.renamedOrMoved, 1)
        XCTAssertEqual(changed.counts.edited, 1)
        XCTAssertEqual(changed.counts.duplicateFiles, 1)
        XCTAssertFalse(changed.changedNothing)
        let moved = try XCTUnwrap(photo(titled: "Alpha"))
        XCTAssertEqual(moved.seq, alpha.seq, "same photo, same inode in the mount")
        XCTAssertEqual(moved.id, alpha.id)
        XCTAssertTrue(moved.originalURL.hasSuffix("/trip/renamed.jpg"))
        let edited = try XCTUnwrap(photo(titled: "b"))
        XCTAssertEqual(edited.seq, beta.seq)
        XCTAssertNotEqual(edited.etag, beta.etag, "new bytes")
        XCTAssertEqual(try Catalog(path: library).allPhotos().count, 3, "the copy is the same photo")
        XCTAssertEqual(try Catalog(path: library).folderCounts()[photos]?.duplicateFiles, 1)

        try FileManager.default.removeItem(atPath: photos + "/c.jpg")
        let afterDelete = try importFolder()
        XCTAssertEqual(afterDelete.counts.removed, 0, "the copy still holds the photo")
        try FileManager.default.removeItem(atPath: photos + "/trip/c-copy.jpg")
        let gone = try importFolder()
        XCTAssertEqual(gone.counts.removed, 1)
        XCTAssertNil(try photo(titled: "c"))
    }

    /// A link to a photo of the folders (a "Favourites" folder of links) is the same file: a duplicate, not a
    /// second photo, also when the photo is longer than the partial hash (the full hash then decides).
    func testALinkToAPhotoIsADuplicateOfIt() throws {
        let path = photos + "/trip/long.jpg"
        let bytes = try PhotoFixtures.jpeg(width: 900, height: 700, seed: 70)
        XCTAssertGreaterThan(bytes.count, ContentHash.prefixBytes)
        try bytes.write(to: URL(fileURLWithPath: path))
        try FileManager.default.createDirectory(atPath: photos + "/Favourites", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: photos + "/Favourites/best.jpg", withDestinationPath: "../trip/long.jpg")
        let report = try importFolder()
        XCTAssertEqual(report.counts.duplicateFiles, 1)
        XCTAssertEqual(try Catalog(path: library).allPhotos().count, 1)
        // Shown from its own file, though "Favourites/best.jpg" sorts first: titled and found by it.
        XCTAssertEqual(try Catalog(path: library).allPhotos().first?.title, "long")
        XCTAssertEqual(try Catalog(path: library).allPhotos().first.map { $0.originalURL.hasSuffix("/trip/long.jpg") }, true)
        XCTAssertEqual(try importFolder().counts.unchanged, 2, "and nothing to do the next time")
        // A link to nothing that would be a photo is skipped and counted, at every import; one that would be no
        // photo (an editor's lock) is another file.
        try FileManager.default.createSymbolicLink(atPath: photos + "/Favourites/gone.jpg", withDestinationPath: "/nonexistent/x.jpg")
        try FileManager.default.createSymbolicLink(atPath: photos + "/Favourites/notes.txt", withDestinationPath: "ada@host.4242")
        XCTAssertEqual(try importFolder().counts.skipped["broken links"], 1)
        let again = try importFolder()
        XCTAssertEqual(again.counts.skipped["broken links"], 1)
        XCTAssertEqual(again.counts.skipped["other"], 1)
    }

    /// A photo whose date came from its file's name keeps it when the file is renamed to a name without one, or
    /// copied elsewhere and deleted: it moved to the year of the file's mtime. A name with another date wins.
    func testARenamedFileKeepsTheDateItsOldNameGave() throws {
        let path = try write("IMG_20190304_050607.jpg", seed: 60)
        var modified = [timespec(tv_sec: 1_735_732_800, tv_nsec: 0), timespec(tv_sec: 1_735_732_800, tv_nsec: 0)] // 2025-01-01
        XCTAssertEqual(utimensat(AT_FDCWD, path, &modified, 0), 0)
        try importFolder()
        let named = try XCTUnwrap(try Catalog(path: library).allPhotos().first)
        XCTAssertEqual(named.dateTaken, "2019-03-04 05:06:07")

        try FileManager.default.moveItem(atPath: path, toPath: photos + "/Beach day.jpg")
        XCTAssertEqual(try importFolder().counts.renamedOrMoved, 1)
        let renamed = try XCTUnwrap(try photo(titled: "Beach day"))
        XCTAssertEqual(renamed.seq, named.seq)
        XCTAssertEqual(renamed.dateTaken, "2019-03-04 05:06:07", "not the mtime's 2025-01-01")
        XCTAssertEqual(renamed.momentAt, named.momentAt)

        // Copied to a new file (a new mtime) and the old one deleted: the same photo, the same date.
        try FileManager.default.copyItem(atPath: photos + "/Beach day.jpg", toPath: photos + "/trip/beach.jpg")
        try FileManager.default.removeItem(atPath: photos + "/Beach day.jpg")
        try importFolder()
        XCTAssertEqual(try photo(titled: "beach")?.dateTaken, "2019-03-04 05:06:07")

        try FileManager.default.moveItem(atPath: photos + "/trip/beach.jpg", toPath: photos + "/trip/IMG_20200101_101010.jpg")
        try importFolder()
        XCTAssertEqual(try photo(titled: "IMG_20200101_101010")?.dateTaken, "2020-01-01 10:10:10", "the name says a date")

        // A date that came from the mtime follows the mtime when it is corrected (`touch -d`).
        let plain = try write("plain.jpg", seed: 61)
        XCTAssertEqual(utimensat(AT_FDCWD, plain, &modified, 0), 0)
        try importFolder()
        let first = try XCTUnwrap(try photo(titled: "plain")?.dateTaken)
        var corrected = [timespec(tv_sec: 1_500_000_000, tv_nsec: 0), timespec(tv_sec: 1_500_000_000, tv_nsec: 0)] // 2017
        XCTAssertEqual(utimensat(AT_FDCWD, plain, &corrected, 0), 0)
        try importFolder()
        let second = try XCTUnwrap(try photo(titled: "plain")?.dateTaken)
        XCTAssertNotEqual(second, first)
        XCTAssertTrue(second.hasPrefix("2017-07-1"), second)
    }

    /// What a card or a NAS share holds beside the photos is left out without a warning: macOS's "._" metadata
    /// files and other hidden files (counted as other files), Synology's "@eaDir" thumbnails and "#recycle" bin.
    func testHiddenFilesAndNasMetadataAreLeftOut() throws {
        try FileManager.default.createDirectory(atPath: photos + "/@eaDir/kept.jpg", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: photos + "/#recycle", withIntermediateDirectories: true)
        try write("IMG_0001.JPG", seed: 50)
        try write("@eaDir/kept.jpg/SYNOFILE_THUMB_XL.jpg", seed: 51)
        try write("#recycle/deleted.jpg", seed: 52)
        try write(".secret.jpg", seed: 53)
        try Data([0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00]).write(to: URL(fileURLWithPath: photos + "/._IMG_0001.JPG"))
        let report = try importFolder()
        XCTAssertEqual(report.counts.new, 1)
        XCTAssertEqual(report.counts.warnings, 0, "an AppleDouble file is no corrupt photo")
        XCTAssertEqual(report.counts.skipped["other"], 2)
        XCTAssertEqual(try Catalog(path: library).allPhotos().map(\.title), ["IMG_0001"])
    }

    /// A folder that is there but cannot be read (permissions; an I/O error or a stale share the same way) is a
    /// warning, and the photos imported from it stay, with their inodes: they were removed as "gone", and came
    /// back as new photos once the folder could be read again. A folder deleted is gone: its photos go.
    func testAFolderThatCannotBeReadKeepsItsPhotos() throws {
        try TestRequirement.root("to read the folders as nobody (setfsuid), whom a folder's mode can refuse")
        try FileManager.default.createDirectory(atPath: photos + "/trip/day1", withIntermediateDirectories: true)
        try write("trip/inside.jpg", seed: 40, tags: ["-ImageDescription=Inside"])
        try write("trip/day1/deep.jpg", seed: 42, tags: ["-ImageDescription=Deep"])
        try write("outside.jpg", seed: 41, tags: ["-ImageDescription=Outside"])
        try importFolder()
        let inside = try XCTUnwrap(photo(titled: "Inside"))
        let deep = try XCTUnwrap(photo(titled: "Deep"))
        // nobody owns the library (it writes it) and may read everything but the folder made unreadable.
        XCTAssertEqual(lchown(directory.path, 65534, 65534), 0)
        for name in FileManager.default.enumerator(atPath: directory.path)?.compactMap({ $0 as? String }) ?? [] {
            XCTAssertEqual(lchown(directory.path + "/" + name, 65534, 65534), 0, name)
        }
        XCTAssertEqual(chmod(photos + "/trip", 0o000), 0)
        let report = try asNobody { try importFolder() }
        XCTAssertEqual(report.counts.removed, 0, "the folder's photos are kept")
        XCTAssertEqual(report.counts.warnings, 1)
        XCTAssertEqual(try photo(titled: "Inside")?.seq, inside.seq)
        // Readable but not searchable (`chmod -R 644`): its entries are listed, none can be stat'ed, the photos
        // inside its subfolder too are kept.
        XCTAssertEqual(chmod(photos + "/trip", 0o644), 0)
        let listed = try asNobody { try importFolder() }
        XCTAssertEqual(listed.counts.removed, 0)
        XCTAssertEqual(listed.counts.warnings, 2, "the photo and the subfolder it could not stat")
        XCTAssertEqual(try photo(titled: "Deep")?.seq, deep.seq)
        XCTAssertEqual(chmod(photos + "/trip", 0o755), 0)
        let readable = try asNobody { try importFolder() }
        XCTAssertEqual(readable.counts.new, 0, "the photo was never gone")
        XCTAssertEqual(try photo(titled: "Inside")?.seq, inside.seq, "same photo, same inode")
        try FileManager.default.removeItem(atPath: photos + "/trip")
        XCTAssertEqual(try importFolder().counts.removed, 2, "a folder deleted takes its photos")
    }

    /// A file refused for what it holds is remembered with its stat: the next import skips it unread, without a
    /// warning, still counted, and keeps the unchanged shortcut; once it changes it is read again. A photo's file
    /// that an edit made corrupt keeps its photo. One that cannot be opened is not remembered: a `chmod` is
    /// enough for the next import to take it.
    func testARefusedFileIsNotReadAgainUntilItChanges() throws {
        try write("good.jpg", seed: 50, tags: ["-ImageDescription=Good"])
        try Data().write(to: URL(fileURLWithPath: photos + "/empty.jpg"))
        let full = try PhotoFixtures.jpeg(width: 300, height: 200, seed: 51)
        try full.prefix(full.count / 2).write(to: URL(fileURLWithPath: photos + "/trip/truncated.jpg"))
        let first = try importFolder()
        XCTAssertEqual(first.counts.skipped["unreadable"], 2)
        XCTAssertEqual(first.counts.warnings, 2)
        XCTAssertEqual(try Catalog(path: library).folderCounts()[photos]?.refusedFiles, 2, "what status shows")

        let again = try importFolder()
        XCTAssertEqual(again.counts.skipped["unreadable"], 2, "still counted")
        XCTAssertEqual(again.counts.warnings, 0, "not warned of again")
        XCTAssertEqual(again.counts.filesRead, 0, "not read again")
        XCTAssertTrue(again.changedNothing, "the unchanged shortcut")

        // Completed: read again and imported.
        try full.write(to: URL(fileURLWithPath: photos + "/trip/truncated.jpg"))
        let completed = try importFolder()
        XCTAssertEqual(completed.counts.new, 1)
        XCTAssertEqual(completed.counts.skipped["unreadable"], 1, "the empty file, still unread")
        XCTAssertEqual(completed.counts.filesRead, 1)
        XCTAssertEqual(try Catalog(path: library).folderCounts()[photos]?.refusedFiles, 1)

        // A photo's file made corrupt by an edit keeps its photo, and is warned of at every import: the mount
        // cannot open it until it is fixed.
        let good = try XCTUnwrap(photo(titled: "Good"))
        try full.prefix(100).write(to: URL(fileURLWithPath: photos + "/good.jpg"))
        XCTAssertEqual(try importFolder().counts.removed, 0)
        let later = try importFolder()
        XCTAssertEqual(later.counts.removed, 0)
        XCTAssertEqual(later.counts.warnings, 1)
        XCTAssertEqual(try photo(titled: "Good")?.seq, good.seq)

        // Deleted: forgotten.
        try FileManager.default.removeItem(atPath: photos + "/empty.jpg")
        try importFolder()
        XCTAssertEqual(try Catalog(path: library).folderCounts()[photos]?.refusedFiles ?? 0, 0)
    }

    func testAFileThatCannotBeOpenedIsReadAgainOnceItCanBe() throws {
        try TestRequirement.root("to read the folders as nobody (setfsuid), whom a file's mode can refuse")
        let locked = try write("locked.jpg", seed: 52, tags: ["-ImageDescription=Locked"])
        XCTAssertEqual(lchown(directory.path, 65534, 65534), 0)
        for name in FileManager.default.enumerator(atPath: directory.path)?.compactMap({ $0 as? String }) ?? [] {
            XCTAssertEqual(lchown(directory.path + "/" + name, 65534, 65534), 0, name)
        }
        XCTAssertEqual(chmod(locked, 0o000), 0)
        let refused = try asNobody { try importFolder() }
        XCTAssertEqual(refused.counts.skipped["unreadable"], 1)
        XCTAssertEqual(try Catalog(path: library).folderCounts()[photos]?.refusedFiles ?? 0, 0, "not remembered")
        XCTAssertEqual(chmod(locked, 0o644), 0) // the mtime does not move
        let opened = try asNobody { try importFolder() }
        XCTAssertEqual(opened.counts.new, 1)
        XCTAssertNotNil(try photo(titled: "Locked"))
    }

    /// Runs `body` with this thread's file-system user and group nobody's (setfsuid: this thread only, and
    /// without root's permission to read any folder); root's again after.
    func asNobody<T>(_ body: () throws -> T) throws -> T {
        // glibc's setfsuid/setfsgid (sys/fsuid.h, which Swift's Glibc module leaves out), found by name.
        typealias SetID = @convention(c) (UInt32) -> Int32
        let libc = dlopen(nil, RTLD_NOW)
        guard let uid = dlsym(libc, "setfsuid"), let gid = dlsym(libc, "setfsgid") else {
            throw XCTSkip("no setfsuid in this C library")
        }
        let setUser = unsafeBitCast(uid, to: SetID.self), setGroup = unsafeBitCast(gid, to: SetID.self)
        _ = setGroup(65534)
        _ = setUser(65534)
        defer {
            _ = setUser(0)
            _ = setGroup(0)
        }
        return try body()
    }

    /// Hostile EXIF written with exiftool's raw values: each unusable value is a warning naming the file, and
    /// the photo imports with the rest (exiftool's own 9.1° as 9 5 60 included: a position, not a warning).
    func testUnusableExifValuesAreWarningsAndTheRestImports() throws {
        try write("hostile.jpg", seed: 40, tags: [
            "-DateTimeOriginal#=2019:13:45 10:00:00", "-OffsetTimeOriginal#=+99:00", "-ModifyDate=2018:01:02 03:04:05",
            "-GPSLatitude=38.7", "-GPSLatitudeRef#=Q", "-GPSLongitude=9.1", "-GPSLongitudeRef#=Z", "-Artist=Grace",
        ])
        try write("rounded.jpg", seed: 41, tags: ["-GPSLatitude=38.7", "-GPSLatitudeRef=N", "-GPSLongitude=9.1",
                                                  "-GPSLongitudeRef=W"])
        let source = try write("big.jpg", seed: 42, tags: ["-DateTimeOriginal=2021:09:09 09:09:09"])
        try PhotoFixtures.heic(from: source, to: photos + "/big.heic")
        try FileManager.default.removeItem(atPath: source)
        let description = directory.appendingPathComponent("description.txt").path
        try String(repeating: "x", count: 1_100_000).write(toFile: description, atomically: true, encoding: .utf8)
        try PhotoFixtures.exiftool(photos + "/big.heic", ["-ImageDescription<=" + description])

        let report = try importFolder()
        XCTAssertEqual(report.counts.new, 3)
        // Month 13, +99:00, the references Q and Z, and the HEIC's block past libexif's 64 KiB.
        XCTAssertEqual(report.counts.warnings, 4)
        let hostile = try XCTUnwrap(photo(titled: "hostile"))
        XCTAssertEqual(hostile.dateTaken, "2018-01-02 03:04:05", "DateTime (IFD0) when DateTimeOriginal is no date")
        XCTAssertNil(hostile.latitude)
        XCTAssertEqual(try Catalog(path: library).photoDetails(seq: hostile.seq)?.photographerName, "Grace")
        let rounded = try XCTUnwrap(photo(titled: "rounded"))
        XCTAssertEqual(rounded.latitude ?? 0, 38.7, accuracy: 0.0001)
        XCTAssertEqual(rounded.longitude ?? 0, -9.1, accuracy: 0.0001)
        XCTAssertNotNil(try photo(titled: "big"), "imported, its EXIF beyond 64 KiB lost")
    }

    /// `--watch` defers files it judges still being written, as those of a folder moved in a moment after it was
    /// written: the import meanwhile must not remove the photos whose files moved there (their inode is a
    /// deferred file's), and the next one finds them renamed, the same photos.
    func testAFolderMovedWhileItsFilesAreDeferredKeepsItsPhotos() throws {
        try write("trip/a.jpg", seed: 30, tags: ["-ImageDescription=Alpha"])
        try importFolder()
        let alpha = try XCTUnwrap(photo(titled: "Alpha"))
        try FileManager.default.moveItem(atPath: photos + "/trip", toPath: photos + "/trip 2")
        let meanwhile = try importFolder(deferring: [photos + "/trip 2/a.jpg"])
        XCTAssertEqual(meanwhile.counts.removed, 0, "its file moved, it is not gone")
        XCTAssertEqual(try photo(titled: "Alpha")?.seq, alpha.seq)
        let settled = try importFolder()
        XCTAssertEqual(settled.counts.renamedOrMoved, 1)
        XCTAssertEqual(settled.counts.removed, 0)
        let moved = try XCTUnwrap(photo(titled: "Alpha"))
        XCTAssertEqual(moved.seq, alpha.seq, "same photo, same inode in the mount")
        XCTAssertTrue(moved.originalURL.hasSuffix("/trip%202/a.jpg") || moved.originalURL.hasSuffix("/trip 2/a.jpg"), moved.originalURL)
        // A deleted file is still removed while another is deferred.
        try write("b.jpg", seed: 31)
        try importFolder()
        try FileManager.default.removeItem(atPath: photos + "/b.jpg")
        XCTAssertEqual(try importFolder(deferring: [photos + "/trip 2/a.jpg"]).counts.removed, 1)
        // A new file being written is not the photo whose file it replaced, even in its inode: the size differs.
        try write("c.jpg", seed: 32, tags: ["-ImageDescription=Gamma"])
        try importFolder()
        let gamma = try XCTUnwrap(photo(titled: "Gamma"))
        let inode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: photos + "/c.jpg")[.systemFileNumber] as? UInt64)
        try FileManager.default.moveItem(atPath: photos + "/c.jpg", toPath: photos + "/c-new.jpg")
        try Data(repeating: 0xFF, count: 10).write(to: URL(fileURLWithPath: photos + "/c-new.jpg"))
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: photos + "/c-new.jpg")[.systemFileNumber] as? UInt64, inode,
                       "the same inode, other bytes (as a reused inode would be)")
        XCTAssertEqual(try importFolder(deferring: [photos + "/c-new.jpg"]).counts.removed, 1, "its photo is gone")
        XCTAssertNil(try photo(titled: "Gamma"))
        XCTAssertNotEqual(gamma.seq, 0)
    }

    /// The same bytes in two imported folders are one photo, shown from one of the files; when that file is
    /// deleted and only its folder is imported again, the photo is shown from the other folder's copy.
    func testAPhotoShownFromADeletedFileMovesToItsCopyInAnotherFolder() throws {
        let second = directory.appendingPathComponent("second").path
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        let original = try write("shared.jpg", seed: 50, tags: ["-ImageDescription=Shared"])
        try FileManager.default.copyItem(atPath: original, toPath: second + "/copy.jpg")
        let catalog = try Catalog(path: library)
        _ = try FolderImporter(catalog: catalog, roots: [photos, second], logger: Logger(label: "test"), progress: nil).run()
        let shared = try XCTUnwrap(photo(titled: "Shared"))
        XCTAssertTrue(shared.originalURL.hasSuffix("/photos/shared.jpg"), shared.originalURL)

        try FileManager.default.removeItem(atPath: original)
        let again = try importFolder() // this folder only
        XCTAssertEqual(again.counts.removed, 0, "the copy still holds the photo")
        let moved = try XCTUnwrap(photo(titled: "Shared"))
        XCTAssertEqual(moved.seq, shared.seq)
        XCTAssertTrue(moved.originalURL.hasSuffix("/second/copy.jpg"), moved.originalURL)
    }

    /// An import of one folder leaves another's photos, and its summary counts its own duplicates only: the
    /// other folder's copies of one photo are not news of this one, a copy here of a photo there is.
    func testAnotherFoldersImportLeavesThisOnesPhotos() throws {
        try write("a.jpg", seed: 20)
        try write("a copy.jpg", seed: 20)
        XCTAssertEqual(try importFolder().counts.duplicateFiles, 1)
        let other = directory.appendingPathComponent("other").path
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try PhotoFixtures.jpeg(seed: 21).write(to: URL(fileURLWithPath: other + "/z.jpg"))
        let catalog = try Catalog(path: library)
        func importOther() throws -> FolderImportReport {
            try FolderImporter(catalog: catalog, roots: [other], logger: Logger(label: "test"), progress: nil).run()
        }
        XCTAssertEqual(try importOther().counts.duplicateFiles, 0, "a's copies are the other folder's")
        XCTAssertEqual(try importOther().counts.duplicateFiles, 0, "unchanged: the same")
        XCTAssertEqual(Set(try catalog.allPhotos().map(\.title)), ["a copy", "z"], "a shown from its first file by path")
        XCTAssertEqual(Set(try catalog.syncStates().map(\.listingKey)), ["folder \(photos)", "folder \(other)"])
        try PhotoFixtures.jpeg(seed: 20).write(to: URL(fileURLWithPath: other + "/a again.jpg"))
        XCTAssertEqual(try importOther().counts.duplicateFiles, 2, "a copy here of a photo held there twice")
    }
}
