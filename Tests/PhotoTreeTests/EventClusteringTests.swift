// Event clustering: one event per burst, names across days and months, settled events that never change,
// hostile times, and the time 100,000 photos take (printed, not asserted).
import FlickrOrigin
import Foundation
import PhotoCatalog
@testable import PhotoTree
import XCTest

final class EventClusteringTests: XCTestCase {
    /// Seconds since 1970 of a UTC wall-clock time (the camera's clock, as the catalog stores it).
    static func at(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Int64 {
        var parts = tm()
        parts.tm_year = Int32(year - 1900); parts.tm_mon = Int32(month - 1); parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour); parts.tm_min = Int32(minute); parts.tm_sec = Int32(second)
        return Int64(timegm(&parts))
    }

    static let lisbon = (38.7223, -9.1393), sintra = (38.8029, -9.3817), porto = (41.1579, -8.6291)

    /// Builds photos with increasing seqs.
    struct Library {
        var photos: [EventPhoto] = []
        var nextSeq: Int64 = 1
        mutating func add(_ time: Int64, place: String?, at coordinates: (Double, Double)? = nil, region: String? = nil) {
            photos.append(EventPhoto(seq: nextSeq, time: time, latitude: coordinates?.0, longitude: coordinates?.1,
                                     placeName: place, regionName: region))
            nextSeq += 1
        }
        /// A photo every `every` seconds from `start` to `end` (inclusive).
        mutating func burst(from start: Int64, to end: Int64, every: Int64, place: String?,
                            at coordinates: (Double, Double)? = nil) {
            var time = start
            while time <= end { add(time, place: place, at: coordinates); time += every }
        }
    }

    /// Acceptance 1's library: photos spread over a month at home (Porto), a three-day trip to Lisbon (with a
    /// lunch break each day), a day trip to Sintra, and on one day a morning and an evening at home.
    static func burstLibrary() -> Library {
        var library = Library()
        var time = at(2019, 5, 1, 20)
        for _ in 0..<30 { library.add(time, place: "Porto, Porto, Portugal", at: porto); time += 23 * 3600 }
        for day in 7...9 {
            library.burst(from: at(2019, 6, day, 10), to: at(2019, 6, day, 13), every: 600, place: "Lisbon", at: lisbon)
            library.burst(from: at(2019, 6, day, 14, 30), to: at(2019, 6, day, 18), every: 600, place: "Lisbon", at: lisbon)
        }
        library.burst(from: at(2019, 6, 15, 9), to: at(2019, 6, 15, 17), every: 900, place: "Sintra", at: sintra)
        library.burst(from: at(2019, 6, 20, 8), to: at(2019, 6, 20, 9), every: 300, place: "Porto", at: porto)
        library.burst(from: at(2019, 6, 20, 19), to: at(2019, 6, 20, 23), every: 300, place: "Porto", at: porto)
        return library
    }

    static let july2019 = at(2019, 7, 1)

    func testOneEventPerBurstWithItsName() {
        let result = EventClustering.cluster(Self.burstLibrary().photos, stored: [], now: Self.at(2019, 6, 21))
        XCTAssertEqual(result.events.map(\.name), [
            "2019-05-01–29 Porto", "2019-06-07–09 Lisbon", "2019-06-15 Sintra", "2019-06-20 08.00 Porto",
            "2019-06-20 19.00 Porto",
        ])
        XCTAssertEqual(result.events.map(\.members.count), [30, 3 * (19 + 22), 33, 13, 49])
        XCTAssertEqual(Set(result.events.flatMap(\.members)).count, Self.burstLibrary().photos.count)
        XCTAssertEqual(result.events.map(\.year), [2019, 2019, 2019, 2019, 2019])
        // Settled: every event whose last photo is more than 48 hours before "now"; the last two are not.
        XCTAssertEqual(result.events.map(\.isSettled), [true, true, true, false, false])
        XCTAssertEqual(result.settlement.settled.map(\.name), ["2019-05-01–29 Porto", "2019-06-07–09 Lisbon", "2019-06-15 Sintra"])
        XCTAssertEqual(result.settlement.openEventsLastAt, Self.at(2019, 6, 20, 9), "the morning: the open event that ends first")
        XCTAssertNil(EventClustering.cluster(Self.burstLibrary().photos, stored: [], now: Self.july2019).settlement.openEventsLastAt)
        XCTAssertEqual(EventNaming.comment(for: result.events[2]), "2019-06-15 09:00 – 2019-06-15 17:00; Sintra; 33 photos")
    }

