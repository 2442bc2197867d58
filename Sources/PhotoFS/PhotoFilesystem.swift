// The filesystem's logic — lookup, attributes, listings, open and read — over catalog, tree and content,
// with no FUSE types, so it is tested without a kernel; FuseAdapter is the thin layer that calls it.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoTree

public struct FilesystemOptions: Sendable {
    /// How many photos /recent shows.
    public var recentLimit = 20
    /// Processes whose opens do not make a photo "recent": backup and indexing tools read everything.
    public var backupTools: Set<String> = ["rsync", "tar", "borg", "restic", "rclone", "updatedb", "find"]
    /// How often the catalog is checked for changes made by another process (an import).
    public var catalogPollInterval: TimeInterval = 1
    /// Photos after the opened one, in its directory's listing order, downloaded ahead at low priority
    /// (PhotoKit's caching image manager does the same for the cells about to scroll into view). 0 = off.
    public var prefetchCount = 3
    /// What each photo is shown as: nil for the original bytes, else a smaller variant (`--size`).
    public var variant: VariantSpec?
    public var renderOptions = RenderOptions()
    public var uid = getuid()
    public var gid = getgid()
    public init() {}
}

/// An open photo: a descriptor of its cached bytes (complete or still arriving), or a rendered variant held
/// in memory. Cached files are never modified in place (a changed photo gets a new cache file), so an open
/// file keeps its bytes whatever happens to the catalog.
public final class OpenPhoto: @unchecked Sendable {
    public let content: ContentHandle?
    public let variantBytes: Data?
    public let photoID: String
    /// The attributes at open time: what fstat on this handle keeps answering, even after the photo
    /// changed or left the catalog (the kernel asks before reads; an ENOENT there would fail the read).
    public let attributes: NodeAttributes
    init(content: ContentHandle?, variantBytes: Data? = nil, photoID: String, attributes: NodeAttributes) {
        self.content = content; self.variantBytes = variantBytes; self.photoID = photoID; self.attributes = attributes
    }
}

/// Something the kernel may have cached that a catalog change made wrong.
public enum KernelInvalidation: Equatable, Sendable {
    /// The name in the directory (its dentry, positive or negative).
    case entry(parent: UInt64, name: String)
    /// The node's attributes (and a directory's cached listing).
    case inode(UInt64)
}

public final class PhotoFilesystem: @unchecked Sendable {
    public let catalog: Catalog
    public let cache: OriginalCache
    public let options: FilesystemOptions
    private let logger: Logger

    private let lock = NSLock()
    private var listings: [Node: DirectoryListing] = [:]
    private var recentSeqs: Set<Int64>?
    private var generation: Catalog.Generation?
    private var watcher: Thread?
    private var watching = false
    private let recentWriter = DispatchQueue(label: "photofs.recent")
    /// Opens not yet written to the catalog; flushed as one transaction half a second after the first.
    private var pendingOpens: [Int64: Date] = [:]
    /// Photos open right now, by inode: a photo deleted from the catalog while open still answers `fstat`
    /// (as an unlinked file on a disk does) until its last descriptor closes.
    private var openPhotos: [UInt64: (attributes: NodeAttributes, count: Int)] = [:]
    /// Directories listed most recently (newest last): where prefetch looks for "the next photos".
    private var recentlyListed: [DirectoryListing] = []
    private let prefetcher = DispatchQueue(label: "photofs.prefetch")
    /// Photo rows by seq for getattr and open, dropped with the listings when the catalog changes. Bounded:
    /// 4,096 rows (~1.5 MB) cover any directory a person works in; a 100k `ls -lR` just cycles through.
    private var photoRows: [Int64: PhotoRecord] = [:]
    /// Told what to drop from the kernel's caches after a catalog change (the FUSE adapter's notify calls).
    public var invalidate: (([KernelInvalidation]) -> Void)?
    /// Renders and keeps variants when the mount shows a `--size` other than the originals.
    public let variants: VariantProducer?
    /// Listings whose photos were queued for rendering (once each until the catalog changes).
    private var listingsQueuedForRender: Set<Node> = []

