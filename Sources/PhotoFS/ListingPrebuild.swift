// Every listing but single albums' and /recent's built in one scan of the catalog right after mount, so a first
// `ls -lR` (or a file manager's first look) finds them ready instead of building each folder's alone.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoTree

/// Whether the mount's one-scan build of photo listings is running; listings it is about to provide wait for
/// it instead of building themselves (two builds of one listing on a 2-core machine would halve both).
final class ListingPrebuild: @unchecked Sendable {
    /// Monotonic: a clock step must not stretch a listing's wait for the build.
    private let condition = MonotonicCondition()
    private var running = false
    /// Whether a listing waited since `startGivingWay`, and when a folder was last opened (monotonic
    /// nanoseconds): what `giveWay` goes by.
    private var waitedSinceGivingWay = false
    private var lastListedAt: UInt64?
    private var givingWay = false
    /// True while `giveWay` waits (for tests: a listing's wait must wake it).
    var isGivingWay: Bool { condition.withLock { givingWay } }

    /// Marks the build as started; false if one already runs.
    func begin() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if running { return false }
        running = true
        return true
    }

    func end() {
        condition.lock()
        running = false
        condition.broadcast()
        condition.unlock()
    }

    /// Wakes the listings waiting in `wait`: one more listing was stored.
    func stored() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until no build runs or `isReady` holds (checked again after each listing stored), at most
    /// `timeout` seconds: a first `ls -lR` lists /albums as soon as the scan is read, while the photo folders
    /// are still being built. `isReady` must take no lock that is held around `stored()`.
    func wait(timeout: TimeInterval, until isReady: () -> Bool) {
        let deadline = DispatchTime.now() + timeout
        condition.lock()
        waitedSinceGivingWay = true
        // A build giving way goes on now: someone waits for it.
        condition.broadcast()
        while running && !isReady() && condition.wait(until: deadline) {}
        condition.unlock()
    }

    /// A folder is being opened.
    func listed() {
        let now = DispatchTime.now().uptimeNanoseconds
        condition.lock()
        lastListedAt = now
        condition.unlock()
    }

    /// The build is about to make folders nobody asked for yet (`giveWay` before each).
    func startGivingWay() {
        condition.lock()
        waitedSinceGivingWay = false
        condition.unlock()
    }

    /// Called by the build before each folder nobody asked for yet: while folders are being opened (one in the
    /// last `quiet` nanoseconds) and no listing has waited for the build since `startGivingWay`, waits for a
    /// pause in them, until `deadline` at most. A first `ls -lR /events` right after mount otherwise shares the
    /// 2 cores, which `ls` and the daemon's reader already use, with the year and photographer folders still
    /// being built: 1.16–1.34 s against 1.20–1.45 s with them built beside it (five interleaved pairs, 100,000
    /// photos; 1.19–1.20 s against 1.30–1.44 s with the newest-moment change too, three pairs). Once a listing
    /// has waited for one of these folders, someone is walking them: the build then goes on beside it, as
    /// before. The price is a whole-tree `ls -lR` right after mount, whose walk of /events no longer overlaps
    /// the build it then waits for under /moments: 2.55–2.76 s against 2.43–2.60 s (six pairs; its target is
    /// 3 × tmpfs, at 1.2–1.3 ×). The tighter target (/events, 2 ×) decided.
    func giveWay(quiet: UInt64 = 20_000_000, until deadline: DispatchTime) {
        condition.lock()
        defer {
            givingWay = false
            condition.unlock()
        }
        while !waitedSinceGivingWay, let lastListedAt {
            let now = DispatchTime.now()
            let since = now.uptimeNanoseconds &- lastListedAt
            guard now < deadline, since < quiet else { return }
            givingWay = true
            condition.wait(until: min(deadline, now + .nanoseconds(Int(quiet - since))))
        }
    }
}

extension PhotoFilesystem {
    /// Libraries up to this many photos get every photo listing built after mount: 250,000 photos make
    /// about 500,000 entries (each photo is in its year and its photographer's folder), ~100 MB of listings,
    /// what a full `ls -lR` would leave cached anyway. Larger ones build folder by folder as they are listed.
    static let prebuildPhotoLimit = 250_000