    /// Small bursts among a month of one photo a day: four photos one morning at home and four that evening
    /// are two events, and a day trip of six photos the morning after a trip is its own (the days without
    /// photos around them had raised PhotoTOC's mean past any gap of the day: one event each time).
    func testSmallBurstsAmongDailyPhotosAreEventsOfTheirOwn() {
        var library = Library()
        var time = Self.at(2019, 5, 1, 20)
        for _ in 0..<30 { library.add(time, place: "Porto", at: Self.porto); time += 23 * 3600 }
        library.burst(from: Self.at(2019, 6, 7, 10), to: Self.at(2019, 6, 7, 18), every: 3600, place: "Lisbon", at: Self.lisbon)
        library.burst(from: Self.at(2019, 6, 8, 10), to: Self.at(2019, 6, 8, 16), every: 3600, place: "Lisbon", at: Self.lisbon)
        library.burst(from: Self.at(2019, 6, 9, 9), to: Self.at(2019, 6, 9, 10, 15), every: 900, place: "Sintra", at: Self.sintra)
        library.burst(from: Self.at(2019, 6, 20, 8), to: Self.at(2019, 6, 20, 8, 45), every: 900, place: "Porto", at: Self.porto)
        library.burst(from: Self.at(2019, 6, 20, 19), to: Self.at(2019, 6, 20, 19, 45), every: 900, place: "Porto", at: Self.porto)
        time = Self.at(2019, 6, 21, 20)
        for _ in 0..<10 { library.add(time, place: "Porto", at: Self.porto); time += 23 * 3600 }
        let result = EventClustering.cluster(library.photos, stored: [], now: Self.at(2019, 8, 1))
        let names = result.events.map(\.name)
        XCTAssertTrue(names.contains("2019-06-07–08 Lisbon"), "\(names)")
        XCTAssertTrue(names.contains("2019-06-09 Sintra"), "\(names)")
        XCTAssertTrue(names.contains("2019-06-20 08.00 Porto") && names.contains("2019-06-20 19.00 Porto"), "\(names)")
        XCTAssertEqual(result.events.first { $0.name == "2019-06-20 08.00 Porto" }?.members.count, 4)
        XCTAssertEqual(result.events.first { $0.name == "2019-06-20 19.00 Porto" }?.members.count, 4)
        XCTAssertEqual(result.events.first { $0.name == "2019-06-09 Sintra" }?.members.count, 6)

        // A photo a day at noon right up to the day of the bursts and after it: the bursts keep their names (the
        // last daily photo before them used to join the morning, the next day's the evening), the daily photos
        // are runs of their own, and a three-day trip is one event.
        let bologna = (44.4949, 11.3426), florence = (43.7696, 11.2558)
        var daily = Library()
        for day in 1...7 { daily.add(Self.at(2019, 9, day, 12), place: "Bologna", at: bologna) }
        daily.burst(from: Self.at(2019, 9, 8, 8), to: Self.at(2019, 9, 8, 8, 12), every: 240, place: "Bologna", at: bologna)
        daily.burst(from: Self.at(2019, 9, 8, 19), to: Self.at(2019, 9, 8, 19, 12), every: 240, place: "Bologna", at: bologna)
        for day in 9...16 { daily.add(Self.at(2019, 9, day, 12), place: "Bologna", at: bologna) }
        for day in 17...19 {
            daily.burst(from: Self.at(2019, 9, day, 10), to: Self.at(2019, 9, day, 10, 40), every: 600, place: "Florence", at: florence)
        }
        let events = EventClustering.cluster(daily.photos, stored: [], now: Self.at(2019, 11, 1)).events
        XCTAssertEqual(events.map(\.name), ["2019-09-01–07 Bologna", "2019-09-08 08.00 Bologna", "2019-09-08 19.00 Bologna",
                                            "2019-09-09–16 Bologna", "2019-09-17–19 Florence"])
        XCTAssertEqual(events.map(\.members.count), [7, 4, 4, 8, 15])
    }

    func testUnsortedInputAndRepeatedSeqsGiveTheSameEvents() {
        let photos = Self.burstLibrary().photos
        let reference = EventClustering.cluster(photos, stored: [], now: Self.july2019)
        var generator = SplitMix(seed: 7)
        var shuffled = photos.shuffled(using: &generator)
        shuffled += shuffled.prefix(10)
        XCTAssertEqual(EventClustering.cluster(shuffled, stored: [], now: Self.july2019), reference)
    }

