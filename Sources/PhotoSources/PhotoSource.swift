// What a photo source is (Flickr today; a self-hosted server or a local folder later): one protocol.
import Foundation
import PhotoCatalog

/// A library photofs can import from. Everything that depends on where photos come from — its API, how
/// its answers are read and validated, its URL and size rules, its credentials, how its bytes are reached —
/// lives in the type that implements this; `LibraryImporter` drives any source into the catalog.
///
/// Calls may come from several threads at once (`measure` runs `measureConcurrency` at a time).
public protocol PhotoSource: AnyObject, Sendable {
    /// Short lower-case name of the kind of source ("flickr"), used in messages and warnings.
    var kind: String { get }

    /// One page of the full listing; `nil` asks for the first. Records that cannot be used come back in
    /// `skipped`, never as an error: an error means the page itself could not be read (unreachable,
    /// refused, not JSON), and ends the import with the library unchanged.
    func listPage(_ cursor: PageCursor?) throws -> SourcePage

    /// Resolves what the listing follows (Flickr: who `me` or a user name is) before anything is listed or
    /// written; an error here ends the import with the library untouched. `listingKey` and `account` are
    /// read after it.
    func prepare() throws

    /// What this source follows, as a stable text ("flickr user 12345678@N01", "flickr flickr.photos.search
    /// tags=harbour"): an interrupted import resumes, and an incremental one starts, only from state kept
    /// under the same key.
    var listingKey: String { get }

    /// The account whose library this is (Flickr `--user`), nil for a query (getRecent, search). Photos of
    /// this account that a complete id listing no longer has are deleted from the catalog.
    var account: SourceAccount? { get }

    /// A point to ask `changesPage` from at the next import, taken before this import lists anything; nil
    /// when the source cannot list changes (every import is then a full listing).
    func syncPoint() throws -> SyncPoint?

    /// One page of what was added or changed since `point` (same rules as `listPage`).
    func changesPage(since point: SyncPoint, cursor: PageCursor?) throws -> SourcePage

    /// One page of the ids of every photo in the listing, for finding deletions; nil when the source cannot
    /// list ids (deletions are then never detected).
    func idPage(_ cursor: PageCursor?) throws -> SourceIDPage?

    /// How many photos the account has at the origin now, when one cheap request can say (nil: it cannot).
    /// When its difference to the library's own count for the account is the one the last id listing measured,
    /// nothing was deleted that the listing did not report, and the id listing is not needed
    /// (`IDListingDecision`).
    func accountPhotoCount() throws -> Int?

    /// Whether the photo still exists for this listing's viewer, asked one photo at a time before an import
    /// deletes it (nil: the source cannot tell, and the id listing is trusted).
    func stillExists(_ photoID: String) throws -> Bool?

    /// The account's albums (empty for a source without albums).
    func albums() throws -> [SourceAlbum]

    /// One page of an album's photo ids, in the album's order.
    func albumMembersPage(_ albumID: String, cursor: PageCursor?) throws -> SourceIDPage

    /// The region a place id belongs to (cs193p TopRegions), asked once per place the catalog does not know.
    func resolvePlace(_ placeID: String) throws -> PlaceResolution

    /// The exact size and type of the bytes behind one of this source's URLs, without downloading them when
    /// the transport allows (HTTP HEAD). Failures are per photo: the photo is hidden until measured.
    func measure(_ url: String) -> Result<MeasuredContent, MeasureFailure>

    /// How a mount reaches the bytes of this source's URLs.
    var contentAccess: ContentAccess { get }

    /// Whether a rendition with this label is a square crop (usable only for square variants).
    func isSquareCrop(renditionLabel: String) -> Bool

    /// Photos this source itself knows are gone (a folder's deleted files), removed after a complete
    /// listing. Sources that find deletions through `account` and `idPage` return none.
    func removedPhotoIDs() throws -> [String]
}

/// Where the next page starts; opaque to everyone but its source (a page number for Flickr, a token for
/// an API that pages by token).
public struct PageCursor: Hashable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}