    /// Reads every available photo once (in table order: no index lookups, no sort) and stores the listing
    /// of every folder but single albums and /recent, exactly as `build` would make each one. Measured on
    /// 100,000 photos: the 89 year and photographer folders built one by one took 2.6 s of a first `ls -lR`
    /// (each a `WHERE … ORDER BY` through an index, then a row lookup per photo); see docs/benchmarks.md
    /// for the scan's time. Returns the number of listings stored.
    ///
    /// `settlingEvents`: the same rows are clustered into events (`EventTree.settle`), holding the settle from
    /// the start so a listing of /events waits for them. On 20,000 photos the settle's own read of every
    /// photo took 0.15–0.18 s beside the scan's 0.35 s, and a first `ls -lR` after mount waited for both
    /// (0.75–0.78 s in all). Each listing is available as soon as it is stored, in the order a first
    /// `ls -lR` asks for them: the top folders right after the scan, the events' once clustered, then the year
    /// and photographer folders. (Building those on a second thread from the start made a first `ls -lR
    /// /events` of 100,000 photos slower, 2.10–2.69 s against 1.64–2.12 s, and the whole 20,000-photo one no
    /// faster: on 2 cores it competes with `ls` and the daemon's replies.)
    @discardableResult
    public func prebuildPhotoListings(settlingEvents: Bool = false) -> Int {
        guard listingPrebuild.begin() else { return 0 }
        defer { listingPrebuild.end() }
        let started = DispatchTime.now()
        let stamp = listings.stamp()
        var stored = 0
        var rows: [ScannedPhoto]?
        var scanned = started
        func scan() {
            defer { scanned = DispatchTime.now() }
            guard let scanned = try? catalogRead(logging: logger, {
                try catalog.listingRowsOfAllPhotos(limit: PhotoFilesystem.prebuildPhotoLimit + 1)
            }), scanned.count <= PhotoFilesystem.prebuildPhotoLimit else {
                logger.debug("photo listings left to build folder by folder (catalog unreadable or over the limit)")
                return
            }
            rows = scanned
            // The directories above the photos first: a first `ls -lR` lists them before any photo folder.
            // Their aggregates (each region's, year's and photographer's newest moment and whether it has a
            // public photo) were one query each, over every photo of the region or year (1.3 s of a first
            // `ls -lR` of 100,000 photos after the folders were prebuilt).
            if let upper = try? catalogRead(logging: logger, {
                try PhotoFilesystem.upperFolders(scanned, regions: catalog.regionsWithoutAggregates(),
                                                 photographers: catalog.photographersWithoutAggregates(),
                                                 albums: catalog.albums())
            }) {
                stored += storeAll(upper, readAt: stamp)
            }
        }
        var snapshot: EventTree.Snapshot?
        var clustered = started
        if settlingEvents {
            do {
                snapshot = try events.settle(onlyIfMissing: true) {
                    // The settled events (100,000 members: 19–22 ms) are read on another thread meanwhile: on
                    // 2 cores the second one idles while a first `ls -lR /events` waits for these events.
                    let stored = StoredEventsRead(catalog: catalog, logger: logger)
                    scan()
                    let settled = stored.wait()
                    return rows.map { rows in
                        EventTree.ScannedPhotos(photos: rows.map(\.event),
                                                publicSeqs: Set(rows.lazy.filter(\.isPublic).map(\.seq)), stored: settled)
                    }
                }
            } catch {
                logger.error("events could not be settled", metadata: ["error": "\(error)"])
            }
            clustered = DispatchTime.now()
        } else {
            scan()
            snapshot = try? events.current()
        }
        // The events' folders from the same rows: one `photos(seqs:)` per event took most of a first
        // `ls -lR /events`.
        if let rows, let snapshot {
            stored += storeAll(PhotoFilesystem.eventFolders(rows, events: snapshot), readAt: stamp)
        }
        // The year and photographer folders give way to folders being listed meanwhile (an `ls -lR /events`),
        // 10 s at most in all: a file manager open on a folder must not hold the build back for good.
        if let rows {
            listingPrebuild.startGivingWay()
            stored += storeAll(PhotoFilesystem.photoFolders(rows), readAt: stamp, givingWayUntil: .now() + 10)
        }
        // Info, once a mount: when a first `ls -lR` stops competing with the build (`make bench` waits for it
        // with the default log level, which is what it measures).
        let milliseconds = { (from: DispatchTime, to: DispatchTime) in
            String(format: "%.1f", Double(to.uptimeNanoseconds &- from.uptimeNanoseconds) / 1e6)
        }
        logger.info("photo listings built after mount", metadata: [
            "listings": "\(stored)", "photos": "\(rows?.count ?? 0)",
            "scanMs": "\(milliseconds(started, scanned))",
            "clusterMs": "\(settlingEvents && snapshot != nil ? milliseconds(scanned, clustered) : "0")",
            "ms": "\(milliseconds(started, DispatchTime.now()))",
        ])
        return stored
    }

