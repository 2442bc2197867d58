// Which directory or file an inode number stands for; the number is computed from catalog ids, so it is the
// same across remounts and needs no table.
import Foundation

/// Every object in the mounted tree. A photo is one node wherever it appears (/regions, /moments, /recent, /albums,
/// /events, /search, /people, /favorites), so it has one inode number and `ls -i` shows the same number in every tree.
public enum Node: Hashable, Sendable {
    case root
    case regions
    case moments
    case recent
    case albums
    case events
    case search
    /// `/people` and `/favorites` (named people and favourites of an Immich library).
    case people
    case favorites
    case region(Int64)
    case photographer(region: Int64, photographer: Int64)
    case year(Int)
    case album(Int64)
    case photo(seq: Int64)
    /// `/events/<Year>`.
    case eventYear(Int)
    /// `/events/<Year>/<Event>`, by the event's key (`PhotoEvent.key`: a settled event's id, else its smallest
    /// member seq not already an id; the id it gets when it settles).
    case event(Int64)
    /// `/search/<query>`, by the number the mount gave the query (`RecentSearches`); it means nothing across mounts.
    case searchResults(Int64)
    /// `/people/<Name>`, by `PersonRecord.key` (a hash of the source's person id).
    case person(Int64)

    // The top byte of an inode number says what kind of node it is; the rest holds catalog ids.
    // Region and photographer ids each get 28 bits (268 million), far above any Flickr-style library.
    // The catalog hands out only ids inside these fields (`CatalogLimits.seqRange`, `.directoryIDRange`,
    // `.yearRange`). Any other value (negative, huge) is cut to its field's low bits instead of trapping:
    // such a node may then share its number with another, but the daemon stays up.
    private static let kindShift: UInt64 = 56
    private static let payloadMask: UInt64 = (1 << kindShift) - 1
    private static let idBits: UInt64 = 28
    private static let idMask: UInt64 = (1 << idBits) - 1
    private enum Kind: UInt64 {
        case fixed = 0, photo = 1, region = 2, photographer = 3, year = 4, album = 5, eventYear = 6, event = 7,
             searchResults = 8, person = 9
    }

    /// Bits of the payload that a catalog id fills, for any Int64 or Int, without trapping.
    private static func field<Value: BinaryInteger>(_ value: Value, mask: UInt64) -> UInt64 {
        UInt64(truncatingIfNeeded: value) & mask
    }

    public var inode: UInt64 {
        switch self {
        case .root: return 1 // FUSE_ROOT_ID
        case .regions: return 2
        case .moments: return 3
        case .recent: return 4
        case .albums: return 5
        case .events: return 6
        case .search: return 7
        case .people: return 8
        case .favorites: return 9
        case .photo(let seq): return Kind.photo.rawValue << Node.kindShift | Node.field(seq, mask: Node.payloadMask)
        case .region(let id): return Kind.region.rawValue << Node.kindShift | Node.field(id, mask: Node.payloadMask)
        case .photographer(let region, let photographer):
            return Kind.photographer.rawValue << Node.kindShift | Node.field(region, mask: Node.idMask) << Node.idBits
                | Node.field(photographer, mask: Node.idMask)
        case .year(let year): return Kind.year.rawValue << Node.kindShift | Node.field(year, mask: Node.payloadMask)
        case .album(let id): return Kind.album.rawValue << Node.kindShift | Node.field(id, mask: Node.payloadMask)
        case .eventYear(let year):
            return Kind.eventYear.rawValue << Node.kindShift | Node.field(year, mask: Node.payloadMask)
        case .event(let key): return Kind.event.rawValue << Node.kindShift | Node.field(key, mask: Node.payloadMask)
        case .searchResults(let number):
            return Kind.searchResults.rawValue << Node.kindShift | Node.field(number, mask: Node.payloadMask)
        case .person(let key): return Kind.person.rawValue << Node.kindShift | Node.field(key, mask: Node.payloadMask)
        }
    }

    public init?(inode: UInt64) {
        let payload = inode & ((1 << Node.kindShift) - 1)
        switch Kind(rawValue: inode >> Node.kindShift) {
        case .fixed:
            switch inode {
            case 1: self = .root
            case 2: self = .regions
            case 3: self = .moments
            case 4: self = .recent
            case 5: self = .albums
            case 6: self = .events
            case 7: self = .search
            case 8: self = .people
            case 9: self = .favorites
            default: return nil
            }
        case .photo: self = .photo(seq: Int64(payload))
        case .region: self = .region(Int64(payload))
        case .photographer:
            self = .photographer(region: Int64(payload >> Node.idBits), photographer: Int64(payload & Node.idMask))
        case .year: self = .year(Int(payload))
        case .album: self = .album(Int64(payload))
        case .eventYear: self = .eventYear(Int(payload))
        case .event: self = .event(Int64(payload))
        case .searchResults: self = .searchResults(Int64(payload))
        case .person: self = .person(Int64(payload))
        case nil: return nil
        }
    }

    public var isDirectory: Bool {
        if case .photo = self { return false }
        return true
    }
}
