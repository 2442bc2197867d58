// The migration that adds the search index (/search): FTS5 over each photo's words, kept by triggers on every
// write that changes them and by every write transaction of the catalog, so it never goes stale.
import GRDB

extension Schema {
    static let searchMigration = "search: full-text index of photos"

    /// The virtual tables and the shadow tables FTS5 makes for each (for `knownTables`).
    static let searchTables: Set<String> = Set([SearchIndex.wordTable, SearchIndex.trigramTable].flatMap { table in
        [table] + ["data", "idx", "content", "docsize", "config"].map { table + "_" + $0 }
    }).union([SearchIndex.queueTable])

    /// Two FTS5 tables of the same columns (`SearchIndex.columns`), rowid = photo seq, holding the photos the
    /// tree lists (`available`: size and type known), so a search needs no join with `photo`:
    /// - `photo_search`, `unicode61 remove_diacritics 2` (so "belem" finds Belém), with prefix indexes of 2 and 3
    ///   characters (the last word is a prefix; "li" would otherwise walk every term starting with it);
    /// - `photo_search_trigram`, holding only photos whose text has a Han, kana, Hangul or Thai character
    ///   (`SearchIndex.substringScripts`): `unicode61` makes one token of a run of such text, the trigram index
    ///   finds any 3-character part of it. A library without such text pays nothing for it.
    /// Triggers on every table whose text a row holds queue the photos a write changes (`search_queue`); the
    /// catalog's write transactions index the queue before they commit (`SearchIndex.indexQueued`). A program
    /// other than photofs writing the library leaves its changes queued until photofs's next write.
    /// `people` and `camera` were empty here: `cameraAndPeopleMigration` fills them.
    static func registerSearchMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(searchMigration, foreignKeyChecks: .immediate) { db in
            let columns = SearchIndex.columns.joined(separator: ", ")
            let queue = SearchIndex.queueTable
            try db.execute(sql: """
                CREATE VIRTUAL TABLE \(SearchIndex.wordTable) USING fts5(\(columns),
                    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
                CREATE VIRTUAL TABLE \(SearchIndex.trigramTable) USING fts5(\(columns), tokenize = 'trigram');
                CREATE TABLE \(queue) (seq);
                CREATE INDEX search_queue_by_seq ON \(queue)(seq);
                CREATE INDEX photo_by_place ON photo(place_id);
                \(SearchIndex.insertSQL(where: "1", withCameraAndPeople: false))
                CREATE TRIGGER search_follows_new_photos AFTER INSERT ON photo BEGIN
                    \(SearchIndex.enqueue("NEW.seq"))
                END;
                CREATE TRIGGER search_follows_photo_edits
                AFTER UPDATE OF title, description, tags, place_id, region_id, photographer_id, moment_at, byte_size,
                                content_type ON photo
                WHEN (OLD.title, OLD.description, OLD.tags, OLD.place_id, OLD.region_id, OLD.photographer_id, OLD.moment_at,
                      OLD.byte_size IS NULL, OLD.content_type IS NULL)
                     IS NOT (NEW.title, NEW.description, NEW.tags, NEW.place_id, NEW.region_id, NEW.photographer_id,
                             NEW.moment_at, NEW.byte_size IS NULL, NEW.content_type IS NULL)
                BEGIN
                    \(SearchIndex.enqueue("NEW.seq"))
                END;
                CREATE TRIGGER search_forgets_deleted_photos AFTER DELETE ON photo BEGIN
                    \(SearchIndex.enqueue("OLD.seq"))
                END;
                CREATE TRIGGER search_follows_new_places AFTER INSERT ON place BEGIN
                    \(SearchIndex.enqueue(photosWhere: "place_id = NEW.place_id"))
                END;
                CREATE TRIGGER search_follows_place_names AFTER UPDATE OF name, place_id ON place
                WHEN OLD.name IS NOT NEW.name OR OLD.place_id IS NOT NEW.place_id BEGIN
                    \(SearchIndex.enqueue(photosWhere: "place_id IN (OLD.place_id, NEW.place_id)"))
                END;
                CREATE TRIGGER search_follows_region_names AFTER UPDATE OF name ON region
                WHEN OLD.name IS NOT NEW.name BEGIN
                    \(SearchIndex.enqueue(photosWhere: "region_id = NEW.id"))
                END;
                CREATE TRIGGER search_follows_photographer_names AFTER UPDATE OF name ON photographer
                WHEN OLD.name IS NOT NEW.name BEGIN
                    \(SearchIndex.enqueue(photosWhere: "photographer_id = NEW.id"))
                END;
                CREATE TRIGGER search_follows_album_titles AFTER UPDATE OF title ON album
                WHEN OLD.title IS NOT NEW.title BEGIN
                    \(SearchIndex.enqueue(photosWhere: "seq IN (SELECT photo_seq FROM album_photo WHERE album_id = NEW.id)"))
                END;
                CREATE TRIGGER search_follows_album_members AFTER INSERT ON album_photo BEGIN
                    \(SearchIndex.enqueue("NEW.photo_seq"))
                END;
                CREATE TRIGGER search_follows_album_departures AFTER DELETE ON album_photo BEGIN
                    \(SearchIndex.enqueue("OLD.photo_seq"))
                END;
                PRAGMA user_version = \(userVersion(of: searchMigration));
                """)
        }
    }
}

