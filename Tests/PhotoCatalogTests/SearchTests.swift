// Search: names read as queries (rejections, field prefixes, quoting), the FTS5 index kept by triggers, and
// hostile queries that give a result or no query, never an FTS5 error.
import GRDB
@testable import PhotoCatalog
import XCTest

final class SearchQueryTests: XCTestCase {
    func testNamesThatAreNotQueries() {
        for name in ["", ".", "..", ".hidden", ".directory", "harbour ", "harbour\u{3000}", "*", "-", "\"", "\"\"", ": :",
                     "a/b", "a\u{0}b", String(repeating: "a", count: 256)] {
            XCTAssertNil(SearchQuery(name: name), name.debugDescription)
        }
        XCTAssertNil(SearchQuery(nameBytes: [0x68, 0xFF, 0x61]), "not UTF-8")
        XCTAssertNil(SearchQuery(nameBytes: [0xC3]), "a cut UTF-8 sequence")
        XCTAssertNotNil(SearchQuery(name: String(repeating: "a", count: 255)))
        XCTAssertNotNil(SearchQuery(nameBytes: Array("Belém".utf8)))
    }

    func testEveryWordIsQuotedAndTheLastIsAPrefix() throws {
        let query = try XCTUnwrap(SearchQuery(name: "harbour 2019"))
        XCTAssertEqual(query.wordExpression, #""harbour" AND "2019" *"#)
        XCTAssertEqual(SearchQuery(name: "sun-set")?.wordExpression, #""sun-set" *"#)
        XCTAssertEqual(SearchQuery(name: "foo:bar")?.wordExpression, #""foo:bar" *"#)
        XCTAssertEqual(SearchQuery(name: "place:lisb")?.wordExpression, #"{place region} : "lisb" *"#)
        XCTAssertEqual(SearchQuery(name: "Year:2019 x")?.wordExpression, #"{taken} : "2019" AND "x" *"#)
        XCTAssertEqual(SearchQuery(name: "album:")?.wordExpression, #""album:" *"#, "a field with nothing after it is text")
        XCTAssertEqual(SearchQuery(name: "🍕 pizza")?.symbolTerms.map(\.text), ["🍕"])
        XCTAssertEqual(SearchQuery(name: "🍕 pizza")?.wordExpression, #""pizza" *"#)
        XCTAssertNil(SearchQuery(name: "#"), "a digit-like emoji character alone is no query")
        XCTAssertEqual(SearchQuery(name: "year: 2019 harbour")?.wordExpression, #"{taken} : "2019" AND "harbour" *"#,
                       "a field apart from its word limits the next one")
        XCTAssertEqual(SearchQuery(name: "PLACE:  lisb")?.wordExpression, #"{place region} : "lisb" *"#)
        XCTAssertEqual(SearchQuery(name: "place: year:2019")?.wordExpression, #"{taken} : "2019" *"#, "its own field wins")
        XCTAssertEqual(SearchQuery(name: "say \"hi\" NOT OR AND *")?.wordExpression,
                       #""say" AND """hi""" AND "NOT" AND "OR" AND "AND""#, "operators are words; a word of punctuation alone is dropped")
        XCTAssertEqual(SearchQuery(name: "person:ann camera:x100 album:trip")?.wordExpression,
                       #"{people photographer} : "ann" AND {camera} : "x100" AND {albums} : "trip" *"#)
        XCTAssertEqual(SearchQuery(name: "harbour ２０１９")?.wordExpression, #""harbour" AND ("２０１９" * OR "2019" *)"#,
                       "a folded word is a group, joined by an explicit AND (a space beside a group is an FTS5 error)")
        let mixed = try XCTUnwrap(SearchQuery(name: "tokyo 東京タワー 夜"))
        XCTAssertEqual(mixed.wordExpression, #""tokyo""#)
        XCTAssertEqual(mixed.substringTerms.map(\.expression), [#""東京タワー""#, nil])
    }
}

final class SearchIndexTests: XCTestCase {
    var scratch: ScratchDirectory!
    var catalog: Catalog!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory("search")
        catalog = try Catalog(path: scratch.path("library.sqlite"))
    }

    override func tearDown() {
        catalog = nil
        scratch = nil
    }

    static let places = [PlaceResolution(placeID: "bel", placeName: "Belém", regionName: "Lisboa"),
                         PlaceResolution(placeID: "lx", placeName: "Lisbon, Lisboa, Portugal", regionName: "Lisboa"),
                         PlaceResolution(placeID: "tk", placeName: "東京", regionName: "Kantō")]
    static let y2019: Int64 = 1_560_000_000, y2018: Int64 = 1_530_000_000

    func photo(_ id: String, _ title: String, description: String = "", place: String? = nil, at moment: Int64 = y2019,
               tags: [String] = []) -> ImportedPhoto {
        var imported = importedPhoto(id, title: title, place: place, at: moment)
        imported.photo.description = description
        imported.photo.tags = tags
        return imported
    }

    func search(_ name: String) throws -> [String] {
        guard let query = SearchQuery(name: name) else { return ["not a query"] }
        return try catalog.photos(seqs: catalog.searchPhotos(query)).map(\.id)
    }

    func importLibrary() throws {
        _ = try catalog.applyImport(places: Self.places, photos: [
            photo("1", "Harbour at dusk", place: "lx"),
            photo("2", "Harbour in the rain", place: "lx", at: Self.y2018),
            photo("3", "Tower", description: "seen from the harbour", place: "bel"),
            photo("4", "東京タワーの夜景", place: "tk"),
            photo("5", "Sun-set over the river", tags: ["sunset", "golden"]),
            photo("6", "Crème brûlée", place: "lx", at: Self.y2018),
            photo("7", "🍕 Pizza night 🌃", at: Self.y2018),
            photo("8", "ＰＯＲＴＯ ｍａｒｋｅｔ", at: Self.y2018),
        ])
    }

    func testHarbour2019BelemAndPlacePrefixes() throws {
        try importLibrary()
        XCTAssertEqual(try search("harbour 2019"), ["1", "3"], "title first, then a description")
        XCTAssertEqual(try search("harbour 2018"), ["2"])
        XCTAssertEqual(try search("belem"), ["3"])
        XCTAssertEqual(try search("Belém"), ["3"])
        XCTAssertEqual(Set(try search("place:lisb")), ["1", "2", "3", "6"], "Belém is in the region Lisboa")
        XCTAssertEqual(try search("place:belé"), ["3"])
        XCTAssertEqual(try search("creme brul"), ["6"])
        XCTAssertEqual(try search("year:2018 place:lisbon"), ["6", "2"], "ties: newest first")
        XCTAssertEqual(try search("year: 2018 place: lisbon"), ["6", "2"], "fields written apart from their words")
        XCTAssertEqual(try search("may 2019"), [], "taken in June (1_560_000_000 is 2019-06-08)")
        XCTAssertEqual(Set(try search("june 2019")), ["1", "3", "4", "5"])
        XCTAssertEqual(try search("sun-set"), ["5"])
        XCTAssertEqual(try search("golden"), ["5"])
        XCTAssertEqual(try search("harb"), ["1", "2", "3"], "the two titles first, then a description")
        XCTAssertEqual(Set(try search("h")), ["1", "2", "3"], "a one-letter prefix")
        XCTAssertEqual(try search("東京"), ["4"], "two characters: a scan of the trigram rows")
        XCTAssertEqual(try search("京タ"), ["4"], "inside a word unicode61 would not split")
        XCTAssertEqual(try search("タワー"), ["4"])
        XCTAssertEqual(try search("place:東京"), ["4"])
        XCTAssertEqual(try search("夜景 tower"), [], "every word must match")
        XCTAssertEqual(try search("東京タワーの"), ["4"])
        XCTAssertEqual(try search("Ｂｅｌｅｍ"), ["3"], "full-width Latin, as a Japanese input method types it")
        XCTAssertEqual(try search("Ｂｅｌｅｍ 2019"), ["3"], "a folded word beside another")
        XCTAssertEqual(try search("harbour ２０１９"), ["1", "3"])
        XCTAssertEqual(try search("bele\u{301}m harbour"), ["3"], "decomposed (NFD, as macOS sends names) beside another word")
        XCTAssertEqual(try search("ﾀﾜｰ"), ["4"], "half-width katakana")
        XCTAssertEqual(try search("ＰＯＲＴＯ"), ["8"], "stored full width: found as typed (the index folds no width)")
        XCTAssertEqual(try search("ｍａｒ"), ["8"], "a prefix in either form")
        XCTAssertEqual(try search("🍕"), ["7"], "an emoji alone: a scan of the indexed text")
        XCTAssertEqual(try search("🌃 pizza"), ["7"])
        XCTAssertEqual(try search("🍕 harbour"), [], "every word must match")
        XCTAssertEqual(try search("🍔"), [])
    }

    func testTheIndexFollowsEveryWrite() throws {
        try importLibrary()
        var renamed = photo("1", "Lighthouse", place: "lx")
        _ = try catalog.applyImport(places: [], photos: [renamed])
        XCTAssertEqual(try search("lighthouse"), ["1"])
        XCTAssertEqual(try search("harbour 2019"), ["3"])
        renamed.photo.placeID = "bel"
        _ = try catalog.applyImport(places: [], photos: [renamed])
        XCTAssertEqual(Set(try search("belem")), ["1", "3"])
        // A place resolved after its photos, and a place renamed.
        _ = try catalog.applyImport(places: [], photos: [photo("7", "Tram", place: "pt")])
        XCTAssertEqual(try search("porto"), [])
        _ = try catalog.applyImport(places: [PlaceResolution(placeID: "pt", placeName: "Porto", regionName: "Norte")], photos: [])
        XCTAssertEqual(try search("porto"), ["7"])
        XCTAssertEqual(try search("place:porto"), ["7"])
        _ = try catalog.applyImport(places: [PlaceResolution(placeID: "pt", placeName: "Oporto", regionName: "Norte")], photos: [])
        XCTAssertEqual(try search("oporto"), ["7"])
        // Albums: joining, a new title, leaving.
        try catalog.applyAlbums([AlbumImport(sourceID: "a1", title: "Summer trip", description: "", updatedAt: 1,
                                             memberIDs: ["7", "5"])], keepingOnly: nil)
        XCTAssertEqual(Set(try search("album:summ")), ["5", "7"])
        try catalog.applyAlbums([AlbumImport(sourceID: "a1", title: "Winter", description: "", updatedAt: 2,
                                             memberIDs: ["7"])], keepingOnly: nil)
        XCTAssertEqual(try search("album:summ"), [])
        XCTAssertEqual(try search("album:winter"), ["7"])
        try catalog.applyAlbums([], keepingOnly: [])
        XCTAssertEqual(try search("winter"), [])
        // The photographer's name.
        var byAnn = photo("8", "Bridge")
        byAnn.owner = "ann"
        byAnn.ownerName = "Ann Example"
        _ = try catalog.applyImport(places: [], photos: [byAnn])
        XCTAssertEqual(try search("person:ann"), ["8"])
        byAnn.ownerName = "Anna"
        _ = try catalog.applyImport(places: [], photos: [byAnn])
        XCTAssertEqual(try search("person:example"), [])
        // The camera, and people: named, renamed, hidden (deleted from `person`, their rows left behind).
        var canon = photo("9", "Quay")
        canon.camera = "Canon EOS 80D"
        _ = try catalog.applyImport(places: [], photos: [canon])
        XCTAssertEqual(try search("camera:canon"), ["9"])
        XCTAssertEqual(try search("eos 80d"), ["9"])
        canon.camera = nil
        _ = try catalog.applyImport(places: [], photos: [canon])
        XCTAssertEqual(try search("camera:canon"), [], "a camera removed leaves the index")
        let person = "0f8fad5b-d9cb-469f-a165-70867728950e"
        XCTAssertTrue(try catalog.applyMarks(["9": PhotoMarks(isFavorite: false, personIDs: [person])], people: [person: "Grace"]))
        XCTAssertEqual(try search("grace"), ["9"])
        XCTAssertEqual(try search("person:grace"), ["9"])
        _ = try catalog.applyMarks([:], people: [person: "Grace Hopper"])
        XCTAssertEqual(try search("hopper"), ["9"])
        _ = try catalog.applyMarks([:], people: [:])
        XCTAssertEqual(try search("grace"), [], "a person hidden in Immich is not found by a search")
        // Deleted photos leave the index, with their albums' rows.
        try catalog.applyAlbums([AlbumImport(sourceID: "a2", title: "Doomed", description: "", updatedAt: 1,
                                             memberIDs: ["4"])], keepingOnly: nil)
        try catalog.removePhotos(ids: ["4", "7"])
        XCTAssertEqual(try search("東京"), [])
        XCTAssertEqual(try search("oporto"), [])
        let rows = try DatabaseQueue(path: scratch.path("library.sqlite")).read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM photo_search") ?? -1,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM photo_search_trigram") ?? -1,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM photo") ?? -2)
        }
        XCTAssertEqual(rows.0, rows.2, "one index row per photo")
        XCTAssertEqual(rows.1, 0, "no photo with Han, kana or Hangul text is left")
        let queued = try DatabaseQueue(path: scratch.path("library.sqlite")).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM search_queue")
        }
        XCTAssertEqual(queued, 0, "every write transaction indexes what it queued")
    }

    func testALibraryMadeBeforeTheIndexIsIndexedWhenMigrated() throws {
        try importLibrary()
        catalog = nil
        let path = scratch.path("library.sqlite")
        // Back to the library as the previous photofs left it: no index, no triggers, the migration not applied.
        let triggers = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'search_%'")
        }
        XCTAssertEqual(triggers.count, 15)
        try tamper(path, triggers.map { "DROP TRIGGER \($0);" }.joined() + """
            DROP TABLE photo_search; DROP TABLE photo_search_trigram; DROP TABLE search_queue; DROP INDEX photo_by_place;
            ALTER TABLE photo DROP COLUMN camera;
            DELETE FROM grdb_migrations WHERE identifier IN ('\(Schema.searchMigration)', '\(Schema.cameraAndPeopleMigration)');
            PRAGMA user_version = \(Schema.version - 2);
            """)
        catalog = try Catalog(path: path)
        XCTAssertEqual(try search("belem"), ["3"])
        XCTAssertEqual(try search("東京"), ["4"])
    }

    func testAtMostAThousandResultsAndOnlyListedPhotos() throws {
        var photos = (1...1100).map { photo("\($0)", "Sunset \($0)") }
        photos.append(importedPhoto("unmeasured", title: "Sunset unmeasured", size: nil))
        _ = try catalog.applyImport(places: [], photos: photos)
        let results = try catalog.searchPhotos(XCTUnwrap(SearchQuery(name: "sunset")))
        XCTAssertEqual(results.count, 1000)
        XCTAssertEqual(try catalog.searchPhotos(XCTUnwrap(SearchQuery(name: "unmeasured"))), [])
        XCTAssertEqual(try catalog.searchPhotos(XCTUnwrap(SearchQuery(name: "sunset")), limit: 5).count, 5)
        // Measured later: it enters the index then.
        _ = try catalog.applyImport(places: [], photos: [importedPhoto("unmeasured", title: "Sunset unmeasured")])
        XCTAssertEqual(try search("unmeasured"), ["unmeasured"])
    }

    func testRankingLooksAtTheNewestTenThousandMatches() throws {
        // The best match by far, imported first, then more matches than are ranked.
        var photos = [photo("best", "Sunset sunset sunset marker")]
        photos += (1...Catalog.rankedMatchLimit).map { photo("\($0)", "Sunset over a long quiet street number \($0)") }
        photos.append(photo("newer best", "Sunset sunset marker"))
        for page in stride(from: 0, to: photos.count, by: 2000) {
            _ = try catalog.applyImport(places: [], photos: Array(photos[page..<min(page + 2000, photos.count)]))
        }
        let results = try search("sunset")
        XCTAssertEqual(results.count, 1000)
        XCTAssertEqual(results.first, "newer best")
        XCTAssertFalse(results.contains("best"), "outside the newest 10,000 matches: not ranked")
        XCTAssertEqual(Set(try search("marker")), ["newer best", "best"], "a selective word finds every match")
    }

    func testHostileQueriesGiveAResultOrNoQuery() throws {
        try importLibrary()
        var names = ["\"", "\"harbour", "harbour\"", "a\"b\"c", "NOT", "harbour NOT tower", "OR", "AND", "NEAR(a b)",
                     "a*", "*a", "^harbour", "harbour^", "{title}:x", "title:harbour", "-harbour", "+x", "(", ")", "a:b:c",
                     "year:", "year:year:2019", "place:\"", "col:\"x\"", "\\", "'", "';DROP TABLE photo;--", "%", "_",
                     "\u{202E}harbour", "e\u{301}", "😀", "🏳️‍🌈 pride", "ﬁ", "İstanbul", "ß", String(repeating: "é", count: 127),
                     String(repeating: "東", count: 85), String(repeating: "a ", count: 127) + "a",
                     // Two words, one of them folded (full-width, decomposed, a ligature, a compatibility form):
                     // once an FTS5 syntax error, EIO in the mount.
                     "harbour ２０１９", "ｈａｒｂｏｕｒ 2019", "bele\u{301}m harbour", "ﬁ harbour", "① harbour", "№ 1",
                     "place:ｌｉｓｂ 2019", "year:２０１９ harbour", "harbour place:ｌｉｓｂ"]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab \"*:-^(){}+.,'\\%_NOTANDOR東京é\u{301}\tｈ２ﬁ①")
        for _ in 0..<500 {
            names.append(String((0..<Int.random(in: 1...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }))
        }
        for name in names {
            guard let query = SearchQuery(name: name) else { continue }
            XCTAssertNoThrow(try catalog.searchPhotos(query), name.debugDescription)
        }
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 1...255, using: &generator)).map { _ in UInt8.random(in: 1...255, using: &generator) }
            guard let query = SearchQuery(nameBytes: bytes) else { continue }
            XCTAssertNoThrow(try catalog.searchPhotos(query))
        }
        XCTAssertEqual(try search("\"harbour"), ["1", "2", "3"], "a quote is punctuation inside a quoted word")
        XCTAssertEqual(try search("harbour ２０１９"), try search("harbour 2019"), "a full-width word finds what its usual form does")
        // Many words of a script without spaces: one MATCH of the trigram index, not a subquery each (17 were
        // more than SQLite would plan: EIO in the mount).
        for repeated in [Array(repeating: "タワー", count: 20), Array(repeating: "ﾀﾜｰ", count: 20)] {
            XCTAssertEqual(try search(repeated.joined(separator: " ")), try search(repeated[0]), "\(repeated.count) words")
            XCTAssertFalse(try search(repeated[0]).isEmpty)
        }
        XCTAssertEqual(try search((["東京"] + Array(repeating: "タワー", count: 20)).joined(separator: " ")), try search("東京 タワー"))
        // Many short words of such scripts, or emoji, beside a word: one scan per table, not a subquery each (16
        // beside a MATCH were more than SQLite would plan: EIO in the mount).
        XCTAssertEqual(try search((Array(repeating: "夜", count: 20) + ["kanto"]).joined(separator: " ")), ["4"])
        XCTAssertEqual(try search((["夜", "東京"] + Array(repeating: "の", count: 20) + ["kanto", "東京タワー"]).joined(separator: " ")), ["4"])
        XCTAssertEqual(try search((Array(repeating: "🍕", count: 20) + ["🌃", "pizza"]).joined(separator: " ")), ["7"])
        XCTAssertEqual(try search((Array(repeating: "夜", count: 20) + ["🍕", "kanto"]).joined(separator: " ")), [], "every word must match")
        XCTAssertEqual(try search("title:harbour"), [], "not a field: the text \"title:harbour\" as a phrase")
    }
}
