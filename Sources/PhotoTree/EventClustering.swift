// Groups a library's photos into events (a trip, a day out, an evening) by capture time and place: pure and
// deterministic, with settled events kept as the library stored them.
import Foundation
import PhotoCatalog

/// The numbers of the clustering rules (docs/events-and-search.md explains each and the measurements).
public struct EventRules: Sendable {
    /// Never a boundary below 30 minutes: a pause in one outing (the hard guard).
    public var minimumGap: Int64 = 30 * 60
    /// Always a boundary above 24 hours: a day without photos ends any event (Nextcloud Journeys' rule). Between
    /// photos on consecutive days it is no boundary for a run of one or two photos at a time
    /// (`EventBoundaries.Kind.nextDay`).
    public var maximumGap: Int64 = 24 * 3600
    /// Always a boundary when consecutive geotagged photos are more than 50 km apart (Journeys' rule): one, at
    /// the longest gap between them of `minimumGap` or more (none when all are shorter: a wrong GPS fix would
    /// otherwise cut a burst in three).
    public var maximumJumpMeters: Double = 50_000
    /// PhotoTOC (Platt, Czerwinski, Field 2003): a gap is a boundary when its log stands out against the mean
    /// log of the 2d + 1 gaps around it by log K; the paper's d = 10 and K = 17.
    public var window = 10
    public var gapRatio: Double = 17
    /// Gaps this long or longer (a night) are soft boundaries and not the rhythm PhotoTOC's mean measures; a
    /// tiny piece joins only a neighbour nearer than this (see `EventBoundaries`, `joinTinyPieces`).
    public var rhythmGap: Int64 = 8 * 3600
    /// Pieces of fewer photos join the nearer neighbour (in time) across a boundary that is not a hard one.
    public var minimumPhotos = 3
    /// A place the library has photos on at least this many distinct days is "home": nights between two
    /// pieces at the same place are an event boundary there, and no boundary on a trip elsewhere.
    public var homeMinimumDays = 7
    /// An event whose last photo is older than this (against the clock given) is settled: it keeps its name
    /// and members from then on (Journeys' settling time).
    public var settlingTime: Int64 = 48 * 3600

    public init() {}

    /// The same rules with every duration within 0…100 years and counts within 0…10,000, so the arithmetic on
    /// times (clamped to years 1–9999) cannot overflow whatever a caller set.
    var bounded: EventRules {
        let century: Int64 = 100 * 366 * 86_400
        var rules = self
        rules.minimumGap = min(max(minimumGap, 0), century)
        rules.rhythmGap = min(max(rhythmGap, 0), century)
        rules.maximumGap = min(max(maximumGap, 0), century)
        rules.settlingTime = min(max(settlingTime, 0), century)
        rules.window = min(max(window, 0), 10_000)
        rules.minimumPhotos = min(max(minimumPhotos, 0), 10_000)
        rules.homeMinimumDays = min(max(homeMinimumDays, 0), 10_000)
        rules.maximumJumpMeters = maximumJumpMeters.isNaN ? 50_000 : maximumJumpMeters
        rules.gapRatio = gapRatio.isNaN ? 17 : gapRatio
        return rules
    }
}

/// One event as /events shows it.
public struct PhotoEvent: Equatable, Sendable {
    /// What its directory's inode carries: a settled event's stored id, else its smallest member seq not
    /// already a stored id (the id it will get when it settles, so settling changes no inode).
    public var key: Int64
    /// The directory name: "2019-06-01–03 Lisbon", unique (ignoring case) within its year.
    public var name: String
    /// The year directory it is in: the year of its first photo (of its stored range once settled).
    public var year: Int
    public var firstAt: Int64
    public var lastAt: Int64
    /// Member seqs in time order (ties by seq).
    public var members: [Int64]
    /// Its photos' places, the most shared first.
    public var places: [String]
    public var isSettled: Bool

    public init(key: Int64, name: String, year: Int, firstAt: Int64, lastAt: Int64, members: [Int64],
                places: [String], isSettled: Bool) {
        self.key = key; self.name = name; self.year = year; self.firstAt = firstAt; self.lastAt = lastAt
        self.members = members; self.places = places; self.isSettled = isSettled
    }
}

public struct EventClusteringResult: Equatable, Sendable {
    /// Every event with at least one photo, by first moment (ties by key).
    public var events: [PhotoEvent]
    /// What the library should store: events that settled now, photos that joined a settled event.
    public var settlement: EventSettlement
}

