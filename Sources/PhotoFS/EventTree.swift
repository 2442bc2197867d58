// The mount's events (/events): settled at mount and again after each catalog change, and the listings of
// /events, a year of events and one event built from them.
import Foundation
import Logging
import PhotoCatalog
import PhotoTree

/// The events a mount shows. Computed once when first needed (the prebuild thread asks right after mount)
/// and again by the watcher after every change of the catalog's photos, before the listings are rebuilt.
/// Lock order: `settling` → `lock`; the catalog check takes them under its `changeCheck`, nothing else under them.
final class EventTree: @unchecked Sendable {
    struct Snapshot: Sendable {
        let events: [PhotoEvent]
        let byKey: [Int64: PhotoEvent]
        /// Keys of the events with no public photo: 0500 directories, as an album or a year of only such photos.
        let privateKeys: Set<Int64>
        init(_ events: [PhotoEvent], publicSeqs: Set<Int64>) {
            self.events = events
            byKey = Dictionary(events.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
            privateKeys = Set(events.filter { !$0.members.contains(where: publicSeqs.contains) }.map(\.key))
        }
        func isPrivate(_ event: PhotoEvent) -> Bool { privateKeys.contains(event.key) }
    }

    private let catalog: Catalog
    private let logger: Logger
    /// Seconds since 1970: what "48 hours ago" is measured from.
    private let clock: @Sendable () -> Int64
    /// One settle at a time: a watcher's and a first listing's would cluster the same photos twice.
    private let settling = NSLock()
    private let lock = NSLock()
    private var snapshot: Snapshot?

    init(catalog: Catalog, logger: Logger, clock: @escaping @Sendable () -> Int64) {
        self.catalog = catalog
        self.logger = logger
        self.clock = clock
    }

    /// The events as last settled, settling them now if never done.
    func current() throws -> Snapshot {
        if let known = lock.withLock({ snapshot }) { return known }
        return try settle(onlyIfMissing: true)
    }

    /// Photos already read by the caller (the mount's scan), to cluster instead of reading the catalog again.
    struct ScannedPhotos {
        let photos: [EventPhoto]
        let publicSeqs: Set<Int64>
        /// The settled events, when the caller read them beside its scan (nil: read them now).
        var stored: [StoredEvent]? = nil
    }

    /// Clusters the library's photos now (storing what settled when the library can be written). `scan` runs
    /// first, holding the settle, so a listing of /events meanwhile waits for these events instead of
    /// clustering the same photos again; the photos it returns are clustered (nil: read from the catalog).
    @discardableResult
    func settle(onlyIfMissing: Bool = false, scan: () throws -> ScannedPhotos? = { nil }) throws -> Snapshot {
        settling.lock()
        defer { settling.unlock() }
        let scanned = try scan()
        if onlyIfMissing, let known = lock.withLock({ snapshot }) { return known }
        let started = DispatchTime.now()
        let now = clock()
        let settled = try catalogRead(logging: logger) { () -> Snapshot in
            if let scanned, let events = try LibraryEvents.withoutSettling(catalog, photos: scanned.photos,
                                                                          stored: scanned.stored, now: now) {
                return Snapshot(events, publicSeqs: scanned.publicSeqs)
            }
            return Snapshot(try LibraryEvents.settle(catalog, now: now), publicSeqs: try catalog.publicPhotoSeqs())
        }
        lock.withLock { snapshot = settled }
        logger.debug("events settled", metadata: [
            "events": "\(settled.events.count)", "fromScan": "\(scanned != nil)",
            "ms": "\(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6)",
        ])
        return settled
    }

    /// `/events`.
    func years() throws -> DirectoryListing {
        let snapshot = try current()
        return EventTreeBuilder.years(snapshot.events, isPrivate: snapshot.isPrivate)
    }

    /// `/events/<Year>`; ENOENT for a year with no event.
    func events(inYear year: Int) throws -> DirectoryListing {
        let snapshot = try current()
        let listing = EventTreeBuilder.events(inYear: year, snapshot.events, isPrivate: snapshot.isPrivate)
        guard !listing.entries.isEmpty else { throw FilesystemError(.notFound, "no events in \(year)") }
        return listing
    }

    /// The event a directory stands for, while the mount shows it.
    func event(_ key: Int64) throws -> PhotoEvent {
        guard let event = try current().byKey[key] else { throw FilesystemError(.notFound, "no event \(key)") }
        return event
    }

    /// An event's directory, from its members' listing rows (`photos`).
    func photos(of key: Int64, servedExtension: ((PhotoRecord) -> String)?,
                photos: ([Int64]) throws -> [PhotoRecord]) throws -> DirectoryListing {
        let event = try event(key)
        let listing = EventTreeBuilder.photos(of: event, try catalogRead(logging: logger) { try photos(event.members) },
                                              servedExtension: servedExtension) {
            TreeBuilder.linkCount(of: $0, inRecent: false)
        }
        guard !listing.entries.isEmpty else { throw FilesystemError(.notFound, "no photos in event \(key)") }
        return listing
    }
}
