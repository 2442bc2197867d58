// Where every directory's listing is built and kept: the one switch from a node to the tree that lists it, the
// caches dropped when the catalog changes, and what was handed out but could not be kept.
import Foundation
import Logging
import PhotoCatalog
import PhotoTree

/// A new kind of folder plugs in here: a `Node` kind, a case in `build` (its listing) and one in `parent(of:)`
/// (its ".."); everything else — caching, kernel invalidation after a catalog change, readdir, desktop
/// thumbnails, prefetch — works from listings and needs nothing more.
///
/// Locks: each cache's own lock and `staleLock` are leaves (nothing is locked while one is held); builds run
/// with no lock held but, for an event listing, `EventTree`'s (which takes no lock of this file).
final class ListingStore: @unchecked Sendable {
    let catalog: Catalog
    let recent: RecentOpens
    let events: EventTree
    let searches: SearchTree
    let logger: Logger
    /// The format a sized mount serves each photo as (`VariantSpec.servedType`): square thumbnails are PNG,
    /// `fit` variants keep JPEG and PNG, a HEIC original becomes JPEG. nil: each photo's own.
    let servedExtension: ((PhotoRecord) -> String)?

    /// Listings of every directory but /recent and /search, until the catalog's photos change.
    let listings = StampedCache<Node, DirectoryListing>()
    /// The /recent listing, until a recent open lands (or the photos change).
    let recentListing = StampedCache<Node, DirectoryListing>()
    /// Photo rows by seq for getattr and open (nil: no such photo), dropped with the listings.
    let photoRows = StampedCache<Int64, PhotoRecord?>(limit: 4096)
    /// Extended attributes by node, dropped with the listings (ExtendedAttributeReplies.swift).
    let extendedAttributeLists = StampedCache<Node, ExtendedAttributeList>(limit: 4096)
    /// The scan that builds every year and photographer listing after mount (ListingPrebuild.swift).
    let prebuild = ListingPrebuild()

    /// What the caches handed out but could not keep (the catalog changed during their builds): diffed at
    /// the next check, so the kernel does not keep them either.
    struct Stale {
        var listings: [Node: DirectoryListing] = [:]
        var inodes: Set<UInt64> = []
        var recentSet: Set<Int64>?
        var isEmpty: Bool { listings.isEmpty && inodes.isEmpty && recentSet == nil }
    }
    private let staleLock = NSLock()
    private var stale = Stale()

    init(catalog: Catalog, recent: RecentOpens, events: EventTree, searches: SearchTree, logger: Logger,
         servedExtension: ((PhotoRecord) -> String)?) {
        self.catalog = catalog
        self.recent = recent
        self.events = events
        self.searches = searches
        self.logger = logger
        self.servedExtension = servedExtension
        listings.onStale = { [weak self] node, listing in self?.noteStale { $0.listings[node] = listing } }
        recentListing.onStale = { [weak self] node, listing in self?.noteStale { $0.listings[node] = listing } }
        photoRows.onStale = { [weak self] seq, _ in self?.noteStale { $0.inodes.insert(Node.photo(seq: seq).inode) } }
        recent.seqCache.onStale = { [weak self] _, seqs in
            self?.noteStale { $0.recentSet = ($0.recentSet ?? []).union(seqs) }
        }
    }

    private func noteStale(_ change: (inout Stale) -> Void) {
        staleLock.lock()
        change(&stale)
        staleLock.unlock()
    }

    /// What was handed out but not kept since the last call.
    func takeStale() -> Stale {
        staleLock.lock()
        defer { staleLock.unlock() }
        let taken = stale
        stale = Stale()
        return taken
    }

    // MARK: Listings

    /// The epoch of the cache a node's listing is kept in (`OpenDirectory.stamp`).
    func listingStamp(for node: Node) -> StampedCache<Node, DirectoryListing>.Stamp {
        (node == .recent ? recentListing : listings).stamp()
    }

    /// A directory's listing, from the cache or built now.
    func listing(of node: Node) throws -> DirectoryListing {
        // /search changes at every lookup: never cached.
        if node == .search { return try build(.search) }
        let cache = node == .recent ? recentListing : listings
        if cache.value(for: node) == nil, ListingStore.isPrebuilt(node) {
            // Built in a moment by the scan after mount (ListingPrebuild.swift); 10 s bounds a stuck catalog.
            prebuild.wait(timeout: 10) { cache.value(for: node) != nil }
        }
        return try cache.value(for: node) {
            let started = DispatchTime.now()
            let built = try catalogRead(logging: logger) { try build(node) }
            logger.debug("listing built", metadata: [
                "inode": "\(node.inode)", "entries": "\(built.entries.count)",
                "ms": "\(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6)",
            ])
            return built
        }
    }

