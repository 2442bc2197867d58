// The filesystem's logic — what every kernel request gets — over catalog, tree and content, as plain values
// with no FUSE types, so it is tested without a kernel; FuseAdapter only packs and sends the replies.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoTree

public struct FilesystemOptions: Sendable {
    /// How many photos /recent shows.
    public var recentLimit = 20
    /// Processes whose opens do not make a photo "recent": backups, indexers, file managers, thumbnailers.
    public var uncountedOpeners = UncountedOpeners()
    /// How often the catalog is checked for changes made by another process (an import).
    public var catalogPollInterval: TimeInterval = 1
    /// Photos after the one being read, in its directory's listing order, downloaded ahead at low priority
    /// once it is read whole (`WholeReading`; PhotoKit's caching image manager does the same for the cells
    /// about to scroll into view). 0 = off.
    public var prefetchCount = 3
    /// What each photo is shown as: nil for the original bytes, else a smaller variant (`--size`).
    public var variant: VariantSpec?
    public var renderOptions = RenderOptions()
    public var timeouts = KernelTimeouts()
    /// How long the thread reading FUSE requests keeps polling for the next before it sleeps (`--busy-poll`,
    /// microseconds; 0: libfuse's own loop, every idle thread asleep in read(2)). 200: KVM's default
    /// halt_poll_ns. A folder read in Python went from 1.91-2.04x to 1.17-1.33x the cache files with it
    /// (CFuseSessionIO's request_readers.c has the figures and the design).
    public var busyPollMicroseconds = 200
    public var uid = getuid()
    public var gid = getgid()
    /// Where and how freedesktop thumbnails of listed photos are written; nil: not at all
    /// (`--desktop-thumbnails=off`).
    public var desktopThumbnails: DesktopThumbnailOptions?
    /// Whose listings get desktop thumbnails written (file managers and thumbnailers, plus `-o thumbnail_listers=`).
    public var thumbnailListers = ThumbnailListers()
    public init() {}
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
    let logger: Logger

    /// Lock order, where locks nest: `changeCheck` → `lock`, and `changeCheck` → `EventTree.settling` →
    /// `EventTree`'s own lock (the check settles events). `changeCheck` is taken only by the catalog check (and
    /// the mount's first look at the removal log), never while any other lock is held. `lock` and the other
    /// parts' locks (ListingStore's caches and stale set, SearchTree, OpenPhotoTable, PrefetchPlanner,
    /// RecentOpens) are leaves: none is held while another is taken.
    private let lock = NSLock()
    private let changeCheck = NSLock()
    /// Every listing, built and cached in one place (ListingStore.swift); new kinds of folders plug in there.
    let store: ListingStore
    let recent: RecentOpens
    /// The mount's events (/events) and searches (/search).
    let events: EventTree
    let searches: SearchTree
    private let openPhotos = OpenPhotoTable()
    private let planner: PrefetchPlanner
    private let watcher: CatalogWatcher
    /// What the caches were built from: the catalog's counters and the in-memory recents' counter. Under `lock`.
    private var seenGeneration: (catalog: Catalog.Generation?, memory: Int)
    /// Invalidations decided inside a request (a search pushed out of /search) that only the watcher may send
    /// (see `invalidate`). Under `lock`.
    private var pendingInvalidations: [KernelInvalidation] = []
    private var openers = RecentOpeners()
    private let prefetcher = DispatchQueue(label: "photofs.prefetch")
    /// Told what to drop from the kernel's caches after a catalog change (the FUSE adapter's notify calls).
    /// Directory entries are only ever invalidated from the watcher or the recent writer, never from inside a
    /// request (a notify there can deadlock on the directory lock the request holds); a variant whose size
    /// changed is invalidated from its render, which only touches the inode's attributes (offset -1, no
    /// directory lock).
    public var invalidate: (([KernelInvalidation]) -> Void)? {
        get { lock.lock(); defer { lock.unlock() }; return invalidationSink }
        set { lock.lock(); invalidationSink = newValue; lock.unlock() }
    }
    private var invalidationSink: (([KernelInvalidation]) -> Void)?
    /// Renders and keeps variants when the mount shows a `--size` other than the originals.
    public let variants: VariantProducer?
    /// Writes file managers' thumbnails of the photos of listed directories (nil when turned off).
    public let desktopThumbnails: DesktopThumbnailWriter?
    /// Listings whose photos were queued for rendering (once each until the catalog changes). Under `lock`.
    private var listingsQueuedForRender: Set<Node> = []
    /// How far the catalog's log of removed and replaced photos has been read (their cached bytes freed).
    private var removedLogPosition: Int64

