// Albums (Flickr photosets): their rows, their ordered members, and the queries /albums is listed from.
import Foundation
import GRDB

/// An album as /albums shows it: only albums with at least one usable photo are listed.
public struct AlbumRecord: Equatable, Sendable {
    public var id: Int64
    /// The source's id of the album (a Flickr photoset id): the stable key.
    public var sourceID: String
    public var title: String
    public var description: String
    public var updatedAt: Int64?
    public var photoCount: Int
    /// The album's mtime: its newest photo's moment.
    public var newestMomentAt: Int64
    /// false when every photo in it is private (the directory is then 0500).
    public var hasPublicPhotos: Bool
    public init(id: Int64, sourceID: String, title: String, description: String, updatedAt: Int64?, photoCount: Int,
                newestMomentAt: Int64, hasPublicPhotos: Bool) {
        self.id = id; self.sourceID = sourceID; self.title = title; self.description = description
        self.updatedAt = updatedAt; self.photoCount = photoCount; self.newestMomentAt = newestMomentAt
        self.hasPublicPhotos = hasPublicPhotos
    }
}

/// One album as an import hands it over. `memberIDs` nil keeps the stored members (the album did not change
/// since they were listed); otherwise they replace them, in this order. Ids the catalog does not hold are
/// left out.
public struct AlbumImport: Equatable, Sendable {
    public var sourceID: String
    /// The account the album belongs to (its owner id), when the source says.
    public var owner: String?
    public var title: String
    public var description: String
    public var updatedAt: Int64?
    public var memberIDs: [String]?
    public init(sourceID: String, owner: String? = nil, title: String, description: String, updatedAt: Int64?,
                memberIDs: [String]?) {
        self.sourceID = sourceID; self.owner = owner; self.title = title; self.description = description
        self.updatedAt = updatedAt; self.memberIDs = memberIDs
    }
}

public struct AlbumSummary: Equatable, Sendable {
    public var added = 0
    public var updated = 0
    public var removed = 0
    public init() {}
}

extension Catalog {
    /// Albums with at least one usable photo, by id.
    public func albums() throws -> [AlbumRecord] {
        try albums(where: "1", arguments: [])
    }

    public func album(id: Int64) throws -> AlbumRecord? {
        try albums(where: "a.id = ?", arguments: [id]).first
    }

