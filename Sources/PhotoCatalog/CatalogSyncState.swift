// What the library remembers about the listings it follows: the last complete sync and an interrupted import.
import Foundation
import GRDB

/// One followed listing ("flickr user 12345678@N01"): which account, where the next incremental import
/// starts, and where an interrupted one stopped. Never holds a secret.
public struct SyncState: Equatable, Sendable {
    public var listingKey: String
    public var sourceKind: String
    public var accountID: String?
    public var accountName: String?
    /// The source's token to list changes from at the next import (nil: the next import lists everything).
    public var lastSyncPoint: String?
    /// When the last complete import finished (seconds since 1970, this machine's clock).
    public var lastSyncedAt: Int64?
    /// Set while an import is unfinished: the next import continues from here instead of starting over.
    public var resume: ResumePoint?
    /// Records the source could not use, and videos left out, in the last complete import.
    public var skippedCount: Int
    public var videoCount: Int

    public init(listingKey: String, sourceKind: String, accountID: String? = nil, accountName: String? = nil,
                lastSyncPoint: String? = nil, lastSyncedAt: Int64? = nil, resume: ResumePoint? = nil,
                skippedCount: Int = 0, videoCount: Int = 0) {
        self.listingKey = listingKey; self.sourceKind = sourceKind; self.accountID = accountID
        self.accountName = accountName; self.lastSyncPoint = lastSyncPoint; self.lastSyncedAt = lastSyncedAt
        self.resume = resume; self.skippedCount = skippedCount; self.videoCount = videoCount
    }
}

/// Where an interrupted import stands. Each committed page moves it forward in the same transaction as the
/// page's photos, so the library and this point never disagree.
public struct ResumePoint: Equatable, Sendable {
    public enum Mode: String, Sendable { case full, changes }
    public var mode: Mode
    /// The next page to ask for; nil when the listing is done and only the finishing steps (deletions,
    /// albums) remain.
    public var cursor: String?
    /// The sync point taken when the interrupted import began: the one to record when it completes.
    public var syncPoint: String?
    /// Pages committed so far.
    public var pages: Int
    public init(mode: Mode, cursor: String?, syncPoint: String?, pages: Int) {
        self.mode = mode; self.cursor = cursor; self.syncPoint = syncPoint; self.pages = pages
    }
}

extension Catalog {
    /// The state kept for one listing; nil when it was never imported (or its row cannot be read).
    public func syncState(listingKey: String) throws -> SyncState? {
        try syncStates().first { $0.listingKey == listingKey }
    }

