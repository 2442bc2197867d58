// Makes, finds and keeps the variants a sized mount serves (`--size N`, `--size square:N`): their sizes for
// listings, their bytes for opens. Rendering runs on a bounded pool; what a user opened goes first.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent

/// A variant ready to serve: its catalog record and its bytes (nil when it is the source unchanged, which is
/// then served from the original's cache entry, streaming like any original).
public struct ProducedVariant: @unchecked Sendable {
    public var record: VariantRecord
    public var data: Data?
    /// The photo row it was made from (its original's URL, size, type and ETag are what make it valid).
    public var photo: PhotoRecord

    func isCurrent(for photo: PhotoRecord) -> Bool {
        (self.photo.originalURL, self.photo.byteSize, self.photo.contentType, self.photo.etag)
            == (photo.originalURL, photo.byteSize, photo.contentType, photo.etag)
    }
}

public final class VariantProducer: @unchecked Sendable {
    public let spec: VariantSpec
    private let catalog: Catalog
    private let cache: OriginalCache
    /// Originals through the cache or, for a folder import's photos, straight from their files.
    private let originals: PhotoOriginals
    private let http: HTTPClient
    private let renderOptions: RenderOptions
    private let logger: Logger
    /// Threads that fetch a source and render it. Twice the cores: a job waiting for its source's download
    /// must not leave a core idle; `admission` still lets only one render per core run at a time, and only
    /// while their estimated memory fits `renderMemoryBudget`, those a user waits for first.
    private let pool: PriorityWorkPool<ProducedVariant>
    private let admission: MemoryAdmission

    /// What renders may hold at once, by `VariantRenderer.estimatedPeakBytes`. The target is a daemon under
    /// 150 MB; it idles at 43 MB after mounting the bench's library (37 MB before libheif, libexif, libwebp and
    /// libgeonames were linked). Two renders at once of the bench's 85 wallpapers peaked at 225–239 MB without
    /// a budget: a 5120×2880 progressive JPEG alone makes libjpeg hold 84 MiB of coefficients at any scale, and
    /// two such renders met. A render estimated above the budget runs alone. 96 MiB peaked at 142–145 MB
    /// (1024) and 148 MB (square:256); 80 MiB at 141–142 and 144 (same run, JPEGs streamed; docs/benchmarks-resize.md).
    public static let renderMemoryBudget = 80 << 20
    /// Enough of a source to read its header: libjpeg reads up to the first scan, after the APP segments
    /// (EXIF, XMP, an ICC profile, each segment at most 64 KiB but a profile may take several); libpng reads
    /// every chunk before the image data. A header that does not fit is estimated at the whole budget: the
    /// render runs alone.
    static let headerPrefixBytes = 256 << 10

    private let lock = NSLock()
    /// Sizes of every variant at `spec` the catalog knows, by photo seq (nil until first needed).
    private var sizes: [Int64: Int64]?
    /// Images that cannot be decoded (corrupt, or a bomb): not retried until the catalog changes.
    private var undecodable: [Int64: String] = [:]
    /// Rendered variants not yet written to the catalog, with their bytes (an open right after a listing
    /// finds them here). Written as one transaction 0.2 s after the first: one per variant cost a
    /// transaction (and fsync) per photo of an `ls -l`.
    private var unwritten: CoalescingWriter<Int64, ProducedVariant>!
    /// Called with a photo's seq when a variant's size differs from the one reported before.
    public var sizeChanged: ((Int64) -> Void)?

    public init(spec: VariantSpec, catalog: Catalog, cache: OriginalCache, http: HTTPClient,
                renderOptions: RenderOptions, logger: Logger) {
        self.spec = spec
        self.catalog = catalog
        self.cache = cache
        self.originals = PhotoOriginals(cache: cache)
        self.http = http
        self.renderOptions = renderOptions
        self.logger = logger
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        admission = MemoryAdmission(budget: Self.renderMemoryBudget, slots: cores)
        pool = PriorityWorkPool(width: cores * 2, name: "render")
        unwritten = CoalescingWriter(delay: 0.2) { [weak self] batch in self?.save(Array(batch.values)) }
    }

