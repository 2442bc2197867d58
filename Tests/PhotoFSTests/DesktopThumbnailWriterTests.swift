// Desktop thumbnails from the filesystem logic, without a kernel: opening a directory writes its photos'
// thumbnails from small renditions, keeps the sources in the library, records the URIs, and a second mount
// (at another path, with the origin gone) writes them from the library alone; only file managers' and
// thumbnailers' listings get them, and the fetches a mount makes for them have a ceiling.
import FlickrOrigin
import Foundation
import GRDB
import Logging
import PhotoCatalog
import PhotoContent
@testable import PhotoFS
import PhotoTree
import XCTest

final class DesktopThumbnailWriterTests: XCTestCase {
    var root: URL!
    var origin: FlickrOriginServer!
    var catalog: Catalog!
    var cache: OriginalCache!
    let logger = Logger(label: "test")
    /// Only file managers' and thumbnailers' listings get thumbnails written.
    let fileManager = OpenerIdentity(names: ["pcmanfm"])

    override func setUpWithError() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("photofs-desktop-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        // Full-size demo photos: 320 to 1280 px, each with Flickr's 320 px "n" rendition.
        origin = FlickrOriginServer(library: DemoLibrary.make(count: 4, scale: 1), apiKey: "k")
        try origin.start()
        catalog = try Catalog(path: root.appendingPathComponent("library.sqlite").path)
        cache = try OriginalCache(directory: root.appendingPathComponent("cache"), http: HTTPClient(logger: logger), logger: logger)
        let base = "http://127.0.0.1:\(origin.port)"
        let imported = origin.photos.enumerated().map { index, photo in
            ImportedPhoto(photo: PhotoRecord(id: photo.id, title: "Photo \(index)", momentAt: 1_600_000_000 + Int64(index) * 3600,
                                             momentYear: 2020, originalURL: base + origin.imagePath(photoID: photo.id)!,
                                             byteSize: Int64(photo.image.data.count), contentType: photo.image.contentType),
                          owner: photo.owner, ownerName: photo.ownerName ?? photo.owner,
                          renditions: photo.renditions.map { label, image in
                              Rendition(label: label, url: base + photo.renditionPath(label), width: image.width, height: image.height)
                          })
        }
        _ = try catalog.applyImport(places: [], photos: imported)
    }

