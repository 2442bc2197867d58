// /search: the queries a mount was asked (each a directory, numbered for its inode) and a query's results as a
// directory of photos named as in /moments; pure.
import Foundation
import PhotoCatalog

/// The recent queries of one mount, as TMSU's `queries/` keeps them: looking up a name under /search that reads
/// as a query (`SearchQuery`) makes it a directory, `ls /search` lists the most recent 20, `rmdir` forgets one.
/// Each query gets a number (its directory's inode payload) that is never given to another query in this mount,
/// so the kernel never confuses a forgotten query's directory with a new one.
public struct RecentSearches: Sendable {
    /// How many queries `ls /search` shows; the least recently used beyond it is forgotten.
    public static let capacity = 20

    /// Least recently used first.
    private var remembered: [(number: Int64, query: SearchQuery)] = []
    private var nextNumber: Int64 = 1
    /// Queries pushed out of the 20 (not those forgotten by `rmdir`), most recent last, at most `pushedOutKept`:
    /// their directories still list their results. The kernel keeps a name it looked up for its entry timeout
    /// and hears that the query was pushed out only at the next catalog check (up to a second later), so
    /// `ls /search/canon` right after 20 other searches reached the old directory and got ENOENT for 0.7–2.5 s.
    private var pushedOut: [(number: Int64, query: SearchQuery)] = []
    static let pushedOutKept = 64

    public init() {}

    /// The node of `query`'s directory, which becomes the most recent; `forgotten` is the node of the query
    /// pushed out (its directory is then gone: the filesystem tells the kernel).
    public mutating func remember(_ query: SearchQuery) -> (node: Node, forgotten: Node?) {
        // Names are compared as bytes, as the kernel and `node(named:)` do: an NFD spelling of a remembered NFC
        // query is another name, so another directory (one inode under two names would confuse the dcache).
        if let position = remembered.firstIndex(where: { $0.query.name.utf8.elementsEqual(query.name.utf8) }) {
            let entry = remembered.remove(at: position)
            remembered.append(entry)
            return (.searchResults(entry.number), nil)
        }
        let number = nextNumber
        nextNumber += 1
        var forgotten: Node?
        // A file dialog's location bar looks up every prefix as it is typed ("h", "ha", … "harbour 2019"): a
        // query that extends the most recent one replaces it, so the 20 hold what was searched for, not each
        // keystroke.
        if let last = remembered.last, query.name.utf8.starts(with: last.query.name.utf8) {
            let replaced = remembered.removeLast()
            keepPushedOut(replaced)
            forgotten = .searchResults(replaced.number)
        }
        remembered.append((number, query))
        if remembered.count > Self.capacity {
            let oldest = remembered.removeFirst()
            keepPushedOut(oldest)
            forgotten = .searchResults(oldest.number)
        }
        return (.searchResults(number), forgotten)
    }

    private mutating func keepPushedOut(_ entry: (number: Int64, query: SearchQuery)) {
        pushedOut.append(entry)
        if pushedOut.count > Self.pushedOutKept { pushedOut.removeFirst(pushedOut.count - Self.pushedOutKept) }
    }

    /// The query a directory stands for, while it is remembered or was lately pushed out of the 20.
    public func query(number: Int64) -> SearchQuery? {
        remembered.first { $0.number == number }?.query ?? pushedOut.last { $0.number == number }?.query
    }

    /// The node of a remembered query, by its exact name (bytes), without making it the most recent.
    public func node(named name: String) -> Node? {
        remembered.first { $0.query.name.utf8.elementsEqual(name.utf8) }.map { .searchResults($0.number) }
    }

    /// `rmdir /search/<name>`: forgets the query; nil when no such query is remembered.
    public mutating func forget(named name: String) -> Node? {
        guard let position = remembered.firstIndex(where: { $0.query.name.utf8.elementsEqual(name.utf8) }) else { return nil }
        return .searchResults(remembered.remove(at: position).number)
    }

    public var count: Int { remembered.count }

    /// `/search`: the remembered queries, most recent first (`ls` sorts them anyway).
    public func listing(newest: Int64) -> DirectoryListing {
        let entries = remembered.reversed().map { entry in
            DirectoryEntry(name: entry.query.name,
                           attributes: TreeBuilder.directoryAttributes(.searchResults(entry.number), newest: newest,
                                                                       subdirectories: 0))
        }
        return DirectoryListing(attributes: TreeBuilder.directoryAttributes(.search, newest: newest,
                                                                            subdirectories: entries.count),
                                entries: entries)
    }
}

public enum SearchTreeBuilder {
    /// A query's directory: its results in the order given (best first, as `Catalog.searchPhotos` returns them)
    /// named as in /moments, the same nodes as everywhere. Names carry no rank: `ls` and file dialogs sort by
    /// name anyway, and a rank would rename every result whenever a new photo ranks above them; readdir order
    /// is best first for tools that keep it.
    public static func results(number: Int64, _ photos: [PhotoRecord], fileExtension: String? = nil,
                               servedExtension: ((PhotoRecord) -> String)? = nil,
                               linkCount: (PhotoRecord) -> UInt32) -> DirectoryListing {
        TreeBuilder.photos(photos, in: .searchResults(number), style: .moment, fileExtension: fileExtension,
                           servedExtension: servedExtension, linkCount: linkCount)
    }
}
