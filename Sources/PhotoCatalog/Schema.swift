// The catalog's SQLite schema as versioned GRDB migrations; docs/catalog.md describes the same tables.
// v2 adds what sized mounts need: every Flickr rendition (url_* with its size), the size of each rendered
// variant (so `ls -l` and remounts know it without rendering), and square thumbnails themselves (as the
// MVCNetworking sample keeps thumbnails in its store). A changed original drops its variants (trigger).
// v3 adds what following an account needs: who may see each photo, tags, views and last update, albums
// (photosets) with their ordered members, and per-listing sync state (an interrupted import resumes from it).
// v4 adds the freedesktop thumbnails mounts wrote into their users' caches (by file URI), so a photo deleted
// or replaced while nothing was mounted still has its thumbnails removed at the next mount.
// v5 adds what a folder import remembers of each file (path, device, inode, size, mtime, content hashes, its
// photo), and keeps a photo's variants and thumbnails when only its file:// URL moved (a file renamed or moved).
// Every migration ends by setting `PRAGMA user_version` to its number, so the file says which schema it holds.
import GRDB

enum Schema {
    /// `PRAGMA application_id` of every photofs library: ASCII "PHFS". SQLite keeps it at offset 68 of the file
    /// header, so `file(1)` and photofs itself can tell a library from another application's database without
    /// guessing from table names (the previous photofs left it 0; such a library is adopted and marked).
    static let applicationID: Int32 = 0x5048_4653

    /// The schema version this photofs writes and reads up to: `PRAGMA user_version` of an up-to-date library,
    /// and the number of migrations below. A library with a higher number was made by a newer photofs.
    static var version: Int32 { Int32(migrationIdentifiers.count) }

    /// GRDB's identifiers of the migrations below, in order; one unknown to this list means a newer photofs.
    static let migrationIdentifiers = migrator.migrations

    /// Every table the migrations below create (GRDB's `grdb_migrations` included). A file with any other
    /// table is not left to photofs to migrate or write. LibraryIdentityTests checks the list against a new library.
    static let knownTables: Set<String> = Set<String>([
        "photographer", "region", "place", "photo", "recent", "library_state", "rendition", "variant", "thumbnail",
        "album", "album_photo", "sync_state", "removed_photo", "desktop_thumbnail", "folder_file", "grdb_migrations",
        "favorite_photo", "person", "person_photo", "folder_refused_file",
    ]).union(eventTables).union(searchTables)

    /// The region every photo without a resolvable place goes to, so every photo is reachable under /regions.
    static let fallbackRegion = "Unknown Region"

    /// Region counts read from this index alone. Without it each count looked up every photo row of the region
    /// (for `available`): recounting after each 500-photo page of a 100,000-photo import read the whole photo
    /// table 200 times (370 ms a recount at the end, 18 ms with the index), and the import took 45 s of CPU
    /// and 67 s; with the index 18 s of CPU and 60 s, the origin's 200 pages alone taking 53 s. Created on
    /// every writable open, outside the migrations (see `Catalog.openWritable`). A migration that drops,
    /// renames or rebuilds `available` must drop this index first (SQLite refuses to drop an indexed column).
    static let regionCountIndex = "CREATE INDEX IF NOT EXISTS photo_available_by_region ON photo(region_id, available, photographer_id)"