    /// `http` fetches the smaller renditions variants are rendered from (originals come through `cache`).
    public init(catalog: Catalog, cache: OriginalCache, http: HTTPClient? = nil, options: FilesystemOptions,
                logger: Logger) {
        self.catalog = catalog
        self.cache = cache
        self.options = options
        self.logger = logger
        variants = options.variant.map {
            VariantProducer(spec: $0, catalog: catalog, cache: cache, http: http ?? HTTPClient(logger: logger),
                            renderOptions: options.renderOptions, logger: logger)
        }
        generation = try? catalog.generation()
        variants?.sizeChanged = { [weak self] seq in self?.invalidate?([.inode(Node.photo(seq: seq).inode)]) }
    }

    // MARK: Catalog changes

    /// Polls the catalog's change counters and drops cached listings when another process changed it, so an
    /// import shows up in a live mount within `catalogPollInterval` plus the kernel's attribute timeout.
    public func startWatchingCatalog() {
        lock.lock()
        watching = true
        lock.unlock()
        let thread = Thread { [weak self] in
            while let self, self.isWatching {
                Thread.sleep(forTimeInterval: self.options.catalogPollInterval)
                self.checkForCatalogChanges()
            }
        }
        thread.name = "catalog-watch"
        watcher = thread
        thread.start()
    }

    public func stopWatchingCatalog() {
        lock.lock()
        watching = false
        lock.unlock()
        recentWriter.sync { flushRecentOpens() } // pending opens land before the catalog closes
        variants?.stop()
    }

    private var isWatching: Bool { lock.lock(); defer { lock.unlock() }; return watching }

    func checkForCatalogChanges() {
        guard let current = try? catalog.generation() else { return }
        lock.lock()
        guard current != generation else { lock.unlock(); return }
        let before = listings
        let photosChanged = current.photos != generation?.photos
        if photosChanged {
            listings = [:]
            photoRows = [:]
            listingsQueuedForRender = []
        } else {
            listings[.recent] = nil
        }
        recentSeqs = nil
        generation = current
        lock.unlock()
        if photosChanged {
            logger.info("catalog changed; listings will be rebuilt", metadata: ["generation": "\(current.photos)"])
        }
        // Rebuild what the kernel may have cached and tell it exactly what changed, so its entry and attribute
        // timeouts can be long.
        let changed = photosChanged ? before : before.filter { $0.key == .recent }
        var invalidations: [KernelInvalidation] = []
        if photosChanged, let variants {
            // Variants the catalog dropped (their original or renditions changed) may render to other sizes.
            invalidations += variants.catalogChanged().map { .inode(Node.photo(seq: $0).inode) }
        }
        for (node, old) in changed {
            let new = try? listing(of: node)
            invalidations += PhotoFilesystem.differences(from: old, to: new)
        }
        if !invalidations.isEmpty { invalidate?(invalidations) }
    }

    /// What differs between two listings of one directory, as the kernel sees it: names gone, added or
    /// pointing elsewhere, and nodes whose attributes changed. `new` is nil for a directory that is gone.
    static func differences(from old: DirectoryListing, to new: DirectoryListing?) -> [KernelInvalidation] {
        let parent = old.attributes.inode
        guard let new else {
            return old.entries.map { .entry(parent: parent, name: $0.name) } + [.inode(parent)]
        }
        var result: [KernelInvalidation] = []
        let newByName = Dictionary(new.entries.map { ($0.name, $0.attributes) }, uniquingKeysWith: { a, _ in a })
        let oldNames = Set(old.entries.map(\.name))
        for entry in old.entries {
            guard let now = newByName[entry.name] else {
                // Gone from here; if it is a photo still shown elsewhere, its link count changed.
                result += [.entry(parent: parent, name: entry.name), .inode(entry.attributes.inode)]
                continue
            }
            if now.inode != entry.attributes.inode {
                result.append(.entry(parent: parent, name: entry.name))
            } else if now != entry.attributes {
                result.append(.inode(now.inode))
            }
        }
        for entry in new.entries where !oldNames.contains(entry.name) {
            // A cached "no such file" is now wrong, and a photo that gained a name has a new link count.
            result += [.entry(parent: parent, name: entry.name), .inode(entry.attributes.inode)]
        }
        if old.entries.map(\.name) != new.entries.map(\.name) || old.attributes != new.attributes {
            result.append(.inode(parent))
        }
        return result
    }

