// The photo catalog: one SQLite file in WAL mode, shared by mounts (readers) and imports (one writer at a time).
import Foundation
import GRDB

/// Errors from the catalog carry the library path so a log line or CLI message names the file.
public struct CatalogError: Error, CustomStringConvertible {
    public var path: String
    public var message: String
    public var underlying: Error?
    public var description: String {
        if let underlying { return "\(path): \(message): \(underlying)" }
        return "\(path): \(message)"
    }
}

public final class Catalog: @unchecked Sendable {
    public let path: String
    private let pool: DatabasePool

    /// Opens (creating if needed) the library at `path` and brings its schema up to date.
    /// A mount and an import may open the same file at once: WAL lets readers go on while the importer writes,
    /// and the busy timeout (10 s) makes two writers wait for each other instead of failing.
    public init(path: String) throws {
        self.path = path
        var config = Configuration()
        config.busyMode = .timeout(10)
        config.foreignKeysEnabled = true
        config.label = "photofs.catalog"
        // Listings of big directories happen on several FUSE threads at once; 2 cores, so 4 readers suffice.
        config.maximumReaderCount = 4
        config.prepareDatabase { db in
            // 16 MiB of pages per connection instead of SQLite's 2 MiB: a 100k-photo `ls -lR` otherwise
            // re-read pages through 794,000 pread calls. mmap (mmap_size) was 0.4 s faster still on that
            // listing (4.45 vs 4.87 s) but turns a library truncated by another program into SIGBUS; a
            // file system must not crash, so it stays off.
            try db.execute(sql: "PRAGMA cache_size = -16384")
        }
        do {
            pool = try DatabasePool(path: path, configuration: config)
            try Schema.migrator.migrate(pool)
        } catch {
            throw CatalogError(path: path, message: "cannot open the photo library", underlying: error)
        }
    }

    // MARK: - Change detection

    /// Change counters that mounts poll to drop cached listings: `photos` moves with every import or delete,
    /// `recents` with every recorded open (kept apart so a `cat` does not invalidate every listing).
    public struct Generation: Equatable, Sendable {
        public var photos: Int64
        public var recents: Int64
    }

    public func generation() throws -> Generation {
        try read { db in
            let row = try Row.fetchOne(db, sql: "SELECT generation, recent_generation FROM library_state")
            return Generation(photos: row?["generation"] ?? 0, recents: row?["recent_generation"] ?? 0)
        }
    }

    // MARK: - Queries for the tree

