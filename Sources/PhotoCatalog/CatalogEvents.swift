// What /events is computed from: each photo's time and place, and the settled events a library keeps so that a
// finished event never changes its name or members.
import Foundation
import GRDB

/// One photo as event clustering sees it: when (the camera's clock read as UTC, `photo.moment_at`) and where.
public struct EventPhoto: Equatable, Sendable {
    public var seq: Int64
    public var time: Int64
    public var latitude: Double?
    public var longitude: Double?
    /// The place's own name as the origin gave it ("Lisbon", or Flickr's "Lisbon, Lisboa, Portugal").
    public var placeName: String?
    /// The region the place resolved to; nil for the fallback region, which names nothing the origin said.
    public var regionName: String?

    public init(seq: Int64, time: Int64, latitude: Double? = nil, longitude: Double? = nil, placeName: String? = nil,
                regionName: String? = nil) {
        self.seq = seq; self.time = time; self.latitude = latitude; self.longitude = longitude
        self.placeName = placeName; self.regionName = regionName
    }
}

/// One photo of a mount's scan (`Catalog.listingRowsOfAllPhotos`): its listing row, its stored `moment_year`
/// (nil when not an integer) and its place for event clustering. Only the fields a listing row has are kept,
/// not a whole `PhotoRecord` (425 bytes a row with it, half that without: 42 of the 100,000-photo daemon's
/// 137 MB peak heap were these rows, held while every listing is built).
public struct ScannedPhoto: Sendable {
    private let fields: PhotoRecord.ListingFields
    public let storedYear: Int64?
    private let latitude: Double?
    private let longitude: Double?
    private let placeName: String?
    private let regionName: String?

    /// A scanned row's checked fields with its stored year and place.
    init(_ fields: PhotoRecord.ListingFields, storedYear: Int64?, latitude: Double?, longitude: Double?,
         placeName: String?, regionName: String?) {
        self.fields = fields
        self.storedYear = storedYear
        self.latitude = latitude; self.longitude = longitude; self.placeName = placeName; self.regionName = regionName
    }

    public var seq: Int64 { fields.seq }
    public var photographerID: Int64 { fields.photographerID }
    public var regionID: Int64 { fields.regionID }
    public var momentAt: Int64 { fields.momentAt }

    /// The listing row, as `PhotoRecord.decode(listingRow:)` makes it.
    public var photo: PhotoRecord { PhotoRecord(listing: fields) }

    /// Whether everyone may see it (what makes a folder of it 0555).
    public var isPublic: Bool { fields.visibility.isPublic }

    /// The photo as event clustering sees it.
    public var event: EventPhoto {
        EventPhoto(seq: fields.seq, time: fields.momentAt, latitude: latitude, longitude: longitude,
                   placeName: placeName, regionName: regionName)
    }
}

/// An event the library keeps as it was when it settled (its last photo more than 48 hours old): its name,
/// first and last moment, and members. `id` is the smallest member seq at the time it settled, the same
/// number its directory's inode carried before, so settling changes no inode.
public struct StoredEvent: Equatable, Sendable {
    public var id: Int64
    public var name: String
    public var firstAt: Int64
    public var lastAt: Int64
    public var members: [Int64]

    public init(id: Int64, name: String, firstAt: Int64, lastAt: Int64, members: [Int64]) {
        self.id = id; self.name = name; self.firstAt = firstAt; self.lastAt = lastAt; self.members = members
    }
}

/// What one clustering decided to keep: events that settled now, and photos that joined an event settled
/// earlier (a photo imported later that falls inside it).
public struct EventSettlement: Equatable, Sendable {
    public var settled: [StoredEvent]
    public var joined: [(eventID: Int64, seq: Int64)]
    /// The last photo's moment of the open event (not settled yet) that ended first; nil when none is open.
    public var openEventsLastAt: Int64?

