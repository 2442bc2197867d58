// Which photos come next after an open: the directories listed most recently, where in each the last open was,
// and which folders are being read whole. Decides only; PhotoFilesystem does the warming.
import Foundation
import PhotoTree

/// Its lock is a leaf: nothing else is locked while it is held.
final class PrefetchPlanner: @unchecked Sendable {
    /// Photos after the one opened that are warmed (`FilesystemOptions.prefetchCount`; 0 = off).
    let count: Int
    private let lock = NSLock()
    /// Directories listed most recently (newest last): where prefetch looks for "the next photos".
    private var recentlyListed: [DirectoryListing] = []
    /// Where in each of those the last photo opened from it was (by the listing's node).
    private var lastOpenedPosition: [Node: Int] = [:]
    /// Each of those listings' entry positions by inode (by the listing's node), made at its second search (an
    /// open not next to the last one from it, or an open in an older folder, which searches it first): a linear
    /// search of the 8 listings ran on every such open, and a program opening photos of a folder listed before
    /// others (`os.walk`, then a loop) searched every newer listing whole each time — 9 % of the daemon's CPU
    /// in a loop opening local photos (`perf`), ~13 µs per open. Not at the first search: a folder listed
    /// again between every open (a file manager refreshing it) then costs each open one linear search, as
    /// before, not the building of an index. At most 8 indexes of 12 bytes a bucket: ~0.4 MB for a 17,500-photo
    /// year folder, 3 MB for one of 100,000.
    private var positions: [Node: [UInt64: Int32]] = [:]
    /// Listings searched once since they were listed (their next search makes their index).
    private var searchedOnce: Set<Node> = []
    /// Folders whose last photo was read whole by a handle opened from them (a viewer, `cat`): the next open
    /// there warms its neighbours at once, as before reading began, so a reader waiting on a download keeps 3
    /// photos coming (warming only after each whole read made a cold `cat` of a folder 0.49× curl instead of
    /// 0.45×). A handle closed without reading its photo whole (a scan) clears its folder.
    private var readingWhole: Set<Node> = []

    init(count: Int) { self.count = count }

    /// A directory was listed: it becomes the newest context for "what's next".
    func listed(_ listing: DirectoryListing) {
        let node = listing.attributes.node
        lock.lock()
        defer { lock.unlock() }
        recentlyListed.removeAll { $0.attributes.node == node }
        recentlyListed.append(listing)
        positions[node] = nil
        searchedOnce.remove(node)
        // 8 directories: a file manager has a few windows open; older listings are not "what's next".
        if recentlyListed.count > 8 {
            let oldest = recentlyListed.removeFirst().attributes.node
            lastOpenedPosition[oldest] = nil
            positions[oldest] = nil
            searchedOnce.remove(oldest)
        }
    }

    func listing(containing inode: UInt64) -> DirectoryListing? {
        position(of: inode, opening: false)?.listing
    }

    /// The most recently listed directory holding `inode`, where, and whether the open before it from that
    /// directory was the entry just after it (a viewer stepping backwards). A program going through a
    /// folder opens a neighbour of the entry it opened last, so those are looked at first: a linear search
    /// of the newest 8 listings ran on every open, whatever the folder's size. Only an open (`opening`)
    /// becomes the last opened position: a `stat` in a sized mount looks its photo's folder up too.
    private func position(of inode: UInt64, opening: Bool) -> (listing: DirectoryListing, index: Int, backwards: Bool)? {
        lock.lock()
        defer { lock.unlock() }
        for listing in recentlyListed.reversed() {
            let entries = listing.entries
            let node = listing.attributes.node
            let last = lastOpenedPosition[node]
            func holds(_ index: Int) -> Bool { entries.indices.contains(index) && entries[index].attributes.inode == inode }
            let neighbour = last.flatMap { holds($0 + 1) ? $0 + 1 : holds($0 - 1) ? $0 - 1 : holds($0) ? $0 : nil }
            guard let index = neighbour ?? position(of: inode, in: listing) else { continue }
            if opening { lastOpenedPosition[node] = index }
            return (listing, index, last == index + 1)
        }
        return nil
    }

    /// Where `inode` is in `listing` (its first entry of it): by a linear search the first time, then from the
    /// listing's index of positions, made at the second. Called with the lock held.
    private func position(of inode: UInt64, in listing: DirectoryListing) -> Int? {
        let node = listing.attributes.node
        if let known = positions[node] { return known[inode].map(Int.init) }
        guard searchedOnce.contains(node) else {
            searchedOnce.insert(node)
            return listing.entries.firstIndex { $0.attributes.inode == inode }
        }
        var byInode: [UInt64: Int32] = [:]
        byInode.reserveCapacity(listing.entries.count)
        // A listing holds far fewer than 2^31 entries (`DirectoryListing` indexes its names the same way).
        for (index, entry) in listing.entries.enumerated() where byInode[entry.attributes.inode] == nil {
            byInode[entry.attributes.inode] = Int32(truncatingIfNeeded: index)
        }
        positions[node] = byInode
        return byInode[inode].map(Int.init)
    }

    /// The next `count` photos after `inode` (before it, when the opener is going backwards) in the most
    /// recently listed directory holding it, and that directory; the open becomes its last opened position.
    func neighbours(of inode: UInt64) -> (folder: Node?, seqs: [Int64]) {
        guard count > 0 else { return (nil, []) }
        guard let (listing, index, backwards) = position(of: inode, opening: true) else { return (nil, []) }
        let entries = listing.entries
        // Onwards, or backwards for a viewer going back through the folder (each step the entry before).
        let ahead = backwards ? Array(entries[max(0, index - count)..<index].reversed())
                              : Array(entries[(index + 1)..<min(entries.count, index + 1 + count)])
        return (listing.attributes.node, ahead.compactMap { entry -> Int64? in
            if case .photo(let seq) = entry.node { return seq }
            return nil
        })
    }

    func isReadWhole(_ folder: Node) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return readingWhole.contains(folder)
    }

    /// A handle opened from `folder` read its photo whole.
    func readWhole(in folder: Node) {
        lock.lock()
        readingWhole.insert(folder)
        lock.unlock()
    }

    /// A handle opened from `folder` closed without reading its photo whole (a scan).
    func scanned(in folder: Node) {
        lock.lock()
        readingWhole.remove(folder)
        lock.unlock()
    }
}
