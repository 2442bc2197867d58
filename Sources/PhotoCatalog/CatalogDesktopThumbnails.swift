// What desktop thumbnails need from the library: each photo's small thumbnail source (kept so a remount, or
// a mount at another path, writes thumbnails without the network) and the file URIs thumbnails were written for.
import Foundation
import GRDB

extension Catalog {
    /// The `thumbnail` table's key for a photo's desktop thumbnail source: its pixels fitted inside 256 px
    /// (the freedesktop "large" size), re-encoded. The table's triggers drop it when the original changes.
    public static let desktopThumbnailSourceSpec = "desktop:256"

    /// A photo's desktop thumbnail source, if one was kept.
    public func desktopThumbnailSource(seq: Int64) throws -> Data? {
        try thumbnail(seq: seq, spec: Catalog.desktopThumbnailSourceSpec)
    }

    /// Keeps desktop thumbnail sources, each only if its photo still has the original it was made for
    /// (`from`): an import may have replaced it meanwhile. Does not move the change counters (derived data).
    public func saveDesktopThumbnailSources(_ sources: [(data: Data, from: PhotoRecord)]) throws {
        guard !sources.isEmpty else { return }
        try write { db in
            for (data, photo) in sources {
                guard try Bool.fetchOne(db, sql: """
                    SELECT 1 FROM photo WHERE seq = ? AND original_url = ? AND byte_size IS ? AND content_type IS ?
                                          AND etag IS ?
                    """, arguments: [photo.seq, photo.originalURL, photo.byteSize, photo.contentType, photo.etag]) == true
                else { continue }
                try db.execute(sql: "INSERT OR REPLACE INTO thumbnail(photo_seq, spec, data) VALUES (?, ?, ?)",
                               arguments: [photo.seq, Catalog.desktopThumbnailSourceSpec, data])
            }
        }
    }

    /// Remembers the file URIs thumbnails were written for, with their photo and when.
    public func recordDesktopThumbnails(_ entries: [(uri: String, photoID: String)]) throws {
        guard !entries.isEmpty else { return }
        try write { db in
            for (uri, photoID) in entries {
                try db.execute(sql: """
                    INSERT OR REPLACE INTO desktop_thumbnail(uri, photo_id, written_at)
                    VALUES (?, ?, CAST(strftime('%s', 'now') AS INTEGER))
                    """, arguments: [uri, photoID])
            }
        }
    }

    /// URIs whose thumbnails show what the library no longer has: those of photos removed or replaced after
    /// removal-log position `after`, written before that (a replaced photo's thumbnails written since show
    /// the new version and stay; written in the same second, they go, and come back at the next listing),
    /// and those of photos no longer in the library at all (the log keeps a week; the record keeps more).
    public func outdatedDesktopThumbnailURIs(removedAfter position: Int64) throws -> [String] {
        try read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT d.uri FROM desktop_thumbnail d JOIN removed_photo r ON r.photo_id = d.photo_id
                WHERE r.seq > ? AND d.written_at <= r.removed_at
                UNION
                SELECT uri FROM desktop_thumbnail WHERE photo_id NOT IN (SELECT id FROM photo)
                """, arguments: [position])
            return rows.compactMap { ColumnReader($0, table: "desktop_thumbnail").lenientText(0) }
        }
    }

    /// Forgets URIs whose thumbnails were removed.
    public func forgetDesktopThumbnails(uris: [String]) throws {
        guard !uris.isEmpty else { return }
        try write { db in
            for uri in uris { try db.execute(sql: "DELETE FROM desktop_thumbnail WHERE uri = ?", arguments: [uri]) }
        }
    }
}