public enum EventClustering {
    /// Clusters `photos` (any order; a seq given twice counts once) around the `stored` settled events, as of
    /// `now` (seconds since 1970). Settled events keep their names and members (a member whose time moved
    /// more than `maximumGap` outside the event's range is released); a new photo within `minimumGap` of a
    /// settled event's range joins it; the rest are clustered between the settled events, which no new event
    /// crosses. Times outside years 1–9999 are clamped into them.
    public static func cluster(_ photos: [EventPhoto], stored: [StoredEvent], now: Int64,
                               rules: EventRules = EventRules()) -> EventClusteringResult {
        let rules = rules.bounded
        // One entry per seq (its first occurrence), in seq order, times clamped. Every later step works on
        // indexes into `all` and plain arrays, and finds a seq by binary search: hashing 100,000 seqs and
        // copying photos (two strings each) was most of the time.
        let bySeq = photos.indices.sorted { (photos[$0].seq, $0) < (photos[$1].seq, $1) }
        var all: [EventPhoto] = []
        all.reserveCapacity(photos.count)
        for index in bySeq where all.last?.seq != photos[index].seq {
            var photo = photos[index]
            photo.time = clampMoment(photo.time)
            all.append(photo)
        }
        let times = all.map { $0.time }, seqs = all.map { $0.seq }
        func index(ofSeq seq: Int64) -> Int? {
            let position = lowerBound(seqs, seq)
            return position < seqs.count && seqs[position] == seq ? position : nil
        }
        let byTime = all.indices.sorted { (times[$0], seqs[$0]) < (times[$1], seqs[$1]) }
        let coordinates = all.map(EventPlaces.coordinates(of:))
        let places = EventPlaces.Labels(all)
        let home = places.home(inTimeOrder: byTime, times: times, minimumDays: rules.homeMinimumDays)

        // Settled events keep the members still present near their range.
        var fixed: [FixedEvent] = []
        var assigned = [Bool](repeating: false, count: all.count)
        var storedIDs = Set<Int64>()
        for event in stored.sorted(by: { $0.id < $1.id }) where storedIDs.insert(event.id).inserted {
            let first = clampMoment(min(event.firstAt, event.lastAt))
            let last = clampMoment(max(event.firstAt, event.lastAt))
            var members: [Int] = []
            for seq in event.members {
                guard let index = index(ofSeq: seq), times[index] >= first - rules.maximumGap,
                      times[index] <= last + rules.maximumGap, !assigned[index] else { continue }
                assigned[index] = true
                members.append(index)
            }
            fixed.append(FixedEvent(id: event.id, name: event.name, first: first, last: last, members: members))
        }
        fixed.sort { ($0.first, $0.id) < ($1.first, $1.id) }

        // Free photos, in time order; those within `minimumGap` of a settled event's range join it, and those
        // inside its range that it could hold (`fits`).
        var free = byTime.filter { !assigned[$0] }
        // Each settled event's photos before this clustering, in time order, with their times (read by binary
        // search: a hostile event of 50,000 photos must not be scanned whole for each of 50,000 photos inside
        // its range).
        let settledMembers = fixed.map { event in event.members.sorted { (times[$0], $0) < (times[$1], $1) } }
        let settledTimes = settledMembers.map { $0.map { times[$0] } }
        /// Whether a photo taken inside a settled event's range belongs with it: within `minimumGap` of one of
        /// its photos (never split), else within `maximumGap` of one, and, when it and some of those are
        /// geotagged, within `maximumJumpMeters` of one of them (a second camera's photo of a trip that moved
        /// is near some photo of it, if not the nearest in time). A month of a photo a day at home settled as
        /// one event swallowed a weekend 300 km away imported later ("Porto" of 57 photos, 36 of them Lisbon's);
        /// such a weekend now makes events of its own inside that month. An event whose photos are all gone
        /// takes back what falls in its range, as before (photos deleted and imported again keep its folder).
        func fits(_ index: Int, _ position: Int) -> Bool {
            let members = settledMembers[position], memberTimes = settledTimes[position]
            guard !members.isEmpty else { return true }
            let time = times[index], here = coordinates[index]
            // Its photos within a day of this one.
            let withinDay = lowerBound(memberTimes, time - rules.maximumGap)..<upperBound(memberTimes, time + rules.maximumGap)
            var placedWithinDay = false
            for member in members[withinDay] {
                if abs(times[member] - time) <= rules.minimumGap { return true }
                if let here, let there = coordinates[member] {
                    if EventPlaces.distanceMeters(here, there) <= rules.maximumJumpMeters { return true }
                    placedWithinDay = true
                }
            }
            return !withinDay.isEmpty && !placedWithinDay
        }
        var joined: [(eventID: Int64, seq: Int64)] = []
        var stillFree: [Int] = []
        stillFree.reserveCapacity(free.count)
        var latestEnd = fixed.map(\.last)
        for position in latestEnd.indices.dropFirst() { latestEnd[position] = max(latestEnd[position], latestEnd[position - 1]) }
        let firsts = fixed.map(\.first)
        for index in free {
            let time = times[index]
            var candidate = upperBound(firsts, time + rules.minimumGap) - 1
            var target: Int?
            while candidate >= 0 && latestEnd[candidate] + rules.minimumGap >= time {
                let event = fixed[candidate]
                if event.last + rules.minimumGap >= time,
                   time < event.first || time > event.last || fits(index, candidate) { target = candidate; break }
                candidate -= 1
            }
            guard let target else { stillFree.append(index); continue }
            fixed[target].members.append(index)
            if time > fixed[target].last {
                fixed[target].last = time
                for position in target..<latestEnd.count where latestEnd[position] < time { latestEnd[position] = time }
            }
            joined.append((fixed[target].id, seqs[index]))
        }
        free = stillFree

        // Boundaries between consecutive free photos.
        let barriers = fixed.filter { !$0.members.isEmpty }
        let barrierFirsts = barriers.map(\.first).sorted()
        let barrierLasts = barriers.map(\.last).sorted()
        func settledEventBetween(_ start: Int64, _ end: Int64) -> Bool {
            let a = lowerBound(barrierFirsts, start)
            if a < barrierFirsts.count && barrierFirsts[a] <= end { return true }
            let b = lowerBound(barrierLasts, start)
            return b < barrierLasts.count && barrierLasts[b] <= end
        }
        let boundaries = EventBoundaries.find(times: free.map { times[$0] }, coordinates: free.map { coordinates[$0] },
                                              rules: rules, barrier: settledEventBetween)

        // Pieces between boundaries; then trips away from home across nights, then tiny pieces joined.
        var pieces: [Piece] = []
        var start = 0
        for position in 0...free.count where position == free.count || (position > 0 && boundaries[position - 1] != .none) {
            if position > start {
                pieces.append(Piece(members: Array(free[start..<position]),
                                    before: start == 0 ? .hard : boundaries[start - 1]))
            }
            start = position
        }
        pieces = joinTrips(pieces, places: places, home: home, coordinates: coordinates)
        pieces = joinTinyPieces(pieces, times: times, minimum: rules.minimumPhotos, near: rules.rhythmGap)

        // Events: settled first (their names are fixed), then new ones named around them.
        var events: [PhotoEvent] = []
        var takenNames: [Int: Set<String>] = [:]
        for event in fixed where !event.members.isEmpty {
            let members = event.members.sorted { (times[$0], seqs[$0]) < (times[$1], seqs[$1]) }
            let name = EventNaming.validName(event.name)
            let span = PhotoRecord.year(ofMoment: event.first)...PhotoRecord.year(ofMoment: max(event.first, event.last))
            let year = EventNaming.year(ofName: name, within: span) ?? span.lowerBound
            takenNames[year, default: []].insert(name.lowercased())
            events.append(PhotoEvent(key: event.id, name: name, year: year,
                                     firstAt: members.first.map { times[$0] } ?? event.first,
                                     lastAt: members.last.map { times[$0] } ?? event.last,
                                     members: members.map { seqs[$0] },
                                     places: places.ranked(members), isSettled: true))
        }
        var open: [PhotoEvent] = []
        for piece in pieces {
            let members = piece.members
            guard let firstIndex = members.first, let lastIndex = members.last else { continue }
            let memberSeqs = members.map { seqs[$0] }
            let key = memberSeqs.sorted().first { !storedIDs.contains($0) } ?? memberSeqs.min() ?? 0
            open.append(PhotoEvent(key: key, name: "", year: PhotoRecord.year(ofMoment: times[firstIndex]),
                                   firstAt: times[firstIndex], lastAt: times[lastIndex], members: memberSeqs,
                                   places: places.ranked(members), isSettled: false))
        }
        EventNaming.name(&open, taken: takenNames)

        var settled: [StoredEvent] = []
        let settledBefore = settlingCutoff(now: now, rules: rules)
        for position in open.indices where open[position].lastAt < settledBefore && !storedIDs.contains(open[position].key) {
            open[position].isSettled = true
            let event = open[position]
            settled.append(StoredEvent(id: event.key, name: event.name, firstAt: event.firstAt, lastAt: event.lastAt,
                                       members: event.members))
        }
        events += open
        events.sort { ($0.firstAt, $0.key) < ($1.firstAt, $1.key) }
        let openEventsLastAt = events.filter { !$0.isSettled }.map(\.lastAt).min()
        return EventClusteringResult(events: events, settlement: EventSettlement(settled: settled, joined: joined,
                                                                                 openEventsLastAt: openEventsLastAt))
    }