    /// What a mount or an import does: clusters, stores what settled, clusters again with it.
    static func settle(_ photos: [EventPhoto], _ stored: [StoredEvent], now: Int64) -> (EventClusteringResult, [StoredEvent]) {
        let result = EventClustering.cluster(photos, stored: stored, now: now)
        var kept = stored + result.settlement.settled
        for join in result.settlement.joined {
            if let position = kept.firstIndex(where: { $0.id == join.eventID }) { kept[position].members.append(join.seq) }
        }
        return (result, kept)
    }

    func testSettledEventsComeOutAsTheyWereOpen() {
        let photos = Self.burstLibrary().photos
        let (first, stored) = Self.settle(photos, [], now: Self.july2019)
        XCTAssertEqual(stored.count, 5)
        let again = EventClustering.cluster(photos, stored: stored, now: Self.july2019)
        XCTAssertEqual(again.events, first.events, "settling must change no name, member or key")
        XCTAssertTrue(again.settlement.isEmpty)
    }

    /// A morning and an evening at home settled with their start times; a lunch that day imported later gets
    /// its start time too, not the plain name that reads as the whole day (a new user's trial found
    /// "2019-08-10 Porto" beside "… 08.00 Porto" and "… 19.00 Porto").
    func testAnEventImportedLaterOnADayOfTimedNamesGetsItsStartTime() {
        var library = Library()
        for day in 1...8 { library.add(Self.at(2019, 8, day, 12), place: "Porto", at: Self.porto) }
        library.burst(from: Self.at(2019, 8, 10, 8), to: Self.at(2019, 8, 10, 8, 40), every: 600, place: "Porto", at: Self.porto)
        library.burst(from: Self.at(2019, 8, 10, 19), to: Self.at(2019, 8, 10, 19, 40), every: 600, place: "Porto", at: Self.porto)
        let now = Self.at(2019, 9, 1)
        let (first, stored) = Self.settle(library.photos, [], now: now)
        XCTAssertEqual(first.events.map(\.name), ["2019-08-01–08 Porto", "2019-08-10 08.00 Porto", "2019-08-10 19.00 Porto"])
        library.burst(from: Self.at(2019, 8, 10, 13), to: Self.at(2019, 8, 10, 13, 40), every: 600, place: "Porto", at: Self.porto)
        let later = EventClustering.cluster(library.photos, stored: stored, now: now)
        XCTAssertEqual(later.events.map(\.name), ["2019-08-01–08 Porto", "2019-08-10 08.00 Porto", "2019-08-10 13.00 Porto",
                                                  "2019-08-10 19.00 Porto"])
        XCTAssertEqual(EventNaming.withoutStartTime("2019-08-10 08.00.05 porto"), "2019-08-10 porto")
        XCTAssertEqual(EventNaming.withoutStartTime("2019-08-10 08.00–12 porto"), "2019-08-10–12 porto")
        XCTAssertNil(EventNaming.withoutStartTime("2019-08-10 porto"))
        XCTAssertNil(EventNaming.withoutStartTime("2019-08-10 08.00porto"))
    }

    /// Photos imported later inside a settled event's range join it only when it could hold them: a weekend
    /// 300 km away inside a settled month of a photo a day at home makes events of its own (it was swallowed:
    /// "Porto" of 57 photos, 36 of them Lisbon's), as the same photos imported at once do; a second camera's
    /// photos from the same trip, taken between the first one's, still join it.
    func testPhotosImportedLaterInsideASettledEventJoinItOnlyWhenItCouldHoldThem() {
        var home = Library()
        for step in 0...20 { home.add(Self.at(2019, 5, 1, 9) + Int64(step) * 23 * 3600, place: "Porto", at: Self.porto) }
        home.burst(from: Self.at(2019, 6, 7, 10), to: Self.at(2019, 6, 7, 12), every: 600, place: "Lisbon", at: Self.lisbon)
        home.burst(from: Self.at(2019, 6, 7, 14), to: Self.at(2019, 6, 7, 16), every: 600, place: "Lisbon", at: Self.lisbon)
        let now = Self.at(2019, 7, 1)
        let (settled, stored) = Self.settle(home.photos, [], now: now)
        XCTAssertEqual(settled.events.map(\.name), ["2019-05-01–20 Porto", "2019-06-07 Lisbon"])

        var later = home
        for day in 10...12 {
            later.burst(from: Self.at(2019, 5, day, 10), to: Self.at(2019, 5, day, 13, 40), every: 1200, place: "Lisbon", at: Self.lisbon)
        }
        // The second camera: between the first's photos of the Lisbon day, and in its lunch break, an hour from
        // them (in Lisbon: it belongs; in Porto, 300 km away: it does not).
        later.burst(from: Self.at(2019, 6, 7, 10, 5), to: Self.at(2019, 6, 7, 12, 5), every: 1800, place: "Lisbon", at: Self.lisbon)
        later.add(Self.at(2019, 6, 7, 13), place: "Lisbon", at: Self.lisbon)
        later.add(Self.at(2019, 6, 7, 13, 1), place: "Porto", at: Self.porto)
        let result = EventClustering.cluster(later.photos, stored: stored, now: now)
        let porto = result.events.first { $0.key == settled.events[0].key }
        XCTAssertEqual(porto?.name, "2019-05-01–20 Porto")
        XCTAssertEqual(porto?.members.count, 21, "the weekend is not in it")
        XCTAssertTrue(result.events.contains { $0.name.hasPrefix("2019-05-10") && $0.name.hasSuffix("Lisbon") },
                      "\(result.events.map(\.name))")
        XCTAssertEqual(result.events.first { $0.key == settled.events[1].key }?.members.count, 26 + 5 + 1,
                       "the second camera's photos in Lisbon join the settled day there")
        XCTAssertTrue(result.events.contains { $0.members.count == 1 && $0.name.hasSuffix("Porto") && $0.name.hasPrefix("2019-06-07") },
                      "\(result.events.map(\.name))")
        XCTAssertEqual(Set(result.events.flatMap(\.members)).count, later.photos.count)
    }

