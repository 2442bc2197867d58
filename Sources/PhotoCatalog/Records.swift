// The catalog's row types: what one photo, photographer, region and place look like to the rest of photofs.
import Foundation
import GRDB

/// One photo as the catalog stores it. `seq` is assigned once, on first import, and never reused
/// (AUTOINCREMENT): it orders name de-duplication and numbers the photo's inode, so both stay stable.
public struct PhotoRecord: Equatable, Sendable {
    public var seq: Int64
    public var id: String
    public var title: String
    public var description: String
    public var photographerID: Int64
    public var regionID: Int64
    public var placeID: String?
    /// Flickr's `datetaken` text as given ("2019-05-04 12:33:10"), local time of the camera, no zone.
    public var dateTaken: String?
    /// Seconds since 1970 of the date taken read as UTC, else the upload date: the file's mtime and moment.
    public var momentAt: Int64
    public var momentYear: Int
    public var uploadedAt: Int64?
    public var originalURL: String
    public var thumbnailURL: String?
    /// Exact size of the original in bytes, from a HEAD request at import; nil until known.
    public var byteSize: Int64?
    public var contentType: String?
    public var etag: String?
    public var lastModified: String?
    public var latitude: Double?
    public var longitude: Double?
    /// Who may see the photo at the origin: a photo that is not public is shown 0400.
    public var visibility: PhotoVisibility
    public var tags: [String]
    public var views: Int64?
    /// When the origin last changed the photo (Flickr's `lastupdate`).
    public var lastUpdate: Int64?
    /// How many albums hold the photo (each is one more name, so one more link).
    public var albumCount: Int
    /// Its names in /favorites (0 or 1) and /people (one per named person in it): more links, as albums are.
    public var markCount: Int

    public init(seq: Int64 = 0, id: String, title: String, description: String = "", photographerID: Int64 = 0,
                regionID: Int64 = 0, placeID: String? = nil, dateTaken: String? = nil, momentAt: Int64 = 0,
                momentYear: Int = 1970, uploadedAt: Int64? = nil, originalURL: String, thumbnailURL: String? = nil,
                byteSize: Int64? = nil, contentType: String? = nil, etag: String? = nil, lastModified: String? = nil,
                latitude: Double? = nil, longitude: Double? = nil, visibility: PhotoVisibility = .everyone,
                tags: [String] = [], views: Int64? = nil, lastUpdate: Int64? = nil, albumCount: Int = 0,
                markCount: Int = 0) {
        self.seq = seq; self.id = id; self.title = title; self.description = description
        self.photographerID = photographerID; self.regionID = regionID; self.placeID = placeID
        self.dateTaken = dateTaken; self.momentAt = momentAt; self.momentYear = momentYear
        self.uploadedAt = uploadedAt; self.originalURL = originalURL; self.thumbnailURL = thumbnailURL
        self.byteSize = byteSize; self.contentType = contentType; self.etag = etag
        self.lastModified = lastModified; self.latitude = latitude; self.longitude = longitude
        self.visibility = visibility; self.tags = tags; self.views = views; self.lastUpdate = lastUpdate
        self.albumCount = albumCount
        self.markCount = markCount
    }

    /// The calendar year (UTC, like the stored moment) a moment falls in: the photo's /moments directory.
    /// Moments outside years 1–9999 (`CatalogLimits.momentRange`) are clamped to it first: no name can show
    /// such a year.
    /// The catalog leaves a photo whose `moment_at` is out of range out of every listing.
    public static func year(ofMoment seconds: Int64) -> Int {
        let clamped = min(max(seconds, CatalogLimits.momentRange.lowerBound), CatalogLimits.momentRange.upperBound)
        // By arithmetic (`CivilDate`), as gmtime counts it, without gmtime_r's time-zone lock on every row
        // checked (a mount's scan checks 100,000, beside listings built on other threads). Measured at mount:
        // the scan 182–197 ms against 181–215 ms with gmtime_r (three pairs, within noise); kept for the lock.
        return CivilDate.of(days: CivilDate.day(ofSecond: clamped)).year
    }

    /// A photo is shown in the tree only when its exact size and an accepted content type are known.
    public var isAvailable: Bool { byteSize != nil && contentType != nil }

    static let columnNames = [
        "seq", "id", "title", "description", "photographer_id", "region_id", "place_id", "date_taken", "moment_at",
        "moment_year", "uploaded_at", "original_url", "thumbnail_url", "byte_size", "content_type", "etag",
        "last_modified", "latitude", "longitude", "visibility", "tags", "views", "last_update", "album_count",
        "mark_count",
    ]
    static let columns = columnNames.joined(separator: ", ")
    /// The columns qualified by a table alias, for joins.
    static func columns(of alias: String) -> String { columnNames.map { "\(alias).\($0)" }.joined(separator: ", ") }

