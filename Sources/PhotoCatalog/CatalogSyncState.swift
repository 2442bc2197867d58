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
    /// The origin's photo count minus the library's photos of the account, as of the last whole id listing
    /// (records the origin counts that the import leaves out, such as images it cannot use); nil: never
    /// measured, or no longer trusted. An import skips the id listing only when the count gives it again.
    public var countDifference: Int?

    public init(listingKey: String, sourceKind: String, accountID: String? = nil, accountName: String? = nil,
                lastSyncPoint: String? = nil, lastSyncedAt: Int64? = nil, resume: ResumePoint? = nil,
                skippedCount: Int = 0, videoCount: Int = 0, countDifference: Int? = nil) {
        self.listingKey = listingKey; self.sourceKind = sourceKind; self.accountID = accountID
        self.accountName = accountName; self.lastSyncPoint = lastSyncPoint; self.lastSyncedAt = lastSyncedAt
        self.resume = resume; self.skippedCount = skippedCount; self.videoCount = videoCount
        self.countDifference = countDifference
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
                       resume_mode, resume_cursor, resume_sync_point, resume_pages, skipped_count, video_count,
                       count_difference
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
                // Out of any believable range (a hand-edited file): not trusted, the next import lists the ids.
                state.countDifference = reader.lenientInteger(12).flatMap { (-Int64(Int32.max)...Int64(Int32.max)).contains($0) ? Int($0) : nil }
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

    /// Writes several listings' states in one transaction (an unchanged folder re-import notes when each
    /// folder was last looked at, and nothing else).
    public func saveSyncStates(_ states: [SyncState]) throws {
        try write { db in for state in states { try Catalog.writeSyncState(state, db) } }
    }

    /// Forgets listings the library no longer follows (`import folder --forget`).
    public func deleteSyncStates(listingKeys: [String]) throws {
        try write { db in
            for key in listingKeys { try db.execute(sql: "DELETE FROM sync_state WHERE listing_key = ?", arguments: [key]) }
        }
    }

    static func writeSyncState(_ state: SyncState, _ db: Database) throws {
        try db.execute(sql: """
            INSERT OR REPLACE INTO sync_state(listing_key, source_kind, account_id, account_name, last_sync_point,
                last_synced_at, resume_mode, resume_cursor, resume_sync_point, resume_pages, skipped_count, video_count,
                count_difference)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [state.listingKey, state.sourceKind, state.accountID, state.accountName, state.lastSyncPoint,
                             state.lastSyncedAt, state.resume?.mode.rawValue, state.resume?.cursor,
                             state.resume?.syncPoint, state.resume?.pages ?? 0, state.skippedCount, state.videoCount,
                             state.countDifference])
    }
}