    /// The catalog's settled events read on a thread of their own (`wait` returns them; nil when unreadable, and
    /// the clustering then reads them itself).
    private final class StoredEventsRead: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var events: [StoredEvent]?

        init(catalog: Catalog, logger: Logger) {
            DispatchQueue.global(qos: .userInitiated).async { [self] in
                events = try? catalogRead(logging: logger) { try catalog.storedEvents() }
                done.signal()
            }
        }

        func wait() -> [StoredEvent]? {
            done.wait()
            return events
        }
    }

    /// Builds and stores each listing not already cached, waking the listings that wait for it; stops at the
    /// first the cache refuses (the catalog changed since `stamp`: the rest would be stale too). Returns how
    /// many it stored.
    private func storeAll(_ folders: [FolderBuild], readAt stamp: StampedCache<Node, DirectoryListing>.Stamp,
                          givingWayUntil deadline: DispatchTime? = nil) -> Int {
        var stored = 0
        for (node, build) in folders where listings.value(for: node) == nil {
            if let deadline { listingPrebuild.giveWay(until: deadline) }
            guard listings.store(build(self), for: node, readAt: stamp) else { break }
            listingPrebuild.stored()
            stored += 1
        }
        return stored
    }

    /// /events, each year of events and each event, from the scan's rows: each event's members found by seq,
    /// with a binary search of the rows (in seq order, as the scan reads them) when its folder is built. A
    /// dictionary of every row's position took 13–15 ms of 100,000 photos before /events could be listed.
    static func eventFolders(_ rows: [ScannedPhoto], events snapshot: EventTree.Snapshot) -> [FolderBuild] {
        let events = snapshot.events
        var folders: [FolderBuild] = [(.events, { _ in EventTreeBuilder.years(events, isPrivate: snapshot.isPrivate) })]
        for year in Set(events.filter { !$0.members.isEmpty }.map(\.year)) {
            folders.append((.eventYear(year), { _ in EventTreeBuilder.events(inYear: year, events, isPrivate: snapshot.isPrivate) }))
        }
        for event in events {
            // An event none of whose photos is listed has no folder (`build` answers ENOENT for it).
            guard event.members.contains(where: { position(of: $0, in: rows) != nil }) else { continue }
            folders.append((.event(event.key), { filesystem in
                EventTreeBuilder.photos(of: event, event.members.compactMap { position(of: $0, in: rows) }.map { rows[$0].photo },
                                        servedExtension: filesystem.store.servedExtension) {
                    TreeBuilder.linkCount(of: $0, inRecent: false)
                }
            }))
        }
        return folders
    }

    /// Where the row of `seq` is in `rows` (ascending seqs), if there.
    static func position(of seq: Int64, in rows: [ScannedPhoto]) -> Int? {
        var low = 0, high = rows.count
        while low < high {
            let middle = low + (high - low) / 2
            if rows[middle].seq < seq { low = middle + 1 } else { high = middle }
        }
        return low < rows.count && rows[low].seq == seq ? low : nil
    }

    /// The year folder a stored `moment_year` puts a photo in: only years /moments shows
    /// (`CatalogLimits.yearRange`, as `Catalog.years` keeps them); no other year folder can be asked for.
    static func shownYear(_ stored: Int64?) -> Int? {
        guard let stored, let year = Int(exactly: stored), CatalogLimits.yearRange.contains(year) else { return nil }
        return year
    }

    /// A listing to make once the scan has grouped the rows.
    typealias FolderBuild = (Node, (PhotoFilesystem) -> DirectoryListing)

    /// Rows grouped into the folders `build` makes, each in `build`'s order: a photographer's folder in seq
    /// order (the scan's), a year by moment then seq. Folders hold positions in `rows`, and each build copies
    /// its own photos only while it runs: holding a copy of every row per folder (and a sorted copy of each
    /// year) put the 100,000-photo daemon's peak heap at 196 MB, 130 MB of it these copies (heaptrack).
    static func photoFolders(_ rows: [ScannedPhoto]) -> [FolderBuild] {
        var years: [Int: [Int32]] = [:]
        var photographers: [Node: [Int32]] = [:]
        // prebuildPhotoLimit keeps positions far below Int32.max.
        for (position, row) in rows.enumerated() {
            if let year = shownYear(row.storedYear) { years[year, default: []].append(Int32(position)) }
            photographers[.photographer(region: row.regionID, photographer: row.photographerID), default: []]
                .append(Int32(position))
        }
        var folders: [FolderBuild] = photographers.map { node, positions in
            (node, { $0.photoListing(positions.map { rows[Int($0)].photo }, node: node, style: .title) })
        }
        for (year, positions) in years {
            // Sorted by keys read once, not by comparing whole records (each comparison would copy two).
            let sorted = positions.map { (rows[Int($0)].momentAt, rows[Int($0)].seq, $0) }
                .sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
            folders.append((.year(year), { $0.photoListing(sorted.map { rows[Int($0)].photo }, node: .year(year), style: .moment) }))
        }
        return folders
    }

    /// The root, /regions, /moments, /albums and every region's folder, with the aggregates `Catalog`'s
    /// queries compute over usable photos (the rows that decode: the catalog keeps the SQL and the decoder in
    /// agreement) computed from the scan's rows instead.
    static func upperFolders(_ rows: [ScannedPhoto], regions: [RegionRecord],
                             photographers: [Int64: PhotographerRecord], albums: [AlbumRecord]) -> [FolderBuild] {
        struct Aggregate { var count = 0; var newest: Int64?; var isPublic = false
            mutating func add(_ photo: ScannedPhoto) {
                count += 1
                newest = max(newest ?? photo.momentAt, photo.momentAt)
                isPublic = isPublic || photo.isPublic
            }
        }
        var all = Aggregate()
        var byRegion: [Int64: Aggregate] = [:]
        var byYear: [Int: Aggregate] = [:]
        var byPhotographer: [Int64: [Int64: Aggregate]] = [:]
        for row in rows {
            all.add(row)
            byRegion[row.regionID, default: Aggregate()].add(row)
            if let year = shownYear(row.storedYear) { byYear[year, default: Aggregate()].add(row) }
            byPhotographer[row.regionID, default: [:]][row.photographerID, default: Aggregate()].add(row)
        }
        let newest = all.newest ?? 0
        let shownRegions = regions.map { region -> RegionRecord in
            var region = region
            region.newestMomentAt = byRegion[region.id]?.newest ?? 0
            region.hasPublicPhotos = byRegion[region.id]?.isPublic ?? false
            return region
        }
        let years = byYear.sorted { $0.key < $1.key }.map {
            YearRecord(year: $0.key, photoCount: $0.value.count, newestMomentAt: $0.value.newest ?? 0,
                       hasPublicPhotos: $0.value.isPublic)
        }
        var folders: [FolderBuild] = [
            (.root, { _ in TreeBuilder.root(newest: newest) }),
            (.regions, { _ in TreeBuilder.regions(shownRegions, newest: newest) }),
            (.moments, { _ in TreeBuilder.years(years, newest: newest) }),
            (.albums, { _ in TreeBuilder.albums(albums, newest: newest) }),
        ]
        for region in shownRegions {
            let inRegion = (byPhotographer[region.id] ?? [:]).sorted { $0.key < $1.key }.compactMap { id, aggregate -> PhotographerRecord? in
                guard var photographer = photographers[id] else { return nil }
                photographer.newestMomentAt = aggregate.newest ?? 0
                photographer.hasPublicPhotos = aggregate.isPublic
                return photographer
            }
            folders.append((.region(region.id), { _ in TreeBuilder.photographers(in: region, inRegion) }))
        }
        return folders
    }
}