    /// What a directory listing needs (names, sizes, times): a third of the columns, and none of the long
    /// texts (description, URLs), which halves the cost of decoding a 17,500-photo year.
    static let listingColumns = "seq, id, title, photographer_id, region_id, moment_at, moment_year, byte_size, content_type, visibility, album_count, mark_count"

    /// How many columns `listingColumns` selects: the index of a column selected after them.
    static var listingColumnCount: Int { listingColumns.split(separator: ",").count }

    /// `listingColumns` qualified by a table alias, for joins.
    static func listingColumns(of alias: String) -> String {
        listingColumns.split(separator: ",").map { "\(alias)." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    /// Decodes a row selected with `listingColumns`; throws `BadRow` for a row the tree must not see.
    static func decode(listingRow row: Row) throws -> PhotoRecord {
        var reader = ColumnReader(row, table: "photo")
        return try decode(listing: &reader)
    }

    /// `decode(listingRow:)` from a reader already made (one of the statement itself).
    static func decode(listing reader: inout ColumnReader) throws -> PhotoRecord {
        PhotoRecord(listing: try listingFields(&reader))
    }

    /// The record of a listing row: its listing columns only (description and URLs empty).
    init(listing fields: ListingFields) {
        self.init(seq: fields.seq, id: fields.id, title: fields.title, photographerID: fields.photographerID,
                  regionID: fields.regionID, momentAt: fields.momentAt, momentYear: fields.momentYear, originalURL: "",
                  byteSize: fields.byteSize, contentType: fields.contentType, visibility: fields.visibility,
                  albumCount: fields.albumCount, markCount: fields.markCount)
    }

    /// A row selected with `listingColumns`, checked, as plain fields: the mount's scan keeps these
    /// (`ScannedPhoto`) without making a whole record of each row first.
    struct ListingFields: Sendable {
        var seq: Int64, id: String, title: String, photographerID: Int64, regionID: Int64, momentAt: Int64
        var momentYear: Int, byteSize: Int64?, contentType: String?, visibility: PhotoVisibility
        var albumCount: Int, markCount: Int
    }

    /// The checks of `decode(listing:)`; throws `BadRow` for a row the tree must not see.
    static func listingFields(_ reader: inout ColumnReader) throws -> ListingFields {
        let (seq, id) = try identity(&reader)
        let title = reader.displayText(2)
        let photographerID = try reader.integer(3, "photographer_id", in: CatalogLimits.directoryIDRange)
        let regionID = try reader.integer(4, "region_id", in: CatalogLimits.directoryIDRange)
        let (momentAt, momentYear) = try moment(reader, at: 5, year: 6)
        return ListingFields(seq: seq, id: id, title: title, photographerID: photographerID, regionID: regionID,
                             momentAt: momentAt, momentYear: momentYear,
                             byteSize: try reader.nullableInteger(7, "byte_size", in: 1 ... CatalogLimits.maxByteSize),
                             contentType: try reader.nullableText(8, "content_type"), visibility: visibility(reader, at: 9),
                             albumCount: albumCount(reader, at: 10), markCount: albumCount(reader, at: 11))
    }

    /// Who may see the photo; a value that is not an integer reads as private (0400): a damaged row must
    /// not make a private photo readable by everyone.
    private static func visibility(_ reader: ColumnReader, at index: Int) -> PhotoVisibility {
        PhotoVisibility(rawValue: Int(truncatingIfNeeded: reader.lenientInteger(index) ?? 0))
    }

    /// 0 ... `CatalogLimits.maxAlbumsPerPhoto`: it only adds to a link count (album_count and mark_count).
    private static func albumCount(_ reader: ColumnReader, at index: Int) -> Int {
        Int(min(max(reader.lenientInteger(index) ?? 0, 0), CatalogLimits.maxAlbumsPerPhoto))
    }

    /// Decodes a row selected with `columns`, by position (by name cost 14% of a 17,000-photo listing: GRDB
    /// lower-cases and compares every name for every row). Throws `BadRow` for a row the tree must not see;
    /// optional metadata of the wrong type (a text `latitude`) reads as absent instead.
    static func decode(row: Row) throws -> PhotoRecord {
        var reader = ColumnReader(row, table: "photo")
        let (seq, id) = try identity(&reader)
        var photo = PhotoRecord(seq: seq, id: id, title: reader.displayText(2), description: reader.displayText(3),
                                originalURL: "")
        photo.photographerID = try reader.integer(4, "photographer_id", in: CatalogLimits.directoryIDRange)
        photo.regionID = try reader.integer(5, "region_id", in: CatalogLimits.directoryIDRange)
        photo.placeID = reader.lenientText(6)
        photo.dateTaken = reader.lenientText(7)
        (photo.momentAt, photo.momentYear) = try moment(reader, at: 8, year: 9)
        photo.uploadedAt = reader.lenientInteger(10)
        photo.originalURL = try reader.text(11, "original_url")
        photo.thumbnailURL = reader.lenientText(12)
        photo.byteSize = try reader.nullableInteger(13, "byte_size", in: 1 ... CatalogLimits.maxByteSize)
        photo.contentType = try reader.nullableText(14, "content_type")
        photo.etag = reader.lenientText(15)
        photo.lastModified = reader.lenientText(16)
        photo.latitude = reader.lenientReal(17)
        photo.longitude = reader.lenientReal(18)
        photo.visibility = visibility(reader, at: 19)
        photo.tags = (reader.lenientText(20) ?? "").split(separator: " ").map(String.init)
        photo.views = reader.lenientInteger(21).map { max(0, $0) }
        photo.lastUpdate = reader.lenientInteger(22)
        photo.albumCount = albumCount(reader, at: 23)
        photo.markCount = albumCount(reader, at: 24)
        return photo
    }

    /// seq (column 0) and id (column 1), naming the row in any later complaint.
    private static func identity(_ reader: inout ColumnReader) throws -> (Int64, String) {
        let seq = try reader.integer(0, "seq", in: CatalogLimits.seqRange)
        reader.photoSeq = seq
        let id = try reader.text(1, "id")
        reader.photoID = id
        return (seq, id)
    }

    /// moment_at inside years 1–9999 and moment_year its UTC year.
    private static func moment(_ reader: ColumnReader, at momentIndex: Int, year yearIndex: Int) throws -> (Int64, Int) {
        let momentAt = try reader.integer(momentIndex, "moment_at", in: CatalogLimits.momentRange)
        let year = try reader.integer(yearIndex, "moment_year", in: Int64(CatalogLimits.yearRange.lowerBound) ... Int64(CatalogLimits.yearRange.upperBound))
        let expected = PhotoRecord.year(ofMoment: momentAt)
        guard year == Int64(expected) else { throw reader.bad("moment_year is \(year), but moment_at \(momentAt) falls in \(expected)") }
        return (momentAt, expected)
    }
}

/// Who may see a photo at its origin (Flickr's ispublic, isfriend, isfamily). Stored as these bits; no bit
/// set is private. Only "public or not" decides the mode today; the rest is kept for what it means.
public struct PhotoVisibility: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue & 7 }
    public static let everyone = PhotoVisibility(rawValue: 1)
    public static let friends = PhotoVisibility(rawValue: 2)
    public static let family = PhotoVisibility(rawValue: 4)
    public static let privateOnly: PhotoVisibility = []
    public var isPublic: Bool { contains(.everyone) }
}

