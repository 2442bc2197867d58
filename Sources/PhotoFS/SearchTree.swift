// The mount's /search: the queries looked up under it (the recent 20, each a directory) and their results.
import Foundation
import Logging
import PhotoCatalog
import PhotoTree

/// A lookup of a name under /search that reads as a query makes it a directory (TMSU's `queries/`), `rmdir`
/// forgets it. Its lock is a leaf: nothing else is locked while it is held.
final class SearchTree: @unchecked Sendable {
    private let lock = NSLock()
    private var recent = RecentSearches()

    /// What a lookup of `name` under /search changed: the query's directory, and the /search listings before
    /// and after when the lookup remembered a new query (the caller diffs them for the kernel, later: a
    /// notification from inside the lookup could deadlock on the directory lock it holds).
    struct Lookup {
        let node: Node
        let change: (before: DirectoryListing, after: DirectoryListing)?
    }

    /// The directory of the query `nameBytes` reads as, made the most recent; nil when the name is not a
    /// query (ENOENT). A query that pushes the 21st out comes back with the listing change.
    func lookup(nameBytes: [UInt8]) -> Lookup? {
        guard let query = SearchQuery(nameBytes: nameBytes) else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if let known = recent.node(named: query.name) {
            _ = recent.remember(query)
            return Lookup(node: known, change: nil)
        }
        let before = recent.listing(newest: 0)
        let node = recent.remember(query).node
        return Lookup(node: node, change: (before, recent.listing(newest: 0)))
    }

    /// The query a directory stands for, while remembered.
    func query(number: Int64) -> SearchQuery? {
        lock.withLock { recent.query(number: number) }
    }

    /// `rmdir /search/<name>`: the node forgotten, or nil when no such query is remembered.
    func forget(nameBytes: [UInt8]) -> Node? {
        guard let name = String(validating: nameBytes, as: UTF8.self) else { return nil }
        return lock.withLock { recent.forget(named: name) }
    }

    /// `/search`: the remembered queries, dated as the library's newest photo (`newest`), as the root is (with
    /// 0, `ls -l` and file managers showed 1 Jan 1970).
    func listing(newest: Int64) -> DirectoryListing {
        lock.withLock { recent.listing(newest: newest) }
    }

    /// A query's directory: its results, best first, at most `Catalog.searchLimit`.
    static func results(of query: SearchQuery, number: Int64, catalog: Catalog, logger: Logger,
                        servedExtension: ((PhotoRecord) -> String)?) throws -> DirectoryListing {
        let photos = try catalogRead(logging: logger) { try catalog.photos(seqs: try catalog.searchPhotos(query)) }
        let listing = SearchTreeBuilder.results(number: number, photos, servedExtension: servedExtension) {
            TreeBuilder.linkCount(of: $0, inRecent: false)
        }
        guard listing.entries.isEmpty else { return listing }
        // No result has a date: the library's newest photo's, as /search has.
        var attributes = listing.attributes
        attributes.mtime = try catalogRead(logging: logger) { try catalog.newestMomentAt() }
        return DirectoryListing(attributes: attributes, entries: [])
    }
}
