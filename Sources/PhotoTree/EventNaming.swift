// Names of events ("2019-06-01–03 Lisbon") and the places they are named after; pure.
import Foundation
import PhotoCatalog

/// The place labels of photos and events.
enum EventPlaces {
    struct Key: Hashable {
        var place: String?
        var region: String?
    }

    /// A photo's place for naming: the city or locality (the place name up to its first comma: Flickr's
    /// "Lisbon, Lisboa, Portugal" is Lisbon), else the region; sanitised like a file name; nil when neither says
    /// anything.
    static func label(of photo: EventPhoto) -> String? {
        for text in [photo.placeName.map(locality), photo.regionName] {
            guard let text else { continue }
            let clean = FileNaming.sanitize(text, fallback: "")
            if !clean.isEmpty { return clean }
        }
        return nil
    }

    private static func locality(_ name: String) -> String {
        String(name.prefix(4096).split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// Every photo's place label as a number (an index into `names`), made once per distinct place and region.
    struct Labels {
        /// Per photo: an index into `names`, or -1 for no place.
        let ids: [Int]
        let names: [String]

        init(_ photos: [EventPhoto]) {
            var numbers: [Key: Int] = [:]
            var numberOfName: [String: Int] = [:]
            var names: [String] = []
            var ids: [Int] = []
            ids.reserveCapacity(photos.count)
            var previous: (key: Key, id: Int)?
            for photo in photos {
                let key = Key(place: photo.placeName, region: photo.regionName)
                // Photos in import order often share a place: compare with the last one before hashing.
                if let previous, previous.key == key { ids.append(previous.id); continue }
                let id: Int
                if let known = numbers[key] {
                    id = known
                } else if let label = label(of: photo) {
                    id = numberOfName[label] ?? names.count
                    if id == names.count { names.append(label); numberOfName[label] = id }
                    numbers[key] = id
                } else {
                    id = -1
                    numbers[key] = -1
                }
                ids.append(id)
                previous = (key, id)
            }
            self.ids = ids
            self.names = names
        }

        /// The labels of the photos at `members` (indexes), the most frequent first (ties: the one met first,
        /// so the event's first place).
        func ranked(_ members: [Int]) -> [String] {
            counted(members).map { names[$0.id] }
        }

        /// The most frequent label of the photos at `members`, as its number.
        func top(_ members: [Int]) -> Int? {
            counted(members).first?.id
        }

        private func counted(_ members: [Int]) -> [(id: Int, count: Int, first: Int)] {
            var counts: [Int: (count: Int, first: Int)] = [:]
            for (position, member) in members.enumerated() where ids[member] >= 0 {
                let known = counts[ids[member]]
                counts[ids[member]] = ((known?.count ?? 0) + 1, known?.first ?? position)
            }
            return counts.map { (id: $0.key, count: $0.value.count, first: $0.value.first) }
                .sorted { ($1.count, $0.first) < ($0.count, $1.first) }
        }

        /// The label with photos on the most distinct days (UTC days of the camera clock), when that is at least
        /// `minimumDays` (`order`: every photo's index, in time order): where the library's owner lives, not where a burst of holiday photos was taken. Ties go
        /// to the label with more photos, then to the smaller name, so the answer does not depend on order.
        func home(inTimeOrder order: [Int], times: [Int64], minimumDays: Int) -> Int? {
            var days = [Int](repeating: 0, count: names.count)
            var lastDay = [Int64?](repeating: nil, count: names.count)
            var photoCounts = [Int](repeating: 0, count: names.count)
            for index in order where ids[index] >= 0 {
                let id = ids[index], time = times[index]
                // Days before 1970 are negative (-1 s is day -1, not day 0). In time order a label's days never go
                // back, so a new day is one not seen yet.
                let day = CivilDate.day(ofSecond: time)
                if lastDay[id] != day { days[id] += 1; lastDay[id] = day }
                photoCounts[id] += 1
            }
            let best = names.indices.max { a, b in
                (days[a], photoCounts[a], names[b]) < (days[b], photoCounts[b], names[a])
            }
            guard let best, days[best] >= max(1, minimumDays) else { return nil }
            return best
        }
    }

    /// Latitude and longitude in degrees when both are finite, in range and not exactly 0, 0 (what sources
    /// write for "no location").
    static func coordinates(of photo: EventPhoto) -> (Double, Double)? {
        guard let latitude = photo.latitude, let longitude = photo.longitude, latitude.isFinite, longitude.isFinite,
              (-90...90).contains(latitude), (-180...180).contains(longitude),
              !(latitude == 0 && longitude == 0) else { return nil }
        return (latitude, longitude)
    }

    /// The centre of `points` (the mean of their unit vectors, so places either side of the antimeridian
    /// average to it, not to longitude 0); nil for none, or for points that cancel out.
    static func mean<Points: Sequence>(of points: Points) -> (Double, Double)? where Points.Element == (Double, Double) {
        let radians = Double.pi / 180
        var x = 0.0, y = 0.0, z = 0.0
        for (latitude, longitude) in points {
            x += cos(latitude * radians) * cos(longitude * radians)
            y += cos(latitude * radians) * sin(longitude * radians)
            z += sin(latitude * radians)
        }
        let length = (x * x + y * y + z * z).squareRoot()
        guard length > 1e-9 else { return nil }
        return (asin(max(-1, min(1, z / length))) / radians, atan2(y, x) / radians)
    }

    /// Great-circle distance (haversine, mean Earth radius 6,371 km).
    static func distanceMeters(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let radians = Double.pi / 180
        let dLatitude = (b.0 - a.0) * radians, dLongitude = (b.1 - a.1) * radians
        let h = sin(dLatitude / 2) * sin(dLatitude / 2)
            + cos(a.0 * radians) * cos(b.0 * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * 6_371_000 * asin(min(1, sqrt(max(0, h))))
    }
}

/// Event directory names. No photo count and nothing else that moves when a photo is added: a name is part of
/// every path under it, and bookmarks, rsync and desktop thumbnails (keyed by the file's URI) follow paths.
public enum EventNaming {
    /// "2019-06-01 Lisbon" (one day), "2019-06-01–03 Lisbon" (days of one month), "2019-05-31–06-02 Lisbon"
    /// (across months), "2019-12-31–2020-01-01 Lisbon" (across years); the date alone without a place.
    /// `startTime` adds the first photo's time after the start date ("2019-06-01 10.15–03 Lisbon"), with
    /// seconds when `seconds`. At most 255 bytes: a long place is cut, never the dates.
    public static func name(firstAt: Int64, lastAt: Int64, place: String?, startTime: Bool = false,
                            seconds: Bool = false) -> String {
        let first = TreeBuilder.momentPrefix(firstAt), last = TreeBuilder.momentPrefix(max(firstAt, lastAt))
        let firstDate = first.prefix(10), lastDate = last.prefix(10)
        var text = String(firstDate)
        if startTime { text += " " + first.dropFirst(11).prefix(seconds ? 8 : 5) }
        if lastDate != firstDate {
            // "–" is U+2013 EN DASH, the range dash; a hyphen would read as part of the date.
            if first.prefix(4) != last.prefix(4) { text += "–" + lastDate }
            else if first.prefix(7) != last.prefix(7) { text += "–" + lastDate.dropFirst(5) }
            else { text += "–" + lastDate.dropFirst(8) }
        }
        let clean = place.map { FileNaming.sanitize($0, fallback: "") } ?? ""
        return FileNaming.compose(stem: clean.isEmpty ? text : text + " " + clean)
    }

    /// "2019-08-10 08.00 porto" → "2019-08-10 porto" (also with seconds, and before a range's dash); nil for a
    /// name without a start time after its date.
    static func withoutStartTime(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        func digit(_ index: Int) -> Bool { index < bytes.count && (0x30...0x39).contains(bytes[index]) }
        func byte(_ index: Int, _ value: Character) -> Bool { index < bytes.count && bytes[index] == value.asciiValue }
        guard bytes.count > 16, (0..<4).allSatisfy(digit), byte(4, "-"), digit(5), digit(6), byte(7, "-"), digit(8), digit(9),
              byte(10, " "), digit(11), digit(12), byte(13, "."), digit(14), digit(15) else { return nil }
        var end = 16
        if byte(16, "."), digit(17), digit(18) { end = 19 }
        guard end == bytes.count || byte(end, " ") || bytes[end] == 0xE2 else { return nil } // a space, or "–" (E2 80 93)
        return String(decoding: bytes[0..<10] + bytes[end...], as: UTF8.self)
    }

    /// The year a settled event's name starts with ("2021-01-01 Faro" → 2021) when it is one of `years` (those
    /// its photos span), else nil. A settled event stays in that year's folder: a photo joining it from the
    /// evening before New Year moves its first moment into the year before, and would otherwise move the
    /// event's directory (its path) there, under a name that still says the later year.
    static func year(ofName name: String, within years: ClosedRange<Int>) -> Int? {
        let digits = name.utf8.prefix(5)
        guard digits.count == 5, digits.last == UInt8(ascii: "-"),
              digits.dropLast().allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let year = Int(String(decoding: digits.dropLast(), as: UTF8.self)), years.contains(year) else { return nil }
        return year
    }

    /// A stored name as a directory name: sanitised (a library file may hold anything) and at most 255 bytes.
    static func validName(_ stored: String) -> String {
        FileNaming.compose(stem: FileNaming.sanitize(stored, fallback: TreeFallback.stem))
    }

    /// Names open events (their `name` is set here) within each year so that none takes a name already
    /// `taken` there (settled events', lower-cased) or another's: events whose plain name is unique get it;
    /// events sharing one, or meeting a taken one, get their start time, then seconds, then their key.
    /// A plain name is not taken either while a settled event holds it with its start time ("2019-08-10 08.00
    /// Porto" and "… 19.00 Porto" stored, a lunch imported later): a third event of that day and place gets its
    /// start time too, or "2019-08-10 Porto" would read as the whole day.
    static func name(_ events: inout [PhotoEvent], taken: [Int: Set<String>]) {
        let plain = events.map { name(firstAt: $0.firstAt, lastAt: $0.lastAt, place: $0.places.first) }
        var counts: [Int: [String: Int]] = [:]
        for (event, name) in zip(events, plain) { counts[event.year, default: [:]][name.lowercased(), default: 0] += 1 }
        for (year, names) in taken {
            for name in names { if let untimed = withoutStartTime(name) { counts[year, default: [:]][untimed, default: 0] += 1 } }
        }
        var used = taken
        // Plain names first, so a timed name never takes a plain one's place.
        var pending: [Int] = []
        for position in events.indices {
            let year = events[position].year, name = plain[position]
            if counts[year]?[name.lowercased()] == 1 && !(used[year]?.contains(name.lowercased()) ?? false) {
                events[position].name = name
                used[year, default: []].insert(name.lowercased())
            } else {
                pending.append(position)
            }
        }
        for position in pending {
            let event = events[position]
            var chosen: String?
            for seconds in [false, true] {
                let candidate = name(firstAt: event.firstAt, lastAt: event.lastAt, place: event.places.first,
                                     startTime: true, seconds: seconds)
                if used[event.year, default: []].insert(candidate.lowercased()).inserted { chosen = candidate; break }
            }
            if chosen == nil {
                let stem = name(firstAt: event.firstAt, lastAt: event.lastAt, place: event.places.first,
                                startTime: true, seconds: true)
                var counter = 0
                while chosen == nil {
                    let suffix = counter == 0 ? " (\(event.key))" : " (\(event.key)-\(counter))"
                    let candidate = FileNaming.compose(stem: stem, suffix: suffix)
                    if used[event.year, default: []].insert(candidate.lowercased()).inserted { chosen = candidate }
                    counter += 1
                }
            }
            events[position].name = chosen ?? ""
        }
    }

    /// What an event directory's `user.xdg.comment` says: its date range, places and count
    /// ("2019-06-01 10:15 – 2019-06-03 18:40; Lisbon, Sintra; 143 photos"). The count is here and never in the
    /// name, which must not change when a photo is added.
    public static func comment(for event: PhotoEvent) -> String {
        func stamp(_ seconds: Int64) -> String {
            let text = TreeBuilder.momentPrefix(seconds)
            return text.prefix(10) + " " + text.dropFirst(11).prefix(5).replacingOccurrences(of: ".", with: ":")
        }
        var parts = [stamp(event.firstAt) + (event.lastAt > event.firstAt ? " – " + stamp(event.lastAt) : "")]
        if !event.places.isEmpty { parts.append(event.places.prefix(20).joined(separator: ", ")) }
        parts.append(event.members.count == 1 ? "1 photo" : "\(event.members.count) photos")
        return parts.joined(separator: "; ")
    }
}