    /// An event whose last photo was taken before this (the catalog's wall-clock seconds) is settled as of `now`.
    public static func settlingCutoff(now: Int64, rules: EventRules = EventRules()) -> Int64 {
        clampMoment(now) - rules.bounded.settlingTime
    }

    static func clampMoment(_ seconds: Int64) -> Int64 {
        min(max(seconds, CatalogLimits.momentRange.lowerBound), CatalogLimits.momentRange.upperBound)
    }

    private struct FixedEvent {
        var id: Int64
        var name: String
        var first: Int64
        var last: Int64
        /// Indexes into the photos.
        var members: [Int]
    }

    private struct Piece {
        var members: [Int]
        /// The boundary before this piece (`.hard` for the first).
        var before: EventBoundaries.Kind
        /// Tiny pieces joined into one run (`joinTinyPieces`): it takes in the tiny pieces after it, whatever
        /// its size now.
        var isRunOfTiny = false
    }

    /// Within this of home's photos (the mean of the photos labelled home) a place is home too: a town's photos
    /// carry the names of the GeoNames towns nearest them, and a city is often two or three of those (Porto
    /// and Vila Nova de Gaia across its river, 2 km apart). 15 km: a city's own districts, not a day trip
    /// (Sintra is 25 km from Lisbon).
    static let homeRadiusMeters = 15_000.0