extension Schema {
    static let cameraAndPeopleMigration = "search: the camera and the people of each photo"

    /// `photo.camera` ("Canon EOS 80D": EXIF Make and Model of a folder's photo, Immich's make and model) and
    /// the search index's `camera` and `people` columns filled: triggers queue a photo whose camera, people or
    /// people's names change, or whose person is deleted (hidden or unnamed in Immich: a search must not find
    /// them), and the photos with people are queued once so the index gets them. Photos imported before have
    /// no camera until an import writes them again (their file or asset changes): the migration cannot read
    /// EXIF.
    static func registerCameraAndPeopleMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(cameraAndPeopleMigration, foreignKeyChecks: .immediate) { db in
            try db.execute(sql: """
                ALTER TABLE photo ADD COLUMN camera TEXT;
                \(SearchIndex.trigger("search_follows_cameras", after: "UPDATE OF camera ON photo",
                                      when: "OLD.camera IS NOT NEW.camera", queueing: "seq = NEW.seq"))
                \(SearchIndex.trigger("search_follows_people_added", after: "INSERT ON person_photo",
                                      queueing: "id = NEW.photo_id"))
                \(SearchIndex.trigger("search_follows_people_removed", after: "DELETE ON person_photo",
                                      queueing: "id = OLD.photo_id"))
                \(SearchIndex.trigger("search_follows_people_names", after: "UPDATE OF name ON person",
                                      when: "OLD.name IS NOT NEW.name",
                                      queueing: "id IN (SELECT photo_id FROM person_photo WHERE person_id = NEW.id)"))
                \(SearchIndex.trigger("search_follows_people_gone", after: "DELETE ON person",
                                      queueing: "id IN (SELECT photo_id FROM person_photo WHERE person_id = OLD.id)"))
                \(SearchIndex.enqueue(photosWhere: "id IN (SELECT photo_id FROM person_photo)"))
                PRAGMA user_version = \(userVersion(of: cameraAndPeopleMigration));
                """)
        }
    }
}

/// The search index's tables and the SQL that writes one photo's row (used by the migration's triggers).
enum SearchIndex {
    static let wordTable = "photo_search"
    static let trigramTable = "photo_search_trigram"
    /// Photos whose index rows are out of date (`indexQueued`).
    static let queueTable = "search_queue"
    static let columns = ["title", "description", "tags", "place", "region", "photographer", "albums", "people",
                          "camera", "taken"]

    /// bm25 weights in `columns` order: a word in the title, a place or a person says more about a photo than
    /// one deep in a description.
    static let weights: [Double] = [10, 1, 5, 6, 3, 3, 4, 6, 1, 2]

    /// A GLOB character class of the scripts `SearchQuery.needsSubstringMatch` sends to the trigram index
    /// (SQLite compares code points in a class's ranges).
    static let substringScripts = "[\u{0E00}-\u{0E7F}\u{3040}-\u{30FF}\u{3400}-\u{4DBF}\u{4E00}-\u{9FFF}\u{AC00}-\u{D7AF}\u{F900}-\u{FAFF}\u{FF66}-\u{FF9F}]"

    /// Month names for the `taken` column: "2019 May" lets "may 2019" and `year:2019` find the photo.
    private static let months = ["January", "February", "March", "April", "May", "June", "July", "August",
                                 "September", "October", "November", "December"]

    /// The indexed text of the available photos `p` matching `condition`: title, description, tags, place, region (not the
    /// fallback one), photographer, album titles, and year and month taken; `moment_at` outside years 1–9999 or
    /// not an integer gives no `taken` text instead of a wrong year.
    private static func rowSelect(where condition: String, withCameraAndPeople: Bool) -> String {
        let monthCases = months.enumerated().map { "WHEN '\(String(format: "%02d", $0.offset + 1))' THEN '\($0.element)'" }
            .joined(separator: " ")
        let moment = "p.moment_at"
        let taken = """
            CASE WHEN typeof(\(moment)) = 'integer' AND \(moment) BETWEEN \(CatalogLimits.momentRange.lowerBound) AND \(CatalogLimits.momentRange.upperBound)
                 THEN strftime('%Y', \(moment), 'unixepoch') || ' ' || CASE strftime('%m', \(moment), 'unixepoch') \(monthCases) END
            END
            """
        return """
            SELECT p.seq, p.title, p.description, p.tags, pl.name, nullif(r.name, '\(Schema.fallbackRegion)'), g.name,
                   (SELECT group_concat(a.title, ' ') FROM album_photo m JOIN album a ON a.id = m.album_id
                    WHERE m.photo_seq = p.seq), \(withCameraAndPeople ? peopleSQL : "NULL"), \(withCameraAndPeople ? "p.camera" : "NULL"), \(taken)
            FROM photo p LEFT JOIN place pl ON pl.place_id = p.place_id LEFT JOIN region r ON r.id = p.region_id
                 LEFT JOIN photographer g ON g.id = p.photographer_id
            WHERE typeof(p.seq) = 'integer' AND p.available AND (\(condition))
            """
    }