public struct PhotographerRecord: Equatable, Sendable {
    public var id: Int64
    /// Flickr's owner id (NSID): the stable key.
    public var owner: String
    /// What the tree shows: `ownername`, else the owner id.
    public var name: String
    /// Newest moment of this photographer's photos in the region asked for (directory mtime).
    public var newestMomentAt: Int64
    /// false when all those photos are private (the directory is then 0500).
    public var hasPublicPhotos: Bool
    public init(id: Int64, owner: String, name: String, newestMomentAt: Int64, hasPublicPhotos: Bool = true) {
        self.id = id; self.owner = owner; self.name = name; self.newestMomentAt = newestMomentAt
        self.hasPublicPhotos = hasPublicPhotos
    }
}

public struct RegionRecord: Equatable, Sendable {
    public var id: Int64
    public var name: String
    public var photoCount: Int
    public var photographerCount: Int
    public var newestMomentAt: Int64
    public var hasPublicPhotos: Bool
    public init(id: Int64, name: String, photoCount: Int, photographerCount: Int, newestMomentAt: Int64,
                hasPublicPhotos: Bool = true) {
        self.id = id; self.name = name; self.photoCount = photoCount
        self.photographerCount = photographerCount; self.newestMomentAt = newestMomentAt
        self.hasPublicPhotos = hasPublicPhotos
    }
}

