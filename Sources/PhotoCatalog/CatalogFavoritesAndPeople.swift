// Favourites and named people (from Immich): which photos are favourites, who is in which photo.
import Foundation
import GRDB

/// What a source says about one photo beyond its record: a favourite, and the ids of the named people in it.
public struct PhotoMarks: Equatable, Sendable {
    public var isFavorite: Bool
    public var personIDs: [String]
    public init(isFavorite: Bool, personIDs: [String]) { self.isFavorite = isFavorite; self.personIDs = personIDs }
}

public struct PersonRecord: Equatable, Sendable {
    public var id: String
    public var name: String
    public var photoCount: Int
    /// The directory's mtime: the person's newest photo's moment.
    public var newestMomentAt: Int64
    /// false when every photo of the person is private (the directory is then 0500).
    public var hasPublicPhotos: Bool
    public init(id: String, name: String, photoCount: Int, newestMomentAt: Int64 = 0, hasPublicPhotos: Bool = false) {
        self.id = id; self.name = name; self.photoCount = photoCount; self.newestMomentAt = newestMomentAt
        self.hasPublicPhotos = hasPublicPhotos
    }

    /// The number /people/<Name> is known by (its inode's payload): FNV-1a of the source's id, cut to 56 bits.
    /// The person table keys people by the source's text id and has no row number to give; a hash needs no
    /// column and is the same in every mount. Two of a library's few hundred people share one with odds of
    /// about 1 in 10^12; the tree then lists the first only.
    public var key: Int64 { PersonRecord.key(of: id) }

    public static func key(of id: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash & ((1 << 56) - 1))
    }
}

extension Catalog {
    /// Replaces the marks of the photos in `marks` (photos not in it keep theirs: a changes listing names only
    /// the photos that changed); with `people`, the named people are exactly those (renamed, added, removed).
    /// Rows of photos no longer in the library go. One transaction; the change counter moves when anything changed.
    @discardableResult
    public func applyMarks(_ marks: [String: PhotoMarks], people: [String: String]?) throws -> Bool {
        try write { db in
            let before = db.totalChangesCount
            for (photoID, mark) in marks.sorted(by: { $0.key < $1.key }) {
                if mark.isFavorite {
                    try db.execute(sql: "INSERT OR IGNORE INTO favorite_photo(photo_id) VALUES (?)", arguments: [photoID])
                } else {
                    try db.execute(sql: "DELETE FROM favorite_photo WHERE photo_id = ?", arguments: [photoID])
                }
                let stored = Set(try Row.fetchAll(db, sql: "SELECT person_id FROM person_photo WHERE photo_id = ?",
                                                  arguments: [photoID]).compactMap { ColumnReader($0, table: "person_photo").lenientText(0) })
                let wanted = Set(mark.personIDs)
                for gone in stored.subtracting(wanted) {
                    try db.execute(sql: "DELETE FROM person_photo WHERE person_id = ? AND photo_id = ?", arguments: [gone, photoID])
                }
                for added in wanted.subtracting(stored) {
                    try db.execute(sql: "INSERT OR IGNORE INTO person_photo(person_id, photo_id) VALUES (?, ?)", arguments: [added, photoID])
                }
            }
            if let people {
                for (id, name) in people.sorted(by: { $0.key < $1.key }) {
                    try db.execute(sql: """
                        INSERT INTO person(id, name) VALUES (?, ?)
                        ON CONFLICT(id) DO UPDATE SET name = excluded.name WHERE name IS NOT excluded.name
                        """, arguments: [id, name])
                }
                for row in try Row.fetchAll(db, sql: "SELECT id FROM person") {
                    guard let id = ColumnReader(row, table: "person").lenientText(0), people[id] == nil else { continue }
                    try db.execute(sql: "DELETE FROM person WHERE id = ?", arguments: [id])
                }
            }
            try db.execute(sql: "DELETE FROM favorite_photo WHERE photo_id NOT IN (SELECT id FROM photo)")
            try db.execute(sql: "DELETE FROM person_photo WHERE photo_id NOT IN (SELECT id FROM photo)")
            if db.totalChangesCount != before {
                // Link counts follow (a photo re-imported with new bytes keeps its row and so its count).
                try db.execute(sql: "UPDATE photo SET mark_count = \(Schema.markCountSQL) WHERE mark_count IS NOT \(Schema.markCountSQL)")
            }
            let changed = db.totalChangesCount != before
            if changed { try Catalog.bumpGeneration(db) }
            return changed
        }
    }

    /// Ids of the usable photos marked favourite, in moment order.
    public func favoritePhotoIDs() throws -> [String] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT p.id FROM favorite_photo f JOIN photo p ON p.id = f.photo_id
                WHERE \(CatalogLimits.usablePhotoSQL("p")) ORDER BY p.moment_at, p.seq
                """).compactMap { ColumnReader($0, table: "favorite_photo").lenientText(0) }
        }
    }

    /// Named people with at least one usable photo, by name.
    public func people() throws -> [PersonRecord] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT r.id, r.name, count(*), max(p.moment_at), max(\(CatalogLimits.isPublicSQL("p")))
                FROM person r JOIN person_photo m ON m.person_id = r.id
                JOIN photo p ON p.id = m.photo_id
                WHERE \(CatalogLimits.usablePhotoSQL("p")) GROUP BY r.id ORDER BY r.name, r.id
                """).compactMap { row in
                let reader = ColumnReader(row, table: "person")
                guard let id = reader.lenientText(0) else { return nil }
                return PersonRecord(id: id, name: reader.displayText(1), photoCount: Int(reader.lenientInteger(2) ?? 0),
                                    newestMomentAt: reader.lenientInteger(3) ?? 0,
                                    hasPublicPhotos: (reader.lenientInteger(4) ?? 0) != 0)
            }
        }
    }

    /// Listing rows (`PhotoRecord.listingColumns`) of the usable photos marked favourite, in moment order.
    public func favoritePhotos() throws -> [PhotoRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT \(PhotoRecord.listingColumns(of: "p")) FROM favorite_photo f JOIN photo p ON p.id = f.photo_id
                WHERE \(CatalogLimits.usablePhotoSQL("p")) ORDER BY p.moment_at, p.seq
                """), PhotoRecord.decode(listingRow:))
        }
    }

    /// Listing rows of the usable photos a person is in, in moment order.
    public func photos(ofPerson personID: String) throws -> [PhotoRecord] {
        try read { db in
            try decodeAll(Row.fetchCursor(db, sql: """
                SELECT \(PhotoRecord.listingColumns(of: "p")) FROM person_photo m JOIN photo p ON p.id = m.photo_id
                WHERE m.person_id = ? AND \(CatalogLimits.usablePhotoSQL("p")) ORDER BY p.moment_at, p.seq
                """, arguments: [personID]), PhotoRecord.decode(listingRow:))
        }
    }

    /// Ids of the usable photos a person is in, in moment order.
    public func photoIDs(ofPerson personID: String) throws -> [String] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT p.id FROM person_photo m JOIN photo p ON p.id = m.photo_id
                WHERE m.person_id = ? AND \(CatalogLimits.usablePhotoSQL("p")) ORDER BY p.moment_at, p.seq
                """, arguments: [personID]).compactMap { ColumnReader($0, table: "person_photo").lenientText(0) }
        }
    }
}
