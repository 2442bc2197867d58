// The source seam: a source that is not Flickr, driven by the same LibraryImporter; Flickr's own answers
// to the protocol (paging cursors, changes, square crops, content access).
@testable import FlickrImport
import FlickrOrigin
import Foundation
import Logging
import PhotoCatalog
import PhotoSources
import XCTest

/// A source in memory, as a local folder or a self-hosted server would be: pages by token, measures
/// without a network, and counts how many measurements run at once.
final class MemorySource: PhotoSource, @unchecked Sendable {
    let kind = "memory"
    let contentAccess = ContentAccess.http
    var pages: [SourcePage] = []
    var failOnPage: Int?
    var places: [String: String] = [:]
    private let lock = NSCondition()
    private var inFlight = 0
    private var waitedAlone = false
    private(set) var maxInFlight = 0
    private(set) var measured: [String] = []
    private(set) var placesAsked: [String] = []

    var pagesAsked: [Int] = []

    func listPage(_ cursor: PageCursor?) throws -> SourcePage {
        let index = cursor.flatMap { Int($0.token) } ?? 0
        pagesAsked.append(index)
        if index == failOnPage { throw ImportError(message: "page \(index) unreachable") }
        return pages[index]
    }

    let listingKey = "scripted"
    let account: SourceAccount? = nil
    func syncPoint() throws -> SyncPoint? { nil }
    func changesPage(since point: SyncPoint, cursor: PageCursor?) throws -> SourcePage { try listPage(cursor) }
    func idPage(_ cursor: PageCursor?) throws -> SourceIDPage? { nil }
    func albums() throws -> [SourceAlbum] { [] }
    func albumMembersPage(_ albumID: String, cursor: PageCursor?) throws -> SourceIDPage {
        SourceIDPage(ids: [], next: nil, pageCount: 0)
    }

    func resolvePlace(_ placeID: String) throws -> PlaceResolution {
        lock.lock(); placesAsked.append(placeID); lock.unlock()
        return PlaceResolution(placeID: placeID, placeName: nil, regionName: places[placeID] ?? "Elsewhere")
    }

    func measure(_ url: String) -> Result<MeasuredContent, MeasureFailure> {
        lock.lock()
        inFlight += 1
        maxInFlight = max(maxInFlight, inFlight)
        measured.append(url)
        lock.broadcast()
        // Measurements are held until a second one has begun (at most 10 s): an importer that measures in
        // parallel then certainly overlaps them, whatever the machine's speed; a serial one never does.
        let deadline = Date().addingTimeInterval(10)
        while maxInFlight < 2 && !waitedAlone {
            if !lock.wait(until: deadline) { waitedAlone = true } // serial: the test fails, once, not per photo
        }
        inFlight -= 1
        lock.unlock()
        if url.hasSuffix("broken.jpg") { return .failure(MeasureFailure("no such file")) }
        return .success(MeasuredContent(size: Int64(url.utf8.count), contentType: "image/jpeg", etag: nil, lastModified: nil))
    }

    func isSquareCrop(renditionLabel: String) -> Bool { false }
}

final class PhotoSourceTests: XCTestCase {
    var directory: URL!
    var catalog: Catalog!
    let log = CapturedLog()

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("source-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    func photo(_ id: String, place: String? = nil, url: String? = nil) throws -> SourcePhoto {
        try SourcePhoto(id: id, owner: "owner-\(id.prefix(1))", ownerName: "", title: "Photo \(id)", description: "",
                        dateTaken: nil, takenAt: nil, uploadedAt: 1_700_000_000, placeID: place, latitude: nil,
                        longitude: nil, originalURL: url ?? "http://files.local/\(id).jpg", thumbnailURL: nil, renditions: [])
    }