    /// Pieces away from home on consecutive days join when this near (the last geotagged photo of one, the
    /// first of the next): a city's sights (Belém to the Baixa 7 km, Tokyo Tower to Asakusa 8 km), not a day
    /// trip out of it (Sintra, 25 km from Lisbon, is an event of its own).
    static let tripRadiusMeters = 20_000.0

    /// The longest run of tiny pieces (`joinTinyPieces`), first photo to last: 31 days (so 32 calendar days at
    /// most), so photos spread over a month stay one event.
    static let maximumRunSeconds: Int64 = 31 * 86_400

    /// Joins consecutive pieces split by a soft boundary (a night, a long pause) when both are away from home
    /// and near each other: a three-day trip to one city is one event, three days at home three. Near: the
    /// same place label, or the first geotagged photo within `tripRadiusMeters` of the last one before it.
    /// Labels alone split trips whose sights lie nearer different towns (Belém is nearest "Algés", eastern
    /// Tokyo "Urayasu": a three-day trip made six events). Pieces without a place between two such pieces (an
    /// evening shot only with a camera without GPS) join the trip too; they had ended it.
    private static func joinTrips(_ pieces: [Piece], places: EventPlaces.Labels, home: Int?,
                                  coordinates: [(Double, Double)?]) -> [Piece] {
        let homePoint = home.flatMap { home in
            EventPlaces.mean(of: places.ids.indices.lazy.filter { places.ids[$0] == home }.compactMap { coordinates[$0] })
        }
        var result: [Piece] = []
        /// The last piece away from home in `result` (its position), its label and its last geotagged photo,
        /// while only pieces without a place followed it across soft boundaries.
        var trip: (position: Int, label: Int?, last: (Double, Double)?)?
        for piece in pieces {
            let label = places.top(piece.members)
            let first = piece.members.lazy.compactMap { coordinates[$0] }.first
            guard label != nil || first != nil else {
                // No place: kept, and a trip before it may still continue after it.
                if piece.before != .soft { trip = nil }
                result.append(piece)
                continue
            }
            let last = piece.members.reversed().lazy.compactMap { coordinates[$0] }.first
            // Home by the piece's place or its centre, not one photo of it: a trip's first day often begins
            // with a photo at home. The centre only when the place does not say so already.
            let atHome = (label != nil && label == home) || homePoint.flatMap { homePoint in
                EventPlaces.mean(of: piece.members.lazy.compactMap { coordinates[$0] })
                    .map { EventPlaces.distanceMeters($0, homePoint) <= homeRadiusMeters }
            } == true
            if !atHome, piece.before == .soft, let known = trip,
               (label != nil && label == known.label)
                || (first.map { point in known.last.map { EventPlaces.distanceMeters(point, $0) <= tripRadiusMeters } ?? false } ?? false) {
                var joined = result[known.position]
                for between in result[(known.position + 1)...] { joined.members += between.members }
                joined.members += piece.members
                result.removeSubrange(known.position...)
                result.append(joined)
                trip = (known.position, label ?? known.label, last ?? known.last)
            } else {
                result.append(piece)
                trip = atHome ? nil : (result.count - 1, label, last)
            }
        }
        return result
    }

