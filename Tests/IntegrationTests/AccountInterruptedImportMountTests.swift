// Issue 9, acceptance 4: an import interrupted halfway — the origin failing page 3 of a 5-page listing, or
// Ctrl-C (SIGINT) while page 3's photos are being measured — leaves a library that mounts and lists complete
// photos only, exactly those of the pages committed; the next import continues from page 3 without asking
// for pages 1 and 2 again.
import FlickrOrigin
import Foundation
import XCTest

final class AccountInterruptedImportMountTests: XCTestCase {
    var harness: MountHarness!
    /// The account's 10 photos in listing order.
    var stream: [OriginPhoto] = []
    /// Everything its photostream lists, 2 a page: the photos and its 2 videos (people.getPhotos lists
    /// videos whatever `media` asks; the import counts and drops them), so 6 pages.
    var listed: [OriginPhoto] = []
    var pageCount: Int { (listed.count + 1) / 2 }
    /// The photos of pages 1 and 2, and of the pages after them.
    var photosOfPagesOneAndTwo: [OriginPhoto] { listed.prefix(4).filter { !$0.isVideo } }
    var photosAfterPageTwo: [OriginPhoto] { listed.dropFirst(4).filter { !$0.isVideo } }
    let perPage = ["--per-page", "2"]
    static let listing = "flickr.people.getPhotos"

    override func setUpWithError() throws {
        // 72 demo photos: the account owns 6 public ones and 4 that are not public.
        harness = try MountHarness(library: DemoLibrary.account(count: 72, scale: 8))
        try harness.signIn()
        stream = DemoLibrary.stream(of: harness.origin)
        XCTAssertEqual(stream.count, 10)
        listed = DemoLibrary.stream(of: harness.origin, videos: true)
        XCTAssertEqual(listed.count, 12)
    }