    func memorySource() throws -> MemorySource {
        let source = MemorySource()
        source.pages = [
            SourcePage(photos: try (1...20).map { try photo("a\($0)", place: $0 % 2 == 0 ? "p1" : "p2") },
                       skipped: [SkippedRecord(id: "bad/id", field: "id", reason: SourceIdentifier.rule)],
                       next: PageCursor(token: "1"), pageCount: 2),
            SourcePage(photos: [try photo("b1"), try photo("a1", url: "http://files.local/a1-new.jpg"),
                                try photo("b2", url: "http://files.local/broken.jpg")],
                       skipped: [SkippedRecord(id: nil, field: "record", reason: "not a JSON object but a string")],
                       next: nil, pageCount: 2),
        ]
        source.places = ["p1": "North", "p2": "South"]
        return source
    }

    func testAnySourceIsImportedByTheSameImporter() throws {
        let source = try memorySource()
        var options = LibraryImportOptions()
        options.measureConcurrency = 4
        let report = try LibraryImporter(catalog: catalog, source: source, options: options, progress: nil,
                                         logger: log.logger()).run()
        XCTAssertEqual(report.pages, 2)
        XCTAssertEqual(report.photosListed, 22, "a1 listed twice is one photo, the last one")
        XCTAssertEqual(try catalog.photo(id: "a1")?.originalURL, "http://files.local/a1-new.jpg")
        XCTAssertEqual(report.skipped.map(\.field), ["id", "record"])
        XCTAssertEqual(report.skippedByField, ["id": 1, "record": 1])
        XCTAssertEqual(report.unavailable.map(\.id), ["b2"])
        XCTAssertEqual(Set(try catalog.regions().filter { $0.photoCount > 0 }.map(\.name)), ["North", "South", "Unknown Region"])
        XCTAssertEqual(source.placesAsked.sorted(), ["p1", "p2"])
        XCTAssertLessThanOrEqual(source.maxInFlight, 4)
        XCTAssertGreaterThan(source.maxInFlight, 1, "measuring runs in parallel")
        // One warning per skipped record, naming the source, the id and the field.
        let warnings = log.text.split(separator: "\n").filter { $0.contains("memory record skipped") }
        XCTAssertEqual(warnings.count, 2, log.text)
        XCTAssertTrue(warnings[0].contains("field=id") && warnings[0].contains("photo=bad/id"), "\(warnings[0])")
        XCTAssertTrue(warnings[1].contains("field=record") && warnings[1].contains("photo=(none)"), "\(warnings[1])")

        // A second import measures nothing already measured at the same URL, and asks no place again.
        let again = try LibraryImporter(catalog: catalog, source: source, progress: nil, logger: log.logger()).run()
        // Only the photo that could not be measured is asked again, and a1, whose two pages give two URLs:
        // each page is committed on its own, so each of its URLs is new to the library when its page comes.
        XCTAssertEqual(again.sizesMeasured, 3)
        XCTAssertEqual(again.placesResolved, 0)
    }

    /// Each page is one transaction with the listing's resume point: a page that fails keeps the pages
    /// before it, complete, and the next import asks only for the pages after them.
    func testAPageThatFailsKeepsThePagesBeforeItAndTheNextImportContinues() throws {
        let source = try memorySource()
        source.failOnPage = 1
        XCTAssertThrowsError(try LibraryImporter(catalog: catalog, source: source, progress: nil, logger: log.logger()).run()) {
            XCTAssertEqual("\($0)", "page 1 unreachable")
            XCTAssertEqual(($0 as? ImportStopped)?.pagesCommitted, 1, "the failure says the first page was kept")
        }
        let firstPage = Set(source.pages[0].photos.map(\.id))
        XCTAssertEqual(Set(try catalog.allPhotos().map(\.id)), firstPage)
        XCTAssertEqual(try catalog.syncState(listingKey: "scripted")?.resume?.cursor, "1")
        source.failOnPage = nil
        source.pagesAsked = []
        let report = try LibraryImporter(catalog: catalog, source: source, progress: nil, logger: log.logger()).run()
        XCTAssertEqual(report.resumedAfterPage, 1)
        XCTAssertEqual(source.pagesAsked, [1], "the committed page is not fetched again")
        XCTAssertEqual(Set(try catalog.allPhotos().map(\.id)), firstPage.union(source.pages[1].photos.map(\.id)))
        XCTAssertNil(try catalog.syncState(listingKey: "scripted")?.resume, "a complete import leaves no resume point")
    }

