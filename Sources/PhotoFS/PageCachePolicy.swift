// Decides, per open, whether the kernel may keep a photo's cached pages: never across two versions of its bytes.
import Foundation

/// How an open file uses the kernel's page cache.
public struct PageCacheMode: Equatable, Sendable {
    /// FOPEN_KEEP_CACHE: pages cached by earlier opens stay valid. Without it the kernel drops the inode's
    /// pages while it opens the file (fuse_finish_open → invalidate_inode_pages2).
    public var keepCache: Bool
    /// FOPEN_DIRECT_IO: this handle's reads bypass the page cache entirely (every read reaches the daemon,
    /// and nothing it reads is cached for other handles).
    public var directIO: Bool

    public static let keep = PageCacheMode(keepCache: true, directIO: false)
    public static let dropStale = PageCacheMode(keepCache: false, directIO: false)
    /// Bypass without dropping: dropping would wait for page locks held by the other version's readers,
    /// whose reads may be waiting on a download.
    public static let bypass = PageCacheMode(keepCache: true, directIO: true)
}

/// The page cache is per inode, not per handle, and a photo keeps its inode when its bytes change (a replaced
/// photo has a new URL and ETag but often the same size, and its mtime is the date taken, which does not
/// change): so the kernel cannot see that pages went stale, and `keep_cache` would serve the old bytes.
///
/// The policy remembers, per inode, which version of the bytes (its `identity`: the cache key, which changes
/// with URL, ETag, size and type) may be in the page cache, and how many open handles read that version
/// through it:
/// - same version: keep the cache;
/// - another version and nobody reading the old one: drop the old pages at open, and this version becomes the
///   cached one;
/// - another version while the old one is still open: this handle bypasses the page cache (direct I/O), so the
///   old handles keep reading their version whole, and neither sees the other's bytes;
/// - an inode it knows nothing about (never opened, or forgotten to stay bounded): drop, which costs nothing
///   when the kernel holds no pages and is always safe.
/// No notify call is needed, so a data invalidation can never block on a reader's page lock.
public struct PageCachePolicy: Sendable {
    private var cached: [UInt64: (identity: String, readers: Int)] = [:]
    /// Entries kept for closed files; past this, closed entries are forgotten (they come back as "unknown",
    /// which only costs one re-read from the daemon's disk cache). 16,384 × ~100 bytes ≈ 1.6 MB.
    private let limit: Int

    public init(limit: Int = 16_384) { self.limit = limit }

    /// Called when `inode` is opened to read the version `identity`; returns how that handle must use the
    /// page cache. Pair every call with `closed(inode:identity:mode:)`.
    public mutating func opened(inode: UInt64, identity: String) -> PageCacheMode {
        guard let entry = cached[inode] else {
            forgetClosedIfFull()
            cached[inode] = (identity, 1)
            return .dropStale
        }
        if entry.identity == identity {
            cached[inode] = (identity, entry.readers + 1)
            return .keep
        }
        if entry.readers == 0 {
            cached[inode] = (identity, 1)
            return .dropStale
        }
        return .bypass
    }

    public mutating func closed(inode: UInt64, identity: String, mode: PageCacheMode) {
        guard !mode.directIO, let entry = cached[inode], entry.identity == identity else { return }
        cached[inode] = (identity, max(0, entry.readers - 1))
    }

    /// The version whose pages may be cached for `inode` (for tests and logs).
    public func cachedIdentity(of inode: UInt64) -> String? { cached[inode]?.identity }

    private mutating func forgetClosedIfFull() {
        guard cached.count >= limit else { return }
        cached = cached.filter { $0.value.readers > 0 }
    }
}
