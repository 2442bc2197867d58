// Directory listings and attributes of the mounted tree, built from catalog rows with no I/O.
import Foundation
import PhotoCatalog

/// What `stat` shows for a node. Files are 0444, directories 0555; a photo that is not public at its origin is
/// 0400, and a directory that holds only such photos 0500, so with `default_permissions` and `allow_other`
/// other local users cannot read them. /search is 0755: `rmdir` of a query is a write to /search, which the
/// kernel (`default_permissions`) allows only with the write bit, so the mounting user needs it (with 0555 only
/// root could forget a query). Owner and group are filled by the filesystem layer (the mounting user).
public struct NodeAttributes: Equatable, Sendable {
    public var node: Node
    public var size: Int64
    /// Seconds since 1970: a photo's date taken, a directory's newest photo's.
    public var mtime: Int64
    public var linkCount: UInt32
    /// Only the owner may read it (a private photo, or a directory of nothing else).
    public var isPrivate = false
    /// A photo's names in /albums, /favorites and /people (each one more link); `TreeBuilder.linkCount` adds
    /// /recent's at reply time.
    public var albumLinks: UInt32 = 0

    public var inode: UInt64 { node.inode }
    public var isDirectory: Bool { node.isDirectory }
    /// Permission bits: read-only, directories searchable; for everyone, or for the owner only when private;
    /// /search writable by its owner.
    public var permissions: UInt32 {
        if node == .search { return 0o755 }
        switch (isDirectory, isPrivate) {
        case (true, false): return 0o555
        case (true, true): return 0o500
        case (false, false): return 0o444
        case (false, true): return 0o400
        }
    }
    /// The I/O size `stat` reports; also the size FUSE reports for directories (st_size of a directory is
    /// not a byte count anywhere; 4096 is what ext4 shows and what tools expect).
    public static let directorySize: Int64 = 4096
}

public struct DirectoryEntry: Equatable, Sendable {
    public var name: String
    public var attributes: NodeAttributes
    public var node: Node { attributes.node }
}

/// A directory's entries in listing order, with a by-name index for lookup.
public struct DirectoryListing: Sendable {
    public let attributes: NodeAttributes
    public let entries: [DirectoryEntry]
    /// Positions by exact name bytes. Keyed by the entries' own strings (shared, not copied): a `[UInt8]` copy
    /// of every name cost ~70 bytes an entry, 20 MB of the 100,000-photo daemon's 286,000 entries.
    private let indexByName: [NameBytes: Int32]

    public init(attributes: NodeAttributes, entries: [DirectoryEntry]) {
        self.attributes = attributes
        self.entries = entries
        var index: [NameBytes: Int32] = [:]
        index.reserveCapacity(entries.count)
        // A listing holds far fewer than 2^31 entries (a catalog's photos are limited far below that).
        for (position, entry) in entries.enumerated() { index[NameBytes(entry.name)] = Int32(truncatingIfNeeded: position) }
        self.indexByName = index
    }

    public func entry(named name: String) -> DirectoryEntry? {
        guard let position = indexByName[NameBytes(name)], entries.indices.contains(Int(position)) else { return nil }
        return entries[Int(position)]
    }
}

/// A name compared and hashed as its exact UTF-8 bytes: the kernel looks names up byte for byte, and Swift's
/// String equality (canonical equivalence) would otherwise match a name that `ls` never showed.
struct NameBytes: Hashable, Sendable {
    let name: String

    init(_ name: String) { self.name = name }

    static func == (lhs: NameBytes, rhs: NameBytes) -> Bool { lhs.name.utf8.elementsEqual(rhs.name.utf8) }