public struct SourcePage: Sendable {
    public var photos: [SourcePhoto]
    public var skipped: [SkippedRecord]
    /// nil: this was the last page.
    public var next: PageCursor?
    /// How many pages the source says the listing has, when it says.
    public var pageCount: Int?
    /// Videos on this page, left out (photofs shows photos) and counted in the import's summary.
    public var videos: Int
    public init(photos: [SourcePhoto], skipped: [SkippedRecord], next: PageCursor?, pageCount: Int?, videos: Int = 0) {
        self.photos = photos; self.skipped = skipped; self.next = next; self.pageCount = pageCount
        self.videos = videos
    }
}

/// A moment a source can list changes from (Flickr: `min_date` of `flickr.photos.recentlyUpdated`).
public struct SyncPoint: Hashable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}

/// Who a library follows: Flickr's NSID and user name, and whether the listing sees all of its photos
/// (signed in as that account) or only those shown to others: deletions are looked for only among the photos
/// the listing could have seen.
public struct SourceAccount: Hashable, Sendable {
    public var id: String
    public var name: String
    public var seesPrivatePhotos: Bool
    public init(id: String, name: String, seesPrivatePhotos: Bool = false) {
        self.id = id; self.name = name; self.seesPrivatePhotos = seesPrivatePhotos
    }
}

/// One page of photo ids (deletion check, album members). Ids that are not identifiers are left out.
public struct SourceIDPage: Sendable {
    public var ids: [String]
    public var next: PageCursor?
    public var pageCount: Int?
    /// How many items the whole listing has, as the source says (nil: it does not say).
    public var total: Int?
    /// Items on this page that are not photos (videos) or whose id is not an identifier: with `ids`, what
    /// the page held, so the listing can be checked against `total`.
    public var otherItems: Int
    public init(ids: [String], next: PageCursor?, pageCount: Int?, total: Int? = nil, otherItems: Int = 0) {
        let valid = ids.filter(SourceIdentifier.isValid)
        self.ids = valid; self.next = next; self.pageCount = pageCount; self.total = total
        self.otherItems = otherItems + (ids.count - valid.count)
    }
}

/// Bounds one paged listing against a server that never ends it: a page count far past what the first page
/// announced, a page that brings nothing new (the same page again), or a hard cap.
public struct PagingBound: Sendable {
    /// 100,000 pages: 10 million photos at Flickr's default 100 a page, 50 million at 500; no account is near.
    public static let maxPages = 100_000
    /// Pages beyond the first page's count that are still followed: a list that grows while it is paged.
    public static let slack = 10
    public private(set) var pages = 0
    private var limit = PagingBound.maxPages

    public init() {}

    /// Call after each page; false when the listing must stop here even though the page names a next one.
    public mutating func allowsAnother(pageCount: Int?, itemsOnPage: Int, newItems: Int) -> Bool {
        pages += 1
        if pages == 1, let announced = pageCount, announced >= 0 {
            let (sum, overflow) = announced.addingReportingOverflow(PagingBound.slack)
            limit = overflow ? PagingBound.maxPages : min(PagingBound.maxPages, sum)
        }
        if itemsOnPage > 0 && newItems == 0 { return false }
        return pages < limit
    }
}

/// An album (Flickr photoset) as its source lists it; `updatedAt` tells an import whether its members must
/// be listed again.
public struct SourceAlbum: Equatable, Sendable {
    public var id: String
    public var title: String
    public var description: String
    public var updatedAt: Int64?
    public var photoCount: Int?
    /// nil when the album's id is not an identifier (the album is then skipped with a warning).
    public init?(id: String, title: String, description: String, updatedAt: Int64?, photoCount: Int?) {
        guard SourceIdentifier.isValid(id) else { return nil }
        self.id = id
        self.title = SourceText.clean(title, limit: SourceText.nameLimit)
        self.description = SourceText.clean(description, limit: SourceText.descriptionLimit)
        self.updatedAt = updatedAt.flatMap(MomentRange.valid)
        self.photoCount = photoCount.map { max(0, $0) }
    }
}

