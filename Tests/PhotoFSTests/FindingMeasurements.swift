// Measurements for docs/events-and-search.md on a 100,000-photo library: the import with and without the
// search index's triggers, clustering at import and at mount, cold searches. Printed, never asserted; runs
// only with PHOTOFS_MEASURE_FINDING=1 (it takes minutes).
import Foundation
import GRDB
import PhotoCatalog
import PhotoFS
import PhotoTree
import XCTest

final class FindingMeasurements: XCTestCase {
    /// A deterministic library: bursts of photos over ten years, titles and descriptions from a 2,000-word
    /// vocabulary, 200 places in 20 regions, 12 photographers; "harbour" in 1 % of titles.
    static func library(count: Int) -> (places: [PlaceResolution], pages: [[ImportedPhoto]]) {
        var state: UInt64 = 99
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "be", "di", "fa", "go", "hu", "ji", "ve", "zo", "pe"]
        let words = (0..<2000).map { index in
            (0..<3).map { syllables[(index >> ($0 * 4) + $0 * 7) % syllables.count] }.joined() + String(index % 97)
        }
        let places = (0..<200).map { PlaceResolution(placeID: "p\($0)", placeName: "Town\(words[$0])", regionName: "Region\($0 % 20)") }
        var photos: [ImportedPhoto] = []
        var time: Int64 = 1_262_304_000 // 2010-01-01
        while photos.count < count {
            let place = "p\(next() % 200)"
            for _ in 0..<(1 + Int(next() % 60)) where photos.count < count {
                let id = String(photos.count + 1)
                var title = (0..<3).map { _ in words[Int(next() % 2000)] }.joined(separator: " ")
                if photos.count % 100 == 7 { title += " harbour" }
                let description = (0..<10).map { _ in words[Int(next() % 2000)] }.joined(separator: " ")
                let owner = "owner\(next() % 12)"
                let record = PhotoRecord(id: id, title: "Photo " + title, description: description, placeID: place,
                                         momentAt: time, momentYear: PhotoRecord.year(ofMoment: time),
                                         originalURL: "http://origin/\(id).jpg", byteSize: 1000, contentType: "image/jpeg",
                                         tags: (0..<3).map { _ in words[Int(next() % 2000)] })
                photos.append(ImportedPhoto(photo: record, owner: owner, ownerName: owner.capitalized))
                time += Int64(next() % 600)
            }
            time += 3600 + Int64(next() % (3 * 86_400))
        }
        return (places, stride(from: 0, to: photos.count, by: 500).map { Array(photos[$0..<min($0 + 500, photos.count)]) })
    }

    func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }

    func testMeasureOneHundredThousandPhotos() throws {
        guard ProcessInfo.processInfo.environment["PHOTOFS_MEASURE_FINDING"] == "1" else {
            throw XCTSkip("measurements run with PHOTOFS_MEASURE_FINDING=1")
        }
        let environment = ProcessInfo.processInfo.environment
        // PHOTOFS_MEASURE_KEEP=DIR keeps the libraries there for a look with sqlite3.
        let kept = environment["PHOTOFS_MEASURE_KEEP"].map { URL(fileURLWithPath: $0) }
        let directory = kept ?? FileManager.default.temporaryDirectory.appendingPathComponent("finding-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if kept == nil { try? FileManager.default.removeItem(at: directory) } }
        let count = environment["PHOTOFS_MEASURE_COUNT"].flatMap { Int($0) } ?? 100_000
        let (places, pages) = Self.library(count: count)

        // The same import into a library whose search triggers were dropped, for the index's share.
        let bare = directory.appendingPathComponent("bare.sqlite").path
        _ = try Catalog(path: bare)
        let queue = try DatabaseQueue(path: bare)
        try queue.write { db in
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'search_%'") {
                try db.execute(sql: "DROP TRIGGER \(name)")
            }
        }
        try queue.close()
        let bareCatalog = try Catalog(path: bare)
        let bareImport = try seconds { for (number, page) in pages.enumerated() {
            // Places with the first page only, as LibraryImporter resolves each new place once.
            _ = try bareCatalog.applyImport(places: number == 0 ? places : [], photos: page)
        } }

        let path = directory.appendingPathComponent("library.sqlite").path
        let catalog = try Catalog(path: path)
        let indexedImport = try seconds { for (number, page) in pages.enumerated() {
            _ = try catalog.applyImport(places: number == 0 ? places : [], photos: page)
        } }
        print("import of \(count) photos in \(pages.count) pages: \(String(format: "%.2f", bareImport)) s without the search index, "
              + "\(String(format: "%.2f", indexedImport)) s with it")

        var events: [PhotoEvent] = []
        let now = Int64(Date().timeIntervalSince1970)
        let readOnly = try seconds { _ = try catalog.eventPhotos() }
        let firstSettle = try seconds { events = try LibraryEvents.settle(catalog, now: now) }
        let mount = try seconds { events = try LibraryEvents.current(catalog, now: now) }
        let cluster = try seconds { _ = EventClustering.cluster(try catalog.eventPhotos(), stored: try catalog.storedEvents(), now: now) }
        print("events: \(events.count); reading the photos' times and places \(String(format: "%.3f", readOnly)) s; "
              + "first settle (cluster + store all) \(String(format: "%.3f", firstSettle)) s; "
              + "at mount with settled events \(String(format: "%.3f", mount)) s (clustering alone and reads \(String(format: "%.3f", cluster)) s)")
        let years = Set(events.map(\.year)).count
        let listings = seconds {
            _ = EventTreeBuilder.years(events)
            for year in Set(events.map(\.year)) { _ = EventTreeBuilder.events(inYear: year, events) }
        }
        print("event year listings (\(years) years): \(String(format: "%.4f", listings)) s")

        for name in ["harbour", "photo", "p", "harbour 201", "place:townkal", "year:2015 harbour", "kalomi"] {
            guard let query = SearchQuery(name: name) else { continue }
            let cold = try Catalog(path: path, mode: .mounting)
            var results: [Int64] = []
            let search = try seconds { results = try cold.searchPhotos(query) }
            let rows = try seconds { _ = try cold.photos(seqs: results) }
            let warm = try seconds { _ = try cold.searchPhotos(query) }
            print("search \"\(name)\": \(results.count) results, cold \(String(format: "%.1f", search * 1000)) ms, "
                  + "listing rows \(String(format: "%.1f", rows * 1000)) ms, again \(String(format: "%.1f", warm * 1000)) ms")
        }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let bareSize = try FileManager.default.attributesOfItem(atPath: bare)[.size] as? Int ?? 0
        print("library file: \(size / 1_048_576) MiB with the index, \(bareSize / 1_048_576) MiB without")
    }
}