    func hash(into hasher: inout Hasher) {
        var name = name
        name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// How photos are named in a directory of photos.
public enum PhotoNameStyle: Sendable {
    /// `<Title>.<ext>` (regions, recent)
    case title
    /// `<YYYY-MM-DD HH.MM.SS> <Title>.<ext>` (moments), so that `ls` sorts chronologically.
    case moment
}

/// Pure builders: catalog rows in, entries out.
public enum TreeBuilder {
    public static let fallbackTitle = TreeFallback.stem
    public static let fallbackDirectoryName = "Unknown"

    /// A directory's link count is 2 + its subdirectories (`.` and its entry in the parent); counts come from
    /// the catalog's stored numbers, so a negative one counts as 0 and a huge one stops at UInt32.max.
    public static func directoryAttributes(_ node: Node, newest: Int64, subdirectories: Int,
                                           isPrivate: Bool = false) -> NodeAttributes {
        let links = UInt32(clamping: max(0, subdirectories)).addingReportingOverflow(2)
        return NodeAttributes(node: node, size: NodeAttributes.directorySize, mtime: newest,
                              linkCount: links.overflow ? UInt32.max : links.partialValue, isPrivate: isPrivate)
    }

    /// A photo's attributes; `linkCount` is the number of names it has (see `linkCount(of:inRecent:)`).
    /// The size is kept within 0...1 TiB (`CatalogLimits.maxByteSize`, the catalog's own bound), so the layers
    /// below can round it up to blocks or pages without overflowing.
    public static func photoAttributes(_ photo: PhotoRecord, linkCount: UInt32) -> NodeAttributes {
        let size = min(max(photo.byteSize ?? 0, 0), CatalogLimits.maxByteSize)
        return NodeAttributes(node: .photo(seq: photo.seq), size: size, mtime: photo.momentAt, linkCount: linkCount,
                              isPrivate: !photo.visibility.isPublic, albumLinks: extraLinks(of: photo))
    }

    /// A photo's names beyond /regions, /moments, /events and /recent: one in each album that holds it, one in
    /// /favorites when it is a favourite, one under each named person in it.
    static func extraLinks(of photo: PhotoRecord) -> UInt32 {
        let (sum, overflow) = UInt32(clamping: max(0, photo.albumCount))
            .addingReportingOverflow(UInt32(clamping: max(0, photo.markCount)))
        return overflow ? UInt32.max : sum
    }

    /// A photo has a name in /regions, in /moments and in /events (every listed photo is in one event), one in
    /// each album, in /favorites and under each person that holds it (`albumLinks`), and one more while it is
    /// in /recent. /search results are transient names and add none. Saturates instead of overflowing.
    public static func linkCount(albumLinks: UInt32, inRecent: Bool) -> UInt32 {
        let (sum, overflow) = albumLinks.addingReportingOverflow(inRecent ? 4 : 3)
        return overflow ? UInt32.max : sum
    }

    public static func linkCount(of photo: PhotoRecord, inRecent: Bool) -> UInt32 {
        linkCount(albumLinks: extraLinks(of: photo), inRecent: inRecent)
    }

    /// The top directories, always present (an empty /albums, /people or /favorites for a library without
    /// them, so the layout does not depend on what was imported).
    public static func root(newest: Int64) -> DirectoryListing {
        let entries = [("regions", Node.regions), ("moments", .moments), ("recent", .recent), ("albums", .albums),
                       ("people", .people), ("favorites", .favorites), ("events", .events), ("search", .search)]
            .map { name, node in
                DirectoryEntry(name: name, attributes: directoryAttributes(node, newest: newest, subdirectories: 0))
            }
        return DirectoryListing(attributes: directoryAttributes(.root, newest: newest, subdirectories: entries.count),
                                entries: entries)
    }

    /// `/albums`: one directory per album with photos, named by its title and de-duplicated by the source's
    /// album id (two albums called "Holiday" become "Holiday" and "Holiday (72157…)"), in album id order.
    public static func albums(_ albums: [AlbumRecord], newest: Int64) -> DirectoryListing {
        var namer = UniqueNamer()
        let entries = albums.sorted { $0.id < $1.id }.map { album in
            DirectoryEntry(
                name: namer.claim(stem: FileNaming.sanitize(album.title, fallback: fallbackDirectoryName),
                                  id: album.sourceID, extension: nil),
                attributes: directoryAttributes(.album(album.id), newest: album.newestMomentAt, subdirectories: 0,
                                                isPrivate: !album.hasPublicPhotos))
        }
        return DirectoryListing(attributes: directoryAttributes(.albums, newest: newest, subdirectories: entries.count),
                                entries: sortedByName(entries))
    }

    /// `/people`: one directory per named person with photos, named by the name and de-duplicated by the
    /// source's person id as albums are (two people called "Anna" become "Anna" and "Anna (…)"), in person
    /// id order so a name does not move when people are added. Two people whose keys collide (`PersonRecord.key`)
    /// would share an inode: the second is left out.
    public static func people(_ people: [PersonRecord], newest: Int64) -> DirectoryListing {
        var namer = UniqueNamer()
        var keys = Set<Int64>()
        let entries = people.sorted { $0.id < $1.id }.filter { keys.insert($0.key).inserted }.map { person in
            DirectoryEntry(
                name: namer.claim(stem: FileNaming.sanitize(person.name, fallback: fallbackDirectoryName),
                                  id: person.id, extension: nil),
                attributes: directoryAttributes(.person(person.key), newest: person.newestMomentAt, subdirectories: 0,
                                                isPrivate: !person.hasPublicPhotos))
        }
        return DirectoryListing(attributes: directoryAttributes(.people, newest: newest, subdirectories: entries.count),
                                entries: sortedByName(entries))
    }

    /// `/regions`: one directory per region that has photos; region ids order the de-duplication.
    public static func regions(_ regions: [RegionRecord], newest: Int64) -> DirectoryListing {
        var namer = UniqueNamer()
        let entries = regions.sorted { $0.id < $1.id }.map { region in
            DirectoryEntry(
                name: namer.claim(stem: FileNaming.sanitize(region.name, fallback: fallbackDirectoryName),
                                  id: String(region.id), extension: nil),
                attributes: directoryAttributes(.region(region.id), newest: region.newestMomentAt,
                                                subdirectories: region.photographerCount,
                                                isPrivate: !region.hasPublicPhotos))
        }
        return DirectoryListing(attributes: directoryAttributes(.regions, newest: newest,
                                                                subdirectories: entries.count),
                                entries: sortedByName(entries))
    }

    /// `/regions/<Region>`: one directory per photographer with photos there; names de-duplicated by
    /// photographer id, suffixed with the Flickr owner id when two photographers share a display name.
    public static func photographers(in region: RegionRecord, _ photographers: [PhotographerRecord]) -> DirectoryListing {
        var namer = UniqueNamer()
        let entries = photographers.sorted { $0.id < $1.id }.map { photographer in
            DirectoryEntry(
                name: namer.claim(stem: FileNaming.sanitize(photographer.name, fallback: fallbackDirectoryName),
                                  id: photographer.owner, extension: nil),
                attributes: directoryAttributes(.photographer(region: region.id, photographer: photographer.id),
                                                newest: photographer.newestMomentAt, subdirectories: 0,
                                                isPrivate: !photographer.hasPublicPhotos))
        }
        return DirectoryListing(attributes: directoryAttributes(.region(region.id), newest: region.newestMomentAt,
                                                                subdirectories: entries.count,
                                                                isPrivate: !region.hasPublicPhotos),
                                entries: sortedByName(entries))
    }

    /// `/moments`: one directory per year. Only years 1–9999 (`CatalogLimits.yearRange`) have a directory: a
    /// name shows four digits, and the catalog leaves photos of other years out anyway. A year given twice
    /// is listed once.
    public static func years(_ years: [YearRecord], newest: Int64) -> DirectoryListing {
        var seen = Set<Int>()
        let shown = years.filter { CatalogLimits.yearRange.contains($0.year) && seen.insert($0.year).inserted }
        let entries = shown.map { year in
            DirectoryEntry(name: yearName(year.year),
                           attributes: directoryAttributes(.year(year.year), newest: year.newestMomentAt,
                                                           subdirectories: 0, isPrivate: !year.hasPublicPhotos))
        }
        return DirectoryListing(attributes: directoryAttributes(.moments, newest: newest,
                                                                subdirectories: entries.count),
                                entries: entries)
    }

    /// A directory of photos. `photos` may come in any order: names are handed out in import order (seq) so
    /// they stay stable; entries are listed in `listingOrder` (the order given).
    /// `fileExtension` overrides the photo's own (a square-thumbnail mount shows every photo as `.png`);
    /// `servedExtension`, when given, names each photo's (a sized mount serves a HEIC original as JPEG).
    /// A seq given twice is listed once (its first occurrence), so no two entries share a name or an inode.
    public static func photos(_ photos: [PhotoRecord], in node: Node, style: PhotoNameStyle,
                              fileExtension: String? = nil, servedExtension: ((PhotoRecord) -> String)? = nil,
                              linkCount: (PhotoRecord) -> UInt32) -> DirectoryListing {
        // Names are claimed in seq order (so a photo's name does not depend on the listing's order) and a seq
        // given twice is listed once, at its first position. Positions are sorted, never records: copying
        // every record (a dozen retained fields) three times was a third of building the 60,000 entries of a
        // 20,000-photo mount (perf).
        var bySeq = Array(photos.indices)
        if !photos.indices.dropFirst().allSatisfy({ photos[$0 - 1].seq < photos[$0].seq }) {
            bySeq.sort { (photos[$0].seq, $0) < (photos[$1].seq, $1) }
        }
        var namer = UniqueNamer()
        var names = [String?](repeating: nil, count: photos.count)
        var previous: Int64?
        for index in bySeq where photos[index].seq != previous {
            let photo = photos[index]
            previous = photo.seq
            names[index] = namer.claim(stem: stem(of: photo, style: style), id: photo.id,
                                       extension: fileExtension ?? servedExtension?(photo) ?? photo.fileExtension)
        }
        var entries: [DirectoryEntry] = []
        entries.reserveCapacity(photos.count)
        for (index, name) in names.enumerated() {
            guard let name else { continue }
            entries.append(DirectoryEntry(name: name, attributes: photoAttributes(photos[index], linkCount: linkCount(photos[index]))))
        }
        if case .year = node {
            // Photos of one second (a burst; the bench's generated dates) in name order, the order `ls`, file
            // managers and viewers step through: the listing order is what prefetch warms "the next" from, and
            // with ties in seq order (Immich lists newest first, ties by id) it warmed photos the viewer was not
            // about to open (bench/immich-notes.md). Names start with the moment, so this is name order.
            // A year's photos come in moment order; mtime is the moment.
            entries.sort { a, b in
                if a.attributes.mtime != b.attributes.mtime { return a.attributes.mtime < b.attributes.mtime }
                return a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
            }
        }
        let newest = photos.map(\.momentAt).max() ?? 0
        // A directory of only private photos is private too, except /recent and /favorites, which are always there.
        let isPrivate = node != .recent && node != .favorites && !photos.isEmpty && !photos.contains { $0.visibility.isPublic }
        return DirectoryListing(attributes: directoryAttributes(node, newest: newest, subdirectories: 0,
                                                                isPrivate: isPrivate),
                                entries: entries)
    }

    /// The name of a photo without extension or suffix.
    public static func stem(of photo: PhotoRecord, style: PhotoNameStyle) -> String {
        let title = FileNaming.sanitize(photo.title, fallback: fallbackTitle)
        switch style {
        case .title: return title
        case .moment: return momentPrefix(photo.momentAt) + " " + title
        }
    }

    /// A year's directory name: four digits, zero-padded ("0042"); years outside 1–9999 are clamped into it
    /// (`years` never lists them).
    public static func yearName(_ year: Int) -> String {
        let clamped = min(max(year, CatalogLimits.yearRange.lowerBound), CatalogLimits.yearRange.upperBound)
        let digits = String(clamped)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// "YYYY-MM-DD HH.MM.SS" in UTC: Flickr's date taken carries no zone, and the catalog stores it read as UTC,
    /// so this prints the camera's own clock. Dots, not colons: colons are invalid in names on Windows/macOS
    /// copies. Moments outside years 1–9999 (`CatalogLimits.momentRange`) are clamped to its ends
    /// ("0001-01-01 00.00.00", "9999-12-31 23.59.59"): four digits cannot show other years, and gmtime_r fails
    /// beyond a 32-bit year. The catalog leaves such photos out; this only keeps the tree from trapping.
    public static func momentPrefix(_ seconds: Int64) -> String {
        let clamped = min(max(seconds, CatalogLimits.momentRange.lowerBound), CatalogLimits.momentRange.upperBound)
        var time = time_t(clamped)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "1970-01-01 00.00.00" }
        // Formatted by hand: String(format:) took a fifth of the time of building a 17,000-photo listing.
        var bytes = [UInt8]()
        bytes.reserveCapacity(19)
        func append(_ value: Int32, digits: Int) {
            var divisor: Int32 = 1
            for _ in 1..<digits { divisor *= 10 }
            // Every field is non-negative and below 10^digits here (years 1–9999 after clamping), so each
            // digit is 0...9; the max(0, …) only guards a broken gmtime.
            var rest = max(0, value)
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8((rest / divisor) % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        append(parts.tm_year + 1900, digits: 4); bytes.append(UInt8(ascii: "-"))
        append(parts.tm_mon + 1, digits: 2); bytes.append(UInt8(ascii: "-"))
        append(parts.tm_mday, digits: 2); bytes.append(UInt8(ascii: " "))
        append(parts.tm_hour, digits: 2); bytes.append(UInt8(ascii: "."))
        append(parts.tm_min, digits: 2); bytes.append(UInt8(ascii: "."))
        append(parts.tm_sec, digits: 2)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func sortedByName(_ entries: [DirectoryEntry]) -> [DirectoryEntry] {
        // Case-insensitive order, as cs193p's TopRegions lists them; `ls` re-sorts anyway.
        entries.sorted { ($0.name.lowercased(), $0.name) < ($1.name.lowercased(), $1.name) }
    }
}