    /// Which listing a node gets: the one place that knows every kind of folder.
    private func build(_ node: Node) throws -> DirectoryListing {
        switch node {
        case .root:
            return TreeBuilder.root(newest: try catalog.newestMomentAt())
        case .regions:
            return TreeBuilder.regions(try catalog.regions(), newest: try catalog.newestMomentAt())
        case .moments:
            return TreeBuilder.years(try catalog.years(), newest: try catalog.newestMomentAt())
        case .albums:
            return TreeBuilder.albums(try catalog.albums(), newest: try catalog.newestMomentAt())
        case .album(let id):
            let photos = try catalog.photos(inAlbum: id)
            guard !photos.isEmpty else { throw FilesystemError(.notFound, "no photos in album \(id)") }
            return photoListing(photos, node: node, style: .title)
        case .region(let id):
            guard let region = try catalog.region(id: id) else { throw FilesystemError(.notFound, "no region \(id)") }
            return TreeBuilder.photographers(in: region, try catalog.photographers(inRegion: id))
        case .photographer(let region, let photographer):
            let photos = try catalog.photos(inRegion: region, photographer: photographer)
            guard !photos.isEmpty else { throw FilesystemError(.notFound, "no photos of \(photographer) in \(region)") }
            return photoListing(photos, node: node, style: .title)
        case .year(let year):
            let photos = try catalog.photos(inYear: year)
            guard !photos.isEmpty else { throw FilesystemError(.notFound, "no photos in \(year)") }
            return photoListing(photos.sorted { ($0.momentAt, $0.seq) < ($1.momentAt, $1.seq) }, node: node,
                                style: .moment)
        case .recent:
            return TreeBuilder.photos(try recent.photos(), in: .recent, style: .title,
                                      servedExtension: servedExtension) { TreeBuilder.linkCount(of: $0, inRecent: true) }
        case .events:
            return try events.years()
        case .eventYear(let year):
            return try events.events(inYear: year)
        case .event(let key):
            return try events.photos(of: key, servedExtension: servedExtension) { try catalog.photos(seqs: $0) }
        case .search:
            // Dated as the root (its cached listing: a query of the catalog at every getattr of /search was not
            // needed for that).
            return searches.listing(newest: try listing(of: .root).attributes.mtime)
        case .searchResults(let number):
            guard let query = searches.query(number: number) else {
                throw FilesystemError(.notFound, "search \(number) is not remembered")
            }
            return try SearchTree.results(of: query, number: number, catalog: catalog, logger: logger,
                                          servedExtension: servedExtension)
        case .people:
            return TreeBuilder.people(try catalog.people(), newest: try catalog.newestMomentAt())
        case .person(let key):
            guard let person = try catalog.people().first(where: { $0.key == key }) else {
                throw FilesystemError(.notFound, "no person \(key)")
            }
            return photoListing(try catalog.photos(ofPerson: person.id), node: node, style: .title)
        case .favorites:
            return photoListing(try catalog.favoritePhotos(), node: node, style: .title)
        case .photo:
            throw FilesystemError(.notADirectory, "a photo is not a directory")
        }
    }

    /// The directory holding a directory, for "..": the other place that knows every kind of folder.
    func parent(of node: Node) -> Node {
        switch node {
        case .region: return .regions
        case .photographer(let region, _): return .region(region)
        case .year: return .moments
        case .album: return .albums
        case .eventYear: return .events
        case .event(let key): return ((try? events.event(key)).map { .eventYear($0.year) }) ?? .events
        case .searchResults: return .search
        case .person: return .people
        case .root, .regions, .moments, .recent, .albums, .events, .search, .people, .favorites, .photo: return .root
        }
    }

    /// The folders whose listings wait for a running scan rather than build themselves: all it provides
    /// but the root, whose own build (one aggregate) is quicker than the scan a first `ls` would wait for,
    /// and /events and its years, made from the events alone.
    static func isPrebuilt(_ node: Node) -> Bool {
        switch node {
        case .year, .photographer, .regions, .moments, .albums, .region, .event: return true
        case .root, .recent, .album, .photo, .events, .search, .eventYear, .searchResults, .people, .favorites,
             .person: return false
        }
    }

    /// Listings store a photo's link count without /recent (3 + its albums, favourite and people); `current` adds /recent's at
    /// reply time, so a photo entering /recent does not invalidate every listing that shows it.
    func photoListing(_ photos: [PhotoRecord], node: Node, style: PhotoNameStyle) -> DirectoryListing {
        TreeBuilder.photos(photos, in: node, style: style, servedExtension: servedExtension) {
            TreeBuilder.linkCount(of: $0, inRecent: false)
        }
    }

    /// An entry's attributes as of now: a photo's link count includes its name in /recent, and the top
    /// directories are described by their own listings (the root's entries would otherwise show /regions
    /// with 2 links and /recent with the newest photo of all, where `stat` says otherwise).
    /// `recentSeqs`: /recent's photos when the caller read them already (a readdirplus reads them once for
    /// all its entries); nil reads them here.
    func current(_ attributes: NodeAttributes, recentSeqs: Set<Int64>? = nil) throws -> NodeAttributes {
        switch attributes.node {
        case .photo(let seq):
            var updated = attributes
            let inRecent = try (recentSeqs ?? self.recentSeqs()).contains(seq)
            updated.linkCount = TreeBuilder.linkCount(albumLinks: attributes.albumLinks, inRecent: inRecent)
            return updated
        case .regions, .moments, .recent, .albums, .events, .search, .people, .favorites:
            return try listing(of: attributes.node).attributes
        case .searchResults:
            // /search lists a query before searching it: its mode (0500 for results of only private photos)
            // and times come from the results.
            return try listing(of: attributes.node).attributes
        default:
            return attributes
        }
    }

    /// The photos in /recent now (cached until it changes).
    func recentSeqs() throws -> Set<Int64> {
        try catalogRead(logging: logger) { try recent.seqs() }
    }

    func photoRow(_ seq: Int64) throws -> PhotoRecord? {
        try photoRows.value(for: seq) { try catalogRead(logging: logger) { try catalog.photo(seq: seq) } }
    }

    /// Forgets a directory that is gone for good (a search forgotten by `rmdir`).
    func forget(_ node: Node) {
        listings.remove(node)
    }
}
