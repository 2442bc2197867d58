// Every year and photographer listing built in one scan of the catalog right after mount, so a first
// `ls -lR` (or a file manager's first look) finds them ready instead of building each folder's alone.
import Foundation
import PhotoCatalog
import PhotoTree

/// Whether the mount's one-scan build of photo listings is running; listings it is about to provide wait for
/// it instead of building themselves (two builds of one listing on a 2-core machine would halve both).
final class ListingPrebuild: @unchecked Sendable {
    private let condition = NSCondition()
    private var running = false

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

    /// Waits until no build runs, at most `timeout` seconds.
    func waitWhileRunning(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while running && condition.wait(until: deadline) {}
        condition.unlock()
    }
}

extension PhotoFilesystem {
    /// Libraries up to this many photos get every photo listing built after mount: 250,000 photos make
    /// about 500,000 entries (each photo is in its year and its photographer's folder), ~100 MB of listings,
    /// what a full `ls -lR` would leave cached anyway. Larger ones build folder by folder as they are listed.
    static let prebuildPhotoLimit = 250_000

    /// Reads every available photo once (in table order: no index lookups, no sort) and stores the listing
    /// of every year and every photographer-in-region folder, exactly as `build` would make each one.
    /// Measured on 100,000 photos (89 folders): building the folders one by one took 2.6 s of a first
    /// `ls -lR` (each a `WHERE … ORDER BY` through an index, then a row lookup per photo); see
    /// docs/benchmarks.md for the scan's time. Returns the number of listings stored.
    @discardableResult
    public func prebuildPhotoListings() -> Int {
        guard listingPrebuild.begin() else { return 0 }
        defer { listingPrebuild.end() }
        let started = DispatchTime.now()
        let stamp = listings.stamp()
        guard let rows = try? catalogRead(logging: logger, {
            try catalog.listingRowsOfAllPhotos(limit: PhotoFilesystem.prebuildPhotoLimit + 1)
        }), rows.count <= PhotoFilesystem.prebuildPhotoLimit else {
            logger.debug("photo listings left to build folder by folder (catalog unreadable or over the limit)")
            return 0
        }
        var stored = 0
        for (node, photos) in PhotoFilesystem.photoFolders(rows) where listings.value(for: node) == nil {
            let style: PhotoNameStyle = if case .year = node { .moment } else { .title }
            guard listings.store(photoListing(photos, node: node, style: style), for: node, readAt: stamp) else { break }
            stored += 1
        }
        logger.debug("photo listings built after mount", metadata: [
            "listings": "\(stored)", "photos": "\(rows.count)",
            "ms": "\(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6)",
        ])
        return stored
    }

    /// The folders the scan provides (their listings wait for it rather than build themselves).
    static func isPrebuilt(_ node: Node) -> Bool {
        switch node {
        case .year, .photographer: return true
        default: return false
        }
    }

    /// Rows grouped into the folders `build` makes, each in `build`'s order: a photographer's folder in seq
    /// order (the scan's), a year by moment then seq.
    static func photoFolders(_ rows: [(photo: PhotoRecord, storedYear: Int64?)]) -> [(Node, [PhotoRecord])] {
        var years: [Int: [PhotoRecord]] = [:]
        var photographers: [Node: [PhotoRecord]] = [:]
        for (photo, storedYear) in rows {
            // Only years /moments shows (1–9999, `Catalog.years`): no other year folder can be asked for.
            if let year = storedYear, (1...9999).contains(year) { years[Int(year), default: []].append(photo) }
            photographers[.photographer(region: photo.regionID, photographer: photo.photographerID), default: []]
                .append(photo)
        }
        var folders: [(Node, [PhotoRecord])] = photographers.map { ($0.key, $0.value) }
        for (year, photos) in years {
            folders.append((.year(year), photos.sorted { ($0.momentAt, $0.seq) < ($1.momentAt, $1.seq) }))
        }
        return folders
    }
}
