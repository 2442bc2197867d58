// Photos leaving the library: an account's ids (to find deletions), their removal, and the log of removed and
// replaced photos that mounts read to free cached bytes.
import Foundation
import GRDB

extension Catalog {
    /// Ids of every photo whose photographer is this owner (an account's photos, for finding deletions);
    /// with `publicOnly`, only those public at the origin.
    public func photoIDs(owner: String, publicOnly: Bool = false) throws -> Set<String> {
        try read { db in
            Set(try DatabaseValue.fetchAll(db, sql: """
                SELECT p.id FROM photo p JOIN photographer g ON g.id = p.photographer_id WHERE g.owner = ?
                \(publicOnly ? "AND \(CatalogLimits.isPublicSQL("p"))" : "")
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
