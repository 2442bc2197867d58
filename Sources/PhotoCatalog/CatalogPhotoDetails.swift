// What a photo's or a directory's extended attributes show, read in one go: the descriptive columns the
// listings leave out (description, coordinates, tags, owner, place, albums) and the library's source kind.
import Foundation
import GRDB

/// Everything the catalog knows about one photo that is not needed to list it: what `getfattr -d` shows.
/// Every field is read leniently — a value of the wrong type in a foreign or damaged library reads as
/// unknown (nil, empty) instead of hiding the photo or trapping; the listing rules (`CatalogLimits`) decide
/// separately whether the photo is in the tree at all.
public struct PhotoDetails: Equatable, Sendable {
    public var seq: Int64
    /// The origin's photo id; nil when the row's id is not text.
    public var id: String?
    public var title: String
    public var description: String
    /// The origin's date taken as stored ("2019-05-04 12:33:10": the camera's local time, no zone); nil
    /// when unknown (the file's mtime then falls back to the upload date, which is not a date taken).
    public var dateTaken: String?
    public var latitude: Double?
    public var longitude: Double?
    public var tags: [String]
    /// The photographer's owner id at the origin (a Flickr NSID, "12345678@N01").
    public var ownerID: String?
    /// The photographer as the tree names them: the origin's display name, else the owner id.
    public var photographerName: String?
    /// The region the photo's place resolved to; nil for photos without a resolvable place (the tree files
    /// them under "Unknown Region", which is no region the origin named).
    public var regionName: String?
    /// The place's own name ("San Francisco" in region "California"), when the origin gave one.
    public var placeName: String?
    /// Titles of the albums holding the photo, in the catalog's album order (the order /albums numbers them).
    public var albumTitles: [String]
    /// Names of the named people in the photo (Immich), by name; and whether it is a favourite.
    public var personNames: [String] = []
    public var isFavorite = false
    /// The kinds of source this library was imported from (`sync_state.source_kind`, "flickr"), sorted and
    /// distinct; empty for a library that records none (imports before accounts, test fixtures). Photos do
    /// not record their source, so a library of one kind is the only case where a photo's origin is known.
    public var sourceKinds: [String]
    /// The photo's original URL: for a folder import's photo, its file's `file://` URI, which is its origin.
    public var originalURL: String?

    public init(seq: Int64, id: String?, title: String = "", description: String = "", dateTaken: String? = nil,
                latitude: Double? = nil, longitude: Double? = nil, tags: [String] = [], ownerID: String? = nil,
                photographerName: String? = nil, regionName: String? = nil, placeName: String? = nil,
                albumTitles: [String] = [], sourceKinds: [String] = []) {
        self.seq = seq; self.id = id; self.title = title; self.description = description
        self.dateTaken = dateTaken; self.latitude = latitude; self.longitude = longitude; self.tags = tags
        self.ownerID = ownerID; self.photographerName = photographerName; self.regionName = regionName
        self.placeName = placeName; self.albumTitles = albumTitles; self.sourceKinds = sourceKinds
    }
}

/// What a region directory's attributes show.
public struct RegionDetails: Equatable, Sendable {
    public var id: Int64
    public var name: String
    /// Names of the places whose photos the region shows (the places that resolved to it), sorted, distinct,
    /// non-empty.
    public var placeNames: [String]
    public init(id: Int64, name: String, placeNames: [String]) {
        self.id = id; self.name = name; self.placeNames = placeNames
    }
}

