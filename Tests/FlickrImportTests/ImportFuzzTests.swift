// Thousands of deterministic mutations of real Flickr-format answers through the JSON reader, the record
// validation, the catalog and the tree builder: nothing traps, every produced name is valid.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoSources
import PhotoTree
import XCTest

final class ImportFuzzTests: XCTestCase {
    /// Iterations per mutation kind. 2,500 structured + 1,500 byte-level pages of 10 records each (about
    /// 25,000 records, 120,000 names) take 6 s in a debug build on a shared 2-core machine.
    static let structuredIterations = 2500
    static let byteIterations = 1500

    /// A record as its fields' raw JSON texts, so a mutation can put any bytes (a lone surrogate escape,
    /// 1e400) where a value goes.
    typealias RawRecord = [(key: String, value: String)]

    static let numberFragments = ["9223372036854775807", "-9223372036854775808", "9223372036854775808", "-1", "0", "-0",
                                  "1e308", "-1e308", "1e400", "-1e400", "99999999999999999999", "1e-400", "4.9e-324",
                                  "65535", "65536", "253402300799", "253402300800", "-62135596801", "1.5", "2e3"]
    static let stringFragments: [String] = [
        #""\u0000""#, #""\ud800""#, #""\udfff\ud800""#, #""a\/b""#, #""\u202e\u2066gpj.exe""#, #"".""#, #""..""#,
        #""/""#, #""a/b""#, #""""#, #"" ""#, #""\n\r\t\b\f""#, #""0000-00-00 00:00:00""#, #""10000-01-01 00:00:00""#,
        #""2019-02-29 00:00:00""#, #""-1""#, #""1e400""#, #""9223372036854775807""#, #""http://x/a.jpg""#,
        #""http://x/\u0000.jpg""#, #""javascript:alert(1)""#, #""\u0085\u2028\u2029""#, #""\uFEFF""#,
        #""\ud83d\ude00""#, #"".hidden""#, #""\u0041\u030A""#, #""CON""#, #""a\\b""#, #""\"quoted\"""#,
        "\"" + String(repeating: "\\u0000", count: 300) + "\"",
        "\"" + String(repeating: "é", count: 5000) + "\"", // 10 KB
        "\"" + String(repeating: "/", count: 10_000) + "\"",
        "\"" + String(repeating: "\\ud800", count: 2000) + "\"",
    ]
    static let typeFragments = ["null", "true", "false", "[]", "{}", #"{"_content": "x"}"#, #"{"_content": {"_content": 5}}"#,
                                #"[1, "2", {}]"#, #"{"_content": "\ud800/.."}"#, #"{"_content": null}"#]
    static let fields = ["id", "owner", "ownername", "title", "description", "dateupload", "datetaken", "datetakenunknown",
                         "latitude", "longitude", "place_id", "url_o", "width_o", "height_o", "url_l", "width_l", "height_l",
                         "url_sq", "width_sq", "height_sq", "url_z", "width_z", "height_z", "url_q", "url_t"]
    /// Byte-level damage: what a broken proxy or a hostile server can put anywhere in a page.
    static let byteSnippets = [#"\ud800"#, #"\u0000"#, "\"", "\\", "{", "}", "[", "]", ",", ":", "1e400", "-", "\u{FF}",
                               "\u{80}", "\u{202E}", "/", "\0"]

    func testMutatedAnswersNeverTrapAndOnlyMakeValidNames() throws {
        let seeds = try seedPages()
        XCTAssertGreaterThanOrEqual(seeds.count, 3)
        var generator = SeededGenerator(seed: 0x5EED_F11C)
        var stats = Stats()
        let catalogDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: catalogDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: catalogDirectory) }
        let catalog = try Catalog(path: catalogDirectory.appendingPathComponent("library.sqlite").path)