    /// Every listing this library follows, in key order.
    public func syncStates() throws -> [SyncState] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT listing_key, source_kind, account_id, account_name, last_sync_point, last_synced_at,
                       resume_mode, resume_cursor, resume_sync_point, resume_pages, skipped_count, video_count
                FROM sync_state ORDER BY listing_key
                """)) { row in
                var reader = ColumnReader(row, table: "sync_state")
                let key = try reader.text(0, "listing_key")
                reader.key = "key \(ColumnReader.printable(key))"
                var state = SyncState(listingKey: key, sourceKind: reader.lenientText(1) ?? "unknown",
                                      accountID: reader.lenientText(2), accountName: reader.lenientText(3),
                                      lastSyncPoint: reader.lenientText(4), lastSyncedAt: reader.lenientInteger(5),
                                      skippedCount: Int(min(max(reader.lenientInteger(10) ?? 0, 0), Int64(Int32.max))),
                                      videoCount: Int(min(max(reader.lenientInteger(11) ?? 0, 0), Int64(Int32.max))))
                // A resume point whose mode is unknown is no resume point: the next import starts over.
                if let mode = reader.lenientText(6).flatMap(ResumePoint.Mode.init(rawValue:)) {
                    state.resume = ResumePoint(mode: mode, cursor: reader.lenientText(7), syncPoint: reader.lenientText(8),
                                               pages: Int(min(max(reader.lenientInteger(9) ?? 0, 0), Int64(Int32.max))))
                }
                return state
            }
        }
    }

    /// Writes one listing's state on its own (the start and the end of an import).
    public func saveSyncState(_ state: SyncState) throws {
        try write { db in try Catalog.writeSyncState(state, db) }
    }

    static func writeSyncState(_ state: SyncState, _ db: Database) throws {
        try db.execute(sql: """
            INSERT OR REPLACE INTO sync_state(listing_key, source_kind, account_id, account_name, last_sync_point,
                last_synced_at, resume_mode, resume_cursor, resume_sync_point, resume_pages, skipped_count, video_count)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [state.listingKey, state.sourceKind, state.accountID, state.accountName, state.lastSyncPoint,
                             state.lastSyncedAt, state.resume?.mode.rawValue, state.resume?.cursor,
                             state.resume?.syncPoint, state.resume?.pages ?? 0, state.skippedCount, state.videoCount])
    }

    /// Ids of every photo whose photographer is this owner (an account's photos, for finding deletions).
    public func photoIDs(owner: String) throws -> Set<String> {
        try read { db in
            Set(try DatabaseValue.fetchAll(db, sql: """
                SELECT p.id FROM photo p JOIN photographer g ON g.id = p.photographer_id WHERE g.owner = ?
                """, arguments: [owner]).compactMap {
                if case .string(let id) = $0.storage { return id } else { return nil }
            })
        }
    }

    /// Ids of photos deleted, or whose original changed, after log position `after` (0: all kept), and the
    /// newest position: a mount frees the cached bytes of the versions it no longer shows.
    public func removedPhotoIDs(after position: Int64) throws -> (ids: [String], last: Int64) {
        try read { db in
            var ids: [String] = []
            var last = position
            for row in try Row.fetchAll(db, sql: "SELECT seq, photo_id FROM removed_photo WHERE seq > ? ORDER BY seq",
                                        arguments: [position]) {
                let reader = ColumnReader(row, table: "removed_photo")
                if let seq = reader.lenientInteger(0) { last = max(last, seq) }
                if let id = reader.lenientText(1) { ids.append(id) }
            }
            return (ids, last)
        }
    }

    /// Deletes photos by id and returns the rows removed (their cached bytes can then be freed); albums and
    /// /recent lose them with them (foreign keys), counts and the change counter follow.
    @discardableResult
    public func removePhotos(ids: [String]) throws -> [PhotoRecord] {
        guard !ids.isEmpty else { return [] }
        return try write { db in
            var removed: [PhotoRecord] = []
            for id in ids {
                removed += try decodeAll(Row.fetchCursor(db, sql: "SELECT \(PhotoRecord.columns) FROM photo WHERE id = ?",
                                                         arguments: [id]), PhotoRecord.decode(row:))
                try db.execute(sql: "DELETE FROM photo WHERE id = ?", arguments: [id])
            }
            try Catalog.recountRegions(db)
            try Catalog.bumpGeneration(db)
            // The log only has to outlive the mounts' next poll: a week is plenty and keeps it small.
            try db.execute(sql: "DELETE FROM removed_photo WHERE removed_at < CAST(strftime('%s', 'now') AS INTEGER) - 604800")
            return removed
        }
    }
}

/// What `photofs status` counts: photos shown (and how many of them private), albums shown, photos hidden.
public struct LibraryCounts: Equatable, Sendable {
    public var photos: Int
    public var privatePhotos: Int
    public var unavailablePhotos: Int
    public var albums: Int
}

extension Catalog {
    public func counts() throws -> LibraryCounts {
        let albumCount = try albums().count
        return try read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT count(*), total((visibility & 1) = 0) FROM photo WHERE \(CatalogLimits.usablePhotoSQL(""))
                """) else { return LibraryCounts(photos: 0, privatePhotos: 0, unavailablePhotos: 0, albums: albumCount) }
            let reader = ColumnReader(row, table: "photo")
            let all = try Int.fetchOne(db, sql: "SELECT count(*) FROM photo") ?? 0
            let shown = Int(clamping: reader.lenientInteger(0) ?? 0)
            let privateCount = Int(min(max(reader.lenientReal(1) ?? 0, 0), Double(Int32.max)))
            return LibraryCounts(photos: shown, privatePhotos: privateCount, unavailablePhotos: max(0, all - shown),
                                 albums: albumCount)
        }
    }
}
