// Which extended attributes a node carries and their exact bytes, built from catalog details with no I/O.
import Foundation
import PhotoCatalog

/// One extended attribute: a name in the `user.` namespace and its value as the bytes `getxattr` returns
/// (UTF-8 text, no terminating NUL, as `setfattr -v` would store it).
public struct ExtendedAttribute: Equatable, Sendable {
    public var name: String
    public var value: [UInt8]
    public init(name: String, value: [UInt8]) { self.name = name; self.value = value }
}

/// A node's attributes in the order `listxattr` gives them.
public struct ExtendedAttributeList: Equatable, Sendable {
    public let attributes: [ExtendedAttribute]

    public init(_ attributes: [ExtendedAttribute]) { self.attributes = attributes }
    public static let empty = ExtendedAttributeList([])

    /// The value of `name`, compared byte for byte (the kernel passes names as bytes).
    public func value(named name: String) -> [UInt8]? {
        attributes.first { $0.name.utf8.elementsEqual(name.utf8) }?.value
    }

    /// What `listxattr` returns: every name followed by a NUL.
    public var listBytes: [UInt8] {
        attributes.reduce(into: []) { bytes, attribute in bytes += Array(attribute.name.utf8) + [0] }
    }
}

/// Builds the attributes of photos and directories. The names are those freedesktop.org's "Common
/// Extended Attributes" define (`user.xdg.*`, read by KDE's Baloo/Dolphin and by `getfattr`), plus photofs's
/// own `user.photofs.*`. An attribute is present only where the catalog knows its value.
public enum ExtendedAttributeBuilder {
    /// Linux's XATTR_SIZE_MAX: the kernel clamps every getxattr buffer to 65,536 bytes and answers E2BIG for
    /// a longer value, so a longer value could be probed but never read. Values are cut to it (at a UTF-8
    /// character boundary, so the cut value is still valid text).
    public static let valueLimit = 65_536

    public enum Name {
        public static let originURL = "user.xdg.origin.url"
        public static let comment = "user.xdg.comment"
        public static let tags = "user.xdg.tags"
        public static let creator = "user.xdg.creator"
        public static let id = "user.photofs.id"
        public static let taken = "user.photofs.taken"
        public static let region = "user.photofs.region"
        public static let place = "user.photofs.place"
        public static let latitude = "user.photofs.latitude"
        public static let longitude = "user.photofs.longitude"
        public static let albums = "user.photofs.albums"
        /// Named people in the photo (Immich), one a line, and "1" on a favourite.
        public static let people = "user.photofs.people"
        public static let favorite = "user.photofs.favorite"
    }

    /// Every name a photo can carry, in listing order: a name outside it is answered ENODATA without
    /// reading the catalog (KDE asks every file for `user.baloo.rating`, which photofs never has).
    public static let photoNames: [String] = [
        Name.originURL, Name.comment, Name.tags, Name.creator, Name.id, Name.taken, Name.region, Name.place,
        Name.latitude, Name.longitude, Name.albums, Name.people, Name.favorite,
    ]
    /// Every name a directory can carry.
    public static let directoryNames: [String] = [Name.comment]

    /// The names `node` can carry at all (before asking the catalog which it has).
    public static func possibleNames(of node: Node) -> [String] {
        switch node {
        case .photo: return photoNames
        case .region, .album, .event: return directoryNames
        case .root, .regions, .moments, .recent, .albums, .photographer, .year, .events, .search, .eventYear,
             .searchResults, .people, .favorites, .person: return []
        }
    }