    /// Consecutive pieces of fewer than `minimum` photos across soft boundaries (and `nextDay` ones) are one run of
    /// at most `maximumRunSeconds`; a piece still that small joins the neighbour nearer in time across a soft
    /// boundary shorter than `near` (the earlier one on a tie); otherwise it stays alone. One pass: a piece
    /// joined forward is carried into the next.
    private static func joinTinyPieces(_ pieces: [Piece], times: [Int64], minimum: Int, near: Int64) -> [Piece] {
        // Members are in time order (pieces are runs of photos sorted by time, joined in order).
        func start(_ piece: Piece) -> Int64 { piece.members.first.map { times[$0] } ?? 0 }
        func end(_ piece: Piece) -> Int64 { piece.members.last.map { times[$0] } ?? 0 }
        // Consecutive tiny pieces across soft boundaries are one run first: a photo a day at home for a week is
        // one event, and none of those photos joins a burst the day after (each alone joined its nearer
        // neighbour: the last one became part of the next morning's four photos, renaming them
        // "2019-09-07–08 Bologna").
        // A run spans at most `maximumRunSeconds`: a photo a day for 13 months was one event of 400 photos, listed
        // only under the year it began (/events/<next year> did not exist). Photos spread over a month stay one.
        var runs: [Piece] = []
        for piece in pieces {
            if piece.members.count < minimum, piece.before == .soft || piece.before == .nextDay, let last = runs.last,
               last.members.count < minimum || last.isRunOfTiny, end(piece) - start(last) <= maximumRunSeconds {
                runs[runs.count - 1].members += piece.members
                runs[runs.count - 1].isRunOfTiny = true
            } else {
                runs.append(piece)
            }
        }
        let pieces = runs
        var result: [Piece] = []
        var carried: [Int] = []
        for (position, original) in pieces.enumerated() {
            var piece = original
            if !carried.isEmpty { piece.members = carried + piece.members; carried = [] }
            guard piece.members.count < minimum else { result.append(piece); continue }
            // Only to a neighbour nearer than a night (`near`): a lone photo 20 hours before a morning's four is
            // not part of them (it renamed them "2019-09-07–08 Bologna").
            let next = position + 1 < pieces.count ? pieces[position + 1] : nil
            let backGap = piece.before == .soft && !result.isEmpty ? start(piece) - end(result[result.count - 1]) : Int64.max
            let forwardGap = next?.before == .soft ? (next.map { start($0) - end(piece) } ?? Int64.max) : Int64.max
            let canGoBack = backGap < near
            let canGoForward = forwardGap < near
            if canGoBack && backGap <= forwardGap {
                result[result.count - 1].members += piece.members
            } else if canGoForward {
                carried = piece.members
            } else {
                result.append(piece)
            }
        }
        return result
    }