/// How a mount fetches a source's bytes: HTTP (the download engine, with Range and ETag, through the cache),
/// or a local file (`file://` URLs, read with `pread` straight from the file, no cache copy).
public enum ContentAccess: Equatable, Sendable {
    case http
    case localFile

    /// Whether `url` is one this access may hand the catalog. Each source's URLs are checked against its own
    /// access: a `file://` URL in a web answer would make the mount read local files.
    public func isUsable(_ url: String) -> Bool {
        switch self {
        case .http: return SourceURL.isUsable(url)
        case .localFile: return SourceURL.isUsableFileURI(url)
        }
    }
}

/// What `measure` learns about one URL's bytes.
public struct MeasuredContent: Equatable, Sendable {
    public var size: Int64
    /// Normalised ("image/jpeg"), always one of `ImageContentType.extensions`.
    public var contentType: String
    public var etag: String?
    public var lastModified: String?
    public init(size: Int64, contentType: String, etag: String?, lastModified: String?) {
        self.size = size; self.contentType = contentType; self.etag = etag; self.lastModified = lastModified
    }
}

public struct MeasureFailure: Error, Equatable, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One record a source could not use: its id (made printable, see `SkippedRecord.printable`) when it had
/// one, the field that made it unusable and why. The importer logs one warning per record.
public struct SkippedRecord: Equatable, Sendable {
    public var id: String?
    /// The source's own field name ("id", "url_o", "owner"), or "record" when the record is not an object.
    public var field: String
    public var reason: String
    public init(id: String?, field: String, reason: String) {
        self.id = id.map(SkippedRecord.printable)
        self.field = field
        self.reason = reason
    }

    /// An id as it may appear in a log line: control, bidi and non-ASCII scalars as \u{…}, at most 64
    /// characters. The id is hostile (it is why the record was skipped); a log line must stay one line.
    public static func printable(_ id: String) -> String {
        var text = ""
        for scalar in id.unicodeScalars {
            if text.utf8.count >= 64 { text += "..."; break }
            if (0x20..<0x7F).contains(scalar.value) { text.unicodeScalars.append(scalar) }
            else { text += "\\u{\(String(scalar.value, radix: 16))}" }
        }
        return text
    }
}

/// One photo as a source lists it, validated: every value here is in range for the catalog and the tree.
/// Built only through `init`, which applies the rules every source shares (ids, moments, coordinates).
public struct SourcePhoto: Equatable, Sendable {
    public let id: String
    public let owner: String
    /// The display name, else the owner id.
    public let ownerName: String
    public let title: String
    public let description: String
    /// The source's own text of the date taken, kept only when it was read as a valid date.
    public let dateTaken: String?
    public let takenAt: Int64?
    public let uploadedAt: Int64?
    /// `takenAt`, else `uploadedAt`, else 0 (1970): the file's mtime and its /moments year.
    public let momentAt: Int64
    public let placeID: String?
    public let latitude: Double?
    public let longitude: Double?
    public let originalURL: String
    public let thumbnailURL: String?
    public let renditions: [Rendition]
    /// Who may see the photo at the origin; anything but public is shown 0400.
    public let visibility: PhotoVisibility
    /// Tags as the source normalises them (Flickr: lower case, no spaces), at most `SourceText.tagLimit`.
    public let tags: [String]
    public let views: Int64?
    /// When the source last changed the photo (metadata or bytes), seconds since 1970.
    public let lastUpdate: Int64?
    /// The bytes' size and type when the source knows them at listing (a local file): then nothing is measured.
    public let content: MeasuredContent?
    /// The camera ("Canon EOS 80D") when the source says (EXIF Make and Model): searchable as `camera:`.
    public let camera: String?

