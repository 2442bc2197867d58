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
}

/// A directory as it was at opendir, so offsets stay valid while it is read.
public final class OpenDirectory: @unchecked Sendable {
    public let listing: DirectoryListing
    public let parent: UInt64
    init(listing: DirectoryListing, parent: UInt64) { self.listing = listing; self.parent = parent }
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
