// What each kernel request gets, as plain values: the FUSE adapter only packs and sends them.
import Foundation
import PhotoTree

/// How long the kernel may cache answers. The catalog is local and changes only through imports, which the
/// filesystem notices within its poll interval (1 s) and then invalidates exactly what changed
/// (notify_inval_entry / notify_inval_inode), so the timeouts can be long: a warm `ls -lR` of 100,000 photos
/// then never reaches the daemon.
public struct KernelTimeouts: Equatable, Sendable {
    public var entry: Double = 3600
    public var attributes: Double = 3600
    /// Names that do not exist (file managers probe for .directory, .hidden, Thumbs.db in every folder).
    /// Shorter than positive entries: a name can only appear through an import, which invalidates it, but
    /// an hour of "no such file" after a missed invalidation would be worse than a re-ask per minute.
    public var negativeEntry: Double = 60
    public init() {}
}

/// The answer to a lookup.
public enum EntryReply: Equatable, Sendable {
    /// The name exists: its attributes, cached for the given seconds.
    case entry(NodeAttributes, entryTimeout: Double, attributeTimeout: Double)
    /// No such name: a negative entry (node id 0) the kernel remembers for `timeout` seconds.
    case negative(timeout: Double)
}

/// The answer to getattr.
public struct AttributeReply: Equatable, Sendable {
    public var attributes: NodeAttributes
    public var timeout: Double
}

/// The answer to open: the handle and how it may use the page cache.
public struct OpenReply: Sendable {
    public var handle: OpenPhoto
    public var pageCache: PageCacheMode
    /// What the adapter sets in the open's `fuse_file_info`. No flush: close(2) of a read-only photo has
    /// nothing to flush, so the kernel need not ask (a round trip saved on every close).
    public var flags: KernelOpenFlags {
        KernelOpenFlags(keepCache: pageCache.keepCache, directIO: pageCache.directIO, noFlush: true, cacheListing: false)
    }
}

/// The `fuse_file_info` flags of an open or opendir reply.
public struct KernelOpenFlags: Equatable, Sendable {
    /// FOPEN_KEEP_CACHE: the pages (a directory's: its listing) the kernel holds stay valid.
    public var keepCache: Bool
    /// FOPEN_DIRECT_IO: reads bypass the page cache.
    public var directIO: Bool
    /// FOPEN_NOFLUSH: no FLUSH request at close.
    public var noFlush: Bool
    /// FOPEN_CACHE_DIR: the kernel may answer readdir from its own copy of the listing.
    public var cacheListing: Bool
    public init(keepCache: Bool, directIO: Bool, noFlush: Bool, cacheListing: Bool) {
        self.keepCache = keepCache; self.directIO = directIO; self.noFlush = noFlush; self.cacheListing = cacheListing
    }
}

/// A directory as it was at opendir, so offsets stay valid while it is read.
public final class OpenDirectory: @unchecked Sendable {
    public let listing: DirectoryListing
    public let parent: UInt64
    /// The listings' epoch when it was opened (before its listing was read): a read after the catalog changed
    /// may hand the kernel this listing after the change's invalidation, to keep (`cacheListing`) for good.
    let stamp: StampedCache<Node, DirectoryListing>.Stamp?
    /// Whether that was noted (under the filesystem's lock): one invalidation per open directory.
    var staleNoted = false
    init(listing: DirectoryListing, parent: UInt64, stamp: StampedCache<Node, DirectoryListing>.Stamp? = nil) {
        self.listing = listing; self.parent = parent; self.stamp = stamp
    }
    /// The kernel may keep the listing until the catalog changes: the watcher invalidates the directory then
    /// (notify_inval_inode), so a warm `ls -lR` never reaches the daemon. Not /search's: every lookup of a new
    /// query changes it, and the watcher would tell the kernel only up to a poll interval later.
    public var flags: KernelOpenFlags {
        let cached = listing.attributes.node != .search
        return KernelOpenFlags(keepCache: cached, directIO: false, noFlush: false, cacheListing: cached)
    }
}

/// How a read is answered.
public enum ReadReply: Equatable, Sendable {
    /// `count` bytes of the open file `descriptor` at `offset`: the adapter hands libfuse the descriptor, which
    /// splices the file's pages into the reply (`KernelCapability.spliceReplies`): the daemon neither reads nor
    /// copies them.
    case fileRange(descriptor: Int32, offset: Int64, count: Int)
    /// Bytes `PhotoFilesystem.read` copies into a buffer: a variant in memory, a download still arriving.
    case copied
}

/// What the mount asks of the kernel at init, where the kernel offers it.
public enum KernelCapability: CaseIterable, Sendable {
    /// Lookups in different directories need not wait for each other.
    case parallelDirectoryOperations
    /// One readdirplus answers `ls -l` with names and attributes together (no lookup per file).
    case readdirplus
    /// Replies may be spliced into /dev/fuse (FUSE_CAP_SPLICE_WRITE): a read answered from a file
    /// (`ReadReply.fileRange`) moves the file's pages without a copy through the daemon's memory.
    case spliceReplies

    /// Everything above: each is offered by every kernel since 4.x, and none has a cost here.
    public static let wanted = KernelCapability.allCases
}

/// The parts of `stat` that are not in `NodeAttributes`: the I/O size clients size their buffers by and the
/// 512-byte blocks `du` adds up.
public enum StatFigures {
    /// `st_blksize`, which clients take as the size to read in: Python's `open()` makes its buffer this big
    /// (one per file: with 1 MiB, every open of a photo cost an mmap'd 1 MiB buffer and its page faults,
    /// 3.5–4.6× the cache files' time for `open(p, "rb").read(1 << 20)`, and 0.10 s against 0.035 s even on
    /// ext4 given the same buffer); glibc stdio sizes `FILE` buffers by it; coreutils (`cp`, `cat`) read
    /// `max(128 KiB, st_blksize)` at a time. 128 KiB is what coreutils use anyway, what the kernel reads ahead
    /// in one FUSE request by default, and ext4's 4 KiB × 32: it keeps stdio and Python from taking 1 MiB
    /// per open while keeping reads large. Measured in docs/benchmarks.md ("Warm re-read").
    public static let preferredIOSize = 128 << 10

    /// `st_blocks`: 512-byte units, rounded up (`du` shows what `ls -l` says, not zero for a partial block).
    public static func blocks(forSize size: Int64) -> Int64 {
        let bytes = max(0, size)
        return bytes / 512 + (bytes % 512 == 0 ? 0 : 1)
    }
}

/// One entry of a readdir(plus) reply.
public struct DirectoryReplyEntry: Equatable, Sendable {
    public var name: String
    public var attributes: NodeAttributes
    /// readdirplus only: false when the attributes cannot be given yet (a variant whose size is unknown, or a
    /// catalog that cannot be read). The adapter then sends node id 0, which the kernel takes as "no
    /// attributes here" (fuse_direntplus_link skips it), and the kernel looks the name up when someone stats it.
    public var attributesKnown: Bool
    /// The offset the kernel passes to continue after this entry. Offsets: 1 is after ".", 2 after "..",
    /// 2 + n after the n-th entry.
    public var nextOffset: Int64
    public var entryTimeout: Double
    public var attributeTimeout: Double
}

/// What `df` shows.
public struct FilesystemUsage: Equatable, Sendable {
    public var blockSize: UInt64 = 4096
    public var blocks: UInt64
    public var files: UInt64
    public var nameMax: UInt64 = 255
}
