// The built-in demo library: photographers, places, odd titles and real JPEG/PNG images, all deterministic.
import Foundation
import PhotoContent

/// A small deterministic PRNG (SplitMix64), so the demo library — and so every ETag and size — is the same on
/// every run and machine.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

public enum DemoLibrary {
    /// Titles a real library holds and a file system must survive: separators, control characters, dots,
    /// bidi tricks, emoji, names longer than 255 bytes, case-only and exact duplicates, empty titles.
    public static let oddTitles: [String] = [
        "", "   ", ".", "..", "...", ".hidden", "a/b/c", "nul\u{0}inside", "tab\there", "line\nbreak",
        "trailing space   ", "Sunset", "Sunset", "sunset", "SUNSET", "🌅 Sunrise over the bay 🏔️",
        "report\u{202E}gpj.exe", String(repeating: "é", count: 300), "-rf", "*?<>|:\"\\", "CON",
        "Ünïcödé façade", "日本の夏", "Sunset (123456)",
    ]

    static let photographers: [(owner: String, name: String?)] = [
        ("10000001@N01", "Ansel Adams"), ("10000002@N02", "Dorothea Lange"), ("10000003@N03", "Zoë Ångström"),
        ("10000004@N04", "李小龍"), ("10000005@N05", "ana/bob"), ("10000006@N06", nil),
        ("10000007@N07", "Vivian Maier"), ("10000008@N08", "  spaced out  "), ("10000009@N09", "Henri Cartier-Bresson"),
        ("10000010@N10", "Ansel Adams"), ("10000011@N11", ".dotted"), ("10000012@N12", "Imogen Cunningham"),
    ]

    /// Seven places, six regions: San Francisco and Los Angeles are both California (cs193p TopRegions
    /// merges them into one region), and Reykjavík has no region, so it falls back to its country.
    public static let places: [OriginPlace] = [
        OriginPlace(placeID: "7.sHR8hTUb5P", name: "San Francisco", region: "California", country: "United States"),
        OriginPlace(placeID: "qisvVN9WU7ND", name: "Los Angeles", region: "California", country: "United States"),
        OriginPlace(placeID: "mWq7aGRRVaqC", name: "München", region: "Bayern", country: "Deutschland"),
        OriginPlace(placeID: "EsIQUYZXCJOr", name: "Paris", region: "Île-de-France", country: "France"),
        OriginPlace(placeID: "VwhnWfhTUbNO", name: "Sapporo", region: "Hokkaidō", country: "Japan"),
        OriginPlace(placeID: "Bz.R6w9TUL0r", name: "Sydney", region: "New South Wales", country: "Australia"),
        OriginPlace(placeID: "dxoZQWdUV7Dg", name: "Reykjavík", region: nil, country: "Iceland"),
    ]

    static let ordinaryTitles = ["Harbour at dawn", "Old town", "Street market", "Mountain lake", "Rainy evening",
                                 "Cathedral", "Fog", "Bridge", "Lighthouse", "Snow", "Cherry blossoms", "Night train"]

