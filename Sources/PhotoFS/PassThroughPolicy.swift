// Decides, per open of a local photo, whether the kernel reads it straight from its file (FUSE passthrough).
import Foundation

/// With FUSE passthrough (Linux 6.9+, root) an open is answered with a *backing file* the kernel registered
/// (`FUSE_DEV_IOC_BACKING_OPEN`), and the kernel then serves that handle's reads and mmaps from the file itself:
/// its page cache, its disk's read-ahead, no request to the daemon. The reads of 300 cold 1.7 MB photos took
/// 1.34–1.6× the file's own through the daemon, 1.01–1.10× passed through (docs/benchmarks-folders.md).
///
/// The kernel's rules for one FUSE inode (fs/fuse/iomode.c), which this policy keeps:
/// - while any handle of an inode is passed through, every new open of it must be passed through too, with the
///   very same backing (another one, or a reply without passthrough, fails the open with EIO);
/// - a passed-through open fails while a handle reading through the page cache is open.
/// So the backing is registered at an inode's first open, shared by every open while one is open, and closed
/// with its last release. An inode opened while its backing reads another version of its bytes (the photo was
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

    private var backings: [UInt64: (id: Int32, identity: String, handles: Int)] = [:]
    /// Open handles of local photos read through the daemon, by inode (the kernel's page-cache mode).
    private var daemonReaders: [UInt64: Int] = [:]
    /// Whether new inodes may still be registered.
    public private(set) var isOn: Bool

    public init(isOn: Bool = true) { self.isOn = isOn }

    /// An open of `inode` to read the version `identity` from a file the kernel could read itself. A `.daemon`
    /// answer counts the handle as read through the daemon until `closed(inode:passedThrough: false)`.
    /// `bypassingPageCache`: the page-cache policy found another version's readers open (a direct-I/O
    /// handle); without a backing those read through the page cache, which a passed-through open would fail on.
    public mutating func opening(inode: UInt64, identity: String, bypassingPageCache: Bool = false) -> Decision {
        if let backing = backings[inode] {
            guard backing.identity == identity else { return .refuse }
            backings[inode] = (backing.id, identity, backing.handles + 1)
            return .backing(backing.id)
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
    public mutating func openingWithoutFile(inode: UInt64) -> Decision {
        if backings[inode] != nil { return .refuse }
        daemonReaders[inode, default: 0] += 1
        return .daemon
    }

    /// The kernel registered the file for `inode` as backing `id`; the open that asked holds it.
    public mutating func registered(inode: UInt64, identity: String, id: Int32) {
        backings[inode] = (id, identity, 1)
    }

    /// The kernel refused to register the file for `inode`: that open is read through the daemon. `everywhere`
    /// (no CAP_SYS_ADMIN, no passthrough in the kernel): passthrough stays off for the mount from now on.
    public mutating func registrationFailed(inode: UInt64, everywhere: Bool) {
        daemonReaders[inode, default: 0] += 1
        if everywhere { isOn = false }
    }

    /// A handle of `inode` was released, or its open never reached the kernel; for a passed-through one, the
    /// backing id to close when it was the last.
    public mutating func closed(inode: UInt64, passedThrough: Bool) -> Int32? {
        guard passedThrough else {
            if let count = daemonReaders[inode] { daemonReaders[inode] = count > 1 ? count - 1 : nil }
            return nil
        }
        guard let backing = backings[inode] else { return nil }
        if backing.handles > 1 {
            backings[inode] = (backing.id, backing.identity, backing.handles - 1)
            return nil
        }
        backings[inode] = nil
        return backing.id
    }

    /// The backings registered now (for tests and logs).
    public var registeredCount: Int { backings.count }
}
