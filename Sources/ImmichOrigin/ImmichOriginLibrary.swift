// The loopback Immich origin's library: users, assets with real JPEG/PNG bytes, albums, people, all deterministic.
import CCrypto
import FlickrOrigin
import Foundation
import PhotoContent

/// One Immich user (the key's owner, or a partner who shares their timeline).
public struct ImmichOriginUser: Sendable, Equatable {
    public var id: String
    public var name: String
    public var email: String
    public init(id: String, name: String, email: String) { self.id = id; self.name = name; self.email = email }
}

/// One asset as the server keeps it. Dates are Immich's: `localDateTime` is the wall-clock time of capture
/// written as if it were UTC ("…Z"), `fileCreatedAt` the real instant.
public struct ImmichOriginAsset: Sendable {
    public var id: String
    public var ownerID: String
    /// "IMAGE" or "VIDEO".
    public var type: String
    public var originalFileName: String
    public var mimeType: String
    /// The original; its checksum follows every change.
    public var bytes: Data { didSet { checksum = ImmichOriginAsset.sha1(bytes) } }
    public var width: Int
    public var height: Int
    /// Seconds since 1970 of the wall-clock capture time read as UTC.
    public var localTime: Int64
    /// Offset of the capture's time zone from UTC, seconds (fileCreatedAt = localTime − offset).
    public var utcOffset: Int64
    public var updatedAt: Date
    public var description: String?
    public var city: String?
    public var state: String?
    public var country: String?
    public var isFavorite = false
    public var isTrashed = false
    /// "timeline", "archive", "hidden" or "locked".
    public var visibility = "timeline"
    public var personIDs: [String] = []

    public init(id: String, ownerID: String, type: String, originalFileName: String, mimeType: String, bytes: Data, width: Int,
                height: Int, localTime: Int64, utcOffset: Int64, updatedAt: Date, description: String? = nil, city: String? = nil,
                state: String? = nil, country: String? = nil) {
        self.id = id; self.ownerID = ownerID; self.type = type; self.originalFileName = originalFileName; self.mimeType = mimeType
        self.bytes = bytes; self.width = width; self.height = height; self.localTime = localTime; self.utcOffset = utcOffset
        self.updatedAt = updatedAt; self.description = description; self.city = city; self.state = state; self.country = country
        self.checksum = ImmichOriginAsset.sha1(bytes)
    }

    /// An asset whose checksum is known already (one file under many names, hashed once).
    init(id: String, ownerID: String, originalFileName: String, mimeType: String, bytes: Data, checksum: String, width: Int,
         height: Int, localTime: Int64, updatedAt: Date) {
        self.id = id; self.ownerID = ownerID; self.type = "IMAGE"; self.originalFileName = originalFileName
        self.mimeType = mimeType; self.bytes = bytes; self.checksum = checksum; self.width = width; self.height = height
        self.localTime = localTime; self.utcOffset = 0; self.updatedAt = updatedAt
    }

    /// Immich's checksum: SHA-1 of the bytes, base64. Kept, not computed per answer: a listing of 10,000
    /// megabyte photos would otherwise hash 10 GB.
    public private(set) var checksum: String

    static func sha1(_ bytes: Data) -> String {
        // Immich's checksum is the SHA-1 of the original, base64 (20 bytes); libcrypto's one-shot digest.
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let done = bytes.withUnsafeBytes { raw in EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha1(), nil) }
        return done == 1 && length == 20 ? Data(digest).base64EncodedString() : ""
    }
}

public struct ImmichOriginAlbum: Sendable {
    public var id: String
    public var name: String
    public var description: String
    public var assetIDs: [String]
    public var updatedAt: Date
}

public struct ImmichOriginPerson: Sendable {
    public var id: String
    /// "" for a face Immich found but nobody named.
    public var name: String
    public var isHidden = false
}

public struct ImmichOriginLibrary: Sendable {
    public var owner: ImmichOriginUser
    public var partners: [ImmichOriginUser] = []
    public var assets: [ImmichOriginAsset] = []
    public var albums: [ImmichOriginAlbum] = []
    public var people: [ImmichOriginPerson] = []