    override func tearDown() { harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    /// The pages of the photostream listing (the calls with extras) the origin was asked for, in order.
    var listingPagesAsked: [String] {
        harness.origin.restCallLog.filter { $0.method == Self.listing && ($0.parameters["extras"] ?? "").contains("url_o") }
            .map { $0.parameters["page"] ?? "1" }
    }

    func testTheOriginFailingAtPage3LeavesPages1And2AndTheNextImportContinues() throws {
        // Page 3 answers 500 however often it is asked: the origin has gone bad there.
        harness.origin.answer(.rest(Self.listing, page: 3, withExtras: true), status: 500)
        let cut = harness.importAccount(perPage)
        XCTAssertNotEqual(cut.status, 0, cut.text)
        XCTAssertTrue(cut.stderr.contains("import stopped") && cut.stderr.contains("HTTP 500"), cut.stderr)
        XCTAssertEqual(listingPagesAsked, ["1", "2", "3", "3", "3"], "pages 1 and 2, then page 3 tried 3 times")

        try checkLibraryHoldsPagesOneAndTwo()
        try checkTheNextImportContinuesFromPage3()
    }

    func testSIGINTWhilePage3IsMeasuredLeavesPages1And2AndTheNextImportContinues() throws {
        // The HEAD of page 3's first photo is held: the import has read page 3 and is measuring its photos.
        let photoOfPage3 = try XCTUnwrap(listed.dropFirst(4).prefix(2).first { !$0.isVideo }, "page 3 holds a photo")
        let firstOfPage3 = try XCTUnwrap(harness.origin.imagePath(photoID: photoOfPage3.id))
        let held = harness.origin.hold(.request("HEAD", path: firstOfPage3))
        defer { held.release() }
        let output = harness.root.appendingPathComponent("import.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: MountHarness.binary)
        process.arguments = harness.accountImportArguments(perPage)
        process.environment = ProcessInfo.processInfo.environment.merging(harness.accountEnvironment) { $1 }
        let outputHandle = try FileHandle(forWritingTo: output)
        process.standardOutput = outputHandle
        process.standardError = outputHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        XCTAssertTrue(held.waitForArrival(timeout: 30), "the import never measured page 3")
        // Page 4 may have been asked for already: the next page is fetched while one is measured.
        XCTAssertTrue([["1", "2", "3"], ["1", "2", "3", "4"]].contains(listingPagesAsked),
                      "the import is in page 3: \(listingPagesAsked)")
        XCTAssertTrue(process.isRunning)
        kill(process.processIdentifier, SIGINT)
        XCTAssertTrue(eventually(within: 10) { !process.isRunning }, "SIGINT did not stop the import")
        XCTAssertTrue(process.terminationReason == .uncaughtSignal ? process.terminationStatus == SIGINT : process.terminationStatus != 0,
                      "stopped by SIGINT: \(process.terminationReason) \(process.terminationStatus) "
                      + ((try? String(contentsOf: output, encoding: .utf8)) ?? ""))
        held.release()

        try checkLibraryHoldsPagesOneAndTwo()
        try checkTheNextImportContinuesFromPage3()
    }

    /// The interrupted library mounts and shows complete photos only: exactly those of pages 1 and 2, each
    /// file's size what `cat` reads and the origin's bytes; no album yet (albums come after the listing).
    func checkLibraryHoldsPagesOneAndTwo(file: StaticString = #filePath, line: UInt = #line) throws {
        let status = harness.photofs(["status", harness.library])
        XCTAssertTrue(status.text.contains("an interrupted import stopped after 2 page(s)"), status.text, file: file, line: line)
        XCTAssertTrue(status.text.contains("last synced: never completely"), status.text, file: file, line: line)

        try harness.mount()
        let byID = try harness.mountedFilesByPhotoID()
        XCTAssertEqual(Set(byID.keys), Set(photosOfPagesOneAndTwo.map(\.id)), "the photos of pages 1 and 2, no more", file: file, line: line)
        for photo in photosOfPagesOneAndTwo {
            for mounted in byID[photo.id] ?? [] {
                XCTAssertGreaterThan(mounted.size, 0, mounted.path, file: file, line: line)
                let read = Shell.run("cat", [harness.path(mounted.path)])
                XCTAssertEqual(read.status, 0, "\(mounted.path): \(read.stderr)", file: file, line: line)
                XCTAssertEqual(Int64(read.stdout.count), mounted.size, "\(mounted.path): stat and cat agree", file: file, line: line)
                XCTAssertEqual(read.stdout, photo.image.data, "\(mounted.path): the origin's bytes", file: file, line: line)
            }
        }
        XCTAssertEqual(harness.directoryOrder("albums"), [], file: file, line: line)
    }

    /// The next import continues after page 2: it asks for pages 3–6 only, measures only their photos, and
    /// the live mount then shows all 10 and the albums.
    func checkTheNextImportContinuesFromPage3(file: StaticString = #filePath, line: UInt = #line) throws {
        harness.origin.clearRequestHooks()
        harness.origin.resetCounters()
        let next = harness.importAccount(perPage)
        XCTAssertEqual(next.status, 0, next.stderr, file: file, line: line)
        XCTAssertTrue(next.text.contains("continued an interrupted import after page 2"), next.text, file: file, line: line)
        XCTAssertEqual(listingPagesAsked, (3...pageCount).map(String.init), "finished pages are not asked for again",
                       file: file, line: line)
        XCTAssertEqual(harness.origin.requestCount(method: "HEAD"), photosAfterPageTwo.count,
                       "only the photos of the pages after page 2 are measured", file: file, line: line)
        for photo in photosOfPagesOneAndTwo {
            XCTAssertEqual(harness.origin.requestCount(method: "HEAD", path: try XCTUnwrap(harness.origin.imagePath(photoID: photo.id))), 0,
                           photo.id, file: file, line: line)
        }
        XCTAssertTrue(eventually(within: 5) {
            (try? harness.mountedFilesByPhotoID().keys).map(Set.init) == Set(stream.map(\.id))
                && harness.directoryOrder("albums").count == 3
        }, "the live mount shows every photo and album: \(harness.directoryOrder("albums"))", file: file, line: line)
        let status = harness.photofs(["status", harness.library])
        XCTAssertFalse(status.text.contains("interrupted"), status.text, file: file, line: line)
        XCTAssertTrue(status.text.contains("photos: 10 shown (4 private)"), status.text, file: file, line: line)
    }
}
