// Decides, per open of a local photo, whether the kernel reads it straight from its file (FUSE passthrough).
import Foundation
import PhotoContent

/// With FUSE passthrough (Linux 6.9+, root) an open is answered with a *backing file* the kernel registered
/// (`FUSE_DEV_IOC_BACKING_OPEN`), and the kernel then serves that handle's reads and mmaps from the file itself:
/// its page cache, its disk's read-ahead, no request to the daemon. The reads of 300 cold 1.7 MB photos took
/// 1.34–1.6× the file's own through the daemon, 1.01–1.10× passed through (docs/benchmarks-folders.md).
///
/// The kernel's rules for one FUSE inode (fs/fuse/iomode.c), which this policy keeps:
/// - while any handle of an inode is passed through, every new open of it must be passed through too, with the
///   very same backing (another one, or a reply without passthrough, fails the open with EIO);
/// - a passed-through open fails while a handle reading through the page cache is open.
/// So the backing is registered at an inode's first open and shared by every open while one is open. After its
/// last release it stays registered, idle, for `idleSeconds` (up to `idleLimit` of them, the least recently used
/// closed first): the next open of the photo only checks with one `stat` that the path still names that very
/// file (`LocalFileIdentity`: device, inode, size and mtime) and answers with the backing, where opening,
/// checking and registering the file took three system calls, and the release closed two (the backing and the
/// file). On this project's 2-core machines every microsecond the daemon holds an open costs the opener about
/// two (its idle CPU sleeps deeper the longer it waits: a do-nothing FUSE open answered 5 µs later took 7 µs
/// longer, 10 µs later 18 µs longer); the warm read of 400 local photos through the mount went from 1.29–1.34×
/// the direct reads to 1.16–1.22× (interleaved pairs, docs/benchmarks-folders.md). An idle backing holds its
/// file open in the kernel: a photo deleted meanwhile keeps its disk space until the backing is closed,
/// `idleSeconds` after its last release (checked at each open and release, and by a timer the adapter arms for
/// `idleExpiry`). An inode opened while its backing reads another version of its bytes (the photo was
/// re-imported while an old reader kept it open) is refused: its new bytes cannot be served next to the old
/// ones, and the old ones are not what `stat` now says. An inode with handles read through the daemon (its
/// registration failed, or another version was open) is not registered until they are closed. A refusal that
/// holds for every file (no CAP_SYS_ADMIN, a kernel without passthrough) turns passthrough off for the mount:
/// opens after it read through the daemon, which is safe because no inode without a backing has a
/// passed-through handle, and those with one keep it.
public struct PassThroughPolicy: Sendable {
    /// How an open is answered.
    public enum Decision: Equatable, Sendable {
        /// Through the backing with this id (already registered for the inode).
        case backing(Int32)
        /// Register the photo's file (`registered` or `registrationFailed` must follow, under the same lock).
        case register
        /// Not passed through: reads come to the daemon (passthrough is off, or the inode has such readers).
        case daemon
        /// Refused: the inode's backing reads another version of its bytes.
        case refuse
    }

    /// The file a backing was registered from: an open that finds its photo's path naming another file
    /// (replaced, edited) does not reuse an idle backing of the old one.
    public typealias File = LocalFileIdentity

    /// A registered backing: the version it reads, its file, its open handles (0: idle, closed since `idleSince`).
    private struct Backing {
        var id: Int32
        var identity: String
        var file: File?
        var handles: Int
        var idleSince: UInt64
    }

    /// 1,024 idle backings: what a folder of photos read again (a viewer going back, a script's second pass)
    /// keeps, at a few hundred bytes of kernel memory each and no descriptor of the daemon's.
    public static let defaultIdleLimit = 1024
    /// 10 s: long enough for a second pass over a folder, short enough that a deleted photo's space comes back,
    /// and the disk holding the photos can be unmounted, soon after the last photo closed (an idle backing is
    /// an open file on that disk).
    public static let defaultIdleSeconds: UInt64 = 10