    /// Throws a `SkippedRecord` naming the field when the photo cannot be used (an id that is not an
    /// identifier, an owner id too long even encoded, an original URL that is not a usable http(s) URL);
    /// everything else is clamped or dropped: a date out of range is unknown, a coordinate out of range is
    /// no location, a title or description is cut to its limit.
    public init(id: String, owner: String, ownerName: String, title: String, description: String,
                dateTaken: String?, takenAt: Int64?, uploadedAt: Int64?, placeID: String?,
                latitude: Double?, longitude: Double?, originalURL: String, thumbnailURL: String?,
                renditions: [Rendition], visibility: PhotoVisibility = .everyone, tags: [String] = [],
                views: Int64? = nil, lastUpdate: Int64? = nil, content: MeasuredContent? = nil,
                access: ContentAccess = .http, camera: String? = nil) throws {
        guard SourceIdentifier.isValid(id) else {
            throw SkippedRecord(id: id, field: "id", reason: SourceIdentifier.rule)
        }
        guard let owner = SourceIdentifier.encoded(owner) else {
            throw SkippedRecord(id: id, field: "owner", reason: "longer than \(SourceIdentifier.maxBytes) bytes")
        }
        guard access.isUsable(originalURL) else {
            throw SkippedRecord(id: id, field: "url", reason: access == .http ? SourceURL.rule : SourceURL.fileRule)
        }
        if let content, content.size < 1 || !ImageContentType.isAccepted(content.contentType) {
            throw SkippedRecord(id: id, field: "content", reason: "no image bytes (size \(content.size), \(content.contentType))")
        }
        self.id = id
        self.owner = owner
        // No display name: the (encoded) owner id, as Flickr's own pages show it.
        let name = ownerName.trimmingCharacters(in: .whitespacesAndNewlines)
        self.ownerName = name.isEmpty ? owner : SourceText.clean(name, limit: SourceText.nameLimit)
        self.title = SourceText.clean(title, limit: SourceText.nameLimit)
        self.description = SourceText.clean(description, limit: SourceText.descriptionLimit)
        let taken = takenAt.flatMap(MomentRange.valid)
        self.takenAt = taken
        self.dateTaken = taken == nil ? nil : dateTaken.map { SourceText.clean($0, limit: 64) }
        self.uploadedAt = uploadedAt.flatMap(MomentRange.valid)
        self.momentAt = MomentRange.clamp(taken ?? self.uploadedAt ?? 0)
        self.placeID = placeID.flatMap { SourceIdentifier.isValid($0) ? $0 : nil }
        if let latitude, let longitude, latitude.isFinite, longitude.isFinite, abs(latitude) <= 90,
           abs(longitude) <= 180, latitude != 0 || longitude != 0 {
            self.latitude = latitude
            self.longitude = longitude
        } else {
            self.latitude = nil
            self.longitude = nil
        }
        self.originalURL = originalURL
        self.thumbnailURL = thumbnailURL.flatMap { access.isUsable($0) ? $0 : nil }
        self.renditions = renditions.filter {
            access.isUsable($0.url) && (1...SourceURL.maxPixelEdge).contains($0.width)
                && (1...SourceURL.maxPixelEdge).contains($0.height)
        }
        self.visibility = visibility
        self.tags = tags.map { SourceText.clean($0, limit: SourceText.tagLimit) }.filter { !$0.isEmpty }
            .prefix(SourceText.maxTags).map { $0 }
        self.views = views.map { max(0, $0) }
        self.lastUpdate = lastUpdate.flatMap(MomentRange.valid)
        self.content = content
        let cleanCamera = camera.map { SourceText.clean($0, limit: SourceText.nameLimit) }
        self.camera = cleanCamera?.isEmpty == false ? cleanCamera : nil
    }
}

extension SkippedRecord: Error {}