    public init(settled: [StoredEvent] = [], joined: [(eventID: Int64, seq: Int64)] = [], openEventsLastAt: Int64? = nil) {
        self.settled = settled; self.joined = joined; self.openEventsLastAt = openEventsLastAt
    }

    public static func == (lhs: EventSettlement, rhs: EventSettlement) -> Bool {
        lhs.settled == rhs.settled && lhs.joined.map(\.eventID) == rhs.joined.map(\.eventID)
            && lhs.joined.map(\.seq) == rhs.joined.map(\.seq) && lhs.openEventsLastAt == rhs.openEventsLastAt
    }

    public var isEmpty: Bool { settled.isEmpty && joined.isEmpty }
}

extension Catalog {
    /// Every listed photo's time and place, in seq order: the input of event clustering (one scan of the
    /// photo table with key lookups of its place and region).
    public func eventPhotos() throws -> [EventPhoto] {
        try read { db in try Catalog.eventPhotos(self, db) }
    }

    /// The seqs of the listed photos that are public: an event of none of them is a private directory (0500),
    /// so an `allow_other` mount does not show its name — a date and a place — to other users.
    public func publicPhotoSeqs() throws -> Set<Int64> {
        try read { db in
            Set(try Int64.fetchAll(db, sql: """
                SELECT p.seq FROM photo p WHERE \(CatalogLimits.usablePhotoSQL("p")) AND \(CatalogLimits.isPublicSQL("p"))
                """))
        }
    }

    /// The settled events with their members (a member deleted since is gone with its row), by id.
    public func storedEvents() throws -> [StoredEvent] {
        try read { db in try Catalog.storedEvents(self, db) }
    }