    private func albums(where condition: String, arguments: StatementArguments) throws -> [AlbumRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT a.id, a.source_id, a.title, a.description, a.updated_at, count(*) AS n, max(p.moment_at),
                       max(\(CatalogLimits.isPublicSQL("p")))
                FROM album a JOIN album_photo m ON m.album_id = a.id JOIN photo p ON p.seq = m.photo_seq
                WHERE \(condition) AND \(CatalogLimits.usablePhotoSQL("p"))
                GROUP BY a.id ORDER BY a.id
                """, arguments: arguments)) { row in
                var reader = ColumnReader(row, table: "album")
                reader.key = "id \(ColumnReader.keyText(reader.value(0)))"
                let id = try reader.integer(0, "id", in: CatalogLimits.directoryIDRange)
                return AlbumRecord(id: id, sourceID: try reader.text(1, "source_id"), title: reader.displayText(2),
                                   description: reader.lenientText(3) ?? "", updatedAt: reader.lenientInteger(4),
                                   photoCount: Int(try reader.integer(5, "count", in: CatalogLimits.countRange)),
                                   newestMomentAt: reader.lenientInteger(6) ?? 0,
                                   hasPublicPhotos: (reader.lenientInteger(7) ?? 0) != 0)
            }
        }
    }

    /// Listing rows (`PhotoRecord.listingColumns`) of an album's usable photos, in the album's order.
    public func photos(inAlbum albumID: Int64) throws -> [PhotoRecord] {
        let columns = PhotoRecord.listingColumns(of: "p")
        return try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT \(columns) FROM album_photo m JOIN photo p ON p.seq = m.photo_seq
                WHERE m.album_id = ? AND p.available ORDER BY m.position, p.seq
                """, arguments: [albumID]), PhotoRecord.decode(listingRow:))
        }
    }

    /// Every stored album's source id and last update (an import lists members again only where it moved).
    public func albumUpdateTimes() throws -> [String: Int64?] {
        try read { db in
            var times: [String: Int64?] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT source_id, updated_at FROM album") {
                let reader = ColumnReader(row, table: "album")
                if let id = reader.lenientText(0) { times[id] = reader.lenientInteger(1) }
            }
            return times
        }
    }

    /// Writes albums in one transaction; with `keepingOnly`, albums (of `owner`, when given) whose source id is
    /// not in it are removed (deleted at the origin). Photos' album counts and the change counter follow when anything changed.
    @discardableResult
    public func applyAlbums(_ albums: [AlbumImport], keepingOnly: Set<String>?, owner: String? = nil) throws -> AlbumSummary {
        try write { db in
            var summary = AlbumSummary()
            let before = db.totalChangesCount
            for album in albums {
                let existed = try Catalog.integer(db, sql: "SELECT id FROM album WHERE source_id = ?",
                                                  arguments: [album.sourceID]) != nil
                let beforeAlbum = db.totalChangesCount
                // Members the library holds, in the album's order. One it does not hold yet (uploaded after the
                // listing passed, or skipped) is left out, and the album keeps no update time, so the next
                // import lists it again; decided before writing, so a repeat of the same answer changes nothing.
                var held: [(id: String, seq: Int64)]?
                if let members = album.memberIDs {
                    var seen = Set<String>()
                    held = try members.filter { seen.insert($0).inserted }.compactMap { id in
                        try Catalog.integer(db, sql: "SELECT seq FROM photo WHERE id = ?", arguments: [id]).map { (id, $0) }
                    }
                }
                let complete = held.map { $0.count == Set(album.memberIDs ?? []).count } ?? true
                try db.execute(sql: """
                    INSERT INTO album(source_id, owner, title, description, updated_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(source_id) DO UPDATE SET owner = excluded.owner, title = excluded.title,
                        description = excluded.description, updated_at = excluded.updated_at
                    WHERE (owner, title, description, updated_at)
                          IS NOT (excluded.owner, excluded.title, excluded.description, excluded.updated_at)
                    """, arguments: [album.sourceID, album.owner, album.title, album.description,
                                     complete ? album.updatedAt : nil])
                guard let albumID = try Catalog.integer(db, sql: "SELECT id FROM album WHERE source_id = ?",
                                                        arguments: [album.sourceID]) else { continue }
                if let held {
                    let stored = try Row.fetchAll(db, sql: """
                        SELECT p.id FROM album_photo m JOIN photo p ON p.seq = m.photo_seq WHERE m.album_id = ?
                        ORDER BY m.position, p.seq
                        """, arguments: [albumID]).compactMap { ColumnReader($0, table: "album_photo").lenientText(0) }
                    if stored != held.map(\.id) {
                        try db.execute(sql: "DELETE FROM album_photo WHERE album_id = ?", arguments: [albumID])
                        for (position, member) in held.enumerated() {
                            try db.execute(sql: "INSERT OR IGNORE INTO album_photo(album_id, photo_seq, position) VALUES (?, ?, ?)",
                                           arguments: [albumID, member.seq, position])
                        }
                    }
                }
                if !existed { summary.added += 1 } else if db.totalChangesCount != beforeAlbum { summary.updated += 1 }
            }
            if let keep = keepingOnly {
                // Only the albums of the owner whose list this is: a library following two accounts keeps the
                // other's.
                for row in try Row.fetchAll(db, sql: "SELECT id, source_id, owner FROM album") {
                    let reader = ColumnReader(row, table: "album")
                    guard let id = reader.lenientInteger(0), !keep.contains(reader.lenientText(1) ?? "") else { continue }
                    if let owner, reader.lenientText(2) != owner { continue }
                    try db.execute(sql: "DELETE FROM album WHERE id = ?", arguments: [id])
                    summary.removed += 1
                }
            }
            if db.totalChangesCount != before {
                try db.execute(sql: """
                    UPDATE photo SET album_count = (SELECT count(*) FROM album_photo WHERE photo_seq = photo.seq)
                    WHERE album_count IS NOT (SELECT count(*) FROM album_photo WHERE photo_seq = photo.seq)
                    """)
                try Catalog.bumpGeneration(db)
            }
            return summary
        }
    }
}
