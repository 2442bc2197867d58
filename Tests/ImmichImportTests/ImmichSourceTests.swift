// The Immich source against the loopback Immich origin: sign-in, a whole import, edits between imports, faults.
import FlickrOrigin
import Foundation
import ImmichImport
import ImmichOrigin
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources
import WebPImage
import XCTest

/// Collects log lines, to check no key reaches one.
final class CollectedLog: @unchecked Sendable {
    let lock = NSLock()
    var lines: [String] = []
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return lines.joined(separator: "\n") }
}

struct CollectingLogHandler: LogHandler {
    let log: CollectedLog
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? { get { metadata[key] } set { metadata[key] = newValue } }
    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
             function: String, line: UInt) {
        log.append("\(level) \(message) \(metadata ?? [:])")
    }
}

final class ImmichSourceTests: XCTestCase {
    static let key = "immich-test-key-9f2b7c1d4e"
    var origin: ImmichOriginServer!
    var directory: URL!
    let log = CollectedLog()
    var logger: Logger { Logger(label: "test") { _ in CollectingLogHandler(log: self.log) } }

    override func setUpWithError() throws {
        origin = ImmichOriginServer(library: .generated(count: 24, scale: 16), keys: [ImmichSourceTests.key: ["all"],
                                    "read-only-key-123": ["asset.read", "user.read"]])
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("immich-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func client(key: String = ImmichSourceTests.key) throws -> ImmichClient {
        var http = HTTPConfiguration()
        http.retryBaseDelay = 0.01
        var policy = APIRetryPolicy()
        policy.throttledBaseDelay = 0.01
        return try XCTUnwrap(ImmichClient(server: origin.baseURL + "/api/", apiKey: key, http: http, logger: logger, retryPolicy: policy))
    }

    func runImport(_ catalog: Catalog) throws -> ImmichImportReport {
        try ImmichImporter(catalog: catalog, source: ImmichSource(client: try client(), logger: logger),
                           options: LibraryImportOptions(), progress: nil, logger: logger).run()
    }

    /// What the library should show: the owner's and partners' images, not trashed, not locked.
    var visible: [ImmichOriginAsset] {
        origin.current.assets.filter { $0.type == "IMAGE" && !$0.isTrashed && $0.visibility != "locked" }
    }

    func testSignIn() throws {
        var http = HTTPConfiguration()
        http.retryBaseDelay = 0.01
        XCTAssertThrowsError(try ImmichSignIn.check(server: origin.baseURL, apiKey: "wrong-key-000000", http: http, logger: logger)) {
            XCTAssertEqual(($0 as? ImmichError)?.kind, .unauthorized)
            XCTAssertTrue("\($0)".contains("Invalid API key"), "\($0)")
        }
        XCTAssertThrowsError(try ImmichSignIn.check(server: origin.baseURL, apiKey: "read-only-key-123", http: http, logger: logger)) {
            XCTAssertTrue("\($0)".contains("asset.download"), "names the missing permission: \($0)")
        }
        let signIn = try ImmichSignIn.check(server: origin.baseURL, apiKey: ImmichSourceTests.key, http: http, logger: logger)
        XCTAssertEqual(signIn.account.userName, "Ada Lovelace")
        XCTAssertEqual(signIn.version, "3.1.0")
        XCTAssertFalse("\(signIn.account)".contains(ImmichSourceTests.key))
        XCTAssertFalse(origin.targets.contains { $0.contains(ImmichSourceTests.key) }, "the key is in no URL")
        XCTAssertFalse(log.text.contains(ImmichSourceTests.key))
    }

    func testImportThenEditsBetweenImports() throws {
        let catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
        let first = try runImport(catalog)
        XCTAssertEqual(first.library.mode, .full)
        XCTAssertEqual(Set(try catalog.photos(ids: visible.map(\.id)).keys), Set(visible.map(\.id)))
        XCTAssertEqual(first.library.photosListed, visible.count)
        XCTAssertEqual(first.library.videos, origin.current.assets.filter { $0.type == "VIDEO" && !$0.isTrashed && $0.visibility != "locked" }.count)
        XCTAssertEqual(first.library.sizesMeasured, 0, "fileSizeInByte: nothing to measure")
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original") + origin.count("HEAD /api/assets/{id}/original"), 0)
        let hidden = origin.current.assets.filter { $0.isTrashed || $0.visibility == "locked" }.map(\.id)
        XCTAssertTrue(try catalog.photos(ids: hidden).isEmpty)
        let favourites = Set(visible.filter(\.isFavorite).map(\.id))
        XCTAssertEqual(Set(try catalog.favoritePhotoIDs()), favourites)
        let named = origin.current.people.filter { !$0.name.isEmpty && !$0.isHidden }
        for person in try catalog.people() {
            let expected = Set(visible.filter { $0.personIDs.contains(person.id) }.map(\.id))
            XCTAssertEqual(Set(try catalog.photoIDs(ofPerson: person.id)), expected, person.name)
            XCTAssertTrue(named.contains { $0.id == person.id })
        }
        XCTAssertGreaterThan(try catalog.people().count, 0)
        // Albums: odd and duplicate names, members as the server has them; the empty album is not listed.
        let albums = try catalog.albums()
        XCTAssertEqual(albums.count, origin.current.albums.filter { !$0.assetIDs.isEmpty }.count)
        XCTAssertEqual(Set(albums.map(\.title)), Set(origin.current.albums.filter { !$0.assetIDs.isEmpty }.map(\.name)))
        // Partners' photos carry the partner's name.
        let partner = try XCTUnwrap(origin.current.partners.first)
        let partnerPhoto = try XCTUnwrap(visible.first { $0.ownerID == partner.id })
        let partnerSeq = try XCTUnwrap(try catalog.photos(ids: [partnerPhoto.id])[partnerPhoto.id]?.seq)
        XCTAssertEqual(try catalog.photoDetails(seq: partnerSeq)?.photographerName, partner.name)

        // Edits on the server between imports.
        let mine = visible.filter { $0.ownerID == origin.current.owner.id }
        let (purged, trashed, changed, unfavoured) = (mine[0].id, mine[1].id, mine[2].id, try XCTUnwrap(mine.first { $0.isFavorite }).id)
        origin.purge(purged)
        origin.edit(trashed) { $0.isTrashed = true }
        let newBytes = DemoLibrary.renderImage(width: 20, height: 10, png: false, seed: 99).data
        origin.edit(changed) { $0.bytes = newBytes }
        origin.edit(unfavoured) { $0.isFavorite = false }
        var added = mine[3]
        added.id = "11111111-2222-4333-8444-555555555555"
        added.isFavorite = true
        origin.add(added)
        let album = try XCTUnwrap(origin.current.albums.first { $0.assetIDs.count > 1 })
        origin.editAlbum(album.id) { $0.assetIDs.append(added.id) }
        origin.resetCounters()
        let second = try runImport(catalog)
        XCTAssertEqual(second.library.mode, .changes)
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original"), 0, "no original is fetched by an import")
        XCTAssertTrue(origin.searchRequests.first?.contains("updatedAfter") == true, "\(origin.searchRequests)")
        XCTAssertGreaterThanOrEqual(origin.count("POST /api/search/metadata"), 2, "a changes page and the id listing (one photo purged)")
        XCTAssertTrue(try catalog.photos(ids: [purged, trashed]).isEmpty, "deleted and trashed photos are gone")
        let replaced = try XCTUnwrap(try catalog.photos(ids: [changed])[changed])
        XCTAssertEqual(replaced.byteSize, Int64(newBytes.count))
        XCTAssertTrue(replaced.originalURL.hasSuffix(ImmichAssetMappingTestsSupport.hex(of: newBytes)), "the new checksum is the new version")
        XCTAssertNotNil(try catalog.photos(ids: [added.id])[added.id])
        XCTAssertFalse(try catalog.favoritePhotoIDs().contains(unfavoured))
        XCTAssertTrue(try catalog.favoritePhotoIDs().contains(added.id))
        let storedAlbum = try XCTUnwrap(try catalog.albums().first { $0.sourceID == album.id })
        XCTAssertEqual(storedAlbum.photoCount, album.assetIDs.count + 1)
        XCTAssertFalse(log.text.contains(ImmichSourceTests.key))
        XCTAssertFalse(origin.targets.contains { $0.contains(ImmichSourceTests.key) })
        // Every request carried the key as a header.
        XCTAssertTrue(origin.headersSeen.allSatisfy { $0["x-api-key"] == ImmichSourceTests.key || $0.isEmpty == false })

        // Nothing changed: one listing request for the changes, nothing else re-listed.
        origin.resetCounters()
        let third = try runImport(catalog)
        XCTAssertEqual(third.library.summary.added, 0)
        XCTAssertEqual(third.library.mode, .changes)
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original"), 0)
        XCTAssertEqual(origin.count("POST /api/search/metadata"), 1, "one listing request: \(origin.searchRequests)")
        XCTAssertTrue(origin.searchRequests.allSatisfy { $0.contains("updatedAfter") }, "\(origin.searchRequests)")
        XCTAssertEqual(origin.count("GET /api/assets/statistics"), 1, "the count stands in for the id listing")

        // A photo deleted for good with nothing else changed: the count differs, the id listing finds it.
        let gone = try XCTUnwrap(visible.first { $0.ownerID == origin.current.owner.id && $0.id != added.id })
        origin.purge(gone.id)
        origin.resetCounters()
        _ = try runImport(catalog)
        XCTAssertTrue(try catalog.photos(ids: [gone.id]).isEmpty)
        XCTAssertGreaterThanOrEqual(origin.count("POST /api/search/metadata"), 2, "the changes and the id listing")

        // A key without asset.statistics: the id listing runs, as before.
        origin.setKeys([ImmichSourceTests.key: ImmichSignIn.neededPermissions])
        origin.resetCounters()
        _ = try runImport(catalog)
        XCTAssertGreaterThanOrEqual(origin.count("POST /api/search/metadata"), 2)
    }

    /// The count stands in for the id listing only when it gives the difference the last id listing measured:
    /// an image the import cannot use is counted by Immich, not held by the library. A purge hidden by such an
    /// image added at the same time (the count unchanged) is still found; one beside an added video too.
    func testPurgesAreFoundWhenTheOriginCountsAssetsTheImportLeavesOut() throws {
        let catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
        // No sync margin: an import's changes listing then holds only what changed since the last one began, so
        // "nothing changed" is nothing listed (with the day's margin, a fresh test library is all re-listed).
        func runImport() throws -> ImmichImportReport {
            let source = ImmichSource(client: try client(), logger: logger)
            source.syncMargin = 0
            return try ImmichImporter(catalog: catalog, source: source, options: LibraryImportOptions(), progress: nil, logger: logger).run()
        }
        func storedDifference() throws -> Int? { try catalog.syncStates().first { $0.sourceKind == "immich" }?.countDifference }
        let owner = origin.current.owner.id
        func mine() -> [ImmichOriginAsset] { visible.filter { $0.ownerID == owner && $0.mimeType != "application/x-nonsense" } }
        var counter = 0
        func newAsset(type: String = "IMAGE", mimeType: String = "image/jpeg") throws -> ImmichOriginAsset {
            counter += 1
            var asset = try XCTUnwrap(mine().last)
            asset.id = String(format: "22222222-3333-4444-8555-%012d", counter)
            asset.type = type
            asset.mimeType = mimeType
            return asset
        }
        let unusable = "application/x-nonsense"

        // An image the import cannot use, there from the start: the first import lists the ids and stores 1. One
        // in no album: an album holding a photo the library lacks is listed again at every import.
        let inAlbums = Set(origin.current.albums.flatMap(\.assetIDs))
        origin.edit(try XCTUnwrap(mine().first { !inAlbums.contains($0.id) }).id) { $0.mimeType = unusable }
        _ = try runImport()
        XCTAssertEqual(try storedDifference(), 1, "the unusable image is counted by the origin, not held")

        // Nothing changed: the count gives the stored difference; one listing request.
        origin.resetCounters()
        var report = try runImport()
        XCTAssertEqual(report.library.mode, .changes)
        XCTAssertEqual(origin.count("POST /api/search/metadata"), 1, "\(origin.searchRequests)")
        XCTAssertEqual(origin.count("GET /api/assets/statistics"), 1)

        // A photo purged and an unusable image added: the origin's count and the difference are unchanged. The
        // record left out in the changes listing makes the import list the ids, and the photo goes.
        let purged = try XCTUnwrap(mine().first)
        origin.purge(purged.id)
        origin.add(try newAsset(mimeType: unusable))
        origin.resetCounters()
        report = try runImport()
        XCTAssertEqual(report.library.skipped.count, 1)
        XCTAssertGreaterThanOrEqual(origin.count("POST /api/search/metadata"), 2, "the changes and the id listing")
        XCTAssertTrue(try catalog.photos(ids: [purged.id]).isEmpty, "the purged photo is gone")
        XCTAssertEqual(try storedDifference(), 2)

        // A photo purged and a video added: Immich counts images only, so the difference drops; listed, gone.
        let purgedToo = try XCTUnwrap(mine().first)
        origin.purge(purgedToo.id)
        origin.add(try newAsset(type: "VIDEO", mimeType: "video/mp4"))
        origin.resetCounters()
        report = try runImport()
        XCTAssertEqual(report.library.videos, 1)
        XCTAssertGreaterThanOrEqual(origin.count("POST /api/search/metadata"), 2)
        XCTAssertTrue(try catalog.photos(ids: [purgedToo.id]).isEmpty)
        XCTAssertEqual(try storedDifference(), 2)

        // Nothing changed again: back to one listing request.
        origin.resetCounters()
        _ = try runImport()
        XCTAssertEqual(origin.count("POST /api/search/metadata"), 1, "\(origin.searchRequests)")
        XCTAssertEqual(Set(try catalog.photoIDs(owner: owner, publicOnly: false)), Set(mine().map(\.id)))
    }

    func testFaults() throws {
        let client = try client()
        // Two 503s and a 429 with Retry-After 0, then the answer: retried, not failed.
        origin.script(ServerResponse(status: 503), times: 2) { $0.path == "/api/users/me" }
        origin.script(ImmichOriginServer.tooManyRequests(retryAfter: 0), times: 1) { $0.path == "/api/users/me" }
        XCTAssertEqual(try client.get("/users/me")["name"]?.stringValue, "Ada Lovelace")
        // A reverse proxy's HTML page says so.
        origin.script(ImmichOriginServer.htmlErrorPage(status: 502)) { $0.path == "/api/albums" }
        XCTAssertThrowsError(try client.get("/albums")) { XCTAssertTrue("\($0)".contains("HTML page"), "\($0)") }
        origin.clearFaults()
        // A 200 that is not JSON.
        origin.script(ServerResponse(status: 200, headers: [("Content-Type", "text/html")], body: Data("<html>login</html>".utf8))) {
            $0.path == "/api/albums"
        }
        XCTAssertThrowsError(try client.get("/albums")) { XCTAssertEqual(($0 as? ImmichError)?.kind, .notJSON) }
        origin.clearFaults()
        // A server that is down.
        origin.stop()
        XCTAssertThrowsError(try client.get("/users/me")) { XCTAssertEqual(($0 as? ImmichError)?.kind, .unreachable, "\($0)") }
        XCTAssertFalse(log.text.contains(ImmichSourceTests.key))
    }

    func testOneBadAssetIsAWarningNotAFailedImport() throws {
        let catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
        // The first page's answer with one asset made absurd.
        origin.edit(visible[0].id) { $0.mimeType = "application/x-nonsense" }
        let report = try runImport(catalog)
        XCTAssertEqual(report.library.skipped.map(\.field), ["originalMimeType"])
        XCTAssertEqual(report.library.photosListed, visible.count - 1)
    }

    func testWebPRenditionsDecode() throws {
        let asset = try XCTUnwrap(visible.first)
        let webp = try XCTUnwrap(ImmichOriginServer.rendition(of: asset, size: "thumbnail"))
        let image = try WebPCodec.decode(webp)
        XCTAssertEqual(min(image.width, image.height), min(250, min(asset.width, asset.height)))
        XCTAssertThrowsError(try WebPCodec.decode(Data("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 garbage".utf8)))
        XCTAssertThrowsError(try WebPCodec.decode(webp, maxPixels: 10))
        XCTAssertThrowsError(try WebPCodec.decode(webp.prefix(webp.count / 2)))
    }

    func testAccountStoreKeepsTheKeyPrivate() throws {
        let store = ImmichAccountStore(directory: directory.appendingPathComponent("config/photofs").path)
        let account = ImmichAccount(server: "http://127.0.0.1:9", userID: "u", userName: "Ada", email: "", apiKey: ImmichSourceTests.key,
                                    signedInAt: 1)
        try store.save(account)
        var info = stat()
        XCTAssertEqual(stat(store.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(try store.account(server: "HTTP://127.0.0.1:9/api/").credentials.apiKey, ImmichSourceTests.key)
        XCTAssertFalse("\(account)".contains(ImmichSourceTests.key))
        var dumped = ""
        dump(account, to: &dumped)
        XCTAssertFalse(dumped.contains(ImmichSourceTests.key))
        chmod(store.path, 0o644)
        XCTAssertThrowsError(try store.load()) { XCTAssertTrue("\($0)".contains("chmod 600"), "\($0)") }
        chmod(store.path, 0o600)
        try store.remove(server: nil)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path))
    }
}

enum ImmichAssetMappingTestsSupport {
    static func hex(of data: Data) -> String {
        let checksum = ImmichOriginAsset(id: "", ownerID: "", type: "IMAGE", originalFileName: "", mimeType: "", bytes: data, width: 1,
                                         height: 1, localTime: 0, utcOffset: 0, updatedAt: Date()).checksum
        return (Data(base64Encoded: checksum) ?? Data()).map { String(format: "%02x", $0) }.joined()
    }
}