extension PhotoSource {
    /// Most sources have nothing to resolve.
    public func prepare() throws {}
    /// Sources that cannot ask about one photo trust their id listing.
    public func stillExists(_ photoID: String) throws -> Bool? { nil }
    /// Sources that cannot count cheaply list ids after every import.
    public func accountPhotoCount() throws -> Int? { nil }
    /// Sources that follow an account find deletions through its id listing.
    public func removedPhotoIDs() throws -> [String] { [] }
}

extension SourcePhoto {
    /// The catalog row for this photo, before measuring (no size or type yet) and before the catalog
    /// assigns its seq, photographer and region.
    public func catalogRecord() -> PhotoRecord {
        PhotoRecord(id: id, title: title, description: description, placeID: placeID, dateTaken: dateTaken,
                    momentAt: momentAt, momentYear: PhotoRecord.year(ofMoment: momentAt), uploadedAt: uploadedAt,
                    originalURL: originalURL, thumbnailURL: thumbnailURL, latitude: latitude, longitude: longitude,
                    visibility: visibility, tags: tags, views: views, lastUpdate: lastUpdate)
    }
}

/// The years the tree can show: 1 to 9999. `/moments/<year>` names are four digits and the moment prefix
/// "YYYY-MM-DD" has four year digits; SQLite's date functions and glibc's `gmtime_r` agree on this range.
/// A moment outside it is "unknown", not wrapped.
public enum MomentRange {
    /// 0001-01-01 00:00:00 UTC.
    public static let earliest: Int64 = -62_135_596_800
    /// 9999-12-31 23:59:59 UTC.
    public static let latest: Int64 = 253_402_300_799

    public static func valid(_ seconds: Int64) -> Int64? { (earliest...latest).contains(seconds) ? seconds : nil }
    public static func clamp(_ seconds: Int64) -> Int64 { min(max(seconds, earliest), latest) }

    /// Seconds since 1970 of a proleptic Gregorian date and time read as UTC, or nil when a field is out of
    /// range (month 13, 31 April, 29 February 2019, hour 24, year 0 or 10000). Pure integer arithmetic
    /// (Howard Hinnant's days_from_civil): no `timegm`, no `Int32` conversion of untrusted numbers.
    public static func seconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64? {
        guard (1...9999).contains(year), (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute),
              (0...60).contains(second) else { return nil }
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...monthDays[month - 1]).contains(day) else { return nil }
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        // A leap second (":60") is the second before it: no camera clock shows one, and counted as the next
        // second it moved a photo of 23:59:60 on New Year's Eve into the next day and year.
        return clamp(days * 86_400 + Int64(hour) * 3600 + Int64(minute) * 60 + Int64(min(second, 59)))
    }

    /// "2024-07-14 09:30:12", the catalog's date-taken text, of seconds read as the camera's wall clock.
    /// `seconds` is clamped to the range first, so any value gives a four-digit year.
    public static func dateTakenText(_ seconds: Int64) -> String {
        let seconds = clamp(seconds)
        let days = CivilDate.day(ofSecond: seconds)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilDate.of(days: days)
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d", year, month, day, Int(secondOfDay / 3600),
                      Int(secondOfDay % 3600 / 60), Int(secondOfDay % 60))
    }
}

/// Ids that reach names (a photo's id is its de-duplicating suffix, an owner's its photographer's) and
/// the catalog's keys.
public enum SourceIdentifier {
    /// Flickr ids are 10–11 digits, NSIDs "12345678@N01", place ids "7.MJR8tTVrIO1EgB": 64 bytes is
    /// several times any of them.
    public static let maxBytes = 64
    public static let rule = "not 1–64 letters, digits, '@', '.', '_' or '-' with at least one letter or digit"

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return false
        }
    }

    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "@"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// A photo id is used as it is or not at all: rewriting it could make it another photo's id.
    public static func isValid(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return (1...maxBytes).contains(bytes.count) && bytes.allSatisfy(isAllowed)
            && bytes.contains(where: isAlphanumeric)
    }

    /// An owner id made safe by percent-encoding every other byte ("a/b" → "a%2Fb"): injective, so two
    /// owners never merge; nil when the result is longer than `maxBytes`. Empty becomes "unknown" (Flickr
    /// always sends an owner; a record without one goes to one shared photographer).
    public static func encoded(_ owner: String) -> String? {
        if owner.isEmpty { return "unknown" }
        var text = ""
        for byte in owner.utf8 {
            if isAllowed(byte) { text.unicodeScalars.append(Unicode.Scalar(byte)) }
            else { text += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true) }
            if text.utf8.count > maxBytes { return nil }
        }
        return text
    }
}