    /// A trigger statement queueing one photo. Not `INSERT OR IGNORE` into a key: a trigger takes the conflict
    /// policy of the statement that fired it, and the import's upsert made that a UNIQUE failure. The queue's
    /// column has no type, so a damaged row's text seq is queued too (and indexed by nothing).
    static func enqueue(_ seq: String) -> String {
        "INSERT INTO \(queueTable)(seq) SELECT \(seq) WHERE NOT EXISTS (SELECT 1 FROM \(queueTable) WHERE seq = \(seq));"
    }

    /// A trigger that queues the photos matching `photos` (over `photo`) after `event` ("INSERT ON person_photo"),
    /// when `condition` holds.
    static func trigger(_ name: String, after event: String, when condition: String? = nil, queueing photos: String) -> String {
        "CREATE TRIGGER \(name) AFTER \(event)\(condition.map { " WHEN " + $0 } ?? "") BEGIN "
            + enqueue(photosWhere: photos) + " END;"
    }

    /// A trigger statement queueing the photos matching `condition` (over `photo`).
    static func enqueue(photosWhere condition: String) -> String {
        "INSERT INTO \(queueTable)(seq) SELECT seq FROM photo WHERE (\(condition)) "
            + "AND seq NOT IN (SELECT seq FROM \(queueTable) WHERE seq IS NOT NULL);"
    }

    /// Inserts the index rows of the photos `p` matching `condition` (statements ending in ";"): every photo
    /// into the word table, into the trigram table only those whose text holds a character of `substringScripts`.
    /// `withCameraAndPeople`: false only inside the search migration, which runs before the camera column
    /// exists (`cameraAndPeopleMigration` then queues the photos with people; cameras start empty).
    static func insertSQL(where condition: String, withCameraAndPeople: Bool = true) -> String {
        let names = "rowid, " + columns.joined(separator: ", ")
        let text = "coalesce(p.title, '') || ' ' || coalesce(p.description, '') || ' ' || coalesce(p.tags, '') || ' ' "
            + "|| coalesce(pl.name, '') || ' ' || coalesce(r.name, '') || ' ' || coalesce(g.name, '') || ' ' "
            + "|| coalesce((SELECT group_concat(a.title, ' ') FROM album_photo m JOIN album a ON a.id = m.album_id "
            + "WHERE m.photo_seq = p.seq), '')"
            + (withCameraAndPeople ? " || ' ' || coalesce(\(peopleSQL), '') || ' ' || coalesce(p.camera, '')" : "")
        return """
            INSERT INTO \(wordTable)(\(names)) \(rowSelect(where: condition, withCameraAndPeople: withCameraAndPeople));
            INSERT INTO \(trigramTable)(\(names)) \(rowSelect(where: "(\(condition)) AND (\(text)) GLOB '*\(substringScripts)*'", withCameraAndPeople: withCameraAndPeople));
            """
    }

    /// The names of the people in photo `p` (Immich's), one text.
    static let peopleSQL = "(SELECT group_concat(pe.name, ' ') FROM person_photo m JOIN person pe ON pe.id = m.person_id WHERE m.photo_id = p.id)"

    /// Rewrites the index rows of every queued photo and empties the queue: run by `Catalog.write` before each
    /// write transaction commits, so no transaction of photofs leaves the index behind its photos. Queued by
    /// triggers rather than written by them: an FTS5 write inside a trigger flushes FTS5's pending terms at
    /// every statement, one segment per photo (a 100,000-photo import: 20 s of SQLite time for the index
    /// written by triggers, 8 s queued and written once a page).
    static func indexQueued(_ db: Database) throws {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(queueTable))")) == true else { return }
        try db.execute(sql: """
            DELETE FROM \(wordTable) WHERE rowid IN (SELECT seq FROM \(queueTable));
            DELETE FROM \(trigramTable) WHERE rowid IN (SELECT seq FROM \(queueTable));
            \(insertSQL(where: "p.seq IN (SELECT seq FROM \(queueTable))"))
            DELETE FROM \(queueTable);
            """)
    }
}