    private var backings: [UInt64: Backing] = [:]
    /// Idle backings' inodes, least recently released first (a release appends; a reuse removes).
    private var idleOrder: [UInt64] = []
    private let idleLimit: Int
    private let idleNanoseconds: UInt64
    /// Backing ids this policy no longer holds (idle too long, over the limit, or another file now): the
    /// caller closes them (`takeBackingsToClose`), outside its lock.
    private var toClose: [Int32] = []
    /// Open handles of local photos read through the daemon, by inode (the kernel's page-cache mode).
    private var daemonReaders: [UInt64: Int] = [:]
    /// Whether new inodes may still be registered.
    public private(set) var isOn: Bool

    public init(isOn: Bool = true, idleLimit: Int = PassThroughPolicy.defaultIdleLimit,
                idleSeconds: UInt64 = PassThroughPolicy.defaultIdleSeconds) {
        self.isOn = isOn
        self.idleLimit = max(0, idleLimit)
        idleNanoseconds = idleSeconds &* 1_000_000_000
    }

    /// A backing an open could reuse without opening anything: the file it reads and the version (cache key)
    /// it was registered for.
    public struct Reusable: Equatable, Sendable {
        public let file: File
        public let identity: String
        public init(file: File, identity: String) { self.file = file; self.identity = identity }
    }

    /// The backing an open of `inode` could reuse, when the photo is still that version and its path still
    /// names that file (`LocalFileContent.stillNames`); then `reusing` takes it.
    public func reusable(inode: UInt64) -> Reusable? {
        guard let backing = backings[inode], let file = backing.file else { return nil }
        return Reusable(file: file, identity: backing.identity)
    }

    /// The backing of `inode` for an open that found its path still naming `file`, counted as one more handle;
    /// nil, changing nothing, when there is none for that version and file now (closed meanwhile: the open then
    /// goes the usual way, opening the file).
    public mutating func reusing(inode: UInt64, identity: String, file: File, now: UInt64) -> Int32? {
        expireIdle(now: now)
        guard var backing = backings[inode], backing.identity == identity, backing.file == file else { return nil }
        return hold(inode, &backing)
    }

    /// One more handle of `inode`'s backing (no longer idle); its id.
    private mutating func hold(_ inode: UInt64, _ backing: inout Backing) -> Int32 {
        if backing.handles == 0, let position = idleOrder.firstIndex(of: inode) { idleOrder.remove(at: position) }
        backing.handles += 1
        backings[inode] = backing
        return backing.id
    }

    /// An open of `inode` to read the version `identity` from a file the kernel could read itself. A `.daemon`
    /// answer counts the handle as read through the daemon until `closed(inode:passedThrough: false)`.
    /// `bypassingPageCache`: the page-cache policy found another version's readers open (a direct-I/O
    /// handle); without a backing those read through the page cache, which a passed-through open would fail on.
    /// `file`: the file the open found at the photo's path (nil: not known, as for a handle without one).
    /// `now`: monotonic nanoseconds, for idle backings' age.
    public mutating func opening(inode: UInt64, identity: String, file: File? = nil, bypassingPageCache: Bool = false,
                                 now: UInt64 = 0) -> Decision {
        expireIdle(now: now)
        if var backing = backings[inode] {
            if backing.handles == 0 {
                // Idle: reused for the very same version and file, both known; otherwise closed, and this open
                // starts afresh (a file this open could not identify is not taken for the backing's).
                guard backing.identity == identity, let file, backing.file == file else {
                    dropIdle(inode)
                    return opening(inode: inode, identity: identity, file: file,
                                   bypassingPageCache: bypassingPageCache, now: now)
                }
                return .backing(hold(inode, &backing))
            }
            // Open: unknown files (a handle without one) are taken for the same.
            let sameFile = file == nil || backing.file == nil || backing.file == file
            guard backing.identity == identity, sameFile else { return .refuse }
            return .backing(hold(inode, &backing))
        }
        guard isOn, !bypassingPageCache, daemonReaders[inode] == nil else {
            daemonReaders[inode, default: 0] += 1
            return .daemon
        }
        return .register
    }