/// Free text (titles, descriptions, names): NUL becomes a space — SQLite (through GRDB) would cut the text
/// there — and long text is cut at a character boundary. The tree sanitises names further.
public enum SourceText {
    /// A camera's name from EXIF's Make and Model as any source gives them: "Make Model", or the model alone
    /// when it already starts with the make ("Canon" + "Canon EOS 80D"), else the one given, else nil. Blank
    /// parts (after trimming) count as missing.
    public static func cameraName(make: String?, model: String?) -> String? {
        let make = make?.trimmingCharacters(in: .whitespacesAndNewlines)
        let model = model?.trimmingCharacters(in: .whitespacesAndNewlines)
        switch (make?.isEmpty == false ? make : nil, model?.isEmpty == false ? model : nil) {
        case let (make?, model?):
            // The model alone when it already names the make: "Canon" + "Canon EOS R5", and "NIKON CORPORATION" +
            // "NIKON D750" (the make's first word), which read "NIKON CORPORATION NIKON D750".
            let (lowerMake, lowerModel) = (make.lowercased(), model.lowercased())
            let makeWord = lowerMake.split(separator: " ").first ?? Substring(lowerMake)
            let modelWord = lowerModel.split(separator: " ").first ?? ""
            return lowerModel.hasPrefix(lowerMake) || modelWord == makeWord ? model : make + " " + model
        case let (one?, nil), let (nil, one?): return one
        case (nil, nil): return nil
        }
    }

    /// A name is at most 255 bytes; 1,000 characters of title is more than any name can show.
    public static let nameLimit = 1000
    /// Flickr caps descriptions well below this; it keeps one hostile record from bloating the library.
    public static let descriptionLimit = 65_536
    /// Flickr allows 75 tags a photo, each well under 100 characters.
    public static let tagLimit = 200
    public static let maxTags = 200

    public static func clean(_ text: String, limit: Int) -> String {
        var text = text
        if text.utf8.contains(0) { text = text.replacingOccurrences(of: "\u{0}", with: " ") }
        if text.count > limit { text = String(text.prefix(limit)) }
        return text
    }
}

/// The URLs a source may hand the catalog: what the HTTP client will fetch and nothing that could smuggle
/// a second line or a space into a request.
public enum SourceURL {
    /// Browsers and CDNs stop around 8 KB; Flickr's static URLs are under 100 bytes.
    public static let maxBytes = 2048
    /// 65,535 px is JPEG's limit; a larger edge is a malformed answer, not a size to trust.
    public static let maxPixelEdge = 65_535
    public static let rule = "no http(s) URL of at most 2048 bytes without spaces or control characters"

    /// A local file's URI may be as long as its path allows (PATH_MAX 4,096 bytes, each byte escaped as 3).
    public static let maxFileURIBytes = 3 * 4096 + 7
    public static let fileRule = "no file:/// URI of an absolute path without spaces or control characters"

    /// `file:///…` as `FileURI.glib` spells it: escaped, so no space or control character; no `..` segment.
    public static func isUsableFileURI(_ url: String) -> Bool {
        guard url.hasPrefix("file:///"), url.utf8.count <= maxFileURIBytes, !url.contains("/../"), !url.hasSuffix("/..")
        else { return false }
        return url.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) }
    }

    public static func isUsable(_ url: String) -> Bool {
        let lower = url.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.utf8.count <= maxBytes else { return false }
        return url.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) }
    }
}