    /// The variant's size if it is known without rendering.
    public func knownSize(of seq: Int64) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        if sizes == nil { sizes = (try? catalog.variantSizes(spec: spec.description)) ?? [:] }
        return sizes?[seq]
    }

    /// The variant of `photo`, rendered now if needed (joining a render already under way).
    public func produce(_ photo: PhotoRecord, priority: PriorityWorkPool<ProducedVariant>.Priority) throws -> ProducedVariant {
        try pool.run(key: String(photo.seq), priority: priority) { [self] in try make(photo) }
    }

    /// Queues `photos` for rendering in the background (a listing about to be shown with sizes, or the photos
    /// after an opened one); those already known are skipped.
    public func produceLater(_ photos: [PhotoRecord]) {
        for photo in photos where knownSize(of: photo.seq) == nil {
            pool.submit(key: String(photo.seq), priority: .background) { [self] in try make(photo) }
        }
    }

    /// Forgets what the catalog may have changed: sizes are re-read, undecodable photos retried. Returns the
    /// photos whose known size went away (their variants were dropped), so the kernel can be told.
    public func catalogChanged() -> [Int64] {
        let fresh = (try? catalog.variantSizes(spec: spec.description)) ?? [:]
        lock.lock()
        defer { lock.unlock() }
        // Variants still waiting to be written are not counted: one made from a replaced original is refused
        // by `saveVariants`, and a valid one comes back (from `unwritten`) at its next `produce`.
        let gone = (sizes ?? [:]).keys.filter { fresh[$0] == nil }
        sizes = fresh
        undecodable = [:]
        return gone
    }

    /// Writes what is still unwritten and stops the render threads (at unmount).
    public func stop() {
        pool.stop()
        unwritten.stop()
    }

    // MARK: Making one variant

    private func make(_ photo: PhotoRecord) throws -> ProducedVariant {
        if let pending = unwritten.value(for: photo.seq), pending.isCurrent(for: photo) { return pending }
        lock.lock()
        if let failure = undecodable[photo.seq] { lock.unlock(); throw FilesystemError(.ioFailure, failure) }
        lock.unlock()
        let spec = self.spec.description
        let stored = try catalogRead(logging: logger) { try catalog.variant(seq: photo.seq, spec: spec) }
        if let stored, let found = try storedBytes(of: stored, photo: photo) { return remember(found, write: false) }

        // Render: from the source recorded before (so a variant evicted from the cache comes back identical),
        // else the smallest rendition that is big enough, else the original.
        let renditions = try catalogRead(logging: logger) { try catalog.renditions(seq: photo.seq) }
        let sourceURL = stored?.sourceURL
            ?? RenditionChoice.source(for: self.spec, among: renditions, originalURL: photo.originalURL,
                                     originalType: photo.contentType)?.url
            ?? photo.originalURL
        let source = try fetchSource(sourceURL, photo: photo)
        let rendered: RenderedVariant
        let estimate = estimatedPeakBytes(of: source, photo: photo)
        // A render someone waits for (a lookup, an open) goes before background ones waiting to start.
        admission.admit(estimate, isUrgent: { [pool] in pool.waitingCount(for: String(photo.seq)) > 0 })
        let started = DispatchTime.now()
        do {
            defer { admission.release(estimate) }
            // An original is read from its cache file only now, once admitted: jobs waiting to render hold a
            // path, not up to 16 MB each.
            let data = try source.data ?? readCached(source, photo: photo, url: sourceURL)
            rendered = try VariantRenderer.render(data, contentType: source.type, spec: self.spec,
                                                  outputType: photo.contentType, options: renderOptions)
        } catch let error as FilesystemError {
            throw error
        } catch {
            let message = "photo \(photo.id) cannot be rendered at \(spec): \(error)"
            logger.error("render failed", metadata: ["photo": "\(photo.id)", "inode": "\(photo.seq)", "op": "render",
                                                      "size": "\(spec)", "error": "\(error)"])
            lock.lock()
            undecodable[photo.seq] = message
            lock.unlock()
            throw FilesystemError(.ioFailure, message, underlying: error)
        }
        logger.debug("variant rendered", metadata: [
            "photo": "\(photo.id)", "size": "\(spec)", "source": "\(sourceURL)", "bytes": "\(rendered.data.count)",
            "ms": "\(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6)",
        ])
        let unchanged = rendered.isUnchanged && sourceURL == photo.originalURL
        let record = VariantRecord(seq: photo.seq, spec: spec, sourceURL: sourceURL,
                                   byteSize: unchanged ? (photo.byteSize ?? Int64(rendered.data.count)) : Int64(rendered.data.count),
                                   width: rendered.width, height: rendered.height, contentType: rendered.contentType,
                                   unchanged: unchanged)
        if let stored, stored.byteSize != record.byteSize {
            // Deterministic rendering makes this impossible unless libjpeg or libpng changed under us (an
            // upgrade): the new size wins, and the kernel must forget the old one.
            logger.warning("variant re-rendered to another size", metadata: [
                "photo": "\(photo.id)", "size": "\(spec)", "was": "\(stored.byteSize)", "now": "\(record.byteSize)",
            ])
            sizeChanged?(photo.seq)
        }
        if case .fit = self.spec, !unchanged {
            do { try cache.store(rendered.data, key: cacheKey(record, photo: photo)) } catch {
                // Still served from memory; it is rendered again next time. A degraded cache said so once.
                logger.log(level: cache.degradation == nil ? .warning : .debug, "variant not cached",
                           metadata: ["photo": "\(photo.id)", "error": "\(error)"])
            }
        }
        return remember(ProducedVariant(record: record, data: unchanged ? nil : rendered.data, photo: photo),
                        write: stored == nil || stored != record)
    }

    /// A stored variant's bytes, if they are still where they were put.
    private func storedBytes(of record: VariantRecord, photo: PhotoRecord) throws -> ProducedVariant? {
        if record.unchanged { return ProducedVariant(record: record, data: nil, photo: photo) }
        let data: Data?
        switch spec {
        case .square: data = try catalogRead(logging: logger) { try catalog.thumbnail(seq: photo.seq, spec: record.spec) }
        case .fit: data = cache.storedData(key: cacheKey(record, photo: photo))
        }
        guard let data, Int64(data.count) == record.byteSize else { return nil }
        return ProducedVariant(record: record, data: data, photo: photo)
    }

    private func remember(_ produced: ProducedVariant, write: Bool) -> ProducedVariant {
        lock.lock()
        sizes?[produced.record.seq] = produced.record.byteSize
        lock.unlock()
        if write { unwritten.submit(produced, for: produced.record.seq) }
        return produced
    }

    /// Writes pending variant records now (tests flush, then assert).
    public func flush() { unwritten.flush() }

    private func save(_ batch: [ProducedVariant]) {
        // A library this mount may not write: sizes stay known in memory, bytes are rendered again when needed.
        guard !catalog.isReadOnly else { return }
        let isSquare: Bool
        if case .square = spec { isSquare = true } else { isSquare = false }
        do {
            try catalog.saveVariants(batch.map { ($0.record, isSquare ? $0.data : nil, $0.photo) })
        } catch {
            // Not fatal: the variants are rendered again (to the same bytes) after a remount.
            logger.warning("could not record variants", metadata: ["count": "\(batch.count)", "error": "\(error)"])
        }
    }

    /// Where a source's bytes are: an original's cache file, or a rendition's bytes in memory.
    private struct FetchedSource {
        var original: ContentSource?
        var path: String?
        var data: Data?
        var type: String
    }

    /// What rendering `source` will hold at its peak, from its header; the whole budget (the render runs
    /// alone) when the header cannot be read.
    private func estimatedPeakBytes(of source: FetchedSource, photo: PhotoRecord) -> Int {
        var prefix = source.data
        var sourceBytes = source.data?.count ?? Int(clamping: photo.byteSize ?? 0)
        if prefix == nil, let path = source.path, let file = FileHandle(forReadingAtPath: path) {
            defer { try? file.close() }
            prefix = try? file.read(upToCount: Self.headerPrefixBytes)
            if let end = try? file.seekToEnd() { sourceBytes = Int(clamping: end) }
        }
        guard let prefix, let estimate = VariantRenderer.estimatedPeakBytes(
            prefix: prefix, sourceBytes: sourceBytes, contentType: source.type, spec: spec, outputType: photo.contentType,
            maxPixels: renderOptions.maxPixels)
        else { return Self.renderMemoryBudget }
        return estimate
    }

    /// An original's bytes from its cache file; fetched again if the cache evicted it since (a full cache
    /// under many renders), or into memory when the cache cannot keep it (disk full, directory gone).
    private func readCached(_ source: FetchedSource, photo: PhotoRecord, url: String) throws -> Data {
        if let original = source.original, originals.access(for: original) is LocalFileOriginals {
            // Read and checked again now: the file may have been edited since `fetchSource` looked.
            do { return try originals.bytes(original, priority: .user) } catch {
                throw FilesystemError(.ioFailure, "\(error)", underlying: error)
            }
        }
        if let path = source.path, let data = FileManager.default.contents(atPath: path) { return data }
        if let original = source.original, let data = try? cache.fetchBytes(original) { return data }
        logger.error("cannot read cached photo to render", metadata: ["photo": "\(photo.id)", "path": "\(source.path ?? "")"])
        throw FilesystemError(.ioFailure, "photo \(photo.id): cannot read its original (\(URLRedaction.redacted(url)))")
    }

    /// The source: the original through the cache (downloaded once, shared with original-size mounts), a
    /// smaller rendition straight from the origin (it is only read to render; the variant is what is kept).
    private func fetchSource(_ url: String, photo: PhotoRecord) throws -> FetchedSource {
        if url == photo.originalURL {
            guard let size = photo.byteSize, let type = photo.contentType else {
                throw FilesystemError(.notFound, "photo \(photo.id) is no longer in the catalog")
            }
            let source = ContentSource(photoID: photo.id, url: url, expectedSize: size, contentType: type, etag: photo.etag)
            if originals.access(for: source) is LocalFileOriginals {
                // A folder import's photo: its own file, checked to be the imported version; nothing is copied.
                do { return FetchedSource(original: source, path: try originals.wholeFile(source), data: nil, type: type) } catch {
                    logger.error("cannot read photo to render", metadata: ["photo": "\(photo.id)", "error": "\(error)"])
                    throw FilesystemError(.ioFailure, "\(error)", underlying: error)
                }
            }
            do {
                return FetchedSource(original: source, path: try originals.wholeFile(source), data: nil, type: type)
            } catch let error as ContentError where error.kind == .noSpace || error.kind.isLocalIO {
                // The cache cannot keep it: read into memory once a render slot is free (`readCached`).
                logger.debug("original not cached; rendered from memory", metadata: ["photo": "\(photo.id)", "error": "\(error)"])
                return FetchedSource(original: source, path: nil, data: nil, type: type)
            } catch let error as ContentError {
                logger.error("cannot fetch photo to render", metadata: ["photo": "\(photo.id)", "error": "\(error)"])
                throw FilesystemError(error.kind == .noSpace ? .noSpace : .ioFailure, "\(error)", underlying: error)
            }
        }
        do {
            let response = try http.get(url)
            if let length = response.contentLength, length != Int64(response.body.count) {
                throw ContentError(kind: .truncated(expected: length, received: Int64(response.body.count)),
                                   photoID: photo.id, url: url)
            }
            let type = ImageContentType.normalized(response.contentType ?? "")
            // Flickr's renditions are JPEG, Immich's thumbnail WebP and its preview JPEG.
            guard response.status == 200, type == "image/jpeg" || type == "image/png" || type == "image/webp" else {
                throw ContentError(kind: response.status == 200 ? .wrongContentType(type) : .httpStatus(response.status),
                                   photoID: photo.id, url: url)
            }
            return FetchedSource(original: nil, path: nil, data: response.body, type: type)
        } catch {
            let shown = URLRedaction.redacted(url)
            logger.error("cannot fetch rendition to render", metadata: ["photo": "\(photo.id)", "url": "\(shown)",
                                                                         "error": "\(error)"])
            throw FilesystemError(.ioFailure, "photo \(photo.id): rendition \(shown): \(error)", underlying: error)
        }
    }

    /// Cache file of a `fit` variant: changes with the original (its cache key), the size and the source.
    private func cacheKey(_ record: VariantRecord, photo: PhotoRecord) -> String {
        let original = ContentSource(photoID: photo.id, url: photo.originalURL, expectedSize: photo.byteSize ?? -1,
                                     contentType: photo.contentType ?? "", etag: photo.etag)
        let marker = ContentSource(photoID: "variant-\(photo.id)", url: "\(record.spec)|\(record.sourceURL)",
                                   expectedSize: 0, contentType: OriginalCache.key(for: original))
        return OriginalCache.key(for: marker)
    }
}