    // The store's caches under their old names, for the files that extend this type.
    var listings: StampedCache<Node, DirectoryListing> { store.listings }
    var photoRows: StampedCache<Int64, PhotoRecord?> { store.photoRows }
    var extendedAttributeLists: StampedCache<Node, ExtendedAttributeList> { store.extendedAttributeLists }
    var listingPrebuild: ListingPrebuild { store.prebuild }

    /// `http` fetches the smaller renditions variants are rendered from (originals come through `cache`).
    /// `persistentRecents: false` keeps /recent in memory (a library this mount may not write).
    /// `clock` (seconds since 1970) is what events settle against: an event ended 48 hours before it keeps its name.
    public init(catalog: Catalog, cache: OriginalCache, http: HTTPClient? = nil, options: FilesystemOptions,
                persistentRecents: Bool = true, logger: Logger,
                clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.catalog = catalog
        self.cache = cache
        self.options = options
        self.logger = logger
        let http = http ?? HTTPClient(logger: logger)
        variants = options.variant.map {
            VariantProducer(spec: $0, catalog: catalog, cache: cache, http: http,
                            renderOptions: options.renderOptions, logger: logger)
        }
        desktopThumbnails = options.desktopThumbnails.map {
            DesktopThumbnailWriter(options: $0, catalog: catalog, cache: cache, http: http, logger: logger)
        }
        seenGeneration = (try? catalog.generation(), 0)
        // From the start of the log (it keeps a week): photos removed while nothing was mounted are freed at
        // the first check too.
        removedLogPosition = 0
        // A row the catalog cannot use (a damaged or hand-edited library) is left out of the tree; say so once.
        catalog.onBadRow = { [logger] problem in logger.warning("\(problem)") }
        // Our own batch moved the recent counter: the same path as another process's change then updates
        // /recent, link counts and the kernel's caches.
        var checkAfterWrite: (() -> Void)?
        recent = RecentOpens(catalog: catalog, limit: options.recentLimit, persistent: persistentRecents,
                             logger: logger, written: { checkAfterWrite?() })
        events = EventTree(catalog: catalog, logger: logger, clock: clock)
        searches = SearchTree()
        // The format a sized mount serves each photo as (`VariantSpec.servedType`).
        let servedExtension: ((PhotoRecord) -> String)? = options.variant.map { spec in
            { ImageContentType.fileExtension(for: spec.servedType(forOriginal: $0.contentType)) ?? "jpg" }
        }
        store = ListingStore(catalog: catalog, recent: recent, events: events, searches: searches, logger: logger,
                             servedExtension: servedExtension)
        planner = PrefetchPlanner(count: options.prefetchCount)
        watcher = CatalogWatcher(interval: options.catalogPollInterval)
        checkAfterWrite = { [weak self] in self?.checkForCatalogChanges() }
        variants?.sizeChanged = { [weak self] seq in self?.invalidate?([.inode(Node.photo(seq: seq).inode)]) }
    }

    // MARK: Catalog changes

    /// Polls the catalog's change counters and drops cached listings when another process changed it, so an
    /// import shows up in a live mount within `catalogPollInterval` plus the kernel's attribute timeout.
    /// Events are settled first thing, beside the one scan that builds every photo listing, so the first
    /// `ls /events` finds them ready.
    public func startWatchingCatalog() {
        changeCheck.lock()
        freeRemovedContent()
        changeCheck.unlock()
        let prebuild = Thread { [weak self] in
            guard let self else { return }
            if self.prebuildPhotoListings(settlingEvents: true) == 0 {
                // No scan (another build ran, or the catalog is over the limit): the events still settle now.
                do { _ = try self.events.settle(onlyIfMissing: true) } catch {
                    self.logger.error("events could not be settled", metadata: ["error": "\(error)"])
                }
            }
        }
        prebuild.name = "listing-prebuild"
        prebuild.qualityOfService = .utility
        prebuild.start()
        watcher.start { [weak self] in self?.checkForCatalogChanges() }
    }

    /// Stops the watcher and waits until it has (so nothing notifies a session being torn down), then
    /// writes what is pending.
    public func stopWatchingCatalog() {
        watcher.stop()
        recent.stop() // pending opens land before the catalog closes
        variants?.stop()
    }