    /// `count` photos (the demo uses 240) over 12 photographers, 6 regions and the years 2019–2024.
    /// `scale` divides the image dimensions (tests use small images to stay fast in debug builds).
    public static func make(count: Int = 240, seed: UInt64 = 2024, scale: Int = 1) -> OriginLibrary {
        var random = SeededGenerator(seed: seed)
        // Image shapes of a few sizes; every 9th photo is a PNG (with an alpha channel).
        let shapes = [(640, 480), (800, 600), (1024, 768), (480, 640), (1280, 853), (320, 240)]
        var specs: [(String, Int, Int, Bool, UInt64)] = []
        for index in 0..<count {
            let (width, height) = (shapes[index % shapes.count].0 / scale, shapes[index % shapes.count].1 / scale)
            specs.append(("\(52_000_000_000 + index * 7919)", width, height, index % 9 == 4, random.next()))
        }
        // Encoding 240 images takes about a second on one core; spread it over the cores.
        var images = [OriginImage?](repeating: nil, count: count)
        var thumbnails = [OriginImage?](repeating: nil, count: count)
        var mediums = [OriginImage?](repeating: nil, count: count)
        var smalls = [OriginImage?](repeating: nil, count: count)
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let (_, width, height, isPNG, imageSeed) = specs[index]
            let image = renderImage(width: width, height: height, png: isPNG, seed: imageSeed)
            // Flickr's square is 75×75; never larger than the photo itself (tests use tiny photos).
            let side = min(75, width, height)
            let thumbnail = renderImage(width: side, height: side, png: false, seed: imageSeed)
            // Flickr's "z" rendition (640 px long edge, always JPEG) for photos larger than that, made from
            // the original so that it shows the same picture.
            let medium = max(width, height) > 640
                ? try? VariantRenderer.render(image.data, contentType: image.contentType, spec: .fit(640),
                                              outputType: "image/jpeg")
                : nil
            let small = smallRendition(of: image)
            lock.lock()
            images[index] = image; thumbnails[index] = thumbnail
            if let medium {
                mediums[index] = OriginImage(data: medium.data, contentType: "image/jpeg", width: medium.width,
                                             height: medium.height)
            }
            if let small { smalls[index] = small }
            lock.unlock()
        }
        var photos: [OriginPhoto] = []
        for index in 0..<count {
            let owner = photographers[index % photographers.count]
            let place = places[(index / 3) % places.count]
            let year = 2019 + index % 6
            let month = 1 + (index * 5) % 12
            let day = 1 + (index * 11) % 28
            let title: String
            var description = ""
            if index < oddTitles.count {
                title = oddTitles[index]
                if index == 1 { description = "Only the description names this one" }
            } else {
                title = ordinaryTitles[(index / photographers.count + index / 5) % ordinaryTitles.count]
            }
            photos.append(OriginPhoto(
                id: specs[index].0, owner: owner.owner, ownerName: owner.name, title: title, description: description,
                dateTaken: String(format: "%04d-%02d-%02d %02d:%02d:%02d", year, month, day, index % 24,
                                  (index * 7) % 60, (index * 13) % 60),
                dateUpload: 1_700_000_000 + Int64(index) * 3600, placeID: place.placeID,
                latitude: 37.7 + Double(index % 7), longitude: -122.4 + Double(index % 5),
                hasOriginal: index % 10 != 7, image: images[index]!, thumbnail: thumbnails[index]))
            if let medium = mediums[index] { photos[photos.count - 1].renditions["z"] = medium }
            if let small = smalls[index] { photos[photos.count - 1].renditions["n"] = small }
            // Flickr's normalised tags: lower case, no spaces.
            photos[photos.count - 1].tags = [place.name.lowercased().filter { !$0.isWhitespace }, "y\(year)"]
            photos[photos.count - 1].views = Int64(index * 37 % 1000)
        }
        return OriginLibrary(photos: photos, places: places)
    }

    /// Flickr's "n" rendition (320 px long edge, JPEG), which desktop thumbnails are made from; Flickr offers
    /// it for photos at least that large.
    public static func smallRendition(of image: OriginImage) -> OriginImage? {
        guard max(image.width, image.height) >= 320,
              let small = try? VariantRenderer.render(image.data, contentType: image.contentType, spec: .fit(320),
                                                      outputType: "image/jpeg") else { return nil }
        return OriginImage(data: small.data, contentType: "image/jpeg", width: small.width, height: small.height)
    }

    /// The member the demo signs in as: the owner of every 12th demo photo.
    public static let account = OriginAccount(nsid: "10000001@N01", username: "ansel", fullname: "Ansel Adams")

    /// `make(count:seed:scale:)` as a signed-in member's library: the same public photos, plus the demo
    /// account's private, friends-only, family-only and friends-and-family photos, two videos (one private),
    /// and its albums, one of them empty and one with a title that is no file name. `make` itself stays as
    /// it was, so a query import (getRecent) of it lists what it always listed.
    /// `library` with camera-sized originals: each JPEG original followed by `padding` bytes of seeded filler,
    /// which decoders ignore after the end-of-image marker. Tests of what a read costs need 6–14 MB files (what
    /// phones and cameras write) without encoding 24 MP images; the filler differs per photo, so no two
    /// originals share bytes (or an ETag).
    public static func cameraSized(_ library: OriginLibrary, padding: Int) -> OriginLibrary {
        var library = library
        for index in library.photos.indices where library.photos[index].image.contentType == "image/jpeg" {
            var random = SeededGenerator(seed: UInt64(index) &+ 0x5eed)
            var filler = [UInt8](repeating: 0, count: max(0, padding))
            for word in stride(from: 0, to: filler.count, by: 8) {
                let value = random.next()
                for byte in 0..<min(8, filler.count - word) { filler[word + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte))) }
            }
            library.photos[index].image.data.append(contentsOf: filler)
        }
        return library
    }

    public static func account(count: Int = 240, seed: UInt64 = 2024, scale: Int = 1) -> OriginLibrary {
        var library = make(count: count, seed: seed, scale: scale)
        library.accounts = [account]
        let owner = account.nsid
        // (title, public, friends, family, media)
        let extras: [(String, Bool, Bool, Bool, String)] = [
            ("Passport scan", false, false, false, "photo"),
            ("The party", false, true, false, "photo"),
            ("Grandmother's birthday", false, false, true, "photo"),
            ("New house", false, true, true, "photo"),
            ("Harbour timelapse", true, false, false, "video"),
            ("Private clip", false, false, false, "video"),
        ]
        var random = SeededGenerator(seed: seed ^ 0xACC0)
        for (index, extra) in extras.enumerated() {
            let (width, height) = (640 / scale, 480 / scale)
            let imageSeed = random.next()
            let side = min(75, width, height)
            var photo = OriginPhoto(
                id: "\(52_100_000_000 + index * 101)", owner: owner, ownerName: "Ansel Adams", title: extra.0,
                dateTaken: String(format: "2024-%02d-%02d 10:00:00", 1 + index, 3 + index),
                dateUpload: 1_710_000_000 + Int64(index) * 86_400, placeID: places[index % places.count].placeID,
                hasOriginal: extra.4 == "photo", image: renderImage(width: width, height: height, png: false, seed: imageSeed),
                thumbnail: renderImage(width: side, height: side, png: false, seed: imageSeed))
            if let small = smallRendition(of: photo.image) { photo.renditions["n"] = small }
            photo.isPublic = extra.1; photo.isFriend = extra.2; photo.isFamily = extra.3
            photo.media = extra.4
            photo.tags = extra.4 == "video" ? ["video"] : ["family"]
            photo.views = Int64(index)
            library.photos.append(photo)
        }
        let own = library.photos.filter { $0.owner == owner && $0.media == "photo" }
        let publicOwn = own.filter(\.isPublic).map(\.id)
        let id = { (title: String) in library.photos.first { $0.title == title && $0.owner == owner }?.id }
        let albums = [
            OriginAlbum(id: "72157700000000001", owner: owner, title: "Harbour walks", description: "Mornings by the water",
                        photoIDs: Array(publicOwn.prefix(3)) + [id("The party"), id("Harbour timelapse")].compactMap { $0 },
                        dateCreate: 1_710_100_000, dateUpdate: 1_710_200_000),
            OriginAlbum(id: "72157700000000002", owner: owner, title: "Family",
                        photoIDs: [id("Grandmother's birthday"), id("New house"), id("Passport scan")].compactMap { $0 },
                        dateCreate: 1_710_300_000),
            OriginAlbum(id: "72157700000000003", owner: owner, title: "Trips: 2019/2024",
                        photoIDs: Array(publicOwn.suffix(4).reversed()), dateCreate: 1_710_400_000),
            OriginAlbum(id: "72157700000000004", owner: owner, title: "Empty", photoIDs: [], dateCreate: 1_710_500_000),
        ]
        library.albums = albums
        return library
    }

    /// A library of real image files served by another server at `baseURL` + file name (`make bench`):
    /// the Flickr answers point there; this origin holds no bytes.
    public static func external(files: [String], baseURL: String) -> OriginLibrary {
        let photos = files.sorted().enumerated().map { index, path -> OriginPhoto in
            let name = URL(fileURLWithPath: path).lastPathComponent
            let type = name.lowercased().hasSuffix(".png") ? "image/png" : "image/jpeg"
            let owner = photographers[index % photographers.count]
            var photo = OriginPhoto(
                id: "\(53_000_000_000 + index)", owner: owner.owner, ownerName: owner.name,
                title: URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent,
                dateTaken: String(format: "%04d-%02d-%02d 12:00:00", 2019 + index % 6, 1 + index % 12, 1 + index % 28),
                dateUpload: 1_700_000_000 + Int64(index), placeID: places[index % places.count].placeID,
                image: OriginImage(data: Data(), contentType: type, width: 0, height: 0))
            photo.externalURL = baseURL + (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)
            return photo
        }
        return OriginLibrary(photos: photos, places: places)
    }

    /// A landscape-like picture: a sky gradient, a sun and rolling hills, coloured by the seed. Real pixels,
    /// so JPEG sizes vary like photographs' do, not a flat file of one colour.
    public static func renderImage(width: Int, height: Int, png: Bool, seed: UInt64) -> OriginImage {
        var random = SeededGenerator(seed: seed)
        let hue = Double(random.next() % 360) / 360
        let sunX = Double(random.next() % UInt64(width))
        let sunY = Double(random.next() % UInt64(max(1, height / 2)))
        let sunR = Double(max(4, min(width, height) / 8))
        let phase = Double(random.next() % 1000) / 100
        let channels = png ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        let horizon = Double(height) * (0.6 + 0.1 * sin(phase))
        for y in 0..<height {
            for x in 0..<width {
                let hill = horizon + 18 * sin(Double(x) / 37 + phase) + 9 * sin(Double(x) / 11)
                var r, g, b: Double
                if Double(y) > hill {
                    let shade = 0.5 + 0.5 * sin(Double(x * y) / 900 + phase)
                    r = 40 + 50 * shade; g = 90 + 80 * shade * hue; b = 40
                } else {
                    let t = Double(y) / Double(height)
                    r = 80 + 150 * t * hue; g = 120 + 100 * t; b = 230 - 80 * t
                    let dx = Double(x) - sunX, dy = Double(y) - sunY
                    if dx * dx + dy * dy < sunR * sunR { r = 255; g = 220; b = 120 }
                }
                let noise = Double(Int(random.next() % 17) - 8)
                let offset = (y * width + x) * channels
                pixels[offset] = UInt8(max(0, min(255, r + noise)))
                pixels[offset + 1] = UInt8(max(0, min(255, g + noise)))
                pixels[offset + 2] = UInt8(max(0, min(255, b + noise)))
                // Transparency fading towards the top and bottom edges: survives a centre crop of a landscape.
                if png { pixels[offset + 3] = UInt8(255 - 112 * abs(2 * y - height) / max(1, height)) }
            }
        }
        let image = PixelImage(width: width, height: height, channels: channels, pixels: pixels)
        if png {
            return OriginImage(data: try! ImageCodec.encodePNG(image), contentType: "image/png", width: width, height: height)
        }
        return OriginImage(data: try! ImageCodec.encodeJPEG(image, quality: 85), contentType: "image/jpeg",
                           width: width, height: height)
    }
}