    // MARK: Attributes and lookup

    public func attributes(of inode: UInt64) throws -> NodeAttributes {
        guard let node = Node(inode: inode) else { throw FilesystemError(.notFound, "no inode \(inode)") }
        switch node {
        case .photo(let seq):
            guard let photo = try photoRow(seq), photo.isAvailable else {
                lock.lock()
                defer { lock.unlock() }
                if var open = openPhotos[inode]?.attributes {
                    open.linkCount = 0
                    return open
                }
                throw FilesystemError(.notFound, "photo \(seq) is no longer in the catalog")
            }
            let attributes = TreeBuilder.photoAttributes(photo, linkCount: try linkCount(of: seq))
            return try sized(attributes, photo: photo, siblings: nil)
        default:
            return try listing(of: node).attributes
        }
    }

    public func lookup(parent: UInt64, name: String) throws -> NodeAttributes {
        guard let node = Node(inode: parent) else { throw FilesystemError(.notFound, "no inode \(parent)") }
        guard node.isDirectory else { throw FilesystemError(.notADirectory, "inode \(parent) is a photo") }
        let listing = try listing(of: node)
        guard let entry = listing.entry(named: name) else {
            throw FilesystemError(.notFound, "no \"\(name)\" in inode \(parent)")
        }
        let attributes = try current(entry.attributes)
        guard variants != nil, case .photo(let seq) = entry.node else { return attributes }
        guard let photo = try photoRow(seq), photo.isAvailable else {
            throw FilesystemError(.notFound, "photo \(seq) is no longer in the catalog")
        }
        return try sized(attributes, photo: photo, siblings: listing)
    }

    /// The parent of a directory, for "..".
    public func parent(of inode: UInt64) -> UInt64 {
        switch Node(inode: inode) {
        case .region: return Node.regions.inode
        case .photographer(let region, _): return Node.region(region).inode
        case .year: return Node.moments.inode
        default: return Node.root.inode
        }
    }

    // MARK: Listings

    /// A directory's listing, for opendir: also remembered as the context for prefetching.
    public func listing(of inode: UInt64) throws -> DirectoryListing {
        guard let node = Node(inode: inode) else { throw FilesystemError(.notFound, "no inode \(inode)") }
        guard node.isDirectory else { throw FilesystemError(.notADirectory, "inode \(inode) is a photo") }
        let listing = try listing(of: node)
        lock.lock()
        recentlyListed.removeAll { $0.attributes.node == node }
        recentlyListed.append(listing)
        // 8 directories: a file manager has a few windows open; older listings are not "what's next".
        if recentlyListed.count > 8 { recentlyListed.removeFirst() }
        lock.unlock()
        return listing
    }

    private func listing(of node: Node) throws -> DirectoryListing {
        lock.lock()
        if let cached = listings[node] { lock.unlock(); return cached }
        lock.unlock()
        let started = DispatchTime.now()
        let built = try catalogRead(logging: logger) { try build(node) }
        logger.debug("listing built", metadata: [
            "inode": "\(node.inode)", "entries": "\(built.entries.count)",
            "ms": "\(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6)",
        ])
        lock.lock()
        listings[node] = built
        lock.unlock()
        return built
    }