    /// An open of `inode` with no file the kernel could read (a variant in memory, a cached download): read
    /// through the daemon, counted until `closed(inode:passedThrough: false)`, unless the inode has a backing
    /// now, where the kernel would fail the open with EIO (every open of an inode with a backing must use it):
    /// refused, as another version is.
    public mutating func openingWithoutFile(inode: UInt64, now: UInt64 = 0) -> Decision {
        expireIdle(now: now)
        if let backing = backings[inode] {
            guard backing.handles == 0 else { return .refuse }
            // An idle backing opens nothing in the kernel: a page-cache reader may open beside it, but it goes
            // now, or a later open could pass through to bytes this reader does not see.
            dropIdle(inode)
        }
        daemonReaders[inode, default: 0] += 1
        return .daemon
    }

    /// The kernel registered the file for `inode` as backing `id`; the open that asked holds it.
    public mutating func registered(inode: UInt64, identity: String, file: File? = nil, id: Int32) {
        backings[inode] = Backing(id: id, identity: identity, file: file, handles: 1, idleSince: 0)
    }

    /// The kernel refused to register the file for `inode`: that open is read through the daemon. `everywhere`
    /// (no CAP_SYS_ADMIN, no passthrough in the kernel): passthrough stays off for the mount from now on.
    public mutating func registrationFailed(inode: UInt64, everywhere: Bool) {
        daemonReaders[inode, default: 0] += 1
        if everywhere { isOn = false }
    }

    /// A handle of `inode` was released, or its open never reached the kernel. A passed-through one's backing
    /// stays, idle after its last handle (its file known; without one it is closed: `takeBackingsToClose`).
    public mutating func closed(inode: UInt64, passedThrough: Bool, now: UInt64 = 0) {
        defer { expireIdle(now: now) }
        guard passedThrough else {
            if let count = daemonReaders[inode] { daemonReaders[inode] = count > 1 ? count - 1 : nil }
            return
        }
        guard var backing = backings[inode], backing.handles > 0 else { return }
        backing.handles -= 1
        guard backing.handles == 0 else {
            backings[inode] = backing
            return
        }
        guard backing.file != nil, idleLimit > 0, isOn else {
            backings[inode] = nil
            toClose.append(backing.id)
            return
        }
        backing.idleSince = now
        backings[inode] = backing
        idleOrder.append(inode)
        if idleOrder.count > idleLimit { dropIdle(idleOrder[0]) }
    }

    /// The backing ids to close now (each once), outside the caller's lock.
    public mutating func takeBackingsToClose() -> [Int32] {
        defer { toClose = [] }
        return toClose
    }

    private mutating func dropIdle(_ inode: UInt64) {
        guard let backing = backings[inode], backing.handles == 0 else { return }
        backings[inode] = nil
        if let position = idleOrder.firstIndex(of: inode) { idleOrder.remove(at: position) }
        toClose.append(backing.id)
    }

    /// When (monotonic nanoseconds) the oldest idle backing is due to close; nil with none idle. The caller
    /// arms a timer for it, so a mount left alone still lets go of its files (`closeExpired`).
    public var idleExpiry: UInt64? {
        idleOrder.first.flatMap { backings[$0] }.map { $0.idleSince &+ idleNanoseconds }
    }

    /// Closes the idle backings past their age (`takeBackingsToClose` has their ids).
    public mutating func closeExpired(now: UInt64) { expireIdle(now: now) }

    /// Closes the idle backings released more than `idleSeconds` before `now` (oldest first, so this stops at
    /// the first younger one).
    private mutating func expireIdle(now: UInt64) {
        while let oldest = idleOrder.first, let backing = backings[oldest],
              now >= backing.idleSince, now - backing.idleSince > idleNanoseconds {
            dropIdle(oldest)
        }
    }

    /// The backings registered now, idle ones included (for tests and logs).
    public var registeredCount: Int { backings.count }
    /// The idle ones among them.
    public var idleCount: Int { idleOrder.count }
}