    /// First position whose value is ≥ `value` in a sorted array.
    static func lowerBound(_ values: [Int64], _ value: Int64) -> Int {
        var low = 0, high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// First position whose value is > `value` in a sorted array.
    static func upperBound(_ values: [Int64], _ value: Int64) -> Int {
        var low = 0, high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] <= value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Where one event ends and the next begins, between consecutive photos in time order.
enum EventBoundaries {
    /// `nextDay`: more than `maximumGap` between photos on consecutive days of the camera's clock. A hard
    /// boundary but for runs of tiny pieces (`joinTinyPieces`): a photo every evening at 19:00 ± 40 minutes
    /// for a month was 20 events of 31 photos, a new one each time a photo came a few minutes later than the
    /// day before, where acceptance asks for "photos spread over a month" as one (the rule's own words: "a day
    /// without photos ends any event"). A trip, a burst, a place are split there as before.
    enum Kind: Equatable { case none, soft, nextDay, hard }

    /// One kind per gap (`photos.count - 1` of them): hard above `maximumGap`, across a settled event
    /// (`barrier`) or a jump over `maximumJumpMeters`; none under `minimumGap`; soft from `rhythmGap` (a night)
    /// on; otherwise soft where PhotoTOC's rule finds the gap standing out: log(gap) ≥ log(K) + mean of the logs
    /// of the gaps within `window` (those of `rhythmGap` or more left out: the day's rhythm).
    static func find(times: [Int64], coordinates: [(Double, Double)?], rules: EventRules,
                     barrier: (Int64, Int64) -> Bool) -> [Kind] {
        let gapCount = max(0, times.count - 1)
        guard gapCount > 0 else { return [] }
        /// Time alone splits these two: more than `maximumGap` apart on days not next to each other, or across a
        /// settled event.
        func splitByTime(_ before: Int64, _ after: Int64) -> Bool {
            // Days of the camera's clock (times are its wall clock read as UTC).
            (after - before > rules.maximumGap && CivilDate.day(ofSecond: after) - CivilDate.day(ofSecond: before) != 1)
                || barrier(before, after)
        }
        var logs = [Double](repeating: 0, count: gapCount)
        for position in 0..<gapCount {
            // Times are clamped to years 1–9999, so the difference fits easily; a gap under a second counts as one.
            logs[position] = Foundation.log(Double(max(times[position + 1] - times[position], 1)))
        }
        // The window's mean is the rhythm of taking photos within a day: it leaves out gaps of `rhythmGap`
        // (8 hours, a night) or more. Nights and days without photos around a small burst raised the mean past
        // any gap of the day: four photos one morning at home and four that evening, among photos one a day
        // for a month, made one event, and a day trip of six photos the morning after a trip joined the trip.
        // Prefix sums of the logs kept and of how many were kept.
        var prefix = [Double](repeating: 0, count: gapCount + 1)
        var kept = [Int](repeating: 0, count: gapCount + 1)
        for position in 0..<gapCount {
            let inRhythm = times[position + 1] - times[position] < rules.rhythmGap
            prefix[position + 1] = prefix[position] + (inRhythm ? logs[position] : 0)
            kept[position + 1] = kept[position] + (inRhythm ? 1 : 0)
        }
        // A jump of more than `maximumJumpMeters` between consecutive geotagged photos is one boundary, at the
        // longest gap between them (of `minimumGap` or more), unless time already splits them there (a gap
        // over `maximumGap`, a settled event). Each gap between them was one: a drive from Porto to Lisbon
        // with a camera without GPS between a phone's photos at each end made an event of every photo of the
        // drive that came 30 minutes or more after the one before.
        var jumps = Set<Int>()
        var previousGeotagged: Int?
        for position in times.indices {
            guard let here = coordinates[position] else { continue }
            defer { previousGeotagged = position }
            guard let from = previousGeotagged, let there = coordinates[from],
                  EventPlaces.distanceMeters(there, here) > rules.maximumJumpMeters else { continue }
            let between = from..<position
            let gap = { (gapPosition: Int) in times[gapPosition + 1] - times[gapPosition] }
            guard !between.contains(where: { splitByTime(times[$0], times[$0 + 1]) }),
                  let longest = between.filter({ gap($0) >= rules.minimumGap }).max(by: { gap($0) < gap($1) })
            else { continue }
            jumps.insert(longest)
        }
        let threshold = Foundation.log(max(rules.gapRatio, 1))
        let window = max(0, rules.window)
        var kinds = [Kind](repeating: .none, count: gapCount)
        for position in 0..<gapCount {
            let before = times[position], after = times[position + 1]
            let gap = after - before
            if splitByTime(before, after) || jumps.contains(position) { kinds[position] = .hard; continue }
            if gap > rules.maximumGap { kinds[position] = .nextDay; continue }
            if gap < rules.minimumGap { continue }
            // A night (`rhythmGap` or more) is always a soft boundary: the trip rule joins nights away, a night
            // at home ends an event, and single photos a day apart are joined into one run (`joinTinyPieces`).
            if gap >= rules.rhythmGap { kinds[position] = .soft; continue }
            let low = max(0, position - window), high = min(gapCount - 1, position + window)
            // This gap is in the day's rhythm, so the window keeps at least one.
            let count = kept[high + 1] - kept[low]
            guard count > 0 else { continue }
            let mean = (prefix[high + 1] - prefix[low]) / Double(count)
            if logs[position] >= threshold + mean { kinds[position] = .soft }
        }
        return kinds
    }
}