    private func build(_ node: Node) throws -> DirectoryListing {
        switch node {
        case .root:
            return TreeBuilder.root(newest: try catalog.newestMomentAt())
        case .regions:
            return TreeBuilder.regions(try catalog.regions(), newest: try catalog.newestMomentAt())
        case .moments:
            return TreeBuilder.years(try catalog.years(), newest: try catalog.newestMomentAt())
        case .region(let id):
            guard let region = try catalog.region(id: id) else { throw FilesystemError(.notFound, "no region \(id)") }
            return TreeBuilder.photographers(in: region, try catalog.photographers(inRegion: id))
        case .photographer(let region, let photographer):
            let photos = try catalog.photos(inRegion: region, photographer: photographer)
            guard !photos.isEmpty else { throw FilesystemError(.notFound, "no photos of \(photographer) in \(region)") }
            return try photoListing(photos, node: node, style: .title)
        case .year(let year):
            let photos = try catalog.photos(inYear: year)
            guard !photos.isEmpty else { throw FilesystemError(.notFound, "no photos in \(year)") }
            return try photoListing(photos.sorted { ($0.momentAt, $0.seq) < ($1.momentAt, $1.seq) }, node: node,
                                    style: .moment)
        case .recent:
            let photos = try catalog.recentPhotos(limit: options.recentLimit)
            let seqs = Set(photos.map(\.seq))
            lock.lock()
            recentSeqs = seqs
            lock.unlock()
            return TreeBuilder.photos(photos, in: .recent, style: .title, fileExtension: variantExtension) { _ in 3 }
        case .photo:
            throw FilesystemError(.notADirectory, "a photo is not a directory")
        }
    }

    /// Listings store a photo's base link count (2); `current` adds /recent's at reply time, so a photo
    /// entering /recent does not invalidate every listing that shows it.
    private func photoListing(_ photos: [PhotoRecord], node: Node, style: PhotoNameStyle) throws -> DirectoryListing {
        TreeBuilder.photos(photos, in: node, style: style, fileExtension: variantExtension) { _ in 2 }
    }

    /// Square thumbnails are PNG whatever the original; `fit` variants keep the photo's format.
    private var variantExtension: String? {
        if case .square = options.variant { return "png" }
        return nil
    }

    // MARK: Sized mounts

    /// An entry's attributes as `readdirplus` may hand them out: nil when the mount shows variants and this
    /// one's size is not known yet (the kernel then looks the name up, and the lookup renders it).
    public func currentIfKnown(_ attributes: NodeAttributes) throws -> NodeAttributes? {
        var updated = try current(attributes)
        guard let variants, case .photo(let seq) = attributes.node else { return updated }
        guard let size = variants.knownSize(of: seq) else { return nil }
        updated.size = size
        return updated
    }

    /// A photo's attributes with the size of what this mount shows: the original's, or the variant's —
    /// rendered now if not known. The first photo of a listing that needs rendering queues the rest of that
    /// listing, so `ls -l` renders on every core instead of one photo per `lstat`.
    private func sized(_ attributes: NodeAttributes, photo: PhotoRecord, siblings: DirectoryListing?) throws -> NodeAttributes {
        guard let variants else { return attributes }
        var sized = attributes
        if let size = variants.knownSize(of: photo.seq) {
            sized.size = size
            return sized
        }
        queueForRender(siblings ?? recentListing(containing: attributes.inode))
        sized.size = try variants.produce(photo, priority: .user).record.byteSize
        return sized
    }

    private func queueForRender(_ listing: DirectoryListing?) {
        guard let variants, let listing else { return }
        lock.lock()
        let first = listingsQueuedForRender.insert(listing.attributes.node).inserted
        lock.unlock()
        guard first else { return }
        let seqs = listing.entries.compactMap { entry -> Int64? in
            if case .photo(let seq) = entry.node { return seq }
            return nil
        }
        prefetcher.async { [self] in
            variants.produceLater(seqs.compactMap { try? photoRow($0) }.filter(\.isAvailable))
        }
    }

    private func recentListing(containing inode: UInt64) -> DirectoryListing? {
        lock.lock()
        defer { lock.unlock() }
        return recentlyListed.last { $0.entries.contains { $0.attributes.inode == inode } }
    }

    /// An entry's attributes as of now: a photo's link count includes its name in /recent, and the three
    /// top directories are described by their own listings (the root's entries would otherwise show
    /// /regions with 2 links and /recent with the newest photo of all, where `stat` says otherwise).
    public func current(_ attributes: NodeAttributes) throws -> NodeAttributes {
        switch attributes.node {
        case .photo(let seq):
            var updated = attributes
            updated.linkCount = try linkCount(of: seq)
            return updated
        case .regions, .moments, .recent:
            return try listing(of: attributes.node).attributes
        default:
            return attributes
        }
    }

