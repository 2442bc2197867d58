// The catalog's SQLite schema as versioned GRDB migrations; docs/catalog.md describes the same tables.
import GRDB

enum Schema {
    /// The region every photo without a resolvable place goes to, so every photo is reachable under /regions.
    static let fallbackRegion = "Unknown Region"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: photos, photographers, regions, places, recents") { db in
            try db.execute(sql: """
                CREATE TABLE photographer (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    owner TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL
                );
                CREATE TABLE region (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL UNIQUE,
                    photo_count INTEGER NOT NULL DEFAULT 0,
                    photographer_count INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE place (
                    place_id TEXT PRIMARY KEY,
                    name TEXT,
                    region_id INTEGER NOT NULL REFERENCES region(id)
                );
                CREATE TABLE photo (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    title TEXT NOT NULL,
                    description TEXT NOT NULL DEFAULT '',
                    photographer_id INTEGER NOT NULL REFERENCES photographer(id),
                    region_id INTEGER NOT NULL REFERENCES region(id),
                    place_id TEXT,
                    date_taken TEXT,
                    moment_at INTEGER NOT NULL,
                    moment_year INTEGER NOT NULL,
                    uploaded_at INTEGER,
                    original_url TEXT NOT NULL,
                    thumbnail_url TEXT,
                    byte_size INTEGER,
                    content_type TEXT,
                    etag TEXT,
                    last_modified TEXT,
                    latitude REAL,
                    longitude REAL,
                    available INTEGER GENERATED ALWAYS AS (byte_size IS NOT NULL AND content_type IS NOT NULL) VIRTUAL
                );
                CREATE INDEX photo_by_region ON photo(region_id, photographer_id, seq);
                CREATE INDEX photo_by_moment ON photo(moment_year, moment_at);
                CREATE TABLE recent (
                    photo_seq INTEGER PRIMARY KEY REFERENCES photo(seq) ON DELETE CASCADE,
                    opened_at REAL NOT NULL
                );
                CREATE INDEX recent_by_time ON recent(opened_at);
                CREATE TABLE library_state (
                    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                    generation INTEGER NOT NULL,
                    recent_generation INTEGER NOT NULL
                );
                INSERT INTO library_state VALUES (1, 1, 1);
                """)
        }
        return migrator
    }
}
