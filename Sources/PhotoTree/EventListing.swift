// Listings of /events, /events/<Year> and an event's directory, built from clustered events with no I/O.
import Foundation
import PhotoCatalog

/// Pure builders for the /events tree. Photos inside an event are named as in /moments (`PhotoNameStyle.moment`)
/// and are the same nodes, so a photo keeps its inode across every tree.
public enum EventTreeBuilder {
    /// `/events`: one directory per year that has an event (years 1–9999), in year order. `isPrivate` says
    /// which events hold no public photo: a year of only such events is 0500, as in /moments.
    public static func years(_ events: [PhotoEvent], isPrivate: (PhotoEvent) -> Bool = { _ in false }) -> DirectoryListing {
        var newestByYear: [Int: Int64] = [:]
        var eventsByYear: [Int: Int] = [:]
        var publicYears = Set<Int>()
        for event in events where CatalogLimits.yearRange.contains(event.year) && !event.members.isEmpty {
            newestByYear[event.year] = max(newestByYear[event.year] ?? Int64.min, event.lastAt)
            eventsByYear[event.year, default: 0] += 1
            if !isPrivate(event) { publicYears.insert(event.year) }
        }
        // A year's link count is 2 + its events, as `events(inYear:)` gives it (stat of the entry and of the
        // directory agree).
        let entries = newestByYear.keys.sorted().map { year in
            DirectoryEntry(name: TreeBuilder.yearName(year),
                           attributes: TreeBuilder.directoryAttributes(.eventYear(year), newest: newestByYear[year] ?? 0,
                                                                       subdirectories: eventsByYear[year] ?? 0,
                                                                       isPrivate: !publicYears.contains(year)))
        }
        let newest = newestByYear.values.max() ?? 0
        return DirectoryListing(attributes: TreeBuilder.directoryAttributes(.events, newest: newest,
                                                                            subdirectories: entries.count),
                                entries: entries)
    }

    /// `/events/<Year>`: its events in time order (their names start with the date, so `ls` keeps that order).
    /// A name already listed (only a library file edited by hand can store two settled events of one name) is
    /// given the event's key as a suffix; an event with no photo is left out. An event of no public photo
    /// (`isPrivate`) is 0500, as its own listing says (`photos(of:_:)`), and so is a year of only such events.
    public static func events(inYear year: Int, _ events: [PhotoEvent],
                              isPrivate: (PhotoEvent) -> Bool = { _ in false }) -> DirectoryListing {
        let shown = events.filter { $0.year == year && !$0.members.isEmpty }
            .sorted { ($0.firstAt, $0.key) < ($1.firstAt, $1.key) }
        var namer = UniqueNamer()
        let entries = shown.map { event in
            DirectoryEntry(name: namer.claim(stem: event.name, id: String(event.key), extension: nil),
                           attributes: TreeBuilder.directoryAttributes(.event(event.key), newest: event.lastAt,
                                                                       subdirectories: 0, isPrivate: isPrivate(event)))
        }
        return DirectoryListing(attributes: TreeBuilder.directoryAttributes(.eventYear(year),
                                                                            newest: shown.map(\.lastAt).max() ?? 0,
                                                                            subdirectories: entries.count,
                                                                            isPrivate: !shown.isEmpty && shown.allSatisfy(isPrivate)),
                                entries: entries)
    }

    /// An event's directory: its photos (listing rows, any order; those the catalog no longer lists are simply
    /// absent) named as in /moments, in time order.
    public static func photos(of event: PhotoEvent, _ photos: [PhotoRecord], fileExtension: String? = nil,
                              servedExtension: ((PhotoRecord) -> String)? = nil,
                              linkCount: (PhotoRecord) -> UInt32) -> DirectoryListing {
        let members = Set(event.members)
        // Sorted by keys read once, not by comparing (and copying) whole records.
        let inEvent = photos.indices.filter { members.contains(photos[$0].seq) }
            .map { (photos[$0].momentAt, photos[$0].seq, $0) }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { photos[$0.2] }
        return TreeBuilder.photos(inEvent, in: .event(event.key), style: .moment, fileExtension: fileExtension,
                                  servedExtension: servedExtension, linkCount: linkCount)
    }

    /// The event a node stands for, found by key.
    public static func event(_ key: Int64, in events: [PhotoEvent]) -> PhotoEvent? {
        events.first { $0.key == key }
    }
}