    func testMaxPagesStopsTheListing() throws {
        var options = LibraryImportOptions()
        options.maxPages = 1
        let report = try LibraryImporter(catalog: catalog, source: try memorySource(), options: options, progress: nil,
                                         logger: log.logger()).run()
        XCTAssertEqual(report.pages, 1)
        XCTAssertEqual(report.photosListed, 20)
    }

    func testSourcePhotoClampsAndRejectsWhatEverySourceShares() throws {
        let clamped = try SourcePhoto(id: "1", owner: "", ownerName: "  ", title: "t", description: "", dateTaken: "x",
                                      takenAt: Int64.max, uploadedAt: Int64.min, placeID: "a b", latitude: .nan,
                                      longitude: 3, originalURL: "http://x/1.jpg", thumbnailURL: "file:///etc/passwd",
                                      renditions: [Rendition(label: "z", url: "http://x/z.jpg", width: 0, height: 5),
                                                   Rendition(label: "l", url: "http://x/l.jpg", width: 1024, height: 768)])
        XCTAssertNil(clamped.takenAt)
        XCTAssertNil(clamped.dateTaken, "a date text is kept only with the date it was read as")
        XCTAssertNil(clamped.uploadedAt)
        XCTAssertEqual(clamped.momentAt, 0)
        XCTAssertEqual(clamped.owner, "unknown")
        XCTAssertEqual(clamped.ownerName, "unknown")
        XCTAssertNil(clamped.placeID)
        XCTAssertNil(clamped.latitude)
        XCTAssertNil(clamped.thumbnailURL)
        XCTAssertEqual(clamped.renditions.map(\.label), ["l"])
        XCTAssertThrowsError(try photo("a/b")) { XCTAssertEqual(($0 as? SkippedRecord)?.field, "id") }
        XCTAssertThrowsError(try photo("1", url: "ftp://x")) { XCTAssertEqual(($0 as? SkippedRecord)?.field, "url") }
    }

    func testFlickrAnswersTheProtocol() throws {
        let origin = FlickrOriginServer(library: DemoLibrary.make(count: 12, scale: 8), apiKey: "k")
        try origin.start()
        defer { origin.stop() }
        var options = FlickrSourceOptions()
        options.endpoint = origin.endpoint
        options.perPage = 5
        let source: PhotoSource = FlickrSource(options: options, credentials: .apiKey("k"), logger: log.logger())
        XCTAssertEqual(source.kind, "flickr")
        XCTAssertEqual(source.contentAccess, .http)
        XCTAssertTrue(source.isSquareCrop(renditionLabel: "sq") && source.isSquareCrop(renditionLabel: "q"))
        XCTAssertFalse(source.isSquareCrop(renditionLabel: "z") || source.isSquareCrop(renditionLabel: "o"))
        // A query (getRecent, search) follows no account and cannot list changes: every import lists it all.
        XCTAssertNil(source.account)
        XCTAssertNil(try source.syncPoint())
        var cursor: PageCursor?
        var ids: [String] = []
        var pages = 0
        repeat {
            let page = try source.listPage(cursor)
            XCTAssertEqual(page.pageCount, 3)
            ids += page.photos.map(\.id)
            cursor = page.next
            pages += 1
        } while cursor != nil && pages < 10
        XCTAssertEqual(pages, 3)
        XCTAssertEqual(ids, origin.photos.map(\.id))
        let first = try XCTUnwrap(origin.photos.first)
        guard case .success(let measured) = source.measure(try XCTUnwrap(try source.listPage(nil).photos.first?.originalURL)) else {
            return XCTFail("the origin's photo must measure")
        }
        XCTAssertEqual(measured.size, Int64(first.image.data.count))
    }
}
