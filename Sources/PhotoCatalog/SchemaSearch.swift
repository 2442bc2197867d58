// The migration that adds the search index (/search): FTS5 over each photo's words, kept by triggers on every
// write that changes them, so it never goes stale whichever program writes the library.
import GRDB

extension Schema {
    static let searchMigration = "search: full-text index of photos"

    /// The virtual tables and the shadow tables FTS5 makes for each (for `knownTables`).
    static let searchTables: Set<String> = Set([SearchIndex.wordTable, SearchIndex.trigramTable].flatMap { table in
        [table] + ["data", "idx", "content", "docsize", "config"].map { table + "_" + $0 }
    })

    /// Two FTS5 tables of the same columns (`SearchIndex.columns`), rowid = photo seq:
    /// - `photo_search`, `unicode61 remove_diacritics 2` (so "belem" finds Belém), with prefix indexes of 2 and 3
    ///   characters (the last word is a prefix; "li" would otherwise walk every term starting with it);
    /// - `photo_search_trigram`, holding only photos whose text has a Han, kana, Hangul or Thai character
    ///   (`SearchIndex.substringScripts`): `unicode61` makes one token of a run of such text, the trigram index
    ///   finds any 3-character part of it. A library without such text pays nothing for it.
    /// `people` and `camera` are empty until the catalog has those columns; a migration that adds them only
    /// has to change `SearchIndex.rowSQL` and rebuild.
    static func registerSearchMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(searchMigration) { db in
            let columns = SearchIndex.columns.joined(separator: ", ")
            try db.execute(sql: """
                CREATE VIRTUAL TABLE \(SearchIndex.wordTable) USING fts5(\(columns),
                    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
                CREATE VIRTUAL TABLE \(SearchIndex.trigramTable) USING fts5(\(columns), tokenize = 'trigram');
                CREATE INDEX photo_by_place ON photo(place_id);
                \(SearchIndex.refreshSQL(where: "1", deleteFirst: false))
                CREATE TRIGGER search_follows_new_photos AFTER INSERT ON photo BEGIN
                    \(SearchIndex.refreshSQL(where: "p.seq = NEW.seq", deleteFirst: false))
                END;
                CREATE TRIGGER search_follows_photo_edits
                AFTER UPDATE OF title, description, tags, place_id, region_id, photographer_id, moment_at ON photo
                WHEN (OLD.title, OLD.description, OLD.tags, OLD.place_id, OLD.region_id, OLD.photographer_id, OLD.moment_at)
                     IS NOT (NEW.title, NEW.description, NEW.tags, NEW.place_id, NEW.region_id, NEW.photographer_id,
                             NEW.moment_at)
                BEGIN
                    \(SearchIndex.refreshSQL(where: "p.seq = NEW.seq"))
                END;
                CREATE TRIGGER search_forgets_deleted_photos AFTER DELETE ON photo BEGIN
                    DELETE FROM \(SearchIndex.wordTable) WHERE rowid = OLD.seq;
                    DELETE FROM \(SearchIndex.trigramTable) WHERE rowid = OLD.seq;
                END;
                CREATE TRIGGER search_follows_new_places AFTER INSERT ON place BEGIN
                    \(SearchIndex.refreshSQL(where: "p.place_id = NEW.place_id"))
                END;
                CREATE TRIGGER search_follows_place_names AFTER UPDATE OF name ON place
                WHEN OLD.name IS NOT NEW.name OR OLD.place_id IS NOT NEW.place_id BEGIN
                    \(SearchIndex.refreshSQL(where: "p.place_id IN (OLD.place_id, NEW.place_id)"))
                END;
                CREATE TRIGGER search_follows_region_names AFTER UPDATE OF name ON region
                WHEN OLD.name IS NOT NEW.name BEGIN
                    \(SearchIndex.refreshSQL(where: "p.region_id = NEW.id"))
                END;
                CREATE TRIGGER search_follows_photographer_names AFTER UPDATE OF name ON photographer
                WHEN OLD.name IS NOT NEW.name BEGIN
                    \(SearchIndex.refreshSQL(where: "p.photographer_id = NEW.id"))
                END;
                CREATE TRIGGER search_follows_album_titles AFTER UPDATE OF title ON album
                WHEN OLD.title IS NOT NEW.title BEGIN
                    \(SearchIndex.refreshSQL(where: "p.seq IN (SELECT photo_seq FROM album_photo WHERE album_id = NEW.id)"))
                END;
                CREATE TRIGGER search_follows_album_members AFTER INSERT ON album_photo BEGIN
                    \(SearchIndex.refreshSQL(where: "p.seq = NEW.photo_seq"))
                END;
                CREATE TRIGGER search_follows_album_departures AFTER DELETE ON album_photo BEGIN
                    \(SearchIndex.refreshSQL(where: "p.seq = OLD.photo_seq"))
                END;
                PRAGMA user_version = \(userVersion(of: searchMigration));
                """)
        }
    }
}

/// The search index's tables and the SQL that writes one photo's row (used by the migration's triggers).
enum SearchIndex {
    static let wordTable = "photo_search"
    static let trigramTable = "photo_search_trigram"
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

    /// The indexed text of the photos `p` matching `condition`: title, description, tags, place, region (not the
    /// fallback one), photographer, album titles, and year and month taken; `moment_at` outside years 1–9999 or
    /// not an integer gives no `taken` text instead of a wrong year.
    private static func rowSelect(where condition: String) -> String {
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
                    WHERE m.photo_seq = p.seq), NULL, NULL, \(taken)
            FROM photo p LEFT JOIN place pl ON pl.place_id = p.place_id LEFT JOIN region r ON r.id = p.region_id
                 LEFT JOIN photographer g ON g.id = p.photographer_id
            WHERE \(condition)
            """
    }

    /// Statements (each ending in ";") that rewrite the index rows of the photos matching `condition` (over
    /// `photo p`): the old rows deleted, the current text inserted; into the trigram table only when that text
    /// holds a character of `substringScripts`.
    static func refreshSQL(where condition: String, deleteFirst: Bool = true) -> String {
        let names = "rowid, " + columns.joined(separator: ", ")
        let text = "coalesce(p.title, '') || ' ' || coalesce(p.description, '') || ' ' || coalesce(p.tags, '') || ' ' "
            + "|| coalesce(pl.name, '') || ' ' || coalesce(r.name, '') || ' ' || coalesce(g.name, '') || ' ' "
            + "|| coalesce((SELECT group_concat(a.title, ' ') FROM album_photo m JOIN album a ON a.id = m.album_id "
            + "WHERE m.photo_seq = p.seq), '')"
        var statements: [String] = []
        if deleteFirst {
            for table in [wordTable, trigramTable] {
                statements.append("DELETE FROM \(table) WHERE rowid IN (SELECT p.seq FROM photo p WHERE \(condition));")
            }
        }
        statements.append("INSERT INTO \(wordTable)(\(names)) \(rowSelect(where: condition));")
        statements.append("INSERT INTO \(trigramTable)(\(names)) \(rowSelect(where: "(\(condition)) AND (\(text)) GLOB '*\(substringScripts)*'"));")
        return statements.joined(separator: "\n")
    }
}
