// A cache of values read from the catalog that never keeps a value read before the catalog changed.
import Foundation

/// Values built from catalog reads (listings, photo rows, the /recent set), dropped when the catalog changes.
///
/// A build runs outside any lock (a 17,500-photo year takes 200 ms), so an import can land while it runs. If
/// the finished value were stored unconditionally, a listing read before the import could be stored after the
/// watcher dropped the cache — and stay, with the kernel never told. So every build is stamped with the epoch
/// it started in (`stamp()` before reading), and `store` refuses a value whose epoch has since ended.
public final class StampedCache<Key: Hashable, Value>: @unchecked Sendable {
    /// An epoch, taken before reading the catalog; valid until the next `invalidate`.
    public struct Stamp: Equatable, Sendable { fileprivate let epoch: UInt64 }

    private let lock = NSLock()
    private var epoch: UInt64 = 0
    private var values: [Key: Value] = [:]
    /// Past this many values the cache starts over (nil: unbounded). Photo rows use it: 4,096 rows (~1.5 MB)
    /// cover any directory a person works in, and a 100k-photo `ls -lR` just cycles through.
    private let limit: Int?

    public init(limit: Int? = nil) { self.limit = limit }

    public func value(for key: Key) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        return values[key]
    }

    /// The current epoch: take it before reading what will be stored.
    public func stamp() -> Stamp {
        lock.lock()
        defer { lock.unlock() }
        return Stamp(epoch: epoch)
    }

    /// Keeps `value` if nothing was invalidated since `stamp` was taken; returns whether it was kept.
    @discardableResult
    public func store(_ value: Value, for key: Key, readAt stamp: Stamp) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard stamp.epoch == epoch else { return false }
        if let limit, values.count >= limit, values[key] == nil { values.removeAll(keepingCapacity: true) }
        values[key] = value
        return true
    }

    /// Drops one value for good (its key will never be asked for again), keeping the epoch.
    public func remove(_ key: Key) {
        lock.lock()
        values[key] = nil
        lock.unlock()
    }

    /// Drops every value and ends the current epoch; returns what was cached (to diff against).
    @discardableResult
    public func invalidate() -> [Key: Value] {
        lock.lock()
        defer { lock.unlock() }
        epoch &+= 1
        let old = values
        values = [:]
        return old
    }

    /// Called with a value that was handed out but could not be stored because the catalog kept changing
    /// under its builds: the owner must make sure the kernel does not keep it (diff it at the next check).
    public var onStale: ((Key, Value) -> Void)?

    /// Builds that straddle an invalidation before the last one is handed out anyway. An import lands in one
    /// transaction, so a second build almost always sees a settled catalog; 3 bounds the work if it does not.
    static var buildAttempts: Int { 3 }

    /// The value for `key`, or one built now and stored. A build that straddled an invalidation is not
    /// stored (it may hold what the invalidation removed) and is built again; after `buildAttempts` the
    /// last build is returned and reported to `onStale`.
    public func value(for key: Key, build: () throws -> Value) rethrows -> Value {
        if let cached = value(for: key) { return cached }
        var attempt = 1
        while true {
            let stamp = stamp()
            let built = try build()
            if store(built, for: key, readAt: stamp) { return built }
            if attempt == Self.buildAttempts {
                onStale?(key, built)
                return built
            }
            attempt += 1
        }
    }
}