    private func photoRow(_ seq: Int64) throws -> PhotoRecord? {
        lock.lock()
        if let row = photoRows[seq] { lock.unlock(); return row }
        lock.unlock()
        let row = try catalogRead(logging: logger) { try catalog.photo(seq: seq) }
        lock.lock()
        if photoRows.count >= 4096 { photoRows.removeAll(keepingCapacity: true) }
        photoRows[seq] = row
        lock.unlock()
        return row
    }

    /// A photo has a name in /regions and in /moments, and a third while it is in /recent.
    private func linkCount(of seq: Int64) throws -> UInt32 {
        try recentSet().contains(seq) ? 3 : 2
    }

    private func recentSet() throws -> Set<Int64> {
        lock.lock()
        if let recentSeqs { lock.unlock(); return recentSeqs }
        lock.unlock()
        let seqs = Set(try catalogRead(logging: logger) { try catalog.recentPhotos(limit: options.recentLimit) }.map(\.seq))
        lock.lock()
        recentSeqs = seqs
        lock.unlock()
        return seqs
    }

    // MARK: Content

    /// Opens a photo. A cached photo opens at once; otherwise its download starts and this returns when
    /// the origin's answer is verified, so reads can stream while the rest arrives.
    /// `processName` is the opener's command name, used to leave backup tools' opens out of /recent.
    public func open(inode: UInt64, processName: String?) throws -> OpenPhoto {
        guard case .photo(let seq) = Node(inode: inode) else {
            throw FilesystemError(.isADirectory, "inode \(inode) is a directory")
        }
        guard let photo = try photoRow(seq), let source = contentSource(photo) else {
            throw FilesystemError(.notFound, "photo \(seq) is no longer in the catalog")
        }
        var attributes = TreeBuilder.photoAttributes(photo, linkCount: (try? linkCount(of: seq)) ?? 2)
        var variantBytes: Data?
        if let variants {
            let produced = try variants.produce(photo, priority: .user)
            attributes.size = produced.record.byteSize
            variantBytes = produced.data
        }
        // A variant held in memory needs no cache file; an original (or a variant that is the original
        // unchanged) streams from the cache.
        let content = variantBytes == nil ? try openOriginal(source, photo: photo, inode: inode) : nil
        let isBackup = processName.map { options.backupTools.contains($0) } ?? false
        if isBackup {
            logger.trace("open by backup tool not recorded", metadata: ["photo": "\(photo.id)", "process": "\(processName ?? "")"])
        } else {
            noteRecentOpen(seq: seq)
            // A backup reads everything anyway; prefetching for it would only double its requests.
            prefetchAfter(inode)
        }
        lock.lock()
        openPhotos[inode] = (attributes, (openPhotos[inode]?.count ?? 0) + 1)
        lock.unlock()
        return OpenPhoto(content: content, variantBytes: variantBytes, photoID: photo.id, attributes: attributes)
    }