        for iteration in 0..<ImportFuzzTests.structuredIterations {
            var records = seeds[iteration % seeds.count]
            for _ in 0..<Int.random(in: 1...4, using: &generator) { mutate(&records, using: &generator) }
            let page = pageText(records, pages: Bool.random(using: &generator) ? "1" : randomFragment(using: &generator))
            try check(page: page, stats: &stats, catalog: iteration % 97 == 0 ? catalog : nil)
        }
        for iteration in 0..<ImportFuzzTests.byteIterations {
            var bytes = Array(pageText(seeds[iteration % seeds.count], pages: "1").utf8)
            for _ in 0..<Int.random(in: 1...3, using: &generator) { damage(&bytes, using: &generator) }
            try check(page: String(decoding: bytes, as: UTF8.self), bytes: bytes, stats: &stats, catalog: nil)
        }
        // Place answers with hostile names become region directories.
        for _ in 0..<500 {
            let name = randomFragment(using: &generator)
            let answer = try JSONValue.parse(#"{"place": {"name": "# + name + #", "region": {"_content": "# + name + #"}, "country": "# + randomFragment(using: &generator) + #"}, "stat": "ok"}"#)
            let resolution = FlickrSource.readPlace("p1", answer)
            let listing = TreeBuilder.regions([RegionRecord(id: 1, name: resolution.regionName, photoCount: 1,
                                                            photographerCount: 1, newestMomentAt: 0)], newest: 0)
            for entry in listing.entries { assertValidName(entry.name) }
            stats.names += listing.entries.count
        }

        // The fuzz must have exercised both outcomes, or it tested nothing.
        XCTAssertGreaterThan(stats.photos, 10_000, "\(stats)")
        XCTAssertGreaterThan(stats.skipped, 500, "\(stats)")
        XCTAssertGreaterThan(stats.notJSON, 100, "\(stats)")
        XCTAssertGreaterThan(stats.byteLevelParsed, 50, "\(stats)")
        XCTAssertGreaterThan(stats.names, 30_000, "\(stats)")
        XCTAssertGreaterThan(try catalog.allPhotos().count, 20, "\(stats)")
    }

    struct Stats: CustomStringConvertible {
        var photos = 0, skipped = 0, notJSON = 0, byteLevelParsed = 0, names = 0
        var description: String { "photos \(photos), skipped \(skipped), not JSON \(notJSON), byte-level parsed \(byteLevelParsed), names \(names)" }
    }

    // MARK: The pipeline under test

