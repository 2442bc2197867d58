// The account fields of a record (visibility flags, tags, views, lastupdate, media, owner) and of an album,
// as Flickr sends them and as a hostile server might: wrong types and absurd numbers never trap.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import PhotoCatalog
import PhotoSources
import XCTest

final class AccountRecordTests: XCTestCase {
    func photo(_ fields: String, account: String? = nil) throws -> SourcePhoto {
        let json = #"{"id": "52000000001", "owner": "1@N01", "url_o": "http://x/o.jpg""# + (fields.isEmpty ? "" : ", " + fields) + "}"
        return try FlickrRecord.read(try JSONValue.parse(json), context: FlickrRecordContext(account: account)).get()
    }

    func testVisibilityFlagsAsFlickrSendsThem() throws {
        XCTAssertEqual(try photo("").visibility, .everyone, "no flags: a public list (getRecent, search)")
        XCTAssertEqual(try photo(#""ispublic": 1, "isfriend": 0, "isfamily": 0"#).visibility, .everyone)
        XCTAssertEqual(try photo(#""ispublic": 0, "isfriend": 0, "isfamily": 0"#).visibility, .privateOnly)
        XCTAssertEqual(try photo(#""ispublic": "0", "isfriend": "1", "isfamily": "0""#).visibility, .friends)
        XCTAssertEqual(try photo(#""ispublic": 0, "isfriend": 0, "isfamily": true"#).visibility, .family)
        XCTAssertEqual(try photo(#""ispublic": "0", "isfriend": 1, "isfamily": "1""#).visibility, [.friends, .family])
        // Anything but Flickr's 1 leaves a flag unset: an unreadable answer makes a photo more private, never less.
        for value in [#""yes""#, "2", "-1", "1.5", "1e400", "99999999999999999999", "null", "[1]", #"{"_content": "x"}"#] {
            XCTAssertEqual(try photo(#""ispublic": "# + value).visibility, .privateOnly, value)
        }
        XCTAssertEqual(try photo(#""isfriend": 1"#).visibility, .friends, "a flag present, ispublic missing")
    }

    func testTagsViewsAndLastUpdate() throws {
        let p = try photo(#""tags": "harbour  dawn y2019 ", "views": "1234", "lastupdate": "1700000123""#)
        XCTAssertEqual(p.tags, ["harbour", "dawn", "y2019"])
        XCTAssertEqual(p.views, 1234)
        XCTAssertEqual(p.lastUpdate, 1_700_000_123)
        XCTAssertEqual(try photo(#""tags": 2019, "views": 7, "lastupdate": 1700000000"#).tags, ["2019"])
        let absent = try photo("")
        XCTAssertEqual(absent.tags, [])
        XCTAssertNil(absent.views)
        XCTAssertNil(absent.lastUpdate)
        // Wrong types and absurd numbers: dropped or clamped, never a trap.
        for value in ["[1, 2]", "{}", "true", "null", "1e400", "-1e400", "99999999999999999999", "-9223372036854775808",
                      "9223372036854775807", #""-5""#, #""abc""#, "0.5", #""\u0000""#] {
            let p = try photo(#""tags": "# + value + #", "views": "# + value + #", "lastupdate": "# + value)
            if let views = p.views { XCTAssertGreaterThanOrEqual(views, 0, value) }
            if let last = p.lastUpdate { XCTAssertTrue((1...MomentRange.latest).contains(last), value) }
            XCTAssertTrue(p.tags.allSatisfy { !$0.isEmpty && !$0.contains("\u{0}") }, value)
        }
        XCTAssertEqual(try photo(#""views": "-5""#).views, 0)
        XCTAssertNil(try photo(#""lastupdate": "0""#).lastUpdate)
        XCTAssertNil(try photo(#""lastupdate": "253402300800""#).lastUpdate, "past year 9999")
        // Thousands of tags are cut to the catalog's limit.
        let many = (0..<5_000).map { "t\($0)" }.joined(separator: " ")
        XCTAssertEqual(try photo(#""tags": ""# + many + #"""#).tags.count, SourceText.maxTags)
    }

    func testTheAccountOwnsRecordsThatNameNoOwnerAndNoOthers() throws {
        XCTAssertEqual(try photo("", account: "1@N01").owner, "1@N01")
        let unnamed = try FlickrRecord.read(try JSONValue.parse(#"{"id": "2", "url_o": "http://x/o.jpg"}"#),
                                            context: FlickrRecordContext(account: "10000001@N01")).get()
        XCTAssertEqual(unnamed.owner, "10000001@N01", "photosets.getPhotos names the owner on the set only")
        XCTAssertThrowsError(try photo("", account: "2@N02")) { XCTAssertEqual(($0 as? SkippedRecord)?.field, "owner") }
    }

    func testVideosInAPageAreCountedAndAnyMediaValueIsSafe() throws {
        let answer = try JSONValue.parse("""
            {"photos": {"page": 1, "pages": "1", "photo": [
              {"id": "1", "url_o": "http://x/1.jpg", "media": "photo"},
              {"id": "2", "url_o": "http://x/2.jpg", "media": "video"},
              {"id": "3", "media": "VIDEO"},
              {"id": "4", "url_o": "http://x/4.jpg", "media": 5},
              {"id": "5", "url_o": "http://x/5.jpg", "media": {"_content": "video"}},
              {"id": "6", "url_o": "http://x/6.jpg", "media": ["video"]},
              "video"
            ]}, "stat": "ok"}
            """)
        let page = try FlickrSource.readPage(answer, page: 1, method: "flickr.people.getPhotos")
        XCTAssertEqual(page.videos, 3)
        XCTAssertEqual(page.photos.map(\.id), ["1", "4", "6"])
        XCTAssertEqual(page.skipped.map(\.field), ["record"])
    }

    func testAlbumRecordsAsFlickrSendsThemAndWorse() throws {
        func album(_ json: String) throws -> Result<SourceAlbum, SkippedRecord> { FlickrSource.readAlbum(try JSONValue.parse(json)) }
        let real = try album(#"{"id": "72157678257561504", "primary": "33576583365", "photos": 12, "videos": 0, "title": {"_content": "Exposities"}, "description": {"_content": "Krist"}, "count_views": "0", "date_create": "1490129566", "date_update": "1510004628"}"#).get()
        XCTAssertEqual(real, SourceAlbum(id: "72157678257561504", title: "Exposities", description: "Krist",
                                         updatedAt: 1_510_004_628, photoCount: 12))
        XCTAssertEqual(try album(#"{"id": 5, "photos": "3", "title": 42}"#).get().title, "42")
        let odd = try album(#"{"id": "5", "photos": "-3", "date_update": "99999999999999999999", "title": {"_content": {"_content": {"_content": "deep"}}}, "description": [1]}"#).get()
        XCTAssertEqual(odd.photoCount, 0)
        XCTAssertNil(odd.updatedAt)
        XCTAssertEqual(odd.title, "")
        XCTAssertEqual(odd.description, "")
        XCTAssertNil(try album(#"{"id": "5", "photos": 1e400, "date_update": 0}"#).get().photoCount)
        for json in [#"{"id": "../x"}"#, #"{"id": ["1"]}"#, #"{"title": "no id"}"#, #""album""#, "null"] {
            guard case .failure(let skipped) = try album(json) else { return XCTFail(json) }
            XCTAssertTrue(["id", "record"].contains(skipped.field), json)
        }
    }

    func testIDPagesOfHostileAnswers() throws {
        func ids(_ json: String) throws -> SourceIDPage {
            try FlickrSource.readIDPage(try JSONValue.parse(json), envelope: "photoset", page: 2, method: "m")
        }
        let page = try ids(#"{"photoset": {"pages": "99999999999999999999", "photo": [{"id": "1"}, {"id": 2}, {"id": "../3"}, {"id": ["4"]}, "5", {"id": "6", "media": "video"}, {}]}}"#)
        XCTAssertEqual(page.ids, ["1", "2"])
        XCTAssertNil(page.next, "a page count that is no Int ends the listing at this page")
        XCTAssertEqual(try ids(#"{"photoset": {"pages": 9, "photo": []}}"#).next, nil, "an empty page ends it")
        XCTAssertEqual(try ids(#"{"photoset": {"pages": 9, "photo": [{"id": "1"}]}}"#).next, PageCursor(token: "3"))
        XCTAssertThrowsError(try ids(#"{"photos": {"photo": []}}"#))
        XCTAssertThrowsError(try ids(#"{"photoset": {"photo": {"id": "1"}}}"#))
        // Cursors that come back from a library file are page numbers or page 1.
        for token in ["", "x", "-5", "0", "99999999999999999999", "9223372036854775807"] {
            XCTAssertEqual(FlickrSource.pageNumber(PageCursor(token: token)), 1, token)
        }
        XCTAssertEqual(FlickrSource.pageNumber(PageCursor(token: "42")), 42)
    }

    /// Every new field of a record and of an album, each set to each hostile value, with usable and unusable
    /// ids, through the readers. What is accepted keeps every rule a SourcePhoto promises; an unusable id is
    /// never accepted and a usable record never refused; a flag is set only by Flickr's own value (none of the
    /// hostile ones is 1, so only `true`); and an account's list never takes another owner's photo.
    func testSeededHostileValuesInTheNewFields() throws {
        let values = ["null", "true", "[]", "{}", "-0", "1e400", "-1e400", "99999999999999999999", "-99999999999999999999",
                      "0.0000001", #""""#, #""\ud800""#, #""\u0000""#, #""   ""#, #"{"_content": null}"#, "[[[[1]]]]",
                      #"""# + String(repeating: "9", count: 100) + #"""#]
        let fields = ["ispublic", "isfriend", "isfamily", "tags", "views", "lastupdate", "media", "server", "secret",
                      "originalsecret", "originalformat", "owner"]
        // Ids as JSON: usable (text and a number), and ones no rule may accept (path tricks, blanks, a 65-byte
        // id, non-ASCII, punctuation alone, values that are no text at all).
        let usableIDs = [#""52000000001""#, "52000000002", #""a.b_c-d@N01""#, #""9""#]
        let unusableIDs = [#""../x""#, #""""#, #""   ""#, #""a b""#, #""x/y""#, #""\u0000""#, #""\ud800""#, #""é1""#, #""._-""#,
                           #"""# + String(repeating: "7", count: 65) + #"""#, "null", "true", "[]", "{}", #"{"_content": null}"#]
        let flags: [(field: String, visibility: PhotoVisibility)] = [("ispublic", .everyone), ("isfriend", .friends), ("isfamily", .family)]
        var generator = SeededGenerator(seed: 9)
        var accepted = 0
        var skippedBy: [String: Int] = [:]
        var albumsAccepted = 0
        for _ in 0..<2_000 {
            let idIsUsable = Int.random(in: 0..<4, using: &generator) != 0
            var parts = ["\"id\": \((idIsUsable ? usableIDs : unusableIDs).randomElement(using: &generator)!)"]
            let hasOriginal = Bool.random(using: &generator)
            if hasOriginal { parts.append(#""url_o": "http://x/o.jpg""#) }
            var chosen: [String: String] = [:]
            for field in fields where Int.random(in: 0..<3, using: &generator) == 0 {
                chosen[field] = values.randomElement(using: &generator)!
                parts.append("\"\(field)\": \(chosen[field]!)")
            }
            let account = Bool.random(using: &generator) ? "1@N01" : nil
            let json = "{" + parts.joined(separator: ", ") + "}"
            let record = try JSONValue.parse(json)
            XCTAssertFalse(FlickrRecord.isVideo(record), "no hostile media value is \"video\": \(json)")
            switch FlickrRecord.read(record, context: FlickrRecordContext(account: account)) {
            case .success(let photo):
                accepted += 1
                XCTAssertTrue(idIsUsable, "an unusable id was accepted: \(json)")
                XCTAssertTrue(SourceIdentifier.isValid(photo.id), json)
                XCTAssertTrue(SourceURL.isUsable(photo.originalURL), json)
                XCTAssertTrue(photo.thumbnailURL.map(SourceURL.isUsable) ?? true, json)
                XCTAssertTrue(photo.renditions.allSatisfy {
                    SourceURL.isUsable($0.url) && (1...SourceURL.maxPixelEdge).contains($0.width)
                        && (1...SourceURL.maxPixelEdge).contains($0.height)
                }, json)
                XCTAssertLessThanOrEqual(photo.owner.utf8.count, SourceIdentifier.maxBytes, json)
                if let account {
                    XCTAssertEqual(photo.owner, SourceIdentifier.encoded(account), "another owner's photo in the account's list: \(json)")
                }
                XCTAssertGreaterThanOrEqual(photo.views ?? 0, 0, json)
                if let lastUpdate = photo.lastUpdate { XCTAssertNotNil(MomentRange.valid(lastUpdate), json) }
                XCTAssertLessThanOrEqual(photo.tags.count, SourceText.maxTags, json)
                XCTAssertTrue(photo.tags.allSatisfy { !$0.isEmpty && $0.count <= SourceText.tagLimit }, json)
                if flags.contains(where: { chosen[$0.field] != nil }) {
                    for flag in flags where photo.visibility.contains(flag.visibility) {
                        XCTAssertEqual(chosen[flag.field], "true", "\(flag.field) set by an unreadable value: \(json)")
                    }
                } else {
                    XCTAssertEqual(photo.visibility, .everyone, "no flags: a public list's record: \(json)")
                }
            case .failure(let skipped):
                skippedBy[skipped.field, default: 0] += 1
                XCTAssertFalse(skipped.id?.unicodeScalars.contains { $0.value < 0x20 || $0.value > 0x7E } ?? false,
                               "a skipped id is printable in a log line: \(skipped)")
                switch skipped.field {
                case "id": XCTAssertFalse(idIsUsable, "a usable id refused: \(json)")
                case "url": XCTAssertFalse(hasOriginal, "a usable url_o refused: \(json)")
                case "owner": XCTAssertNotNil(chosen["owner"], "refused for an owner it does not name: \(json)")
                default: XCTFail("skipped for \(skipped.field): \(json)")
                }
                if idIsUsable && hasOriginal && chosen["owner"] == nil { XCTFail("a usable record was refused (\(skipped)): \(json)") }
            }

            // An album is skipped exactly when its id is unusable; what is kept is in range.
            let albumIDIsUsable = Int.random(in: 0..<4, using: &generator) != 0
            let albumParts = ["\"id\": \((albumIDIsUsable ? usableIDs : unusableIDs).randomElement(using: &generator)!)"]
                + ["title", "description", "photos", "date_update"].map { "\"\($0)\": \(values.randomElement(using: &generator)!)" }
            let albumJSON = "{" + albumParts.joined(separator: ", ") + "}"
            switch FlickrSource.readAlbum(try JSONValue.parse(albumJSON)) {
            case .success(let album):
                albumsAccepted += 1
                XCTAssertTrue(albumIDIsUsable, "an unusable album id was accepted: \(albumJSON)")
                XCTAssertTrue(SourceIdentifier.isValid(album.id), albumJSON)
                XCTAssertGreaterThanOrEqual(album.photoCount ?? 0, 0, albumJSON)
                if let updated = album.updatedAt { XCTAssertNotNil(MomentRange.valid(updated), albumJSON) }
                XCTAssertLessThanOrEqual(album.title.count, SourceText.nameLimit, albumJSON)
            case .failure(let skipped):
                XCTAssertFalse(albumIDIsUsable, "a usable album id refused: \(albumJSON)")
                XCTAssertEqual(skipped.field, "id", albumJSON)
            }
        }
        // The seed reaches every outcome, so the checks above ran on each (counts printed for when it changes).
        print("hostile records: \(accepted) accepted, skipped by field \(skippedBy.sorted { $0.key < $1.key }), \(albumsAccepted) albums")
        XCTAssertEqual(accepted + skippedBy.values.reduce(0, +), 2_000, "every record accepted or skipped")
        XCTAssertGreaterThan(accepted, 200)
        for field in ["id", "url", "owner"] { XCTAssertGreaterThan(skippedBy[field] ?? 0, 20, "\(field): \(skippedBy)") }
        XCTAssertGreaterThan(albumsAccepted, 200)
        XCTAssertLessThan(albumsAccepted, 2_000)
    }
}
