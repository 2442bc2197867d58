// A PhotoFilesystem over a real SQLite library, a real disk cache and the loopback origin, with no kernel.
import FlickrOrigin
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoFS
import PhotoTree
import XCTest

final class FilesystemFixture {
    let root: URL
    let origin: FlickrOriginServer
    let catalog: Catalog
    let cache: OriginalCache
    let filesystem: PhotoFilesystem

    init(photos count: Int = 6, options: FilesystemOptions = FilesystemOptions(), persistentRecents: Bool = true) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("photofs-fs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        origin = FlickrOriginServer(library: DemoLibrary.make(count: count, scale: 8), apiKey: "k")
        try origin.start()
        catalog = try Catalog(path: root.appendingPathComponent("library.sqlite").path)
        let logger = Logger(label: "test")
        cache = try OriginalCache(directory: root.appendingPathComponent("cache"), http: HTTPClient(logger: logger),
                                  logger: logger)
        try FilesystemFixture.importOrigin(origin, into: catalog)
        var options = options
        options.prefetchCount = 0
        filesystem = PhotoFilesystem(catalog: catalog, cache: cache, options: options,
                                     persistentRecents: persistentRecents, logger: logger)
    }

    deinit {
        filesystem.stopWatchingCatalog()
        origin.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// Writes the origin's photos to the catalog as an import would (one region, their own owners).
    static func importOrigin(_ origin: FlickrOriginServer, into catalog: Catalog) throws {
        let base = "http://127.0.0.1:\(origin.port)"
        let imported = origin.photos.enumerated().map { index, photo in
            ImportedPhoto(photo: PhotoRecord(id: photo.id, title: photo.title.isEmpty ? "Photo \(index)" : photo.title,
                                             momentAt: 1_600_000_000 + Int64(index) * 3600, momentYear: 2020,
                                             originalURL: base + origin.imagePath(photoID: photo.id)!,
                                             byteSize: Int64(photo.image.data.count),
                                             contentType: photo.image.contentType),
                          owner: photo.owner, ownerName: photo.ownerName ?? photo.owner)
        }
        _ = try catalog.applyImport(places: [], photos: imported)
    }

    var yearInode: UInt64 { Node.year(2020).inode }

    /// The /moments/2020 entries, in listing order.
    func yearEntries() throws -> [DirectoryEntry] { try filesystem.listing(of: yearInode).entries }

    /// Reads a whole open photo through the filesystem, as the adapter's read handler would.
    func readAll(_ handle: OpenPhoto) throws -> Data {
        var data = Data()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try filesystem.read(handle, into: buffer, at: Int64(data.count))
            if count == 0 { return data }
            data.append(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
        }
    }

    func photoID(of entry: DirectoryEntry) throws -> String {
        guard case .photo(let seq) = entry.node, let photo = try catalog.photo(seq: seq) else {
            throw HarnessFailure("not a photo: \(entry.name)")
        }
        return photo.id
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Whether `condition` holds within `timeout` seconds, asked every 2 ms (what happens in the background,
/// polled with a deadline; a condition that throws counts as not holding yet).
func eventually(within timeout: TimeInterval = 10, _ condition: () throws -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while (try? condition()) != true && Date() < deadline { usleep(2_000) }
    return (try? condition()) == true
}