    func testAddingAPhotoToASettledEventRenamesNothing() {
        var library = Self.burstLibrary()
        let (before, stored) = Self.settle(library.photos, [], now: Self.july2019)
        // Inside the Lisbon trip's range, at Sintra: it joins the trip, whose name stays.
        library.add(Self.at(2019, 6, 8, 19), place: "Sintra", at: Self.sintra)
        // Ten minutes after the trip's last photo: within the 30-minute guard, so it joins too (extending nothing shown).
        library.add(Self.at(2019, 6, 9, 18, 10), place: "Lisbon", at: Self.lisbon)
        // The morning after: a new event of its own, next to the settled one, which keeps its name.
        library.burst(from: Self.at(2019, 6, 10, 8), to: Self.at(2019, 6, 10, 9), every: 600, place: "Lisbon", at: Self.lisbon)
        let after = EventClustering.cluster(library.photos, stored: stored, now: Self.at(2019, 7, 2))
        let names = after.events.map(\.name)
        for event in before.events { XCTAssertTrue(names.contains(event.name), event.name) }
        XCTAssertTrue(names.contains("2019-06-10 Lisbon"))
        let trip = after.events.first { $0.name == "2019-06-07–09 Lisbon" }
        XCTAssertEqual(trip?.members.count, 3 * (19 + 22) + 2)
        XCTAssertEqual(trip?.key, before.events[1].key)
        XCTAssertEqual(after.settlement.joined.count, 2)
        XCTAssertEqual(after.events.count, before.events.count + 1)
    }