    /// Runs `decide` on the photos and settled events as one write transaction reads them, and stores what it
    /// returns, so a mount and an import settling at once cannot both settle the same photos. Events are
    /// derived data: the change counter does not move (settling changes no name, member or inode a mount shows).
    /// Settled events or joins naming a photo the library no longer holds are skipped; an event id already
    /// stored is left as it is.
    @discardableResult
    public func settleEvents(_ decide: ([EventPhoto], [StoredEvent]) -> EventSettlement) throws -> EventSettlement {
        try write { db in
            let settlement = decide(try Catalog.eventPhotos(self, db), try Catalog.storedEvents(self, db))
            let insertEvent = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO event(id, name, first_at, last_at, settled_at)
                VALUES (?, ?, ?, ?, CAST(strftime('%s', 'now') AS INTEGER))
                """)
            // OR IGNORE: a photo is in one event at most (primary key); one already stored stays where it is.
            let insertMember = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO event_photo(event_id, photo_seq) SELECT ?, seq FROM photo WHERE seq = ?
                """)
            for event in settlement.settled {
                try insertEvent.execute(arguments: [event.id, event.name, event.firstAt, event.lastAt])
                for seq in event.members { try insertMember.execute(arguments: [event.id, seq]) }
            }
            for join in settlement.joined {
                try insertMember.execute(arguments: [join.eventID, join.seq])
                try db.cachedStatement(sql: """
                    UPDATE event SET first_at = min(first_at, (SELECT moment_at FROM photo WHERE seq = ?1)),
                                     last_at = max(last_at, (SELECT moment_at FROM photo WHERE seq = ?1))
                    WHERE id = ?2 AND EXISTS (SELECT 1 FROM photo WHERE seq = ?1)
                    """).execute(arguments: [join.seq, join.eventID])
            }
            try db.cachedStatement(sql: "UPDATE library_state SET open_events_last_at = ?")
                .execute(arguments: [settlement.openEventsLastAt])
            return settlement
        }
    }

    /// What the last settle left open (`EventSettlement.openEventsLastAt`): nil when nothing, or when the library
    /// was never settled. An import settles again before it writes once this is 48 hours old.
    public func openEventsLastAt() throws -> Int64? {
        try read { db in
            guard let row = try? Row.fetchOne(db, sql: "SELECT open_events_last_at FROM library_state") else { return nil }
            return ColumnReader(row, table: "library_state").lenientInteger(0)
        }
    }

    /// How many events the library has settled (what `photofs status` can show without clustering).
    public func storedEventCount() throws -> Int {
        try read { db in
            try Catalog.integer(db, sql: "SELECT count(*) FROM event", arguments: []).map { Int(clamping: $0) } ?? 0
        }
    }

    /// Place names by place id and region names by id, as `eventPhotos` joins them (empty names and the
    /// fallback region, which names nothing the origin said, left out).
    static func eventPlaceNames(_ db: Database) throws -> (places: [String: String], regions: [Int64: String]) {
        var places: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT place_id, name FROM place") {
            let reader = ColumnReader(row, table: "place")
            guard let id = reader.lenientText(0), let name = reader.lenientText(1), !name.isEmpty else { continue }
            places[id] = places[id] ?? name
        }
        var regions: [Int64: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, name FROM region") {
            let reader = ColumnReader(row, table: "region")
            guard let id = reader.lenientInteger(0), let name = reader.lenientText(1), !name.isEmpty,
                  name != Schema.fallbackRegion else { continue }
            regions[id] = regions[id] ?? name
        }
        return (places, regions)
    }

    private static func eventPhotos(_ catalog: Catalog, _ db: Database) throws -> [EventPhoto] {
        try catalog.decodeAll(Row.fetchCursor(db, sql: """
            SELECT p.seq, p.moment_at, p.latitude, p.longitude, pl.name, r.name
            FROM photo p LEFT JOIN place pl ON pl.place_id = p.place_id LEFT JOIN region r ON r.id = p.region_id
            WHERE \(CatalogLimits.usablePhotoSQL("p")) ORDER BY p.seq
            """)) { row in
            var reader = ColumnReader(row, table: "photo")
            reader.key = "seq \(ColumnReader.keyText(reader.value(0)))"
            let region = reader.lenientText(5).flatMap { $0.isEmpty || $0 == Schema.fallbackRegion ? nil : $0 }
            return EventPhoto(seq: try reader.integer(0, "seq", in: CatalogLimits.seqRange),
                              time: try reader.integer(1, "moment_at", in: CatalogLimits.momentRange),
                              latitude: reader.lenientReal(2), longitude: reader.lenientReal(3),
                              placeName: reader.lenientText(4).flatMap { $0.isEmpty ? nil : $0 }, regionName: region)
        }
    }

    private static func storedEvents(_ catalog: Catalog, _ db: Database) throws -> [StoredEvent] {
        var members: [Int64: [Int64]] = [:]
        // One row per photo of a settled event (100,000 in a library of as many photos): read from the statement.
        _ = try catalog.decodeEach(db, sql: "SELECT event_id, photo_seq FROM event_photo ORDER BY event_id, photo_seq",
                                   table: "event_photo") { reader in
            guard let event = reader.lenientInteger(0), let seq = reader.lenientInteger(1) else { return }
            members[event, default: []].append(seq)
        }
        return try catalog.decodeAll(Row.fetchCursor(db, sql: "SELECT id, name, first_at, last_at FROM event ORDER BY id")) { row in
            var reader = ColumnReader(row, table: "event")
            reader.key = "id \(ColumnReader.keyText(reader.value(0)))"
            let id = try reader.integer(0, "id", in: CatalogLimits.seqRange)
            let first = try reader.integer(2, "first_at", in: CatalogLimits.momentRange)
            let last = try reader.integer(3, "last_at", in: CatalogLimits.momentRange)
            guard first <= last else { throw reader.bad("first_at \(first) is after last_at \(last)") }
            return StoredEvent(id: id, name: try reader.text(1, "name"), firstAt: first, lastAt: last,
                               members: members[id] ?? [])
        }
    }
}