    func check(page: String, bytes: [UInt8]? = nil, stats: inout Stats, catalog: Catalog?) throws {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes.map { Data($0) } ?? Data(page.utf8)) } catch {
            stats.notJSON += 1
            return
        }
        if bytes != nil { stats.byteLevelParsed += 1 }
        guard let sourcePage = try? FlickrSource.readPage(value, page: 1, method: "flickr.photos.getRecent") else { return }
        stats.skipped += sourcePage.skipped.count
        stats.photos += sourcePage.photos.count
        for skipped in sourcePage.skipped {
            XCTAssertFalse(skipped.field.isEmpty)
            XCTAssertFalse(skipped.id?.unicodeScalars.contains { $0.value < 0x20 || $0.value > 0x7E } ?? false)
        }

        // As the importer does: one photo per id, last wins; measured sizes and types as the catalog stores them.
        var byID: [String: SourcePhoto] = [:]
        for photo in sourcePage.photos { byID[photo.id] = photo }
        let types = Array(ImageContentType.extensions.keys).sorted() + ["application/x-evil"]
        var records: [PhotoRecord] = []
        for (index, photo) in byID.values.sorted(by: { $0.id < $1.id }).enumerated() {
            XCTAssertTrue(SourceIdentifier.isValid(photo.id), photo.id)
            XCTAssertTrue(SourceURL.isUsable(photo.originalURL), photo.originalURL)
            XCTAssertTrue((MomentRange.earliest...MomentRange.latest).contains(photo.momentAt))
            XCTAssertLessThanOrEqual(photo.owner.utf8.count, SourceIdentifier.maxBytes)
            for rendition in photo.renditions {
                XCTAssertTrue((1...65535).contains(rendition.width) && (1...65535).contains(rendition.height))
            }
            var record = photo.catalogRecord()
            XCTAssertTrue((1...9999).contains(record.momentYear), "\(record.momentYear)")
            XCTAssertEqual(TreeBuilder.momentPrefix(record.momentAt).utf8.count, 19)
            record.seq = Int64(index + 1)
            record.byteSize = 1000
            record.contentType = types[index % types.count]
            records.append(record)
        }
        for style in [PhotoNameStyle.moment, .title] {
            for fileExtension in [nil, "png"] as [String?] {
                let listing = TreeBuilder.photos(records, in: .year(2020), style: style, fileExtension: fileExtension) { _ in 2 }
                XCTAssertEqual(Set(listing.entries.map(\.name)).count, records.count, "names are unique")
                for entry in listing.entries { assertValidName(entry.name) }
                stats.names += listing.entries.count
            }
        }
        let photographers = byID.values.enumerated().map { index, photo in
            PhotographerRecord(id: Int64(index + 1), owner: photo.owner, name: photo.ownerName, newestMomentAt: photo.momentAt)
        }
        let region = RegionRecord(id: 1, name: "R", photoCount: records.count, photographerCount: photographers.count,
                                  newestMomentAt: 0)
        for entry in TreeBuilder.photographers(in: region, photographers).entries {
            assertValidName(entry.name)
            stats.names += 1
        }

        // Now and then through a real library file too: what was validated is what the catalog accepts.
        if let catalog, !byID.isEmpty {
            let imported = byID.values.map { photo -> ImportedPhoto in
                var record = photo.catalogRecord()
                record.byteSize = 1000
                record.contentType = "image/jpeg"
                return ImportedPhoto(photo: record, owner: photo.owner, ownerName: photo.ownerName, renditions: photo.renditions)
            }
            _ = try catalog.applyImport(places: [], photos: imported)
            for year in try catalog.years() {
                XCTAssertTrue((1...9999).contains(year.year))
                for entry in TreeBuilder.photos(try catalog.photos(inYear: year.year), in: .year(year.year), style: .moment,
                                                linkCount: { _ in 2 }).entries {
                    assertValidName(entry.name)
                }
            }
        }
    }

    func assertValidName(_ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(name.isEmpty, file: file, line: line)
        XCTAssertLessThanOrEqual(name.utf8.count, 255, name, file: file, line: line)
        XCTAssertFalse(name.utf8.contains(UInt8(ascii: "/")), name, file: file, line: line)
        XCTAssertFalse(name.utf8.contains(0), name, file: file, line: line)
        XCTAssertNotEqual(name, ".", file: file, line: line)
        XCTAssertNotEqual(name, "..", file: file, line: line)
    }

    // MARK: Mutations

    func randomFragment<G: RandomNumberGenerator>(using generator: inout G) -> String {
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: return ImportFuzzTests.numberFragments.randomElement(using: &generator)!
        case 1: return ImportFuzzTests.stringFragments.randomElement(using: &generator)!
        default: return ImportFuzzTests.typeFragments.randomElement(using: &generator)!
        }
    }

    func mutate<G: RandomNumberGenerator>(_ records: inout [RawRecord], using generator: inout G) {
        guard !records.isEmpty else { return }
        let index = Int.random(in: 0..<records.count, using: &generator)
        let field = Bool.random(using: &generator)
            ? ImportFuzzTests.fields.randomElement(using: &generator)!
            : records[index].randomElement(using: &generator)?.key ?? "id"
        switch Int.random(in: 0..<10, using: &generator) {
        case 0...1: // a field removed
            records[index].removeAll { $0.key == field }
        case 2...6: // a value replaced by a limit, a hostile string or another type
            records[index].removeAll { $0.key == field }
            records[index].append((field, randomFragment(using: &generator)))
        case 7: // two fields' values swapped
            let other = ImportFuzzTests.fields.randomElement(using: &generator)!
            let a = records[index].first { $0.key == field }?.value ?? "null"
            let b = records[index].first { $0.key == other }?.value ?? "null"
            records[index].removeAll { $0.key == field || $0.key == other }
            records[index] += [(field, b), (other, a)]
        case 8: // a record that is not an object
            records[index] = [("", randomFragment(using: &generator))]
        default: // a duplicate id
            let other = Int.random(in: 0..<records.count, using: &generator)
            if let id = records[other].first(where: { $0.key == "id" }) {
                records[index].removeAll { $0.key == "id" }
                records[index].append(id)
            }
        }
    }

    func damage<G: RandomNumberGenerator>(_ bytes: inout [UInt8], using generator: inout G) {
        guard !bytes.isEmpty else { return }
        let at = Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...8, using: &generator)))
        case 1: bytes[at] = UInt8.random(in: 0...255, using: &generator)
        default: bytes.insert(contentsOf: Array(ImportFuzzTests.byteSnippets.randomElement(using: &generator)!.utf8), at: at)
        }
    }

    func pageText(_ records: [RawRecord], pages: String) -> String {
        let items = records.map { record -> String in
            // A record made "not an object" is its one value alone.
            if record.count == 1, record[0].key.isEmpty { return record[0].value }
            return "{" + record.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        }
        return #"{"photos": {"page": 1, "pages": "# + pages + #", "perpage": 10, "total": "10", "photo": ["#
            + items.joined(separator: ", ") + #"]}, "stat": "ok"}"#
    }

    // MARK: Seeds

    /// The loopback origin's own answers (getRecent and search, 10 records a page), and hand-written pages
    /// shaped like Flickr's (every url_* size, `_content` objects, numbers as strings).
    func seedPages() throws -> [[RawRecord]] {
        let origin = FlickrOriginServer(library: DemoLibrary.make(count: 30, scale: 8), apiKey: "fuzz")
        try origin.start()
        defer { origin.stop() }
        var pages: [[RawRecord]] = []
        for (method, page) in [("flickr.photos.getRecent", 1), ("flickr.photos.getRecent", 2), ("flickr.photos.search", 3)] {
            let url = "\(origin.endpoint)?method=\(method)&api_key=fuzz&format=json&nojsoncallback=1&per_page=10&page=\(page)"
                + "&extras=\(FlickrSourceOptions.extras)"
            let body = try HTTPClient().get(url).body
            pages.append(try rawRecords(JSONValue.parse(body)))
        }
        let handWritten = #"""
            {"photos": {"page": 1, "pages": 1, "perpage": 3, "total": 3, "photo": [
              {"id": "52000000001", "owner": "12345678@N01", "secret": "abc", "server": "65535", "farm": 66, "title": "Pier",
               "ispublic": 1, "description": {"_content": "From the \"pier\""}, "dateupload": "1700000000",
               "datetaken": "2019-05-04 12:33:10", "datetakengranularity": 0, "datetakenunknown": "0", "ownername": "Ansel",
               "latitude": "37.5", "longitude": "-122.25", "accuracy": "16", "place_id": "7.MJR8tTVrIO1EgB",
               "url_sq": "https://live.staticflickr.com/65535/52000000001_abc_s.jpg", "width_sq": 75, "height_sq": 75,
               "url_q": "https://live.staticflickr.com/65535/52000000001_abc_q.jpg", "width_q": "150", "height_q": "150",
               "url_z": "https://live.staticflickr.com/65535/52000000001_abc_z.jpg", "width_z": 640, "height_z": 480,
               "url_l": "https://live.staticflickr.com/65535/52000000001_abc_b.jpg", "width_l": 1024, "height_l": 768,
               "url_o": "https://live.staticflickr.com/65535/52000000001_def_o.jpg", "width_o": "4000", "height_o": "3000"},
              {"id": "52000000002", "owner": "87654321@N02", "title": "", "description": {"_content": ""},
               "dateupload": 1600000000, "datetaken": "0000-00-00 00:00:00", "datetakenunknown": 1, "ownername": "",
               "latitude": 0, "longitude": 0, "url_m": "https://live.staticflickr.com/1/52000000002_x_m.jpg"},
              {"id": 52000000003, "owner": "87654321@N02", "title": "Über \u00e9t\u00e9 \ud83d\ude00",
               "dateupload": "1500000000", "datetaken": "2011-11-11 11:11:11",
               "url_c": "https://live.staticflickr.com/1/52000000003_x_c.jpg", "width_c": 800, "height_c": "600"}
            ]}, "stat": "ok"}
            """#
        pages.append(try rawRecords(JSONValue.parse(handWritten)))
        return pages
    }

    func rawRecords(_ answer: JSONValue) throws -> [RawRecord] {
        let items = try XCTUnwrap(answer["photos"]?["photo"]?.arrayValue)
        XCTAssertFalse(items.isEmpty)
        return items.map { item in (item.objectValue ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, emit($0.value)) } }
    }

    /// JSON text of a value (strings escaped minimally: quote, backslash, control characters).
    func emit(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number): return number.text
        case .string(let text):
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        case .array(let items): return "[" + items.map(emit).joined(separator: ",") + "]"
        case .object(let fields):
            return "{" + fields.sorted { $0.key < $1.key }.map { "\(emit(.string($0.key))):\(emit($0.value))" }.joined(separator: ",") + "}"
        }
    }
}