    /// A photo from New Year's Eve joining a settled event of New Year's night moves its first moment into the
    /// year before; the event stays in the year its name says (its path is kept), its name unchanged.
    func testASettledEventKeepsItsYearWhenAPhotoJoinsFromTheYearBefore() {
        let faro = (37.0194, -7.9322)
        var library = Library()
        library.burst(from: Self.at(2021, 1, 1, 0, 10), to: Self.at(2021, 1, 1, 0, 30), every: 600, place: "Faro", at: faro)
        let (before, settled) = Self.settle(library.photos, [], now: Self.at(2021, 2, 1))
        XCTAssertEqual(before.events.map(\.name), ["2021-01-01 Faro"])
        library.add(Self.at(2020, 12, 31, 23, 50), place: "Faro", at: faro)
        let joined = EventClustering.cluster(library.photos, stored: settled, now: Self.at(2021, 2, 1))
        XCTAssertEqual(joined.settlement.joined.map(\.seq), [4])
        // What the catalog then stores: the new member, and a first moment moved back to the joining photo's.
        var stored = settled
        stored[0].members.append(4)
        stored[0].firstAt = Self.at(2020, 12, 31, 23, 50)
        let after = EventClustering.cluster(library.photos, stored: stored, now: Self.at(2021, 3, 1))
        XCTAssertEqual(after.events.map(\.name), ["2021-01-01 Faro"])
        XCTAssertEqual(after.events.map(\.year), [2021], "the event stays in /events/2021")
        XCTAssertEqual(after.events.first?.members.count, 4)
        XCTAssertEqual(after.events.first?.key, before.events.first?.key)
        // A name that says no year of the event's photos (a library edited by hand) gives the first photo's.
        stored[0].name = "1999-01-01 Faro"
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: stored, now: Self.at(2021, 3, 1)).events.map(\.year), [2020])
        XCTAssertEqual(EventNaming.year(ofName: "2021-12-31–2022-01-01 Faro", within: 2021...2022), 2021)
        XCTAssertNil(EventNaming.year(ofName: "２０２１-01-01", within: 2021...2021), "ASCII digits only")
        XCTAssertNil(EventNaming.year(ofName: "2021", within: 2021...2021))
    }

    func testNamesAcrossDaysMonthsAndYearsAndWithoutPlace() {
        XCTAssertEqual(EventNaming.name(firstAt: Self.at(2019, 6, 7, 10), lastAt: Self.at(2019, 6, 7, 18), place: "Lisbon"),
                       "2019-06-07 Lisbon")
        XCTAssertEqual(EventNaming.name(firstAt: Self.at(2019, 6, 7, 10), lastAt: Self.at(2019, 6, 9, 18), place: "Lisbon"),
                       "2019-06-07–09 Lisbon")
        XCTAssertEqual(EventNaming.name(firstAt: Self.at(2019, 5, 30, 10), lastAt: Self.at(2019, 6, 2), place: "Lisbon"),
                       "2019-05-30–06-02 Lisbon")
        XCTAssertEqual(EventNaming.name(firstAt: Self.at(2019, 12, 31, 22), lastAt: Self.at(2020, 1, 1, 2), place: nil),
                       "2019-12-31–2020-01-01")
        XCTAssertEqual(EventNaming.name(firstAt: Self.at(2019, 6, 7, 10, 5, 9), lastAt: Self.at(2019, 6, 7, 18), place: "A/B",
                                        startTime: true, seconds: true), "2019-06-07 10.05.09 A／B")
        let long = EventNaming.name(firstAt: 0, lastAt: 86_400 * 3, place: String(repeating: "é", count: 300))
        XCTAssertLessThanOrEqual(long.utf8.count, 255)
        XCTAssertTrue(long.hasPrefix("1970-01-01–04 éé"))

        // Spread over a month across two months, no place at all: the dates alone.
        var library = Library()
        var time = Self.at(2019, 5, 20, 12)
        for _ in 0..<20 { library.add(time, place: nil); time += 22 * 3600 }
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: 0).events.map(\.name), ["2019-05-20–06-06"])
        // Flickr's "Lisbon, Lisboa, Portugal" names the locality; a region alone names the event when no place does.
        library = Library()
        library.burst(from: Self.at(2019, 3, 1, 10), to: Self.at(2019, 3, 1, 11), every: 600, place: nil)
        library.photos = library.photos.map { var photo = $0; photo.regionName = "Lisboa"; return photo }
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: 0).events.map(\.name), ["2019-03-01 Lisboa"])
    }

    func testEventsOfOneNameGetTheirStartTimeAndNeverTakeASettledName() {
        var library = Library()
        // Porto is home: photos there on ten days in May.
        for day in 1...10 { library.add(Self.at(2019, 5, day, 12), place: "Porto") }
        library.burst(from: Self.at(2019, 6, 20, 8), to: Self.at(2019, 6, 20, 9), every: 300, place: "Porto")
        let (_, stored) = Self.settle(library.photos, [], now: Self.july2019)
        XCTAssertEqual(stored.map(\.name), ["2019-05-01–10 Porto", "2019-06-20 Porto"])
        library.burst(from: Self.at(2019, 6, 20, 19), to: Self.at(2019, 6, 20, 20), every: 300, place: "Porto")
        library.burst(from: Self.at(2019, 6, 20, 22), to: Self.at(2019, 6, 20, 23), every: 300, place: "Porto")
        // Long quiet hours between the three, so PhotoTOC's rule splits them; at home, nothing joins them.
        let events = EventClustering.cluster(library.photos, stored: stored, now: Self.july2019).events
        XCTAssertEqual(events.map(\.name), ["2019-05-01–10 Porto", "2019-06-20 Porto", "2019-06-20 19.00 Porto",
                                             "2019-06-20 22.00 Porto"])
        XCTAssertEqual(Set(events.map { $0.name.lowercased() }).count, events.count)
    }

    func testHardGuards() {
        // Bursts more than 24 h apart on consecutive days: PhotoTOC would see nothing standing out; the 24-hour
        // rule splits. So it does single photos with a day without photos between them.
        var library = Library()
        for day in 0..<5 {
            let start = Self.at(2019, 1, 1, 10) + Int64(day) * (86_400 + 3_600)
            library.burst(from: start, to: start + 1_200, every: 600, place: nil)
        }
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: 0).events.count, 5)
        library = Library()
        for day in 0..<5 { library.add(Self.at(2019, 1, 1) + Int64(day) * 2 * 86_400, place: nil) }
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: 0).events.count, 5)

        // 29-minute pauses amid seconds-apart photos: never split below 30 minutes.
        library = Library()
        var time = Self.at(2019, 2, 1, 8)
        for _ in 0..<6 {
            library.burst(from: time, to: time + 60, every: 5, place: nil)
            time += 60 + 29 * 60
        }
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: 0).events.count, 1)

        // A jump of more than 50 km, 40 minutes apart, between regularly spaced photos: always a boundary; the
        // same jump 10 minutes apart is not (the 30-minute floor wins: a wrong GPS fix must not cut a burst).
        for (pause, expected) in [(Int64(40 * 60), 2), (10 * 60, 1)] {
            library = Library()
            library.burst(from: Self.at(2019, 3, 1, 8), to: Self.at(2019, 3, 1, 10), every: 30 * 60, place: nil, at: Self.lisbon)
            let start = Self.at(2019, 3, 1, 10) + pause
            library.burst(from: start, to: start + 2 * 3600, every: 30 * 60, place: nil, at: Self.porto)
            XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: 0).events.count, expected, "pause \(pause)")
        }
    }

    /// Photos without GPS between two geotagged places far apart (a camera without GPS on a drive, a phone's
    /// photos at each end): one boundary for the jump, at the longest gap, not one at every gap of the drive.
    func testAJumpWithPhotosWithoutAPlaceBetweenIsOneBoundary() {
        var library = Library()
        library.burst(from: Self.at(2024, 10, 10, 8), to: Self.at(2024, 10, 10, 9), every: 300, place: "Porto", at: Self.porto)
        for hour in [10, 11, 12, 13] { library.add(Self.at(2024, 10, 10, hour), place: nil) }
        library.burst(from: Self.at(2024, 10, 10, 14, 30), to: Self.at(2024, 10, 10, 16), every: 300, place: "Lisbon", at: Self.lisbon)
        let events = EventClustering.cluster(library.photos, stored: [], now: 0).events
        XCTAssertEqual(events.count, 2, events.map(\.name).joined(separator: ", "))
        XCTAssertEqual(events.map(\.places), [["Porto"], ["Lisbon"]])
        XCTAssertEqual(events.last?.firstAt, Self.at(2024, 10, 10, 14, 30), "the 90-minute gap before Lisbon is the boundary")
    }

    /// Ten days at home in Porto, so Porto is home.
    static func homeInPorto(_ library: inout Library, from day: Int) {
        for offset in 0..<10 { library.burst(from: at(2025, 3, day + offset, 9), to: at(2025, 3, day + offset, 9, 20), every: 300,
                                             place: "Porto", at: porto) }
    }

    /// A three-day trip to Lisbon whose mornings are at Belém (nearest GeoNames town: Algés) and evenings in
    /// the Baixa (Lisbon), 7 km apart: one event, not six (pieces were joined only when their labels matched).
    func testATripWhoseSightsAreNearestDifferentTownsIsOneEvent() {
        var library = Library()
        Self.homeInPorto(&library, from: 1)
        let belem = (38.6916, -9.2160), baixa = (38.7110, -9.1366)
        for day in 9...11 {
            library.burst(from: Self.at(2025, 4, day, 9), to: Self.at(2025, 4, day, 11, 45), every: 900, place: "Algés", at: belem)
            library.burst(from: Self.at(2025, 4, day, 17), to: Self.at(2025, 4, day, 19, 45), every: 900, place: "Lisbon", at: baixa)
        }
        let april = EventClustering.cluster(library.photos, stored: [], now: 0).events.filter { $0.firstAt >= Self.at(2025, 4, 1) }
        XCTAssertEqual(april.count, 1, april.map(\.name).joined(separator: ", "))
        XCTAssertEqual(april.first?.members.count, 3 * (12 + 12))
        XCTAssertEqual(april.first.map { Set($0.places) }, ["Algés", "Lisbon"])
    }

    /// An evening shot only with a camera without GPS, inside a trip: part of it, not an event that also kept
    /// the next day from joining the first.
    func testAnEveningWithoutAPlaceInsideATripJoinsIt() {
        var library = Library()
        Self.homeInPorto(&library, from: 1)
        let evora = (38.5714, -7.9135)
        for day in 10...12 {
            library.burst(from: Self.at(2025, 6, day, 10), to: Self.at(2025, 6, day, 12, 45), every: 900, place: "Evora", at: evora)
        }
        library.burst(from: Self.at(2025, 6, 10, 20, 30), to: Self.at(2025, 6, 10, 22, 18), every: 720, place: nil)
        let june = EventClustering.cluster(library.photos, stored: [], now: 0).events.filter { $0.firstAt >= Self.at(2025, 6, 1) }
        XCTAssertEqual(june.map(\.name), ["2025-06-10–12 Evora"])
        XCTAssertEqual(june.first?.members.count, 3 * 12 + 10)
    }

    /// Home whose photos carry two towns' names (Porto and Vila Nova de Gaia across the river, 2 km): two days
    /// labelled Gaia are days at home, two events, not a "trip" to Gaia joined across the night.
    func testDaysAtHomeUnderANeighbouringTownsNameAreNotATrip() {
        var library = Library()
        Self.homeInPorto(&library, from: 1)
        let gaia = (41.1239, -8.6118)
        for day in 20...21 {
            library.burst(from: Self.at(2025, 3, day, 10), to: Self.at(2025, 3, day, 12), every: 900, place: "Vila Nova de Gaia", at: gaia)
        }
        let gaiaEvents = EventClustering.cluster(library.photos, stored: [], now: 0).events.filter { $0.places.first == "Vila Nova de Gaia" }
        XCTAssertEqual(gaiaEvents.map(\.name), ["2025-03-20 Vila Nova de Gaia", "2025-03-21 Vila Nova de Gaia"])
    }

    /// A photo a day for 13 months: runs of at most 31 days, under both years (one event of 400 photos left
    /// /events/2025 empty).
    func testAPhotoADayForMoreThanAYearIsRunsOfAMonth() {
        var library = Library()
        for day in 0..<400 { library.add(Self.at(2024, 6, 1, 18) + Int64(day) * 86_400, place: "Porto", at: Self.porto) }
        let events = EventClustering.cluster(library.photos, stored: [], now: 0).events
        XCTAssertEqual(events.count, 13, events.map(\.name).joined(separator: ", "))
        XCTAssertEqual(events.first?.name, "2024-06-01–07-02 Porto")
        XCTAssertTrue(events.allSatisfy { $0.lastAt - $0.firstAt <= 31 * 86_400 }, events.map(\.name).joined(separator: ", "))
        XCTAssertEqual(Set(events.map(\.year)), [2024, 2025])
        XCTAssertEqual(events.map(\.members.count).reduce(0, +), 400)
    }

    /// Acceptance 1's "photos spread over a month", as people take them: one photo every evening at 19:00
    /// give or take 40 minutes, so about half the gaps are over 24 hours. One event, as if each came exactly a
    /// day after the one before; a day without a photo ends it.
    func testAPhotoEveryEveningForAMonthIsOneEvent() {
        var library = Library()
        var generator = SeededGenerator(seed: 7)
        for day in 1...31 {
            let minutes = Int64(generator.next() % 81) - 40
            library.add(Self.at(2025, 3, day, 19) + minutes * 60, place: "Lisbon", at: Self.lisbon)
        }
        var events = EventClustering.cluster(library.photos, stored: [], now: 0).events
        XCTAssertEqual(events.map(\.name), ["2025-03-01–31 Lisbon"])
        library.photos.removeAll { $0.time >= Self.at(2025, 3, 15) && $0.time < Self.at(2025, 3, 16) }
        events = EventClustering.cluster(library.photos, stored: [], now: 0).events
        XCTAssertEqual(events.map(\.name), ["2025-03-01–14 Lisbon", "2025-03-16–31 Lisbon"], "a day without a photo")
    }

    func testTinyPiecesJoinTheNearerNeighbour() {
        var library = Library()
        library.burst(from: Self.at(2019, 4, 1, 9), to: Self.at(2019, 4, 1, 10), every: 60, place: nil)
        library.add(Self.at(2019, 4, 1, 13), place: nil)
        library.burst(from: Self.at(2019, 4, 1, 19), to: Self.at(2019, 4, 1, 20), every: 60, place: nil)
        let events = EventClustering.cluster(library.photos, stored: [], now: 0).events
        XCTAssertEqual(events.map(\.members.count), [62, 61], "the lone 13:00 photo joins the morning (3 h) not the evening (6 h)")
        // A lone photo with a day on each side stays alone.
        library.add(Self.at(2019, 4, 5, 12), place: nil)
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: 0).events.map(\.members.count), [62, 61, 1])
    }

    func testHostileTimesAndPlaces() {
        var library = Library()
        let low = CatalogLimits.momentRange.lowerBound, high = CatalogLimits.momentRange.upperBound
        for time in [Int64.min, low, low + 1, 0, 0, 0, high - 1, high, Int64.max] { library.add(time, place: nil) }
        library.photos.append(EventPhoto(seq: 99, time: 5, latitude: .nan, longitude: .infinity, placeName: "\u{0}/\u{202E}",
                                         regionName: ""))
        library.photos.append(EventPhoto(seq: Int64.max, time: 7, latitude: 91, longitude: -181,
                                         placeName: String(repeating: "x", count: 100_000)))
        let result = EventClustering.cluster(library.photos, stored: [], now: Int64.min)
        XCTAssertEqual(result.events.first?.name, "0001-01-01")
        XCTAssertEqual(result.events.last?.name, "9999-12-31")
        // A stored event whose range is upside down and spans every year, with a repeated member and no name:
        // read as years 1–9999, named "Untitled"; it takes in the photos within a day of its members, and the
        // others, inside its range but far from them, make events of their own there.
        let swallowed = EventClustering.cluster(library.photos, stored: [StoredEvent(id: -4, name: "", firstAt: Int64.max,
                                                                                    lastAt: Int64.min, members: [1, 2, 2])],
                                                now: Int64.max)
        for outcome in [result, swallowed] {
            XCTAssertEqual(Set(outcome.events.flatMap(\.members)).count, library.photos.count)
            XCTAssertEqual(outcome.events.reduce(0) { $0 + $1.members.count }, library.photos.count)
            for event in outcome.events {
                XCTAssertFalse(event.name.isEmpty)
                XCTAssertLessThanOrEqual(event.name.utf8.count, 255)
                XCTAssertFalse(event.name.contains("/"))
                XCTAssertTrue(CatalogLimits.yearRange.contains(event.year))
            }
        }
        XCTAssertEqual(swallowed.events.first?.name, "Untitled")
        XCTAssertEqual(swallowed.events.first?.members.sorted(), [1, 2, 3])

        // Rules no one would set do not trap either.
        var extreme = EventRules()
        extreme.minimumGap = Int64.min; extreme.maximumGap = Int64.max; extreme.settlingTime = Int64.max
        extreme.window = Int.max; extreme.gapRatio = .nan; extreme.maximumJumpMeters = -.infinity
        extreme.minimumPhotos = Int.max; extreme.homeMinimumDays = Int.min
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: Int64.max, rules: extreme)
            .events.reduce(0) { $0 + $1.members.count }, library.photos.count)

        // A thousand photos in the same second: one event.
        library = Library()
        for _ in 0..<1000 { library.add(1_500_000_000, place: "Same") }
        XCTAssertEqual(EventClustering.cluster(library.photos, stored: [], now: 0).events.map(\.members.count), [1000])
        XCTAssertTrue(EventClustering.cluster([], stored: [], now: 0).events.isEmpty)
    }

    func testHundredThousandPhotos() {
        // A synthetic decade: bursts of 1–60 photos seconds to minutes apart, hours to days between them, and a
        // place for most photos.
        var generator = SplitMix(seed: 21)
        var photos: [EventPhoto] = []
        var time = Self.at(2010, 1, 1)
        let places = ["Lisbon", "Porto", "Sintra", "Faro", "Braga", nil]
        while photos.count < 100_000 {
            let place = places[Int(generator.next() % UInt64(places.count))]
            for _ in 0..<(1 + Int(generator.next() % 60)) where photos.count < 100_000 {
                photos.append(EventPhoto(seq: Int64(photos.count + 1), time: time, placeName: place))
                time += Int64(generator.next() % 600)
            }
            time += 3600 + Int64(generator.next() % (3 * 86_400))
        }
        let start = Date()
        let result = EventClustering.cluster(photos.shuffled(using: &generator), stored: [], now: time)
        let seconds = Date().timeIntervalSince(start)
        print("event clustering: \(photos.count) photos, \(result.events.count) events in \(String(format: "%.3f", seconds)) s")
        XCTAssertEqual(result.events.reduce(0) { $0 + $1.members.count }, photos.count)
        let (_, stored) = Self.settle(photos, [], now: time)
        let again = Date()
        let settled = EventClustering.cluster(photos, stored: stored, now: time)
        print("event clustering with \(stored.count) settled events: \(String(format: "%.3f", Date().timeIntervalSince(again))) s")
        XCTAssertEqual(settled.events, result.events)
    }
}

/// A seeded generator (SplitMix64), so the shuffles and the synthetic library are the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