    override func tearDown() {
        origin.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func filesystem(mountpoint: String, waitPerPhoto: TimeInterval? = nil) -> PhotoFilesystem {
        var options = FilesystemOptions()
        options.prefetchCount = 0
        options.desktopThumbnails = DesktopThumbnailOptions(
            store: DesktopThumbnailStore(root: root.appendingPathComponent("thumbnails")), mountpoint: mountpoint)
        if let waitPerPhoto {
            options.desktopThumbnails?.waitPerPhoto = waitPerPhoto
            options.desktopThumbnails?.maxWait = 60
        }
        return PhotoFilesystem(catalog: catalog, cache: cache, options: options, logger: logger)
    }

    func stamps(_ fs: PhotoFilesystem, mountpoint: String) throws -> [DesktopThumbnailStamp] {
        try fs.listing(of: Node.year(2020).inode).entries.map { entry in
            DesktopThumbnailStamp(uri: FileURI.glib(path: "\(mountpoint)/moments/2020/\(entry.name)"),
                                  mtime: entry.attributes.mtime, fileSize: entry.attributes.size, mimeType: "image/jpeg")
        }
    }

    func testOpeningADirectoryWritesItsThumbnailsFromRenditionsAndKeepsTheirSources() throws {
        let fs = filesystem(mountpoint: "/media/my photos")
        let store = try XCTUnwrap(fs.desktopThumbnails?.options.store)
        _ = try fs.openDirectory(Node.year(2020).inode, lister: fileManager)
        let expected = try stamps(fs, mountpoint: "/media/my photos")
        XCTAssertEqual(expected.count, 4)
        for stamp in expected {
            XCTAssertTrue(stamp.uri.hasPrefix("file:///media/my%20photos/moments/2020/2020-09-13%20"), stamp.uri)
            // The listing's wait is bounded, so the last may still be on their way.
            XCTAssertTrue(eventually { store.isCurrent(stamp, size: .normal) && store.isCurrent(stamp, size: .large) }, stamp.uri)
            let large = try ImageCodec.decodePNG(Data(contentsOf: store.fileURL(forURI: stamp.uri, size: .large)))
            XCTAssertEqual(max(large.width, large.height), 256)
            let normal = try ImageCodec.decodePNG(Data(contentsOf: store.fileURL(forURI: stamp.uri, size: .normal)))
            XCTAssertEqual(max(normal.width, normal.height), 128)
        }
        for photo in origin.photos {
            XCTAssertEqual(origin.requestCount(method: "GET", path: origin.imagePath(photoID: photo.id)!), 0, "no original")
            XCTAssertEqual(origin.requestCount(method: "GET", path: photo.renditionPath("n")), 1, "its 320 px rendition, once")
        }
        fs.desktopThumbnails?.flush()
        let seqs = try catalog.allPhotos().map(\.seq)
        for seq in seqs { XCTAssertNotNil(try catalog.desktopThumbnailSource(seq: seq), "source of \(seq) kept in the library") }
        // A worker records a URI just after writing its files, so a photo whose thumbnails are already valid may
        // be recorded a moment later: flushed and read again until all are there.
        var recorded: [String] = []
        XCTAssertTrue(eventually {
            fs.desktopThumbnails?.flush()
            recorded = try DatabaseQueue(path: root.appendingPathComponent("library.sqlite").path).read { db in
                try String.fetchAll(db, sql: "SELECT uri FROM desktop_thumbnail WHERE photo_id IN (SELECT id FROM photo)")
            }
            return recorded.sorted() == expected.map(\.uri).sorted()
        }, "the URIs written are recorded: \(recorded.sorted()) against \(expected.map(\.uri).sorted())")
        fs.desktopThumbnails?.stop()

        // Another mount point, the origin gone: the thumbnails come from the library alone.
        origin.stop()
        let second = filesystem(mountpoint: "/mnt/elsewhere")
        _ = try second.openDirectory(Node.year(2020).inode, lister: fileManager)
        for stamp in try stamps(second, mountpoint: "/mnt/elsewhere") {
            XCTAssertTrue(eventually { store.isCurrent(stamp, size: .large) }, stamp.uri)
        }
        second.desktopThumbnails?.stop()
    }

    func testTheListingRepliesOnlyOnceItsThumbnailsAreWrittenWhenTheWaitAllowsIt() throws {
        // A wait far longer than the work: openDirectory must return with every thumbnail already valid.
        let fs = filesystem(mountpoint: "/mnt/p", waitPerPhoto: 10)
        let store = try XCTUnwrap(fs.desktopThumbnails?.options.store)
        _ = try fs.openDirectory(Node.year(2020).inode, lister: fileManager)
        for stamp in try stamps(fs, mountpoint: "/mnt/p") {
            XCTAssertTrue(store.isCurrent(stamp, size: .normal) && store.isCurrent(stamp, size: .large), stamp.uri)
        }
        fs.desktopThumbnails?.stop()
    }

    func testOnlyFileManagersAndThumbnailersListingsGetThumbnailsAndRemovedPathsLoseTheirs() throws {
        let fs = filesystem(mountpoint: "/mnt/p")
        let store = try XCTUnwrap(fs.desktopThumbnails?.options.store)
        // Shells, coreutils, scripts, backups, indexers, and a lister whose process is gone (nil).
        for lister in [["rsync"], ["ls"], ["bash"], ["find"], ["du"], ["tree"], ["python3"], ["tracker-miner-f"], nil] as [[String]?] {
            _ = try fs.openDirectory(Node.year(2020).inode, lister: lister.map { OpenerIdentity(names: $0) })
            XCTAssertFalse(FileManager.default.fileExists(atPath: store.root.path), "\(lister ?? [])'s listing wrote nothing")
            XCTAssertEqual(origin.requestCount(method: "GET"), 0, "\(lister ?? [])'s listing fetched nothing")
        }

        _ = try fs.openDirectory(Node.year(2020).inode, lister: OpenerIdentity(names: ["pool-pcmanfm", "pcmanfm"]))
        let stamp = try XCTUnwrap(stamps(fs, mountpoint: "/mnt/p").first)
        XCTAssertTrue(eventually { store.isCurrent(stamp, size: .large) })
        fs.desktopThumbnails?.remove(paths: ["/mnt/p/moments/2020/" + (try fs.listing(of: Node.year(2020).inode).entries[0].name)])
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.fileURL(forURI: stamp.uri, size: .large).path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.fileURL(forURI: stamp.uri, size: .normal).path))
        fs.desktopThumbnails?.stop()
    }

    func testASourceThatCannotBeFetchedIsNotTriedByEveryListingUntilItsDeferralEnds() throws {
        // A second library whose photos' only rendition is a URL the origin answers 404.
        let other = try Catalog(path: root.appendingPathComponent("missing.sqlite").path)
        let base = "http://127.0.0.1:\(origin.port)"
        _ = try other.applyImport(places: [], photos: origin.photos.enumerated().map { index, photo in
            ImportedPhoto(photo: PhotoRecord(id: photo.id, title: "Photo \(index)", momentAt: 1_600_000_000 + Int64(index) * 3600,
                                             momentYear: 2020, originalURL: base + origin.imagePath(photoID: photo.id)!,
                                             byteSize: Int64(photo.image.data.count), contentType: photo.image.contentType),
                          owner: photo.owner, ownerName: photo.ownerName ?? photo.owner,
                          renditions: [Rendition(label: "n", url: "\(base)/missing/\(photo.id)_n.jpg", width: 320, height: 240)])
        })
        var options = FilesystemOptions()
        options.prefetchCount = 0
        options.desktopThumbnails = DesktopThumbnailOptions(
            store: DesktopThumbnailStore(root: root.appendingPathComponent("thumbnails")), mountpoint: "/mnt/p")
        options.desktopThumbnails?.waitPerPhoto = 10
        options.desktopThumbnails?.maxWait = 60
        let fs = PhotoFilesystem(catalog: other, cache: cache, options: options, logger: logger)
        let attempts = { self.origin.photos.reduce(0) { $0 + self.origin.requestCount(method: "GET", path: "/missing/\($1.id)_n.jpg") } }

        _ = try fs.openDirectory(Node.year(2020).inode, lister: fileManager) // waits until every fetch has failed
        XCTAssertEqual(attempts(), 4, "each missing rendition asked for once (a 404 is not retried)")
        // Every photo is deferred, so the next listing makes no targets and has nothing to wait for (with 10 s
        // a photo it would otherwise wait 40 s for fetches that fail again).
        let seqs = try fs.listing(of: Node.year(2020).inode).entries.compactMap { entry -> Int64? in
            if case .photo(let seq) = entry.node { return seq }
            return nil
        }
        XCTAssertEqual(seqs.count, 4)
        XCTAssertEqual(seqs.filter { fs.desktopThumbnails?.isSettled($0, mayFetchOriginal: true) == true }, seqs)
        _ = try fs.openDirectory(Node.year(2020).inode, lister: fileManager)
        XCTAssertEqual(attempts(), 4, "the next listing does not ask again while the deferral runs")
        XCTAssertEqual(origin.requestCount(method: "GET", path: origin.imagePath(photoID: origin.photos[0].id)!), 0,
                       "and no original instead: the photo has a rendition to wait for")
        // An import may have brought new renditions: the catalog's change ends every deferral.
        fs.desktopThumbnails?.catalogChanged()
        _ = try fs.openDirectory(Node.year(2020).inode, lister: fileManager)
        XCTAssertEqual(attempts(), 8)
        fs.desktopThumbnails?.stop()
    }

    func testAListerAddedByTheMountGetsThumbnails() throws {
        var options = FilesystemOptions()
        options.prefetchCount = 0
        options.desktopThumbnails = DesktopThumbnailOptions(
            store: DesktopThumbnailStore(root: root.appendingPathComponent("thumbnails")), mountpoint: "/mnt/p")
        options.thumbnailListers = ThumbnailListers(adding: ["gthumb"])
        let fs = PhotoFilesystem(catalog: catalog, cache: cache, options: options, logger: logger)
        _ = try fs.openDirectory(Node.year(2020).inode, lister: OpenerIdentity(names: ["ls"]))
        XCTAssertEqual(origin.requestCount(method: "GET"), 0, "ls is still not a thumbnail lister")
        _ = try fs.openDirectory(Node.year(2020).inode, lister: OpenerIdentity(names: ["gthumb"]))
        let store = try XCTUnwrap(fs.desktopThumbnails?.options.store)
        for stamp in try stamps(fs, mountpoint: "/mnt/p") {
            XCTAssertTrue(eventually { store.isCurrent(stamp, size: .large) }, stamp.uri)
        }
        fs.desktopThumbnails?.stop()
    }

    func testTheFetchCeilingHoldsFetchesBackAndUnmountDoesNotWaitForIt() throws {
        var options = FilesystemOptions()
        options.prefetchCount = 0
        options.desktopThumbnails = DesktopThumbnailOptions(
            store: DesktopThumbnailStore(root: root.appendingPathComponent("thumbnails")), mountpoint: "/mnt/p")
        // Two at once, then one every ~10 minutes: the other two of the four wait far longer than this test.
        options.desktopThumbnails?.fetchCeiling = APIRateLimit(callsPerSecond: 0.0016, burst: 2)
        options.desktopThumbnails?.waitPerPhoto = 0
        let fs = PhotoFilesystem(catalog: catalog, cache: cache, options: options, logger: logger)
        let renditionRequests = { self.origin.photos.reduce(0) { $0 + self.origin.requestCount(method: "GET", path: $1.renditionPath("n")) } }
        _ = try fs.openDirectory(Node.year(2020).inode, lister: fileManager)
        XCTAssertTrue(eventually { renditionRequests() == 2 }, "the burst's two fetches")
        // Stopping wakes the two waiting for a permit (this would otherwise take 20 minutes), and after it
        // nothing can fetch: the count is final.
        fs.desktopThumbnails?.stop()
        XCTAssertEqual(renditionRequests(), 2, "no fetch beyond the ceiling")
        let store = try XCTUnwrap(fs.desktopThumbnails?.options.store)
        XCTAssertEqual(try stamps(fs, mountpoint: "/mnt/p").filter { store.isCurrent($0, size: .large) }.count, 2)
    }
}
