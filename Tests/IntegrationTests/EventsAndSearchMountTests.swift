// /events and /search through a real mount: one event per burst with its name, names that stay when photos are
// added, queries as directories (ls, rmdir), hostile query names, and both trees following an import live.
import FlickrOrigin
import Foundation
import PhotoCatalog
import TestRequirements
import XCTest

final class EventsAndSearchMountTests: XCTestCase {
    var harness: MountHarness!

    override func setUpWithError() throws {
        // The origin serves nothing here: the library is written straight into the catalog (places, times and
        // titles chosen for the test), and nothing is read from it.
        harness = try MountHarness(library: DemoLibrary.make(count: 1, scale: 4))
    }

    override func tearDown() {
        harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0)
    }

    // MARK: A library written for the test

    static let places = [
        PlaceResolution(placeID: "berlin", placeName: "Berlin, Berlin, Germany", regionName: "Germany"),
        PlaceResolution(placeID: "rome", placeName: "Rome, Lazio, Italy", regionName: "Italy"),
        PlaceResolution(placeID: "tivoli", placeName: "Tivoli, Lazio, Italy", regionName: "Italy"),
        PlaceResolution(placeID: "lisbon", placeName: "Lisbon, Lisboa, Portugal", regionName: "Portugal"),
        PlaceResolution(placeID: "porto", placeName: "Porto, Porto, Portugal", regionName: "Portugal"),
    ]
    static let coordinates: [String: (Double, Double)] = [
        "berlin": (52.52, 13.40), "rome": (41.90, 12.50), "tivoli": (41.96, 12.80), "lisbon": (38.72, -9.14),
        "porto": (41.15, -8.61),
    ]

    /// Seconds since 1970 of a UTC date and time (the camera's clock, as the catalog keeps it).
    static func at(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
        return Int64(date.timeIntervalSince1970)
    }

    var written = 0

    func photo(_ time: Int64, _ place: String, _ title: String, tags: [String] = []) -> ImportedPhoto {
        written += 1
        let id = "t\(written)"
        let (latitude, longitude) = Self.coordinates[place] ?? (0, 0)
        let record = PhotoRecord(id: id, title: title, placeID: place, momentAt: time, momentYear: PhotoRecord.year(ofMoment: time),
                                 originalURL: "http://127.0.0.1:1/\(id).jpg", byteSize: 1000, contentType: "image/jpeg",
                                 latitude: latitude, longitude: longitude, tags: tags)
        return ImportedPhoto(photo: record, owner: "ann@N01", ownerName: "Ann")
    }

    /// Photos every `step` seconds from `start` to `end`.
    func burst(from start: Int64, to end: Int64, every step: Int64, _ place: String, _ title: String) -> [ImportedPhoto] {
        stride(from: start, through: end, by: Int(step)).map { photo($0, place, title) }
    }

    func write(_ photos: [ImportedPhoto], places: [PlaceResolution] = EventsAndSearchMountTests.places) throws {
        _ = try harness.catalog().applyImport(places: places, photos: photos)
    }

    /// A year as people take photos: a month at home in Berlin (one a day), a three-day trip to Rome, a day trip
    /// to Tivoli from there a week later, and an evening at home.
    func burstYear() -> [ImportedPhoto] {
        var photos: [ImportedPhoto] = []
        var time = Self.at(2018, 8, 1, 19)
        for _ in 0..<30 { photos.append(photo(time, "berlin", "Home")); time += 23 * 3600 }
        for day in 12...14 {
            photos += burst(from: Self.at(2018, 9, day, 9), to: Self.at(2018, 9, day, 12), every: 900, "rome", "Rome")
            photos += burst(from: Self.at(2018, 9, day, 15), to: Self.at(2018, 9, day, 19), every: 900, "rome", "Rome")
        }
        photos += burst(from: Self.at(2018, 9, 21, 10), to: Self.at(2018, 9, 21, 16), every: 1200, "tivoli", "Villa")
        photos += burst(from: Self.at(2018, 10, 5, 19), to: Self.at(2018, 10, 5, 22), every: 600, "berlin", "Party")
        return photos
    }

    func list(_ relative: String) -> [String] {
        let result = Shell.run("ls", ["-1", harness.path(relative)])
        guard result.status == 0 else { return [] }
        return result.text.split(separator: "\n").map(String.init)
    }

    // MARK: Events

    func testOneEventPerBurstNamedByDateAndPlace() throws {
        let photos = burstYear()
        try write(photos)
        try harness.mount()
        XCTAssertEqual(list(""), ["albums", "events", "favorites", "moments", "people", "recent", "regions", "search"])
        XCTAssertEqual(list("events"), ["2018"])
        let events = list("events/2018")
        XCTAssertEqual(events, ["2018-08-01–29 Berlin", "2018-09-12–14 Rome", "2018-09-21 Tivoli", "2018-10-05 Berlin"])
        XCTAssertEqual(events.map { list("events/2018/" + $0).count }, [30, 3 * (13 + 17), 19, 19])

        // Files are named as in /moments and are the same files (one inode, one more link for /events).
        let moments = Set(list("moments/2018"))
        for event in events {
            for name in list("events/2018/" + event) {
                XCTAssertTrue(moments.contains(name), name)
            }
        }
        let sample = try XCTUnwrap(list("events/2018/2018-09-21 Tivoli").first)
        XCTAssertEqual(harness.inode(of: harness.path("events/2018/2018-09-21 Tivoli/" + sample)),
                       harness.inode(of: harness.path("moments/2018/" + sample)))
        XCTAssertEqual(Shell.run("stat", ["-c", "%h", harness.path("moments/2018/" + sample)]).text, "3\n",
                       "regions, moments, events")
        XCTAssertEqual(Shell.run("stat", ["-c", "%h", harness.path("events/2018")]).text, "6\n", "4 events + 2")

        // The event directory says what it holds; a photo's attributes are the same through either tree.
        let comment = Shell.run("python3", ["-c", "import os,sys; print(os.getxattr(sys.argv[1], 'user.xdg.comment').decode())",
                                            harness.path("events/2018/2018-09-21 Tivoli")])
        XCTAssertEqual(comment.text, "2018-09-21 10:00 – 2018-09-21 16:00; Tivoli; 19 photos\n", comment.stderr)
        let attributes = "import os,sys; print(sorted((n, os.getxattr(sys.argv[1], n)) for n in os.listxattr(sys.argv[1])))"
        let throughEvent = Shell.run("python3", ["-c", attributes, harness.path("events/2018/2018-09-21 Tivoli/" + sample)])
        XCTAssertEqual(throughEvent.status, 0, throughEvent.stderr)
        XCTAssertEqual(throughEvent.text, Shell.run("python3", ["-c", attributes, harness.path("moments/2018/" + sample)]).text)
        XCTAssertTrue(throughEvent.text.contains("user."), throughEvent.text)

        // `..` of an event is its year; `find` walks the whole tree without an error.
        XCTAssertEqual(harness.inode(of: harness.path("events/2018/2018-09-21 Tivoli/..")), harness.inode(of: harness.path("events/2018")))
        let find = Shell.run("find", [harness.path("events"), "-type", "f"])
        XCTAssertEqual(find.status, 0, find.stderr)
        XCTAssertEqual(find.text.split(separator: "\n").count, photos.count)

        let status = harness.photofs(["status", harness.library])
        XCTAssertTrue(status.text.contains("events: 4 (4 settled)"), status.text + status.stderr)
    }

    func testImportSettlesEventsWithoutAMount() throws {
        XCTAssertEqual(try harness.catalog().storedEventCount(), 0)
        let imported = harness.importLibrary()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(try harness.catalog().storedEventCount(), 1, "the one photo, taken years ago, is a settled event")
        XCTAssertTrue(harness.photofs(["status", harness.library]).text.contains("events: 1 (1 settled)"))
    }

    func testPhotosAddedUnderALiveMountJoinSettledEventsWithoutRenamesAndNewBurstsAppear() throws {
        try write(burstYear())
        try harness.mount()
        let before = list("events/2018")
        XCTAssertEqual(before.count, 4)
        let rome = "events/2018/2018-09-12–14 Rome"
        let romeCount = list(rome).count
        // One photo inside the Rome trip (an evening photo on its second day), one a week after everything.
        try write([photo(Self.at(2018, 9, 13, 21), "rome", "Night"),
                   photo(Self.at(2018, 11, 20, 12), "porto", "Bridge"), photo(Self.at(2018, 11, 20, 12, 10), "porto", "Bridge")])
        let settled = eventually(within: 10) { list("events/2018").count == 5 && list(rome).count == romeCount + 1 }
        XCTAssertTrue(settled, "\(list("events/2018")) \(list(rome).count)")
        XCTAssertEqual(list("events/2018"), before + ["2018-11-20 Porto"], "no event renamed")
        XCTAssertTrue(list(rome).contains { $0.hasSuffix("Night.jpg") })
    }

    // MARK: Search

    func searchLibrary() -> [ImportedPhoto] {
        [
            photo(Self.at(2019, 6, 8, 18), "porto", "Harbour at dusk"),
            photo(Self.at(2019, 6, 8, 18, 5), "porto", "Boats", tags: ["harbour"]),
            photo(Self.at(2018, 3, 2, 9), "porto", "Harbour in the morning"),
            photo(Self.at(2019, 6, 10, 11), "lisbon", "Torre de Belém"),
            photo(Self.at(2019, 6, 10, 12), "lisbon", "Tram 28"),
            photo(Self.at(2019, 6, 11, 12), "lisbon", "Miradouro"),
            photo(Self.at(2019, 7, 1, 12), "berlin", "Lisbon poster"),
        ]
    }

    func titles(_ relative: String) -> [String] {
        // Names are "YYYY-MM-DD HH.MM.SS Title.jpg": the title is what the test checks.
        list(relative).map { String($0.dropFirst(20).dropLast(4)) }.sorted()
    }

    func testQueriesAreDirectoriesOfTheirPhotos() throws {
        try write(searchLibrary())
        try harness.mount()
        XCTAssertEqual(list("search"), [])
        XCTAssertEqual(titles("search/harbour 2019"), ["Boats", "Harbour at dusk"])
        XCTAssertEqual(titles("search/belem"), ["Torre de Belém"])
        XCTAssertEqual(titles("search/place:lisb"), ["Miradouro", "Torre de Belém", "Tram 28"])
        XCTAssertEqual(titles("search/harb"), ["Boats", "Harbour at dusk", "Harbour in the morning"], "the last word is a prefix")
        XCTAssertEqual(list("search/nothingmatchesthis"), [])
        // Results are the photos themselves.
        let result = try XCTUnwrap(list("search/belem").first)
        XCTAssertEqual(harness.inode(of: harness.path("search/belem/" + result)), harness.inode(of: harness.path("moments/2019/" + result)))
        XCTAssertEqual(Shell.run("stat", ["-c", "%h", harness.path("search/belem/" + result)]).text, "3\n", "a result is no name of its own")

        // `ls /search` lists the queries looked up; rmdir forgets one; rmdir elsewhere is refused.
        XCTAssertEqual(Set(list("search")), ["harbour 2019", "belem", "place:lisb", "harb", "nothingmatchesthis"])
        let removed = Shell.run("rmdir", [harness.path("search/harbour 2019")])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(Set(list("search")), ["belem", "place:lisb", "harb", "nothingmatchesthis"])
        let refused = Shell.run("rmdir", [harness.path("moments/2019")])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("Read-only file system"), refused.stderr)
        let touch = Shell.run("touch", [harness.path("search/belem/new.jpg")])
        XCTAssertTrue(touch.stderr.contains("Read-only file system"), touch.stderr)

        // The most recent 20 are kept.
        for number in 0..<25 { _ = list("search/word\(number)") }
        let kept = list("search")
        XCTAssertEqual(kept.count, 20, "\(kept)")
        XCTAssertTrue(kept.contains("word24") && !kept.contains("belem"), "\(kept)")
        // Pushed out, and looked up again at once (the kernel may still hold the old name): still its photos.
        XCTAssertEqual(list("search/belem").count, 1, "a query pushed out of the 20 is still a search")
    }

    /// A user who is not root mounts their library and forgets a query: with `default_permissions` the kernel
    /// lets `rmdir` through only with /search's write bit for its owner (a 0555 /search refused it, EACCES).
    func testTheMountingUserForgetsAQueryWithoutBeingRoot() throws {
        try TestRequirement.root("to mount as nobody (setpriv)")
        try write(burstYear())
        // nobody owns everything the mount uses and can reach it: the library, the cache, the mount point.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: harness.root.path)
        let chown = Shell.run("chown", ["-R", "65534:65534", harness.root.path])
        XCTAssertEqual(chown.status, 0, chown.stderr)
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        try harness.mount(launcher: asNobody)
        let looked = Shell.run(asNobody[0], Array(asNobody.dropFirst()) + ["ls", "-1", harness.path("search/rome")])
        XCTAssertEqual(looked.status, 0, looked.stderr)
        XCTAssertFalse(looked.text.isEmpty, "the query finds the Rome photos")
        let mode = Shell.run(asNobody[0], Array(asNobody.dropFirst()) + ["stat", "-c", "%a %u", harness.path("search")])
        XCTAssertEqual(mode.text, "755 65534\n", mode.stderr)
        let removed = Shell.run(asNobody[0], Array(asNobody.dropFirst()) + ["rmdir", harness.path("search/rome")])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        let left = Shell.run(asNobody[0], Array(asNobody.dropFirst()) + ["ls", "-1", harness.path("search")])
        XCTAssertEqual(left.status, 0, left.stderr)
        XCTAssertFalse(left.text.split(separator: "\n").contains("rome"), left.text)
        // Everything else stays read-only for its owner too.
        let refused = Shell.run(asNobody[0], Array(asNobody.dropFirst()) + ["rmdir", harness.path("moments/2018")])
        XCTAssertNotEqual(refused.status, 0)
    }

    /// Names a user, a GUI or a fuzzer may type: a result or ENOENT, never another error, and the daemon lives on.
    func testHostileQueryNamesGiveAResultOrNotFound() throws {
        try write(searchLibrary())
        try harness.mount()
        let script = """
        import errno, os, sys
        base = os.fsencode(sys.argv[1])
        names = [b'"', b'""', b'"harbour', b"it's", b'a:b', b'place:', b':', b'year:abc', b'*', b'harb*', b'-',
                 b'-harbour', b'sun-set', b'NOT', b'AND OR', b'NEAR(a b)', b'(', b'^x', b'{a}', b'harbour ', b' ',
                 b'.', b'..', b'.hidden', b'x' * 255, b'x' * 256, b'h\\xe9', b'\\xff\\xfe', b'\\xe6\\x9d\\xb1',
                 b'\\xe6\\x9d\\xb1\\xe4\\xba\\xac', b'a\\tb', b'a\\nb', b'%s', b'\\\\', b'\\xc3\\xa9' * 127 + b'x']
        for name in names:
            path = base + b'/' + name
            try:
                entries = os.listdir(path)
                print('ok', len(entries))
            except OSError as error:
                print('errno', errno.errorcode.get(error.errno, error.errno), name)
        """
        let result = Shell.run("python3", ["-c", script, harness.path("search")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.text.split(separator: "\n")
        XCTAssertEqual(lines.count, 35, result.text)
        for line in lines where !line.hasPrefix("ok") {
            // ENOENT, or ENAMETOOLONG from the kernel for a name over 255 bytes.
            XCTAssertTrue(line.hasPrefix("errno ENOENT") || line.hasPrefix("errno ENAMETOOLONG"), String(line))
        }
        XCTAssertTrue(lines.contains { $0.hasPrefix("ok") }, result.text)
        XCTAssertTrue(harness.isMounted)
        XCTAssertEqual(titles("search/belem"), ["Torre de Belém"], "the daemon still answers")
        XCTAssertFalse(harness.daemonLog.contains("request failed"), harness.daemonLog)
    }

    func testNewPhotosShowInAnOpenQueryAfterAnImport() throws {
        try write(searchLibrary())
        try harness.mount()
        XCTAssertEqual(titles("search/harbour 2019"), ["Boats", "Harbour at dusk"])
        try write([photo(Self.at(2019, 9, 1, 10), "porto", "Harbour lights")])
        XCTAssertTrue(eventually(within: 10) { titles("search/harbour 2019").count == 3 }, "\(titles("search/harbour 2019"))")
        XCTAssertEqual(titles("search/harbour 2019"), ["Boats", "Harbour at dusk", "Harbour lights"])
    }
}