    private func openOriginal(_ source: ContentSource, photo: PhotoRecord, inode: UInt64) throws -> ContentHandle {
        do {
            return try cache.open(source)
        } catch let error as ContentError {
            logger.error("cannot open photo", metadata: ["photo": "\(photo.id)", "inode": "\(inode)", "op": "open",
                                                          "url": "\(photo.originalURL)", "error": "\(error)"])
            throw FilesystemError(error.kind == .noSpace ? .noSpace : .ioFailure, "\(error)", underlying: error)
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file (the FUSE read contract).
    /// Bytes still downloading are waited for.
    public func read(_ handle: OpenPhoto, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        if let bytes = handle.variantBytes {
            guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
            let count = min(buffer.count, bytes.count - Int(offset))
            bytes.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: Int(offset)..<Int(offset) + count)
            return count
        }
        do {
            return try handle.content!.read(into: buffer, at: offset)
        } catch {
            logger.error("read failed", metadata: ["photo": "\(handle.photoID)", "inode": "\(handle.attributes.inode)",
                                                    "op": "read", "error": "\(error)"])
            throw FilesystemError(.ioFailure, "reading photo \(handle.photoID)", underlying: error)
        }
    }

    /// Calls `resume` once a read of `count` bytes at `offset` can be answered without waiting — on this
    /// thread if the bytes are there, else on the download's thread when they arrive — or with the error
    /// that ended the download. FUSE threads are therefore never held while a photo downloads.
    public func whenReadable(_ handle: OpenPhoto, count: Int, at offset: Int64,
                             _ resume: @escaping (FilesystemError?) -> Void) {
        guard let content = handle.content else { return resume(nil) } // a variant is all in memory
        content.whenReadable(count: count, at: offset) { [logger] error in
            guard let error else { return resume(nil) }
            logger.error("read failed", metadata: ["photo": "\(handle.photoID)", "inode": "\(handle.attributes.inode)",
                                                    "op": "read", "error": "\(error)"])
            resume(FilesystemError(error.kind == .noSpace ? .noSpace : .ioFailure, "reading photo \(handle.photoID)",
                                   underlying: error))
        }
    }

    public func release(_ handle: OpenPhoto) {
        if let content = handle.content { cache.release(content) }
        lock.lock()
        if let open = openPhotos[handle.attributes.inode] {
            openPhotos[handle.attributes.inode] = open.count > 1 ? (open.attributes, open.count - 1) : nil
        }
        lock.unlock()
    }

    private func contentSource(_ photo: PhotoRecord) -> ContentSource? {
        guard photo.isAvailable, let size = photo.byteSize, let type = photo.contentType else { return nil }
        return ContentSource(photoID: photo.id, url: photo.originalURL, expectedSize: size, contentType: type,
                             etag: photo.etag)
    }

    /// Queues the next `prefetchCount` photos after `inode` in the most recently listed directory holding it.
    private func prefetchAfter(_ inode: UInt64) {
        guard options.prefetchCount > 0 else { return }
        lock.lock()
        let listing = recentlyListed.last { $0.entries.contains { $0.attributes.inode == inode } }
        lock.unlock()
        guard let entries = listing?.entries, let index = entries.firstIndex(where: { $0.attributes.inode == inode }) else { return }
        let next = entries[(index + 1)...].prefix(options.prefetchCount).compactMap { entry -> Int64? in
            if case .photo(let seq) = entry.node { return seq }
            return nil
        }
        if let variants {
            // A sized mount renders ahead (which downloads the sources) rather than only downloading.
            prefetcher.async { [self] in variants.produceLater(next.compactMap { try? photoRow($0) }.filter(\.isAvailable)) }
            return
        }
        prefetcher.async { [self] in
            for seq in next {
                if let photo = try? photoRow(seq), let source = contentSource(photo) { cache.prefetch(source) }
            }
        }
    }

    /// Totals for `df`: the bytes and number of photos the mount shows.
    public func usage() -> (bytes: Int64, files: Int64) {
        (try? catalog.availableTotals()) ?? (0, 0)
    }

    /// Batches opens: writing each one (a SQLite transaction with an fsync) cost a third of the time of
    /// re-reading 85 cached photos with `cat`; one write per half second costs nothing measurable.
    private func noteRecentOpen(seq: Int64) {
        lock.lock()
        let first = pendingOpens.isEmpty
        pendingOpens[seq] = Date()
        lock.unlock()
        if first { recentWriter.asyncAfter(deadline: .now() + 0.5) { [self] in flushRecentOpens() } }
    }

    private func flushRecentOpens() {
        lock.lock()
        let batch = pendingOpens.map { (seq: $0.key, at: $0.value) }.sorted { $0.at < $1.at }
        pendingOpens = [:]
        lock.unlock()
        guard !batch.isEmpty else { return }
        do {
            try catalog.recordOpens(batch)
            // Our own write moved the recent counter: the same path as another process's change updates
            // /recent, link counts and the kernel's caches.
            checkForCatalogChanges()
        } catch {
            logger.warning("could not record recent opens", metadata: ["count": "\(batch.count)", "error": "\(error)"])
        }
    }
}