extension Catalog {
    /// The descriptive details of photo `seq`, in one read transaction (three small queries); nil when
    /// there is no such row. Does not check that the photo is listed: callers that need that ask `photo(seq:)`.
    public func photoDetails(seq: Int64) throws -> PhotoDetails? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT p.id, p.title, p.description, p.date_taken, p.latitude, p.longitude, p.tags,
                       g.owner, g.name, r.name, pl.name, p.original_url
                FROM photo p
                LEFT JOIN photographer g ON g.id = p.photographer_id
                LEFT JOIN region r ON r.id = p.region_id
                LEFT JOIN place pl ON pl.place_id = p.place_id
                WHERE p.seq = ?
                """, arguments: [seq]) else { return nil }
            let reader = ColumnReader(row, table: "photo")
            var details = PhotoDetails(seq: seq, id: reader.lenientText(0))
            details.title = reader.lenientText(1) ?? ""
            details.description = reader.lenientText(2) ?? ""
            details.dateTaken = reader.lenientText(3)
            details.latitude = reader.lenientReal(4)
            details.longitude = reader.lenientReal(5)
            details.tags = (reader.lenientText(6) ?? "").split(separator: " ").map(String.init)
            details.ownerID = reader.lenientText(7)
            details.photographerName = reader.lenientText(8)
            // A photo without a resolved place is in the fallback region, which names nothing the origin said.
            details.regionName = reader.lenientText(9).flatMap { $0.isEmpty || $0 == Schema.fallbackRegion ? nil : $0 }
            details.placeName = reader.lenientText(10).flatMap { $0.isEmpty ? nil : $0 }
            details.originalURL = reader.lenientText(11)
            details.albumTitles = try Row.fetchAll(db, sql: """
                SELECT a.title FROM album_photo m JOIN album a ON a.id = m.album_id
                WHERE m.photo_seq = ? ORDER BY a.id
                """, arguments: [seq]).compactMap { ColumnReader($0, table: "album").lenientText(0) }
            if let id = details.id {
                details.personNames = try Row.fetchAll(db, sql: """
                    SELECT r.name FROM person_photo m JOIN person r ON r.id = m.person_id WHERE m.photo_id = ?
                    ORDER BY r.name, r.id
                    """, arguments: [id]).compactMap { ColumnReader($0, table: "person").lenientText(0) }
                details.isFavorite = try Catalog.integer(db, sql: "SELECT 1 FROM favorite_photo WHERE photo_id = ?",
                                                         arguments: [id]) != nil
            }
            details.sourceKinds = try Catalog.sourceKinds(db)
            return details
        }
    }

    /// A region's name and the names of its places that hold at least one listed public photo; nil when there
    /// is no such region. Public only: a region with any public photo is 0555, so with `allow_other` every
    /// user may read this, and the places of private, friends' or family photos are theirs to see alone.
    public func regionDetails(id: Int64) throws -> RegionDetails? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT name FROM region WHERE id = ?", arguments: [id]) else {
                return nil
            }
            let name = ColumnReader(row, table: "region").lenientText(0) ?? ""
            // One pass over the region's photos (its index) with a key lookup of each one's place: there is no
            // index on place_id, so asking per place would scan the region once for every place.
            let places = try Row.fetchAll(db, sql: """
                SELECT DISTINCT pl.name FROM photo p JOIN place pl ON pl.place_id = p.place_id
                WHERE p.region_id = ? AND \(CatalogLimits.usablePhotoSQL("p")) AND \(CatalogLimits.isPublicSQL("p"))
                ORDER BY pl.name
                """, arguments: [id]).compactMap { ColumnReader($0, table: "place").lenientText(0) }
            return RegionDetails(id: id, name: name, placeNames: places.filter { !$0.isEmpty })
        }
    }

    /// An album's description ("" when it has none or it is not text); nil when there is no such album.
    public func albumDescription(id: Int64) throws -> String? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT description FROM album WHERE id = ?", arguments: [id]) else {
                return nil
            }
            return ColumnReader(row, table: "album").lenientText(0) ?? ""
        }
    }

    /// Distinct source kinds recorded by imports, sorted; text values only.
    static func sourceKinds(_ db: Database) throws -> [String] {
        Set(try DatabaseValue.fetchAll(db, sql: "SELECT DISTINCT source_kind FROM sync_state").compactMap {
            if case .string(let kind) = $0.storage { return kind } else { return nil }
        }).sorted()
    }
}