    public func photo(seq: Int64) throws -> PhotoRecord? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT \(PhotoRecord.columns) FROM photo WHERE seq = ?", arguments: [seq])
                .map(PhotoRecord.init(row:))
        }
    }

    public func photo(id: String) throws -> PhotoRecord? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT \(PhotoRecord.columns) FROM photo WHERE id = ?", arguments: [id])
                .map(PhotoRecord.init(row:))
        }
    }

    /// Every photo, available or not (for `photofs` tooling and tests).
    public func allPhotos() throws -> [PhotoRecord] {
        try read { db in
            try Catalog.photos(db, sql: "SELECT \(PhotoRecord.columns) FROM photo ORDER BY seq")
        }
    }

    /// Regions with at least one available photo, with their stored counts.
    public func regions() throws -> [RegionRecord] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT r.id, r.name, r.photo_count, r.photographer_count,
                       (SELECT max(moment_at) FROM photo p WHERE p.region_id = r.id AND p.available) AS newest
                FROM region r WHERE r.photo_count > 0 ORDER BY r.id
                """).map {
                RegionRecord(id: $0["id"], name: $0["name"], photoCount: $0["photo_count"],
                             photographerCount: $0["photographer_count"], newestMomentAt: $0["newest"] ?? 0)
            }
        }
    }

    public func region(id: Int64) throws -> RegionRecord? {
        try regions().first { $0.id == id }
    }

    /// Photographers with at least one available photo in the region.
    public func photographers(inRegion regionID: Int64) throws -> [PhotographerRecord] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT g.id, g.owner, g.name, max(p.moment_at) AS newest
                FROM photo p JOIN photographer g ON g.id = p.photographer_id
                WHERE p.region_id = ? AND p.available
                GROUP BY g.id ORDER BY g.id
                """, arguments: [regionID]).map {
                PhotographerRecord(id: $0["id"], owner: $0["owner"], name: $0["name"], newestMomentAt: $0["newest"])
            }
        }
    }

    /// Listing rows (`PhotoRecord.listingColumns` filled; description and URLs empty) of a photographer's
    /// photos in a region.
    public func photos(inRegion regionID: Int64, photographer photographerID: Int64) throws -> [PhotoRecord] {
        try read { db in
            try Array(Row.fetchCursor(db, sql: """
                SELECT \(PhotoRecord.listingColumns) FROM photo
                WHERE region_id = ? AND photographer_id = ? AND available ORDER BY seq
                """, arguments: [regionID, photographerID]).map(PhotoRecord.init(listingRow:)))
        }
    }

    public func years() throws -> [YearRecord] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT moment_year, count(*) AS n, max(moment_at) AS newest FROM photo
                WHERE available GROUP BY moment_year ORDER BY moment_year
                """).map { YearRecord(year: $0["moment_year"], photoCount: $0["n"], newestMomentAt: $0["newest"]) }
        }
    }

    /// Listing rows (`PhotoRecord.listingColumns` filled; description and URLs empty) of a year's photos.
    public func photos(inYear year: Int) throws -> [PhotoRecord] {
        try read { db in
            try Array(Row.fetchCursor(db, sql: """
                SELECT \(PhotoRecord.listingColumns) FROM photo WHERE moment_year = ? AND available ORDER BY seq
                """, arguments: [year]).map(PhotoRecord.init(listingRow:)))
        }
    }

    /// The most recently opened available photos, newest first.
    public func recentPhotos(limit: Int) throws -> [PhotoRecord] {
        try read { db in
            try Catalog.photos(db, sql: """
                SELECT \(PhotoRecord.columns(of: "p"))
                FROM recent r JOIN photo p ON p.seq = r.photo_seq
                WHERE p.available ORDER BY r.opened_at DESC, r.photo_seq DESC LIMIT ?
                """, arguments: [limit])
        }
    }

    /// Newest moment over every available photo (mtime of the root, /regions and /moments).
    public func newestMomentAt() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT max(moment_at) FROM photo WHERE available") ?? 0 }
    }

    /// Bytes and number of every available photo (what `df` shows), in one scan.
    public func availableTotals() throws -> (bytes: Int64, files: Int64) {
        try read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT CAST(total(byte_size) AS INTEGER), count(*) FROM photo WHERE available
                """)
            return (row?[0] ?? 0, row?[1] ?? 0)
        }
    }

    // MARK: - Writes

    /// Records that photos were opened (one transaction for a batch); keeps the newest `keep` rows so the
    /// table stays small.
    public func recordOpens(_ opens: [(seq: Int64, at: Date)], keep: Int = 100) throws {
        guard !opens.isEmpty else { return }
        try write { db in
            for open in opens {
                // A photo deleted meanwhile is skipped rather than failing the batch (foreign key).
                try db.execute(sql: """
                    INSERT OR REPLACE INTO recent(photo_seq, opened_at)
                    SELECT seq, ? FROM photo WHERE seq = ?
                    """, arguments: [open.at.timeIntervalSince1970, open.seq])
            }
            try db.execute(sql: """
                DELETE FROM recent WHERE photo_seq NOT IN (SELECT photo_seq FROM recent ORDER BY opened_at DESC LIMIT ?)
                """, arguments: [keep])
            try db.execute(sql: "UPDATE library_state SET recent_generation = recent_generation + 1")
        }
    }

    public func recordOpen(seq: Int64, at date: Date = Date(), keep: Int = 100) throws {
        try recordOpens([(seq, date)], keep: keep)
    }

    /// Place ids the catalog already resolved (an import asks Flickr only for the others).
    public func knownPlaceIDs() throws -> Set<String> {
        try read { db in Set(try String.fetchAll(db, sql: "SELECT place_id FROM place")) }
    }

    /// Writes one import in a single transaction: either all of it lands or none of it does.
    public func applyImport(places: [PlaceResolution], photos: [ImportedPhoto]) throws -> ImportSummary {
        try write { db in
            var summary = ImportSummary()
            for place in places {
                let regionID = try Catalog.regionID(named: place.regionName, db)
                try db.execute(sql: """
                    INSERT INTO place(place_id, name, region_id) VALUES (?, ?, ?)
                    ON CONFLICT(place_id) DO UPDATE SET name = excluded.name, region_id = excluded.region_id
                    """, arguments: [place.placeID, place.placeName, regionID])
            }
            let fallbackRegionID = try Catalog.regionID(named: Schema.fallbackRegion, db)
            var photographerIDs: [String: Int64] = [:]
            for imported in photos {
                var photo = imported.photo
                if let known = photographerIDs[imported.owner] {
                    photo.photographerID = known
                } else {
                    try db.execute(sql: """
                        INSERT INTO photographer(owner, name) VALUES (?, ?)
                        ON CONFLICT(owner) DO UPDATE SET name = excluded.name WHERE name IS NOT excluded.name
                        """, arguments: [imported.owner, imported.ownerName])
                    let id = try Int64.fetchOne(db, sql: "SELECT id FROM photographer WHERE owner = ?",
                                                arguments: [imported.owner])!
                    photographerIDs[imported.owner] = id
                    photo.photographerID = id
                }
                if let placeID = photo.placeID,
                   let regionID = try Int64.fetchOne(db, sql: "SELECT region_id FROM place WHERE place_id = ?",
                                                     arguments: [placeID]) {
                    photo.regionID = regionID
                } else {
                    photo.regionID = fallbackRegionID
                }
                let existed = try Bool.fetchOne(db, sql: "SELECT 1 FROM photo WHERE id = ?", arguments: [photo.id]) ?? false
                let before = db.totalChangesCount
                try Catalog.upsert(photo, db)
                let renditionsChanged = try Catalog.replaceRenditions(of: photo.id, with: imported.renditions, db)
                if !existed { summary.added += 1 }
                else if db.totalChangesCount != before || renditionsChanged { summary.updated += 1 }
                else { summary.unchanged += 1 }
            }
            try Catalog.recountRegions(db)
            summary.regions = try Int.fetchOne(db, sql: "SELECT count(*) FROM region WHERE photo_count > 0") ?? 0
            if summary.added + summary.updated > 0 || !places.isEmpty { try Catalog.bumpGeneration(db) }
            return summary
        }
    }

    /// Deletes photos by id (a later issue's sync uses it; tests use it to change a catalog under a mount).
    public func deletePhotos(ids: [String]) throws {
        try write { db in
            for id in ids { try db.execute(sql: "DELETE FROM photo WHERE id = ?", arguments: [id]) }
            try Catalog.recountRegions(db)
            try Catalog.bumpGeneration(db)
        }
    }

    // MARK: - Renditions and variants

    /// Every size the origin offers for a photo, smallest first.
    public func renditions(seq: Int64) throws -> [Rendition] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT label, url, width, height FROM rendition WHERE photo_seq = ?",
                             arguments: [seq]).map {
                Rendition(label: $0[0], url: $0[1], width: $0[2], height: $0[3])
            }.sorted { ($0.width * $0.height, $0.label) < ($1.width * $1.height, $1.label) }
        }
    }

    /// Sizes of every variant rendered at `spec`, by photo seq: one query when a sized mount starts listing.
    public func variantSizes(spec: String) throws -> [Int64: Int64] {
        try read { db in
            var sizes: [Int64: Int64] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT photo_seq, byte_size FROM variant WHERE spec = ?",
                                           arguments: [spec])
            while let row = try rows.next() { sizes[row[0]] = row[1] }
            return sizes
        }
    }

    public func variant(seq: Int64, spec: String) throws -> VariantRecord? {
        try read { db in
            try Row.fetchOne(db, sql: """
                SELECT source_url, byte_size, width, height, content_type, unchanged FROM variant
                WHERE spec = ? AND photo_seq = ?
                """, arguments: [spec, seq]).map {
                VariantRecord(seq: seq, spec: spec, sourceURL: $0[0], byteSize: $0[1], width: $0[2], height: $0[3],
                              contentType: $0[4], unchanged: $0[5])
            }
        }
    }

    /// A square thumbnail's bytes, kept in the catalog.
    public func thumbnail(seq: Int64, spec: String) throws -> Data? {
        try read { db in
            try Data.fetchOne(db, sql: "SELECT data FROM thumbnail WHERE photo_seq = ? AND spec = ?", arguments: [seq, spec])
        }
    }

    /// Records rendered variants in one transaction (with the thumbnail bytes for those that have them).
    /// Does not move the change counters: a variant is derived data that every mount of the same size would
    /// render identically, so no listing needs rebuilding. Each is saved only if its photo still has the
    /// original it was rendered from (`from`, the photo row as read before rendering): an import may have
    /// replaced it while the variant waited to be written, and its trigger would not have seen this row.
    public func saveVariants(_ variants: [(record: VariantRecord, thumbnail: Data?, from: PhotoRecord)]) throws {
        guard !variants.isEmpty else { return }
        try write { db in
            for (record, thumbnail, photo) in variants {
                guard try Bool.fetchOne(db, sql: """
                    SELECT 1 FROM photo WHERE seq = ? AND original_url = ? AND byte_size IS ? AND content_type IS ?
                                          AND etag IS ?
                    """, arguments: [record.seq, photo.originalURL, photo.byteSize, photo.contentType, photo.etag]) == true
                else { continue }
                try db.execute(sql: """
                    INSERT OR REPLACE INTO variant(spec, photo_seq, source_url, byte_size, width, height, content_type,
                                                   unchanged)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [record.spec, record.seq, record.sourceURL, record.byteSize, record.width,
                                     record.height, record.contentType, record.unchanged])
                if let thumbnail {
                    try db.execute(sql: "INSERT OR REPLACE INTO thumbnail(photo_seq, spec, data) VALUES (?, ?, ?)",
                                   arguments: [record.seq, record.spec, thumbnail])
                }
            }
        }
    }

    // MARK: - Internals

    /// Replaces a photo's renditions when they differ from the stored ones; then its variants, made from the
    /// old set, are dropped too (a re-render might pick another source and come out a different size).
    private static func replaceRenditions(of photoID: String, with renditions: [Rendition], _ db: Database) throws -> Bool {
        guard let seq = try Int64.fetchOne(db, sql: "SELECT seq FROM photo WHERE id = ?", arguments: [photoID]) else {
            return false
        }
        let stored = Set(try Row.fetchAll(db, sql: "SELECT label, url, width, height FROM rendition WHERE photo_seq = ?",
                                          arguments: [seq]).map {
            Rendition(label: $0[0], url: $0[1], width: $0[2], height: $0[3])
        })
        guard stored != Set(renditions) else { return false }
        try db.execute(sql: "DELETE FROM rendition WHERE photo_seq = ?", arguments: [seq])
        for rendition in renditions {
            try db.execute(sql: "INSERT OR REPLACE INTO rendition(photo_seq, label, url, width, height) VALUES (?, ?, ?, ?, ?)",
                           arguments: [seq, rendition.label, rendition.url, rendition.width, rendition.height])
        }
        if !stored.isEmpty {
            try db.execute(sql: "DELETE FROM variant WHERE photo_seq = ?", arguments: [seq])
            try db.execute(sql: "DELETE FROM thumbnail WHERE photo_seq = ?", arguments: [seq])
        }
        return true
    }

    /// Photos of a query selecting `PhotoRecord.columns`, through a cursor: rows are decoded in place, not
    /// copied first.
    private static func photos(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [PhotoRecord] {
        try Array(Row.fetchCursor(db, sql: sql, arguments: arguments).map(PhotoRecord.init(row:)))
    }

    private static func upsert(_ p: PhotoRecord, _ db: Database) throws {
        // The WHERE on DO UPDATE makes an unchanged re-import a no-op, so it does not count as a change.
        try db.execute(sql: """
            INSERT INTO photo(id, title, description, photographer_id, region_id, place_id, date_taken, moment_at,
                              moment_year, uploaded_at, original_url, thumbnail_url, byte_size, content_type, etag,
                              last_modified, latitude, longitude)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET
                title = excluded.title, description = excluded.description,
                photographer_id = excluded.photographer_id, region_id = excluded.region_id,
                place_id = excluded.place_id, date_taken = excluded.date_taken, moment_at = excluded.moment_at,
                moment_year = excluded.moment_year, uploaded_at = excluded.uploaded_at,
                original_url = excluded.original_url, thumbnail_url = excluded.thumbnail_url,
                byte_size = excluded.byte_size, content_type = excluded.content_type, etag = excluded.etag,
                last_modified = excluded.last_modified, latitude = excluded.latitude, longitude = excluded.longitude
            WHERE (title, description, photographer_id, region_id, place_id, date_taken, moment_at, uploaded_at,
                   original_url, thumbnail_url, byte_size, content_type, etag, last_modified, latitude, longitude)
                  IS NOT
                  (excluded.title, excluded.description, excluded.photographer_id, excluded.region_id,
                   excluded.place_id, excluded.date_taken, excluded.moment_at, excluded.uploaded_at,
                   excluded.original_url, excluded.thumbnail_url, excluded.byte_size, excluded.content_type,
                   excluded.etag, excluded.last_modified, excluded.latitude, excluded.longitude)
            """, arguments: [p.id, p.title, p.description, p.photographerID, p.regionID, p.placeID, p.dateTaken,
                             p.momentAt, p.momentYear, p.uploadedAt, p.originalURL, p.thumbnailURL, p.byteSize,
                             p.contentType, p.etag, p.lastModified, p.latitude, p.longitude])
    }

    private static func regionID(named name: String, _ db: Database) throws -> Int64 {
        try db.execute(sql: "INSERT INTO region(name) VALUES (?) ON CONFLICT(name) DO NOTHING", arguments: [name])
        return try Int64.fetchOne(db, sql: "SELECT id FROM region WHERE name = ?", arguments: [name])!
    }

    /// Counts are stored, not computed per listing; every write that moves photos calls this.
    private static func recountRegions(_ db: Database) throws {
        try db.execute(sql: """
            UPDATE region SET
                photo_count = (SELECT count(*) FROM photo WHERE region_id = region.id AND available),
                photographer_count = (SELECT count(DISTINCT photographer_id) FROM photo
                                      WHERE region_id = region.id AND available)
            """)
    }

    private static func bumpGeneration(_ db: Database) throws {
        try db.execute(sql: "UPDATE library_state SET generation = generation + 1")
    }

    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try pool.read(body) } catch {
            throw CatalogError(path: path, message: "cannot read the photo library", underlying: error)
        }
    }

    private func write<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try pool.write(body) } catch {
            throw CatalogError(path: path, message: "cannot write the photo library", underlying: error)
        }
    }
}