    /// Every migration checks foreign keys as it writes (`.immediate`), not the whole file after it (GRDB's
    /// default): a library with one row breaking a foreign key (edited by hand) would otherwise be refused whole
    /// at its upgrade, where any other bad row is left out. None of them rebuilds a table, which is what the
    /// deferred check is for. A new migration that rebuilds one must say `.deferred` and tolerate such rows.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: photos, photographers, regions, places, recents", foreignKeyChecks: .immediate) { db in
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
                PRAGMA application_id = \(applicationID);
                PRAGMA user_version = 1;
                """)
        }
        migrator.registerMigration("v2: renditions, variants, thumbnails", foreignKeyChecks: .immediate) { db in
            try db.execute(sql: """
                CREATE TABLE rendition (
                    photo_seq INTEGER NOT NULL REFERENCES photo(seq) ON DELETE CASCADE,
                    label TEXT NOT NULL,
                    url TEXT NOT NULL,
                    width INTEGER NOT NULL,
                    height INTEGER NOT NULL,
                    PRIMARY KEY (photo_seq, label)
                ) WITHOUT ROWID;
                CREATE TABLE variant (
                    spec TEXT NOT NULL,
                    photo_seq INTEGER NOT NULL REFERENCES photo(seq) ON DELETE CASCADE,
                    source_url TEXT NOT NULL,
                    byte_size INTEGER NOT NULL,
                    width INTEGER NOT NULL,
                    height INTEGER NOT NULL,
                    content_type TEXT NOT NULL,
                    unchanged INTEGER NOT NULL,
                    PRIMARY KEY (spec, photo_seq)
                ) WITHOUT ROWID;
                CREATE INDEX variant_by_photo ON variant(photo_seq);
                CREATE TABLE thumbnail (
                    photo_seq INTEGER NOT NULL REFERENCES photo(seq) ON DELETE CASCADE,
                    spec TEXT NOT NULL,
                    data BLOB NOT NULL,
                    PRIMARY KEY (photo_seq, spec)
                );
                CREATE TRIGGER variants_follow_the_original
                AFTER UPDATE OF original_url, byte_size, content_type, etag ON photo
                WHEN OLD.original_url IS NOT NEW.original_url OR OLD.byte_size IS NOT NEW.byte_size
                     OR OLD.content_type IS NOT NEW.content_type OR OLD.etag IS NOT NEW.etag
                BEGIN
                    DELETE FROM variant WHERE photo_seq = NEW.seq;
                    DELETE FROM thumbnail WHERE photo_seq = NEW.seq;
                END;
                PRAGMA user_version = 2;
                """)
        }
        migrator.registerMigration("v3: accounts — visibility, tags, albums, sync state", foreignKeyChecks: .immediate) { db in
            // visibility: bits 1 public, 2 friends, 4 family (none: private); a photo imported before v3 came
            // from getRecent or search, which list only public photos, so the default is 1.
            // album_count is kept by the catalog's album writes: a photo's link count without a join per lookup.
            try db.execute(sql: """
                ALTER TABLE photo ADD COLUMN visibility INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE photo ADD COLUMN tags TEXT NOT NULL DEFAULT '';
                ALTER TABLE photo ADD COLUMN views INTEGER;
                ALTER TABLE photo ADD COLUMN last_update INTEGER;
                ALTER TABLE photo ADD COLUMN album_count INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE album (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    source_id TEXT NOT NULL UNIQUE,
                    owner TEXT,
                    title TEXT NOT NULL,
                    description TEXT NOT NULL DEFAULT '',
                    updated_at INTEGER
                );
                CREATE TABLE album_photo (
                    album_id INTEGER NOT NULL REFERENCES album(id) ON DELETE CASCADE,
                    photo_seq INTEGER NOT NULL REFERENCES photo(seq) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    PRIMARY KEY (album_id, photo_seq)
                ) WITHOUT ROWID;
                CREATE INDEX album_photo_by_photo ON album_photo(photo_seq);
                CREATE TABLE sync_state (
                    listing_key TEXT PRIMARY KEY,
                    source_kind TEXT NOT NULL,
                    account_id TEXT,
                    account_name TEXT,
                    last_sync_point TEXT,
                    last_synced_at INTEGER,
                    resume_mode TEXT,
                    resume_cursor TEXT,
                    resume_sync_point TEXT,
                    resume_pages INTEGER NOT NULL DEFAULT 0,
                    skipped_count INTEGER NOT NULL DEFAULT 0,
                    video_count INTEGER NOT NULL DEFAULT 0
                ) WITHOUT ROWID;
                -- Photos deleted, or whose original changed, so that a running mount frees their cached bytes.
                CREATE TABLE removed_photo (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    photo_id TEXT NOT NULL,
                    removed_at INTEGER NOT NULL
                );
                CREATE TRIGGER removed_photos_are_logged AFTER DELETE ON photo
                BEGIN
                    INSERT INTO removed_photo(photo_id, removed_at) VALUES (OLD.id, CAST(strftime('%s', 'now') AS INTEGER));
                END;
                CREATE TRIGGER replaced_originals_are_logged
                AFTER UPDATE OF original_url, etag, byte_size ON photo
                WHEN OLD.original_url IS NOT NEW.original_url OR OLD.etag IS NOT NEW.etag
                     OR OLD.byte_size IS NOT NEW.byte_size
                BEGIN
                    INSERT INTO removed_photo(photo_id, removed_at) VALUES (OLD.id, CAST(strftime('%s', 'now') AS INTEGER));
                END;
                PRAGMA user_version = 3;
                """)
        }
        migrator.registerMigration("v4: desktop thumbnails written", foreignKeyChecks: .immediate) { db in
            try db.execute(sql: """
                CREATE TABLE desktop_thumbnail (
                    uri TEXT PRIMARY KEY,
                    photo_id TEXT NOT NULL,
                    written_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX desktop_thumbnail_by_photo ON desktop_thumbnail(photo_id);
                PRAGMA user_version = 4;
                """)
        }
        migrator.registerMigration("v5: folder files", foreignKeyChecks: .immediate) { db in
            // A local file renamed or moved keeps its bytes (same etag: content hash, size, mtime): its variants,
            // thumbnails and cached copies stay good, so only a change of bytes, or of an http(s) URL, drops them.
            try db.execute(sql: """
                CREATE TABLE folder_file (
                    path TEXT PRIMARY KEY,
                    root TEXT NOT NULL,
                    device INTEGER NOT NULL,
                    inode INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL,
                    partial_hash TEXT NOT NULL,
                    full_hash TEXT,
                    photo_id TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX folder_file_by_root ON folder_file(root);
                CREATE INDEX folder_file_by_photo ON folder_file(photo_id);
                DROP TRIGGER variants_follow_the_original;
                CREATE TRIGGER variants_follow_the_original
                AFTER UPDATE OF original_url, byte_size, content_type, etag ON photo
                WHEN (OLD.original_url IS NOT NEW.original_url
                      AND NOT (OLD.original_url LIKE 'file:%' AND NEW.original_url LIKE 'file:%'))
                     OR OLD.byte_size IS NOT NEW.byte_size
                     OR OLD.content_type IS NOT NEW.content_type OR OLD.etag IS NOT NEW.etag
                BEGIN
                    DELETE FROM variant WHERE photo_seq = NEW.seq;
                    DELETE FROM thumbnail WHERE photo_seq = NEW.seq;
                END;
                CREATE TRIGGER variants_follow_a_moved_file
                AFTER UPDATE OF original_url ON photo
                WHEN OLD.original_url LIKE 'file:%' AND NEW.original_url LIKE 'file:%'
                     AND OLD.original_url IS NOT NEW.original_url
                BEGIN
                    UPDATE variant SET source_url = NEW.original_url
                    WHERE photo_seq = NEW.seq AND source_url = OLD.original_url;
                END;
                DROP TRIGGER replaced_originals_are_logged;
                CREATE TRIGGER replaced_originals_are_logged
                AFTER UPDATE OF original_url, etag, byte_size ON photo
                WHEN (OLD.original_url IS NOT NEW.original_url
                      AND NOT (OLD.original_url LIKE 'file:%' AND NEW.original_url LIKE 'file:%'))
                     OR OLD.etag IS NOT NEW.etag OR OLD.byte_size IS NOT NEW.byte_size
                BEGIN
                    INSERT INTO removed_photo(photo_id, removed_at) VALUES (OLD.id, CAST(strftime('%s', 'now') AS INTEGER));
                END;
                PRAGMA user_version = 5;
                """)
        }
        migrator.registerMigration(favoritesAndPeopleMigration, foreignKeyChecks: .immediate) { db in
            // Immich's favourites and named people (photo ids as text: a photo removed leaves rows no query
            // joins to, and the next import of its source drops them). Its version number is its position.
            try db.execute(sql: """
                CREATE TABLE favorite_photo (photo_id TEXT PRIMARY KEY) WITHOUT ROWID;
                CREATE TABLE person (id TEXT PRIMARY KEY, name TEXT NOT NULL) WITHOUT ROWID;
                CREATE TABLE person_photo (
                    person_id TEXT NOT NULL,
                    photo_id TEXT NOT NULL,
                    PRIMARY KEY (person_id, photo_id)
                ) WITHOUT ROWID;
                CREATE INDEX person_photo_by_photo ON person_photo(photo_id);
                """)
            let position = (Schema.migrationIdentifiers.firstIndex(of: favoritesAndPeopleMigration) ?? 0) + 1
            try db.execute(sql: "PRAGMA user_version = \(position)")
        }
        registerEventsMigration(&migrator)
        registerSearchMigration(&migrator)
        migrator.registerMigration(markCountMigration, foreignKeyChecks: .immediate) { db in
            // A photo's names in /favorites and /people, kept by `applyMarks` as album_count is by the album
            // writes: a link count without two joins per lookup.
            try db.execute(sql: """
                ALTER TABLE photo ADD COLUMN mark_count INTEGER NOT NULL DEFAULT 0;
                UPDATE photo SET mark_count = \(Schema.markCountSQL);
                PRAGMA user_version = \(userVersion(of: markCountMigration));
                """)
        }
        migrator.registerMigration(countDifferenceMigration, foreignKeyChecks: .immediate) { db in
            // The origin's photo count minus the library's for a listing, as of its last whole id listing (NULL:
            // never measured): a later import skips the id listing only when the origin's count gives the same
            // difference (LibraryImporter's IDListingDecision).
            try db.execute(sql: """
                ALTER TABLE sync_state ADD COLUMN count_difference INTEGER;
                PRAGMA user_version = \(userVersion(of: countDifferenceMigration));
                """)
        }
        registerCameraAndPeopleMigration(&migrator)
        registerOpenEventsMigration(&migrator)
        registerRefusedFilesMigration(&migrator)
        return migrator
    }

    static let favoritesAndPeopleMigration = "favourites and people (Immich)"
    static let markCountMigration = "a photo's names in /favorites and /people"
    static let countDifferenceMigration = "sync state: the origin's photo count against the library's"

    /// A photo's names in /favorites (0 or 1) and /people (its named people), from the marks' tables.
    static let markCountSQL = """
        (SELECT count(*) FROM favorite_photo WHERE photo_id = photo.id)
            + (SELECT count(*) FROM person_photo m JOIN person r ON r.id = m.person_id WHERE m.photo_id = photo.id)
        """
}
