// A library's events now: clustered from the catalog's photos around its settled events, storing those that
// settled (at import, and at mount when the library can be written).
import Foundation
import PhotoCatalog
import PhotoTree

public enum LibraryEvents {
    /// The events of the library as of `now` (seconds since 1970). On a writable library the clustering runs
    /// inside one write transaction and stores what settled, so a mount and an import doing this at once
    /// agree; on a read-only library it runs on what was read and stores nothing (events that settled then
    /// settle again at the next writable open, the same way).
    public static func settle(_ catalog: Catalog, now: Int64, rules: EventRules = EventRules()) throws -> [PhotoEvent] {
        guard !catalog.isReadOnly else { return try current(catalog, now: now, rules: rules) }
        var events: [PhotoEvent] = []
        try catalog.settleEvents { photos, stored in
            let result = EventClustering.cluster(photos, stored: stored, now: now, rules: rules)
            events = result.events
            return result.settlement
        }
        return events
    }

    /// Before an import writes its photos: the events that ended more than 48 hours before `now` but were still
    /// open at the last settle are settled now, with the photos they have. Clustered only after the import, such
    /// an event took in the new photos first: an evening imported one day and that day's morning imported three
    /// days later made it "… 20.25 Porto", and photos taken three hours after it joined it. Returns the events,
    /// or nil when no event open at the last settle has ended 48 hours ago (one read of what the last settle
    /// left open, `Catalog.openEventsLastAt`; no clustering).
    public static func settleAged(_ catalog: Catalog, now: Int64, rules: EventRules = EventRules()) throws -> [PhotoEvent]? {
        guard !catalog.isReadOnly, let openUntil = try catalog.openEventsLastAt(),
              openUntil < EventClustering.settlingCutoff(now: now, rules: rules) else { return nil }
        return try settle(catalog, now: now, rules: rules)
    }

    /// The events as of `now` clustered from photos already read (a mount's scan), or nil when an event
    /// settles now on a writable library: that must go through `settle`, which clusters again inside its write
    /// so that an import settling at the same time agrees. A mount after an import has nothing to settle (the
    /// import did it), so it neither reads every photo a second time nor writes.
    /// `stored`: the settled events if the caller read them already (nil: read now).
    public static func withoutSettling(_ catalog: Catalog, photos: [EventPhoto], stored: [StoredEvent]? = nil,
                                       now: Int64, rules: EventRules = EventRules()) throws -> [PhotoEvent]? {
        let result = EventClustering.cluster(photos, stored: try stored ?? catalog.storedEvents(), now: now, rules: rules)
        guard result.settlement.isEmpty || catalog.isReadOnly else { return nil }
        return result.events
    }

    /// The events as of `now` without writing anything.
    public static func current(_ catalog: Catalog, now: Int64, rules: EventRules = EventRules()) throws -> [PhotoEvent] {
        EventClustering.cluster(try catalog.eventPhotos(), stored: try catalog.storedEvents(), now: now, rules: rules).events
    }

    /// What `photofs status` says of events: "events: 3176 (3150 settled)".
    public static func summary(_ events: [PhotoEvent]) -> String {
        "events: \(events.count) (\(events.filter(\.isSettled).count) settled)"
    }
}