    /// Compares the change counters with those the caches were built from; drops what changed, rebuilds what
    /// the kernel may have cached and tells it exactly what differs. Returns the invalidations sent.
    @discardableResult
    public func checkForCatalogChanges() -> [KernelInvalidation] {
        // One check at a time (the watcher and the recent writer both call this): two overlapping checks
        // could each see part of the caches, and a change seen by the second would be diffed by neither.
        changeCheck.lock()
        defer { changeCheck.unlock() }
        guard let current = try? catalog.generation() else { return [] }
        let memory = recent.memoryGeneration
        let stale = store.takeStale()
        lock.lock()
        let seen = seenGeneration
        let changed = current != seen.catalog || memory != seen.memory
        let photosChanged = current.photos != seen.catalog?.photos
        let pending = pendingInvalidations
        pendingInvalidations = []
        guard changed || !stale.isEmpty || !pending.isEmpty else {
            lock.unlock()
            return []
        }
        seenGeneration = (current, memory)
        if photosChanged { listingsQueuedForRender = [] }
        lock.unlock()
        if photosChanged {
            // Before the listings are dropped: an event listing built after the drop must see the new events.
            do { try events.settle() } catch {
                logger.error("events could not be settled", metadata: ["error": "\(error)"])
            }
        }

        // What the kernel may hold: the listings cached until now, and any handed out but not kept.
        var before: [(Node, DirectoryListing)] = []
        if changed {
            before += store.recentListing.invalidate().map { ($0.key, $0.value) }
            recent.seqCache.invalidate()
            if photosChanged {
                before += listings.invalidate().map { ($0.key, $0.value) }
                photoRows.invalidate()
                extendedAttributeLists.invalidate()
                logger.info("catalog changed; listings will be rebuilt", metadata: ["generation": "\(current.photos)"])
            }
        }
        before += stale.listings.map { ($0.key, $0.value) }
        var invalidations = pending + stale.inodes.map { KernelInvalidation.inode($0) }
        if let servedSet = stale.recentSet {
            // Link counts given from a recent set that was out of date: every photo whose membership differs.
            let fresh = (try? recent.seqs()) ?? []
            invalidations += servedSet.symmetricDifference(fresh).map { .inode(Node.photo(seq: $0).inode) }
        }
        if photosChanged {
            desktopThumbnails?.catalogChanged()
            freeRemovedContent()
        }
        if photosChanged, let variants {
            // Variants the catalog dropped (their original or renditions changed) may render to other sizes.
            invalidations += variants.catalogChanged().map { .inode(Node.photo(seq: $0).inode) }
        }
        for (node, old) in before {
            let new = try? listing(of: node)
            invalidations += PhotoFilesystem.differences(from: old, to: new)
            // Thumbnails follow: names gone lose theirs, a changed photo's are rewritten in the background.
            updateDesktopThumbnails(from: old, to: new)
        }
        if !invalidations.isEmpty { invalidate?(invalidations) }
        return invalidations
    }

    /// Frees the cached bytes of photos an import deleted or replaced since the last check: a deleted photo's
    /// bytes, and a replaced one's old version, are never served again. Called under `changeCheck`.
    private func freeRemovedContent() {
        let previous = removedLogPosition
        let found = try? catalog.removedPhotoIDs(after: previous)
        // Desktop thumbnails that show what the library no longer has go too (a replaced photo's are
        // rewritten when its directory's listing is rebuilt or next asked for); at the first check, also
        // those of photos deleted longer ago than the log keeps.
        if previous == 0 || !(found?.ids.isEmpty ?? true) { desktopThumbnails?.removeOutdated(removedAfter: previous) }
        guard let (ids, last) = found, !ids.isEmpty else { return }
        removedLogPosition = last
        let removals = Set(ids).map { id in
            OriginalCache.Removal(photoID: id, keeping: (try? catalog.photo(id: id)).flatMap { $0 }
                .flatMap(contentSource).map(OriginalCache.key(for:)))
        }
        let freed = cache.discard(removals)
        if freed > 0 {
            logger.info("cached bytes of deleted or replaced photos freed", metadata: ["photos": "\(Set(ids).count)", "bytes": "\(freed)"])
        }
    }

