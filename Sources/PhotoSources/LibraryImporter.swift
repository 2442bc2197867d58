// Drives any PhotoSource into the catalog: listing, places, sizes, then one transaction.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent

public struct LibraryImportOptions: Sendable {
    /// Stop after this many pages (nil: the whole listing).
    public var maxPages: Int?
    /// `measure` calls in flight at once. 8 keeps a loopback or CDN origin busy without looking like abuse.
    public var measureConcurrency = 8
    public init() {}
}

/// Why an import stopped. The catalog is unchanged whenever one is thrown; the message holds no secret.
public struct ImportError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

public struct ImportReport: Sendable {
    public var summary: ImportSummary
    public var pages = 0
    public var photosListed = 0
    public var placesResolved = 0
    public var sizesMeasured = 0
    /// Photos that could not be measured (HEAD failed, not an image): kept out of the tree until a later
    /// import measures them.
    public var unavailable: [(id: String, reason: String)] = []
    /// Records the source could not use, one per record, in listing order.
    public var skipped: [SkippedRecord] = []
    public init(summary: ImportSummary = ImportSummary()) { self.summary = summary }

    /// Skipped records per field at fault ("id": 2, "url": 1).
    public var skippedByField: [String: Int] { skipped.reduce(into: [:]) { $0[$1.field, default: 0] += 1 } }
}

/// Receives progress as the import goes; the CLI draws a bar on a terminal and logs lines otherwise.
public protocol ImportProgress: AnyObject {
    func update(stage: String, done: Int, total: Int?)
    func finish()
}

public final class LibraryImporter {
    private let catalog: Catalog
    private let source: PhotoSource
    private let options: LibraryImportOptions
    private let progress: ImportProgress?
    private let logger: Logger

    public init(catalog: Catalog, source: PhotoSource, options: LibraryImportOptions = LibraryImportOptions(),
                progress: ImportProgress?, logger: Logger) {
        self.catalog = catalog
        self.source = source
        self.options = options
        self.progress = progress
        self.logger = logger
    }

    public func run() throws -> ImportReport {
        var report = ImportReport()
        defer { progress?.finish() }

        // 1. The listing, page by page. A photo seen twice (lists shift while paging) is kept once, last wins.
        var photos: [SourcePhoto] = []
        var position: [String: Int] = [:]
        var cursor: PageCursor?
        var finished = false
        repeat {
            progress?.update(stage: "pages", done: report.pages, total: nil)
            let page = try source.listPage(cursor)
            report.pages += 1
            for skipped in page.skipped {
                logger.warning("\(source.kind) record skipped", metadata: [
                    "photo": "\(skipped.id ?? "(none)")", "field": "\(skipped.field)", "reason": "\(skipped.reason)",
                ])
            }
            report.skipped += page.skipped
            for photo in page.photos {
                if let existing = position[photo.id] { photos[existing] = photo } else {
                    position[photo.id] = photos.count
                    photos.append(photo)
                }
            }
            cursor = page.next
            finished = cursor == nil || options.maxPages.map { report.pages >= $0 } ?? false
            // The stage is done when the listing is, whatever page count the source announced.
            progress?.update(stage: "pages", done: report.pages, total: finished ? report.pages : page.pageCount)
        } while !finished
        report.photosListed = photos.count

        // 2. Places: each new place id is resolved once; a place the catalog knows is not asked again.
        let known = try catalog.knownPlaceIDs()
        let newPlaces = Array(Set(photos.compactMap(\.placeID)).subtracting(known)).sorted()
        var resolutions: [PlaceResolution] = []
        for (index, placeID) in newPlaces.enumerated() {
            progress?.update(stage: "places", done: index, total: newPlaces.count)
            resolutions.append(try source.resolvePlace(placeID))
        }
        report.placesResolved = resolutions.count
        progress?.update(stage: "places", done: newPlaces.count, total: newPlaces.count)

        // 3. Exact sizes: measure every original the catalog does not already know at this URL.
        var existing: [String: PhotoRecord] = [:]
        for photo in photos { if let record = try catalog.photo(id: photo.id) { existing[photo.id] = record } }
        let toMeasure = photos.filter { photo in
            guard let old = existing[photo.id] else { return true }
            return old.originalURL != photo.originalURL || !old.isAvailable
        }
        let measured = measure(toMeasure.map { ($0.id, $0.originalURL) })
        report.sizesMeasured = measured.count

        // 4. One transaction: all of it or nothing.
        var imported: [ImportedPhoto] = []
        for photo in photos {
            var record = photo.catalogRecord()
            if let size = measured[photo.id] {
                switch size {
                case .success(let head):
                    record.byteSize = head.size
                    record.contentType = head.contentType
                    record.etag = head.etag
                    record.lastModified = head.lastModified
                case .failure(let reason):
                    report.unavailable.append((photo.id, reason.description))
                    logger.warning("original not measured; photo hidden until a later import measures it",
                                   metadata: ["photo": "\(photo.id)", "url": "\(URLRedaction.redacted(photo.originalURL))", "reason": "\(reason)"])
                }
            } else if let old = existing[photo.id] {
                record.byteSize = old.byteSize
                record.contentType = old.contentType
                record.etag = old.etag
                record.lastModified = old.lastModified
            }
            imported.append(ImportedPhoto(photo: record, owner: photo.owner, ownerName: photo.ownerName,
                                          renditions: photo.renditions))
        }
        do {
            report.summary = try catalog.applyImport(places: resolutions, photos: imported)
        } catch {
            throw ImportError(message: "could not write the library: \(error)")
        }
        return report
    }

    /// Measures the originals, `measureConcurrency` at a time.
    private func measure(_ targets: [(id: String, url: String)]) -> [String: Result<MeasuredContent, MeasureFailure>] {
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var byID: [String: Result<MeasuredContent, MeasureFailure>] = [:]
        }
        let results = Results()
        let source = self.source
        let progress = self.progress.map(UncheckedProgress.init)
        BoundedParallel.forEach(count: targets.count, width: options.measureConcurrency) { index in
            let result = source.measure(targets[index].url)
            results.lock.lock()
            results.byID[targets[index].id] = result
            let done = results.byID.count
            results.lock.unlock()
            progress?.progress.update(stage: "sizes", done: done, total: targets.count)
        }
        return results.byID
    }

    /// Progress objects are called from the measuring threads; the CLI's takes its own lock.
    private struct UncheckedProgress: @unchecked Sendable { let progress: ImportProgress }
}