    public static func photo(_ details: PhotoDetails) -> ExtendedAttributeList {
        var list: [ExtendedAttribute] = []
        func add(_ name: String, _ value: String?) {
            guard let value, !value.isEmpty else { return }
            list.append(ExtendedAttribute(name: name, value: capped(value)))
        }
        add(Name.originURL, originURL(details))
        add(Name.comment, details.description)
        // Separators inside an item become spaces, so each list reads back as the items it was made of.
        add(Name.tags, details.tags.map { $0.replacingOccurrences(of: ",", with: " ") }.filter { !$0.isEmpty }
            .joined(separator: ","))
        add(Name.creator, details.photographerName)
        add(Name.id, details.id)
        add(Name.taken, details.dateTaken.flatMap(isoDateTaken))
        add(Name.region, details.regionName)
        add(Name.place, details.placeName)
        add(Name.latitude, details.latitude.flatMap { coordinate($0, limit: 90) })
        add(Name.longitude, details.longitude.flatMap { coordinate($0, limit: 180) })
        add(Name.albums, details.albumTitles.map { $0.replacingOccurrences(of: "\n", with: " ") }
            .joined(separator: "\n"))
        add(Name.people, details.personNames.map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n"))
        add(Name.favorite, details.isFavorite ? "1" : nil)
        return ExtendedAttributeList(list)
    }

    /// A region: its places ("San Francisco, Los Angeles"), the only description a region has.
    public static func region(_ details: RegionDetails) -> ExtendedAttributeList {
        directory(comment: details.placeNames.joined(separator: ", "))
    }

    /// An event: its date range, places and photo count (`EventNaming.comment`).
    public static func event(_ event: PhotoEvent) -> ExtendedAttributeList {
        directory(comment: EventNaming.comment(for: event))
    }

    /// An album: its description at the origin.
    public static func album(description: String) -> ExtendedAttributeList {
        directory(comment: description)
    }

    private static func directory(comment: String) -> ExtendedAttributeList {
        comment.isEmpty ? .empty : ExtendedAttributeList([ExtendedAttribute(name: Name.comment, value: capped(comment))])
    }

    /// The photo's page at its origin. Only Flickr is a source today: the URL is given when the library
    /// records only Flickr imports (or none, as before accounts), and only when the owner and the id are
    /// made of URL-safe bytes — the library file is hostile, and a "/" or "?" there would point elsewhere.
    static func originURL(_ details: PhotoDetails) -> String? {
        // A folder import's photo: its file. Only the escaped form a folder import writes (no space, no
        // control character: the catalog is hostile, and a value must stay one line).
        if let url = details.originalURL, url.hasPrefix("file:///") {
            return url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) ? url : nil
        }
        guard details.sourceKinds.allSatisfy({ $0 == "flickr" || $0 == "folder" }),
              let owner = details.ownerID, let id = details.id,
              isURLSafe(owner, allowingPercent: true), isURLSafe(id, allowingPercent: false) else { return nil }
        return "https://www.flickr.com/photos/\(owner)/\(id)/"
    }

    /// 1–64 of the bytes an import keeps in ids (letters, digits, `@ . _ -`), and `%` in owner ids, which
    /// an import percent-encodes.
    private static func isURLSafe(_ text: String, allowingPercent: Bool) -> Bool {
        let bytes = Array(text.utf8)
        return (1...64).contains(bytes.count) && bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "@"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "-"):
                return true
            case UInt8(ascii: "%"):
                return allowingPercent
            default:
                return false
            }
        }
    }

    /// Flickr's "2019-05-04 12:33:10" as ISO 8601 local time, "2019-05-04T12:33:10" (no zone: the origin
    /// does not know the camera's). Fields of 1–4 digits (what an import accepts) are zero-padded; anything
    /// else is no date the attribute can state.
    static func isoDateTaken(_ text: String) -> String? {
        // A folder import appends the offset EXIF recorded ("2024-07-14 09:30:12+02:00"); ISO 8601 keeps it.
        var text = Substring(text)
        var zone = ""
        if text.utf8.count == 25, let sign = text.utf8.dropFirst(19).first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            let suffix = text.suffix(6)
            let bytes = Array(suffix.utf8)
            if bytes[3] == UInt8(ascii: ":"), [1, 2, 4, 5].allSatisfy({ (48...57).contains(bytes[$0]) }) {
                zone = String(suffix)
                text = text.dropLast(6)
            }
        }
        let fields = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" })
        guard fields.count == 6,
              fields.allSatisfy({ (1...4).contains($0.utf8.count) && $0.utf8.allSatisfy { (48...57).contains($0) } })
        else { return nil }
        // At most 4 digits each: no overflow.
        let numbers = fields.compactMap { Int($0) }
        guard numbers.count == 6, (1...9999).contains(numbers[0]), (1...12).contains(numbers[1]),
              (1...31).contains(numbers[2]), (0...23).contains(numbers[3]), (0...59).contains(numbers[4]),
              (0...60).contains(numbers[5]) else { return nil }
        func pad(_ number: Int, _ width: Int) -> String {
            let digits = String(number)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(numbers[0], 4))-\(pad(numbers[1], 2))-\(pad(numbers[2], 2))T"
            + "\(pad(numbers[3], 2)):\(pad(numbers[4], 2)):\(pad(numbers[5], 2))" + zone
    }

    /// Degrees as a plain decimal with up to 6 places (Flickr's precision, about 11 cm): "37.7749", "-122.4194".
    /// Built from integers, not `String(format:)`, so no locale can turn the point into a comma, and never in
    /// exponent form ("1e-05"). A value outside ±`limit` or not finite is no coordinate.
    static func coordinate(_ degrees: Double, limit: Double) -> String? {
        guard degrees.isFinite, abs(degrees) <= limit else { return nil }
        // |degrees| ≤ 180, so the micro-degrees fit easily in Int64.
        let micro = Int64((abs(degrees) * 1_000_000).rounded())
        let whole = micro / 1_000_000
        var fraction = String(micro % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let sign = degrees < 0 && micro != 0 ? "-" : ""
        return sign + String(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// The value's UTF-8 bytes, cut to `valueLimit` at a character boundary (never inside a multi-byte
    /// sequence: the bytes at the cut are not UTF-8 continuation bytes 10xxxxxx).
    static func capped(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        guard bytes.count > valueLimit else { return bytes }
        var end = valueLimit
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return Array(bytes[..<end])
    }
}
