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
    public init(id: String, name: String, photoCount: Int) { self.id = id; self.name = name; self.photoCount = photoCount }
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
                SELECT r.id, r.name, count(*) FROM person r JOIN person_photo m ON m.person_id = r.id
                JOIN photo p ON p.id = m.photo_id
                WHERE \(CatalogLimits.usablePhotoSQL("p")) GROUP BY r.id ORDER BY r.name, r.id
                """).compactMap { row in
                let reader = ColumnReader(row, table: "person")
                guard let id = reader.lenientText(0) else { return nil }
                return PersonRecord(id: id, name: reader.lenientText(1) ?? "", photoCount: Int(reader.lenientInteger(2) ?? 0))
            }
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