    public func asset(_ id: String) -> ImmichOriginAsset? { assets.first { $0.id == id } }

    /// A version-4 UUID from a seeded generator: the same library has the same ids on every run.
    static func uuid(_ random: inout SeededGenerator) -> String {
        let a = random.next(), b = random.next()
        var bytes = (0..<8).map { UInt8(truncatingIfNeeded: a >> (8 * $0)) } + (0..<8).map { UInt8(truncatingIfNeeded: b >> (8 * $0)) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let characters = Array(hex)
        func part(_ range: Range<Int>) -> String { String(characters[range]) }
        return "\(part(0..<8))-\(part(8..<12))-\(part(12..<16))-\(part(16..<20))-\(part(20..<32))"
    }

    /// Places as Immich's reverse geocoding names them: state and country; Reykjavík has no state (the
    /// region falls back to the country), and some photos have no place at all.
    static let places: [(city: String?, state: String?, country: String?)] = [
        ("San Francisco", "California", "United States of America"), ("Los Angeles", "California", "United States of America"),
        ("München", "Bavaria", "Germany"), ("Paris", "Île-de-France", "France"), ("Reykjavík", nil, "Iceland"),
        (nil, nil, nil),
    ]

    /// The JPEG and PNG files at `paths` (sorted), as the owner's photos, for benchmarks: each file is mapped,
    /// not read, and hashed once however many names point to it; dates spread over 6 years by index, as
    /// `DemoLibrary.external` spreads the Flickr origin's, so both libraries have the same year folders. No
    /// albums, people or favourites. A file that is not a readable JPEG or PNG is left out.
    public static func files(_ paths: [String], seed: UInt64 = 3100) -> ImmichOriginLibrary {
        var random = SeededGenerator(seed: seed)
        let owner = ImmichOriginUser(id: uuid(&random), name: "Ada Lovelace", email: "ada@example.org")
        var library = ImmichOriginLibrary(owner: owner)
        var known: [String: (bytes: Data, checksum: String, width: Int, height: Int)] = [:]
        let base = Date(timeIntervalSince1970: 1_704_067_200)
        for (index, path) in paths.sorted().enumerated() {
            let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let name = URL(fileURLWithPath: path).lastPathComponent
            let isPNG = name.lowercased().hasSuffix(".png")
            if known[real] == nil {
                guard let bytes = try? Data(contentsOf: URL(fileURLWithPath: real), options: .alwaysMapped) else { continue }
                let size: (width: Int, height: Int)?
                if isPNG { size = (try? ImageCodec.pngHeader(bytes)).map { ($0.width, $0.height) } } else { size = try? ImageCodec.jpegSize(bytes) }
                guard let size else { continue }
                known[real] = (bytes, ImmichOriginAsset.sha1(bytes), size.width, size.height)
            }
            guard let file = known[real] else { continue }
            let local = MomentRangeSeconds.of(year: 2019 + index % 6, month: 1 + index % 12, day: 1 + index % 28,
                                              hour: 12, minute: 0, second: 0)
            library.assets.append(ImmichOriginAsset(
                id: uuid(&random), ownerID: owner.id, originalFileName: name, mimeType: isPNG ? "image/png" : "image/jpeg",
                bytes: file.bytes, checksum: file.checksum, width: file.width, height: file.height, localTime: local,
                updatedAt: base.addingTimeInterval(Double(index))))
        }
        return library
    }

    /// Album names a file system must survive: a separator, two albums of one name, dots, an empty name.
    static let albumNames = ["Summer/Winter 2023", "Family", "Family", "..", "", "日本の夏 🌸"]

    /// `count` assets of the owner (every 10th a video, every 7th a PNG, every 5th a favourite, a few
    /// archived, hidden, locked and trashed), 4 of a partner, 4 named people and an unnamed one, and the
    /// albums above. `scale` divides image sizes (tests use small images to stay fast in debug builds).
    public static func generated(count: Int = 60, seed: UInt64 = 3100, scale: Int = 1) -> ImmichOriginLibrary {
        var random = SeededGenerator(seed: seed)
        let owner = ImmichOriginUser(id: uuid(&random), name: "Ada Lovelace", email: "ada@example.org")
        let partner = ImmichOriginUser(id: uuid(&random), name: "Charles Babbage", email: "charles@example.org")
        var library = ImmichOriginLibrary(owner: owner, partners: [partner])
        library.people = ["Ada", "Grace Hopper", "Ada", "Émilie du Châtelet", ""].map {
            ImmichOriginPerson(id: uuid(&random), name: $0)
        }
        library.people.append(ImmichOriginPerson(id: uuid(&random), name: "Hidden Person", isHidden: true))
        let shapes = [(640, 480), (800, 600), (480, 640), (1024, 768), (320, 240)]
        let titles = ["Harbour at dawn", "Old town", "   ", "Street market", "a/b", "Fog", ".", "Night train"]
        let base: Date = Date(timeIntervalSince1970: 1_704_067_200) // 2024-01-01: the updates before any edit
        let total = count + 4
        var specs: [(seed: UInt64, id: String)] = []
        for _ in 0..<total { specs.append((random.next(), uuid(&random))) }
        var images = [OriginImage?](repeating: nil, count: total)
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: total) { index in
            let shape = shapes[index % shapes.count]
            let image = DemoLibrary.renderImage(width: max(8, shape.0 / scale), height: max(8, shape.1 / scale),
                                                png: index % 7 == 3, seed: specs[index].seed)
            lock.lock(); images[index] = image; lock.unlock()
        }
        for index in 0..<total {
            guard let image = images[index] else { continue }
            let isPartner = index >= count
            let place = places[index % places.count]
            let year = 2019 + index % 5
            let local = MomentRangeSeconds.of(year: year, month: 1 + (index * 5) % 12, day: 1 + (index * 11) % 28,
                                              hour: index % 24, minute: (index * 7) % 60, second: (index * 13) % 60)
            let isVideo = !isPartner && index % 10 == 9
            let ext = image.contentType == "image/png" ? "png" : "jpg"
            let name = isVideo ? String(format: "MVI_%04d.mp4", index) : String(format: "IMG_%04d.%@", index, ext)
            var asset = ImmichOriginAsset(
                id: specs[index].id, ownerID: isPartner ? partner.id : owner.id, type: isVideo ? "VIDEO" : "IMAGE",
                originalFileName: name, mimeType: isVideo ? "video/mp4" : image.contentType, bytes: image.data,
                width: image.width, height: image.height, localTime: local,
                utcOffset: Int64([0, 3600, -25_200, 32_400][index % 4]),
                updatedAt: base.addingTimeInterval(Double(index)),
                description: index % 3 == 0 ? titles[(index / 3) % titles.count] : nil,
                city: place.city, state: place.state, country: place.country)
            asset.isFavorite = index % 5 == 2
            if !isPartner {
                switch index % 17 {
                case 11: asset.visibility = "archive"
                case 13: asset.visibility = "locked"
                case 15: asset.isTrashed = true
                default: break
                }
            }
            if index % 4 == 1 { asset.personIDs = [library.people[index / 4 % 4].id] }
            if index % 8 == 5 { asset.personIDs.append(library.people[4].id) }
            library.assets.append(asset)
        }
        let photos = library.assets.filter { $0.type == "IMAGE" && $0.ownerID == owner.id && !$0.isTrashed && $0.visibility != "locked" }
        for (index, name) in albumNames.enumerated() {
            let members = stride(from: index, to: photos.count, by: albumNames.count + index).map { photos[$0].id }
            library.albums.append(ImmichOriginAlbum(id: uuid(&random), name: name, description: "Album \(index + 1)",
                                                    assetIDs: index == 4 ? [] : members,
                                                    updatedAt: base.addingTimeInterval(Double(1000 + index))))
        }
        return library
    }
}

/// Seconds since 1970 of a date read as UTC (the generator's dates are all valid).
enum MomentRangeSeconds {
    static func of(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64 {
        var components = DateComponents()
        components.year = year; components.month = month; components.day = day
        components.hour = hour; components.minute = minute; components.second = second
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return Int64(calendar.date(from: components)?.timeIntervalSince1970 ?? 0)
    }
}
