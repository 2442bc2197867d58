// The migration that adds settled events (/events): a finished event keeps its name and members in the library.
import GRDB

extension Schema {
    static let eventsMigration = "events: settled events and their photos"
    static let openEventsMigration = "events: when the last settle's open events end"

    /// The tables `eventsMigration` creates (for `knownTables`).
    static let eventTables: Set<String> = ["event", "event_photo"]

    /// `PRAGMA user_version` for a migration: its place in the list. Computed, not written as a number, so
    /// migrations appended by two branches at once each still end with their own number once merged.
    static func userVersion(of identifier: String) -> Int {
        (migrationIdentifiers.firstIndex(of: identifier) ?? migrationIdentifiers.count - 1) + 1
    }

    /// `event.id` is the smallest member seq when the event settled: the number its directory's inode carried
    /// while it was still open, so settling changes no inode; a seq is never reused, so no two events share it.
    /// A photo is in one event at most (`event_photo` keyed by the photo). Deleting a photo deletes its
    /// membership; an event left without members stays (its name is then reserved), and is listed nowhere.
    static func registerEventsMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(eventsMigration, foreignKeyChecks: .immediate) { db in
            try db.execute(sql: """
                CREATE TABLE event (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    first_at INTEGER NOT NULL,
                    last_at INTEGER NOT NULL,
                    settled_at INTEGER NOT NULL
                );
                CREATE TABLE event_photo (
                    photo_seq INTEGER PRIMARY KEY REFERENCES photo(seq) ON DELETE CASCADE,
                    event_id INTEGER NOT NULL REFERENCES event(id) ON DELETE CASCADE
                );
                CREATE INDEX event_photo_by_event ON event_photo(event_id);
                PRAGMA user_version = \(userVersion(of: eventsMigration));
                """)
        }
    }

    /// `library_state.open_events_last_at`: the last photo's moment of the open event that ended first at the
    /// last settle (NULL: none was open, or the library was never settled). Once that moment is 48 hours old,
    /// the next import settles the events before it writes (`Catalog.openEventsLastAt`, `LibraryEvents.settleAged`).
    static func registerOpenEventsMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(openEventsMigration, foreignKeyChecks: .immediate) { db in
            try db.execute(sql: """
                ALTER TABLE library_state ADD COLUMN open_events_last_at INTEGER;
                PRAGMA user_version = \(userVersion(of: openEventsMigration));
                """)
        }
    }
}