public struct YearRecord: Equatable, Sendable {
    public var year: Int
    public var photoCount: Int
    public var newestMomentAt: Int64
    public var hasPublicPhotos: Bool
    public init(year: Int, photoCount: Int, newestMomentAt: Int64, hasPublicPhotos: Bool = true) {
        self.year = year; self.photoCount = photoCount; self.newestMomentAt = newestMomentAt
        self.hasPublicPhotos = hasPublicPhotos
    }
}

/// A place id and the region it resolved to (cs193p TopRegions: several places may share one region).
public struct PlaceResolution: Equatable, Sendable {
    public var placeID: String
    public var placeName: String?
    public var regionName: String
    public init(placeID: String, placeName: String?, regionName: String) {
        self.placeID = placeID; self.placeName = placeName; self.regionName = regionName
    }
}

/// What an import hands the catalog for one photo; the catalog assigns seq and resolves ids.
public struct ImportedPhoto: Equatable, Sendable {
    public var photo: PhotoRecord
    public var owner: String
    public var ownerName: String
    /// Every size Flickr offers for the photo (its `url_*` extras with width and height).
    public var renditions: [Rendition]
    /// The camera ("Canon EOS 80D"), nil when the source does not say (searchable, `photo.camera`).
    public var camera: String?
    public init(photo: PhotoRecord, owner: String, ownerName: String, renditions: [Rendition] = [], camera: String? = nil) {
        self.photo = photo; self.owner = owner; self.ownerName = ownerName; self.renditions = renditions
        self.camera = camera
    }
}

/// One size of a photo the origin serves: Flickr's `url_<label>` with `width_<label>` × `height_<label>`.
public struct Rendition: Equatable, Hashable, Sendable {
    /// Flickr's size suffix: "sq" (75×75 crop), "q" (150×150 crop), "t", "s", "n", "w", "m", "z", "c", "l",
    /// "h", "k", "3k", "4k", "5k", "6k", "o".
    public var label: String
    public var url: String
    public var width: Int
    public var height: Int
    public init(label: String, url: String, width: Int, height: Int) {
        self.label = label; self.url = url; self.width = width; self.height = height
    }
    /// Flickr's square renditions are centre crops, fit only for square variants.
    public var isSquareCrop: Bool { label == "sq" || label == "q" }
}

/// A rendered variant of one photo at one `--size` (the catalog keeps its size so listings need no render).
public struct VariantRecord: Equatable, Sendable {
    public var seq: Int64
    /// "fit:1024" or "square:256".
    public var spec: String
    /// The rendition (or original) the pixels came from: a re-render after eviction uses the same one.
    public var sourceURL: String
    public var byteSize: Int64
    public var width: Int
    public var height: Int
    public var contentType: String
    /// The source's bytes are served as they are (a photo already small enough).
    public var unchanged: Bool
    public init(seq: Int64, spec: String, sourceURL: String, byteSize: Int64, width: Int, height: Int,
                contentType: String, unchanged: Bool) {
        self.seq = seq; self.spec = spec; self.sourceURL = sourceURL; self.byteSize = byteSize
        self.width = width; self.height = height; self.contentType = contentType; self.unchanged = unchanged
    }
}

/// Counts of what one import changed.
public struct ImportSummary: Equatable, Sendable {
    public var added = 0
    public var updated = 0
    public var unchanged = 0
    public var regions = 0
    public init() {}
}

/// The image formats photofs serves, and the file extension each gets (MVCNetworking accepts JPEG and PNG;
/// GIF and WebP are what Flickr's `originalformat` can also be).
public enum ImageContentType {
    public static let extensions: [String: String] = [
        "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp",
        // HEIC/HEIF from folder imports, served as they are (no Flickr rendition is HEIC).
        "image/heic": "heic",
    ]

    /// The media type without parameters, lower-cased, aliases folded: "image/PJPEG; x=y" → "image/jpeg".
    public static func normalized(_ contentType: String) -> String {
        let base = contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        } ?? ""
        return base == "image/pjpeg" ? "image/jpeg" : base
    }

    public static func isAccepted(_ contentType: String) -> Bool { extensions[normalized(contentType)] != nil }

    /// The catalog stores normalized types, so the direct lookup almost always answers.
    public static func fileExtension(for contentType: String) -> String? {
        extensions[contentType] ?? extensions[normalized(contentType)]
    }
}

extension PhotoRecord {
    /// Extension of this photo's file name, from its content type ("bin" only for a type never accepted).
    public var fileExtension: String { contentType.flatMap(ImageContentType.fileExtension(for:)) ?? "bin" }
}
