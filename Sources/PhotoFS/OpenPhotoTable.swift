// The photos open right now: each handle's bytes and attributes, how many descriptors hold each inode, and the
// page-cache decision for each open.
import Foundation
import PhotoContent
import PhotoTree

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
    /// Which version of the photo's bytes this handle reads, and how it uses the page cache.
    public let identity: String
    /// A local photo's open file, which the kernel may read itself (FUSE passthrough, `PassThroughPolicy`);
    /// nil for anything else (a cached download, a variant): those reads come to the daemon.
    public let passThroughFile: Int32?
    /// A local photo's file as checked at open (device, inode, size, mtime): with `passThroughFile` the file
    /// just opened; without, the file an idle backing reads, which the photo's path still named, so nothing
    /// was opened (`PassThroughPolicy.reusing`). Nil for every other handle.
    public let localFile: LocalFileIdentity?
    public let pageCache: PageCacheMode
    /// The folder (listing) this handle was opened from, when prefetch looks at it.
    let folder: Node?
    /// The photos to warm once this handle reads its photo whole (its folder's next ones, found at open;
    /// empty when they were warmed at open).
    let neighbours: [Int64]
    /// Whether this open shows the photo in /recent once its reply reached the kernel (`PhotoFilesystem.opened`).
    let countsAsRecent: Bool
    private let readLock = NSLock()
    private var reading: WholeReading
    private var kernelReads = false
    init(content: ContentHandle?, variantBytes: Data?, photoID: String, attributes: NodeAttributes,
         identity: String, pageCache: PageCacheMode, folder: Node? = nil, neighbours: [Int64] = [],
         passThroughFile: Int32? = nil, localFile: LocalFileIdentity? = nil, countsAsRecent: Bool = false) {
        self.content = content; self.variantBytes = variantBytes; self.photoID = photoID
        self.attributes = attributes; self.identity = identity; self.pageCache = pageCache
        self.passThroughFile = passThroughFile
        self.localFile = localFile
        self.folder = folder
        self.neighbours = neighbours
        self.countsAsRecent = countsAsRecent
        reading = WholeReading(size: attributes.size)
    }

    /// Records a read; true the one time this handle's reads make it a whole reader.
    func noteRead(offset: Int64, count: Int) -> Bool {
        readLock.lock()
        defer { readLock.unlock() }
        return reading.read(offset: offset, count: count)
    }

    var readWhole: Bool { readLock.lock(); defer { readLock.unlock() }; return reading.isWhole }

    /// Whether the kernel reads this handle from its file itself (the adapter passed it through): then no read
    /// reaches the daemon, so none says how the photo was read.
    public var isPassedThrough: Bool {
        get { readLock.lock(); defer { readLock.unlock() }; return kernelReads }
        set { readLock.lock(); kernelReads = newValue; readLock.unlock() }
    }
}

/// The inodes open right now and the page-cache policy's memory of them. Its lock is a leaf: nothing else is
/// locked while it is held.
final class OpenPhotoTable: @unchecked Sendable {
    private let lock = NSLock()
    /// By inode: a photo deleted from the catalog while open still answers `fstat` (as an unlinked file on a
    /// disk does) until its last descriptor closes.
    private var open: [UInt64: (attributes: NodeAttributes, count: Int)] = [:]
    private var pageCache = PageCachePolicy()

    /// Records an open of `inode` with `attributes`; how this handle uses the page cache.
    func opened(inode: UInt64, attributes: NodeAttributes, identity: String) -> PageCacheMode {
        lock.lock()
        defer { lock.unlock() }
        open[inode] = (attributes, (open[inode]?.count ?? 0) + 1)
        return pageCache.opened(inode: inode, identity: identity)
    }

    func closed(_ handle: OpenPhoto) {
        let inode = handle.attributes.inode
        lock.lock()
        defer { lock.unlock() }
        if let entry = open[inode] {
            open[inode] = entry.count > 1 ? (entry.attributes, entry.count - 1) : nil
        }
        pageCache.closed(inode: inode, identity: handle.identity, mode: handle.pageCache)
    }

    /// The attributes of a photo still open although the catalog no longer has it: no names left (0 links).
    func attributesOfRemoved(_ inode: UInt64) -> NodeAttributes? {
        lock.lock()
        defer { lock.unlock() }
        guard var attributes = open[inode]?.attributes else { return nil }
        attributes.linkCount = 0
        return attributes
    }
}