    /// What differs between two listings of one directory, as the kernel sees it: names gone, added or
    /// pointing elsewhere, and nodes whose attributes changed. `new` is nil for a directory that is gone.
    public static func differences(from old: DirectoryListing, to new: DirectoryListing?) -> [KernelInvalidation] {
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
                // The name now means another photo: its dentry goes, both photos' link counts moved, and the
                // cached listing holds the old inode number (`ls -i`).
                result += [.entry(parent: parent, name: entry.name), .inode(entry.attributes.inode), .inode(now.inode)]
            } else if now != entry.attributes {
                result.append(.inode(now.inode))
            }
        }
        for entry in new.entries where !oldNames.contains(entry.name) {
            // A cached "no such file" is now wrong, and a photo that gained a name has a new link count.
            result += [.entry(parent: parent, name: entry.name), .inode(entry.attributes.inode)]
        }
        let sameEntries = old.entries.count == new.entries.count && !zip(old.entries, new.entries).contains {
            $0.name != $1.name || $0.attributes.inode != $1.attributes.inode
        }
        if !sameEntries || old.attributes != new.attributes {
            result.append(.inode(parent))
        }
        return result
    }

    // MARK: Lookup and attributes

    /// lookup: the entry, or a negative entry the kernel may remember; other failures throw.
    public func lookup(parent: UInt64, name: String) throws -> EntryReply {
        try lookup(parent: parent, nameBytes: Array(name.utf8))
    }

    /// lookup of a name as the kernel gives it: any bytes. Every name the tree lists is UTF-8, so another is
    /// a negative entry; under /search a name that reads as a query (`SearchQuery`) becomes its directory.
    public func lookup(parent: UInt64, nameBytes: [UInt8]) throws -> EntryReply {
        do {
            let attributes: NodeAttributes
            if parent == Node.search.inode {
                attributes = try searchDirectory(nameBytes: nameBytes)
            } else {
                guard let name = String(validating: nameBytes, as: UTF8.self) else {
                    throw FilesystemError(.notFound, "a name that is not UTF-8")
                }
                attributes = try lookupAttributes(parent: parent, name: name)
            }
            return .entry(attributes, entryTimeout: options.timeouts.entry, attributeTimeout: options.timeouts.attributes)
        } catch let error as FilesystemError where error.code == .notFound {
            return .negative(timeout: options.timeouts.negativeEntry)
        }
    }

    /// A lookup under /search: the query's directory, remembered as the most recent (its results are searched
    /// now, as `ls` lists them next). A query pushed out of the recent 20 and the changed /search listing are
    /// told to the kernel by the next check (within `catalogPollInterval`), not from inside this lookup.
    private func searchDirectory(nameBytes: [UInt8]) throws -> NodeAttributes {
        guard let found = searches.lookup(nameBytes: nameBytes) else {
            throw FilesystemError(.notFound, "not a query")
        }
        if let (before, after) = found.change {
            // The name just looked up is answered now; only a name pushed out must leave the kernel's cache
            // (and /search's link count changed).
            let kept = Set(after.entries.map(\.node))
            let pushedOut = before.entries.filter { !kept.contains($0.node) }
            for entry in pushedOut { store.forget(entry.node) }
            lock.lock()
            pendingInvalidations += pushedOut.map { .entry(parent: Node.search.inode, name: $0.name) }
                + [.inode(Node.search.inode)]
            lock.unlock()
        }
        do {
            return try listing(of: found.node).attributes
        } catch {
            // A query whose search failed is not kept: listed in /search, it would fail every later `ls -lR`,
            // `find` and `rsync` of the mount until it left the recent 20.
            if found.change != nil, let node = searches.forget(nameBytes: nameBytes) { store.forget(node) }
            throw error
        }
    }

    /// rmdir: under /search it forgets a query (ENOENT when none of that name is remembered); anywhere else
    /// the tree is read-only (EROFS).
    public func removeDirectory(parent: UInt64, nameBytes: [UInt8]) throws {
        guard parent == Node.search.inode else {
            throw FilesystemError(.readOnly, "only searches can be removed")
        }
        guard let node = searches.forget(nameBytes: nameBytes) else {
            throw FilesystemError(.notFound, "no such search")
        }
        store.forget(node)
        // The kernel drops the name itself when rmdir succeeds; /search's attributes (links) changed.
        lock.lock()
        pendingInvalidations.append(.inode(Node.search.inode))
        lock.unlock()
    }

    /// getattr. With an open photo's handle (fstat, and the kernel's check before reads) the attributes it
    /// had at open, so a photo changed or deleted under an open descriptor keeps reading.
    public func getattr(_ inode: UInt64, handle: OpenPhoto? = nil) throws -> AttributeReply {
        if let handle, Node(inode: inode)?.isDirectory == false {
            return AttributeReply(attributes: handle.attributes, timeout: options.timeouts.attributes)
        }
        return AttributeReply(attributes: try attributes(of: inode), timeout: options.timeouts.attributes)
    }

    public func attributes(of inode: UInt64) throws -> NodeAttributes {
        guard let node = Node(inode: inode) else { throw FilesystemError(.notFound, "no inode \(inode)") }
        switch node {
        case .photo(let seq):
            guard let photo = try photoRow(seq), photo.isAvailable else {
                if let open = openPhotos.attributesOfRemoved(inode) { return open }
                throw FilesystemError(.notFound, "photo \(seq) is no longer in the catalog")
            }
            let attributes = TreeBuilder.photoAttributes(photo, linkCount: try linkCount(of: photo))
            return try sized(attributes, photo: photo, siblings: nil)
        default:
            return try listing(of: node).attributes
        }
    }

    func lookupAttributes(parent: UInt64, name: String) throws -> NodeAttributes {
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
        Node(inode: inode).map { store.parent(of: $0).inode } ?? Node.root.inode
    }

    // MARK: Directories

    /// opendir: the listing as it is now, kept for the handle's life so offsets stay valid; also remembered
    /// as the context for prefetching.
    /// `lister`: the process listing, when known; only file managers and thumbnailers (`ThumbnailListers`)
    /// get desktop thumbnails written for the listing.
    public func openDirectory(_ inode: UInt64, lister: OpenerIdentity? = nil) throws -> OpenDirectory {
        listingPrebuild.listed()
        let stamp = Node(inode: inode).map(store.listingStamp(for:))
        let listing = try listing(of: inode)
        if let lister, options.thumbnailListers.contains(lister) {
            writeDesktopThumbnails(for: listing)
        } else if desktopThumbnails != nil {
            logger.debug("listing gets no desktop thumbnails: not a file manager or thumbnailer", metadata: [
                "inode": "\(inode)", "op": "opendir", "lister": "\(lister?.names ?? [])"])
        }
        return OpenDirectory(listing: listing, parent: parent(of: inode), stamp: stamp)
    }

    /// A directory read after the listings it was opened from were dropped (the catalog changed in between)
    /// hands the kernel entries from before the change, possibly after the change's invalidation was sent; the
    /// kernel would keep them (FOPEN_CACHE_DIR) until the next change. So the next check invalidates it again.
    /// Seen once in a fresh clone's `make test`: a folder's listing stayed without a photo an import had added.
    private func noteIfStale(_ directory: OpenDirectory) {
        guard let stamp = directory.stamp, directory.flags.cacheListing else { return }
        let node = directory.listing.attributes.node
        guard store.listingStamp(for: node) != stamp else { return }
        lock.lock()
        if !directory.staleNoted {
            directory.staleNoted = true
            pendingInvalidations.append(.inode(node.inode))
        }
        lock.unlock()
    }

    /// readdir(plus): the entry at `offset` (0 is ".", 1 is "..", then the listing), or nil past the end.
    public func directoryEntry(_ directory: OpenDirectory, at offset: Int64, plus: Bool) -> DirectoryReplyEntry? {
        var found: DirectoryReplyEntry?
        directoryEntries(directory, from: offset, plus: plus) { found = $0; return false }
        return found
    }

    /// readdir(plus): the entries from `offset` on, each handed to `add` until it returns false (the reply
    /// buffer is full) or the listing ends. The listing and /recent's photos (for link counts) are read once
    /// per reply, not once per entry: a first `ls -lR` of 3,192 event folders sends 3,192 readdirplus of 31
    /// photos, and `ls` idles while each is answered. With the names passed without a copy (the adapter), one
    /// took 19.6 µs in the daemon against 23.0 µs (medians of six and seven mounts, reply included).
    public func directoryEntries(_ directory: OpenDirectory, from offset: Int64, plus: Bool,
                                 _ add: (DirectoryReplyEntry) -> Bool) {
        let listing = directory.listing
        guard offset >= 0 else { return }
        noteIfStale(directory)
        var recentSeqs: Result<Set<Int64>, Error>?
        func current(_ attributes: NodeAttributes) throws -> NodeAttributes {
            guard case .photo = attributes.node else { return try store.current(attributes) }
            let seqs = recentSeqs ?? Result { try store.recentSeqs() }
            recentSeqs = seqs
            return try store.current(attributes, recentSeqs: seqs.get())
        }
        var position = offset
        while position < Int64(listing.entries.count) + 2 {
            let name: String
            var attributes: NodeAttributes
            var known = true
            switch position {
            case 0:
                name = "."
                attributes = listing.attributes
            case 1:
                name = ".."
                attributes = (try? self.attributes(of: directory.parent)) ?? listing.attributes
            default:
                let entry = listing.entries[Int(position - 2)]
                name = entry.name
                if plus {
                    // A variant not rendered yet has no size to give, and a catalog that cannot be read has no
                    // attributes: such entries go without (the kernel's lookup then gets the real answer).
                    if let updated = try? withKnownSize(current(entry.attributes)) {
                        attributes = updated
                    } else {
                        attributes = entry.attributes
                        known = false
                    }
                } else {
                    attributes = (try? current(entry.attributes)) ?? entry.attributes
                }
            }
            let reply = DirectoryReplyEntry(name: name, attributes: attributes, attributesKnown: known,
                                            nextOffset: position + 1, entryTimeout: known ? options.timeouts.entry : 0,
                                            attributeTimeout: known ? options.timeouts.attributes : 0)
            guard add(reply) else { return }
            position += 1
        }
    }

    /// A directory's listing; also remembered as the context for prefetching.
    public func listing(of inode: UInt64) throws -> DirectoryListing {
        guard let node = Node(inode: inode) else { throw FilesystemError(.notFound, "no inode \(inode)") }
        guard node.isDirectory else { throw FilesystemError(.notADirectory, "inode \(inode) is a photo") }
        let listing = try listing(of: node)
        planner.listed(listing)
        return listing
    }

    func listing(of node: Node) throws -> DirectoryListing { try store.listing(of: node) }

    /// Listings store a photo's link count without /recent; `current` adds it at reply time.
    func photoListing(_ photos: [PhotoRecord], node: Node, style: PhotoNameStyle) -> DirectoryListing {
        store.photoListing(photos, node: node, style: style)
    }

    /// An entry's attributes as of now (ListingStore.current).
    func current(_ attributes: NodeAttributes) throws -> NodeAttributes { try store.current(attributes) }

    func photoRow(_ seq: Int64) throws -> PhotoRecord? { try store.photoRow(seq) }

    // MARK: Sized mounts

    /// An entry's current attributes as `readdirplus` may hand them out: nil when the mount shows variants and
    /// this one's size is not known yet (the kernel then looks the name up, and the lookup renders it).
    private func withKnownSize(_ current: NodeAttributes) -> NodeAttributes? {
        guard let variants, case .photo(let seq) = current.node else { return current }
        guard let size = variants.knownSize(of: seq) else { return nil }
        var updated = current
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
        queueForRender(siblings ?? planner.listing(containing: attributes.inode))
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

    /// A photo's names: /regions, /moments, /events, each album, /favorites, each person, and /recent while it
    /// is there.
    private func linkCount(of photo: PhotoRecord) throws -> UInt32 {
        let inRecent = try store.recentSeqs().contains(photo.seq)
        return TreeBuilder.linkCount(of: photo, inRecent: inRecent)
    }

    // MARK: Content

    /// open. A cached photo opens at once; otherwise its download starts and this returns when the origin's
    /// answer is verified, so reads can stream while the rest arrives. Opening for writing (or truncating)
    /// fails with EROFS. `opener` (the process that opened, when known) decides whether the open counts as
    /// recent (once `opened` says its reply was sent) and warms the next photos.
    /// `reusing`: the file and version of the photo's idle passed-through backing (`PassThroughPolicy.reusable`).
    /// When the photo is still that version and its path still names that file, the handle opens nothing (its
    /// `localFile` is that file, and the adapter answers with that backing); otherwise it is opened as usual.
    public func open(inode: UInt64, forWriting: Bool = false, truncating: Bool = false,
                     opener: OpenerIdentity? = nil, reusing file: PassThroughPolicy.Reusable? = nil) throws -> OpenReply {
        guard !forWriting && !truncating else { throw FilesystemError(.readOnly, "the photo file system is read-only") }
        guard case .photo(let seq) = Node(inode: inode) else {
            throw FilesystemError(.isADirectory, "inode \(inode) is a directory")
        }
        guard let photo = try photoRow(seq), let source = contentSource(photo) else {
            throw FilesystemError(.notFound, "photo \(seq) is no longer in the catalog")
        }
        var attributes = TreeBuilder.photoAttributes(photo, linkCount: (try? linkCount(of: photo))
                                                     ?? TreeBuilder.linkCount(of: photo, inRecent: false))
        var variantBytes: Data?
        var variantIdentity = ""
        if let variants {
            let produced = try variants.produce(photo, priority: .user)
            attributes.size = produced.record.byteSize
            variantBytes = produced.data
            if variantBytes != nil { variantIdentity = "|\(produced.record.spec)|\(produced.record.byteSize)" }
        }
        // A variant held in memory needs no cache file; an original (or a variant that is the original
        // unchanged) streams from the cache.
        // A thumbnailer's download waits behind everyone's and counts against its process's limit; so does a
        // file manager's, unless the photo has the thumbnail this mount wrote (then it is a copy, not a
        // thumbnail being drawn).
        let thumbnailer = opener.flatMap { opener -> String? in
            let drawing = UncountedOpeners.isThumbnailer(opener)
                || (UncountedOpeners.isFileManager(opener) && desktopThumbnails?.hasWritten(seq) != true)
            return drawing ? "process \(opener.processID)" : nil
        }
        // An idle backing is reused for the very version it was registered for (its file passed the import's
        // check then) while the photo's path still names that file, unchanged. Never on a sized mount: its
        // handles read variants.
        let local = source.url.hasPrefix("file:")
        let originalKey = file != nil && variants == nil ? OriginalCache.key(for: source) : nil
        let reused = file.flatMap { file in
            originalKey == file.identity && LocalFileContent.stillNames(file.file, source) ? file.file : nil
        }
        let content = variantBytes == nil && reused == nil
            ? try openOriginal(source, photo: photo, inode: inode, thumbnailer: thumbnailer) : nil
        // Which bytes this handle reads: the original's cache key (the handle has it), plus the variant's.
        let identity = (content?.key ?? originalKey ?? OriginalCache.key(for: source)) + variantIdentity
        var neighbours: (folder: Node?, seqs: [Int64]) = (nil, [])
        var countsAsRecent = false
        if let opener, options.uncountedOpeners.contains(opener) {
            logger.trace("open not counted as recent", metadata: ["photo": "\(photo.id)", "opener": "\(opener.names)"])
        } else {
            countsAsRecent = true
            // A backup or a thumbnailer reads everything anyway; prefetching for it would double its requests.
            // The folder position is taken now (an open is what moves it). The originals are warmed when this
            // handle reads its photo whole (`read`), or now when the folder's last photo was read whole; a sized
            // mount's variants now, as its open renders anyway. A local photo shown as it is has nothing to warm
            // and moves no position: finding it in its folder's listing was 1–2 µs of a 10 µs open (perf).
            if variants != nil || !local { neighbours = planner.neighbours(of: inode) }
            let now = variants != nil || neighbours.folder.map(planner.isReadWhole) == true
            if now {
                prefetch(neighbours.seqs)
                neighbours.seqs = []
            }
        }
        let mode = openPhotos.opened(inode: inode, attributes: attributes, identity: identity)
        if mode != .keep {
            logger.trace("page cache", metadata: ["photo": "\(photo.id)", "inode": "\(inode)", "op": "open",
                                                  "keep": "\(mode.keepCache)", "direct": "\(mode.directIO)"])
        }
        // A local photo shown as it is: the kernel may read its file itself (the adapter decides, PassThroughPolicy).
        let passThroughFile = local ? content?.wholeFileDescriptor : nil
        let handle = OpenPhoto(content: content, variantBytes: variantBytes, photoID: photo.id, attributes: attributes,
                               identity: identity, pageCache: mode, folder: variants == nil ? neighbours.folder : nil,
                               neighbours: neighbours.seqs, passThroughFile: passThroughFile,
                               localFile: reused ?? content?.localFile,
                               countsAsRecent: countsAsRecent)
        return OpenReply(handle: handle, pageCache: mode)
    }

    /// The open's reply reached the kernel: a counted open makes its photo recent now, so an open the adapter
    /// refused (EBUSY beside a passed-through version) or whose opener was interrupted never shows in /recent.
    public func opened(_ handle: OpenPhoto) {
        guard handle.countsAsRecent, case .photo(let seq) = Node(inode: handle.attributes.inode) else { return }
        recent.noteOpen(seq: seq)
    }

    /// Who is behind an open (the kernel names the thread): remembered for a couple of seconds, so a program
    /// opening many photos is looked up in /proc once.
    public func opener(thread tid: Int32) -> OpenerIdentity? {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        lock.lock()
        defer { lock.unlock() }
        return openers.identity(of: tid, now: now) { OpenerIdentity(thread: $0) }
    }

    private func openOriginal(_ source: ContentSource, photo: PhotoRecord, inode: UInt64,
                              thumbnailer: String?) throws -> ContentHandle {
        do {
            // Through the cache, or a folder import's file read in place (checked against the import's size and mtime).
            return try PhotoOriginals(cache: cache).open(source, thumbnailer: thumbnailer)
        } catch let error as ContentError {
            // Logged by the adapter with the request, once for a run of the same failure (`RepeatedFailures`).
            throw FilesystemError(error.kind == .noSpace ? .noSpace : .ioFailure, "cannot open photo \(photo.id)",
                                  underlying: error)
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file (the FUSE read contract).
    /// Bytes still downloading are waited for. The read that makes the handle a whole reader warms its
    /// folder's next photos.
    public func read(_ handle: OpenPhoto, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        noteRead(handle, count: buffer.count, at: offset)
        if let bytes = handle.variantBytes {
            guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
            let count = min(buffer.count, bytes.count - Int(offset))
            bytes.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: Int(offset)..<Int(offset) + count)
            return count
        }
        guard let content = handle.content else {
            // A handle that reuses a passed-through backing opened nothing: the kernel reads its file, and a read
            // here would otherwise answer "end of file" in the middle of a photo.
            throw FilesystemError(.ioFailure, "photo \(handle.photoID) is read by the kernel from its file, not here")
        }
        do {
            return try content.read(into: buffer, at: offset)
        } catch {
            logger.error("read failed", metadata: ["photo": "\(handle.photoID)", "inode": "\(handle.attributes.inode)",
                                                    "op": "read", "error": "\(error)"])
            throw FilesystemError(.ioFailure, "reading photo \(handle.photoID)", underlying: error)
        }
    }

    /// How the adapter answers a read of `count` bytes at `offset` that `whenReadable` let through: straight
    /// from the open file when the photo's bytes are all in one (a local photo, a finished cache file), so the
    /// kernel takes its pages without the daemon copying them; else with `read(_:into:at:)`.
    public func readReply(_ handle: OpenPhoto, count: Int, at offset: Int64) -> ReadReply {
        guard handle.variantBytes == nil, let range = handle.content?.fileRange(count: count, at: offset) else { return .copied }
        noteRead(handle, count: count, at: offset)
        return .fileRange(descriptor: range.descriptor, offset: range.offset, count: range.count)
    }

    /// The read that makes the handle a whole reader warms its folder's next photos.
    private func noteRead(_ handle: OpenPhoto, count: Int, at offset: Int64) {
        if let folder = handle.folder, handle.noteRead(offset: offset, count: count) {
            planner.readWhole(in: folder)
            prefetch(handle.neighbours)
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
        if let folder = handle.folder, !handle.readWhole, !handle.isPassedThrough { planner.scanned(in: folder) }
        openPhotos.closed(handle)
    }

    private func contentSource(_ photo: PhotoRecord) -> ContentSource? { PhotoFilesystem.contentSource(photo) }

    /// What the cache needs to fetch and check a photo's original; nil when the photo cannot be shown.
    static func contentSource(_ photo: PhotoRecord) -> ContentSource? {
        guard photo.isAvailable, let size = photo.byteSize, let type = photo.contentType else { return nil }
        return ContentSource(photoID: photo.id, url: photo.originalURL, expectedSize: size, contentType: type,
                             etag: photo.etag)
    }

    /// Warms photos at low priority: their originals are downloaded whole, or a sized mount renders them.
    private func prefetch(_ next: [Int64]) {
        guard !next.isEmpty else { return }
        if let variants {
            // A sized mount renders ahead (which downloads the sources) rather than only downloading.
            prefetcher.async { [self] in variants.produceLater(next.compactMap { try? photoRow($0) }.filter(\.isAvailable)) }
            return
        }
        prefetcher.async { [self] in
            for seq in next {
                if let photo = try? photoRow(seq), let source = contentSource(photo),
                   !source.url.hasPrefix("file:") { cache.prefetch(source) } // a local file needs no prefetch
            }
        }
    }

    /// statfs: the bytes and number of photos the mount shows.
    public func usage() -> FilesystemUsage {
        let totals = (try? catalog.availableTotals()) ?? (bytes: 0, files: 0)
        let blockSize: Int64 = 4096
        let blocks = totals.bytes / blockSize + (totals.bytes % blockSize == 0 ? 0 : 1)
        return FilesystemUsage(blockSize: UInt64(blockSize), blocks: UInt64(max(0, blocks)),
                               files: UInt64(max(0, totals.files)))
    }

    /// Writes pending /recent opens now and applies them (tests flush, then assert).
    public func flushRecentOpens() { recent.flush() }
}
