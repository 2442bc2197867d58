// Issue 10, acceptance 1 with a real file manager: pcmanfm (libfm draws thumbnails in its own process) under
// Xvfb, opened on a folder of 200 photos, shows photofs's thumbnails and neither opens nor downloads a photo.
import FlickrOrigin
import Foundation
import PhotoContent
import TestRequirements
import XCTest

final class FileManagerMountTests: XCTestCase {
    var harness: MountHarness!
    /// Xvfb and pcmanfm, stopped in tearDown (pcmanfm first: it holds the mounted folder open).
    var display: Process?
    var fileManager: Process?

    override func tearDown() {
        for process in [fileManager, display].compactMap({ $0 }) where process.isRunning {
            process.terminate()
            if !eventually(within: 5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        }
        harness?.tearDown(failed: (testRun?.failureCount ?? 0) > 0)
    }

    /// The folder the test opens: /moments/2024, once every photo of the library is taken in 2024.
    static let folder = "moments/2024"
    static let photoCount = 200

    /// 200 demo photos at full scale (each has Flickr's 320 px `n` rendition, as real ones do), all taken in
    /// 2024 so that one folder holds them all; the first 24 carry the hostile titles the naming rules allow,
    /// so pcmanfm's own URIs (g_filename_to_uri) must match photofs's for odd names too.
    static func library() -> OriginLibrary {
        var library = DemoLibrary.make(count: photoCount, scale: 1)
        for index in library.photos.indices {
            guard let taken = library.photos[index].dateTaken else { continue }
            library.photos[index].dateTaken = "2024" + taken.dropFirst(4)
        }
        return library
    }

    func testPcmanfmShowsTwoHundredThumbnailsWithoutOpeningAPhoto() throws {
        for (program, package) in [("/usr/bin/Xvfb", "xvfb"), ("/usr/bin/pcmanfm", "pcmanfm"), ("/usr/bin/xdotool", "xdotool"),
                                    ("/usr/bin/import", "imagemagick"), ("/usr/bin/gio", "libglib2.0-bin")] {
            try TestRequirement.program(program, package: package)
        }
        harness = try MountHarness(library: FileManagerMountTests.library())
        harness.desktopThumbnails = true
        let imported = harness.importLibrary()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        // trace: the daemon logs every open of a photo with its opener ("open not counted as recent").
        try harness.mount(extra: ["--log-level", "trace"])
        harness.origin.resetCounters()

        // Nothing lists the folder before pcmanfm: its own listing is what writes the thumbnails (only file
        // managers' and thumbnailers' listings do), waiting before the reply until they are written.
        // pcmanfm under Xvfb, with a home, configuration and thumbnail cache of its own.
        let displayNumber = try startDisplay()
        let environment = try fileManagerEnvironment(display: displayNumber)
        fileManager = try start("/usr/bin/pcmanfm", [harness.path(FileManagerMountTests.folder)], environment: environment,
                                log: "pcmanfm.log")
        XCTAssertTrue(eventually(within: 30) {
            !Shell.run("xdotool", ["search", "--onlyvisible", "--class", "pcmanfm"], environment: environment).text.isEmpty
        }, "pcmanfm's window did not appear within 30 s on :\(displayNumber) (Xvfb running: \(display?.isRunning ?? false)): \(log("pcmanfm.log")) \(log("xvfb.log"))")

        // It has looked once its window shows the photos (their blue skies: an icon-only folder has none), no
        // longer changes, and libfm's thumbnail thread is gone: one thread, named "loader", loads the thumbnails
        // of every item, visible or not, and ends when none is left (a photo it reads itself, for an item
        // below the window, would not show on the screen).
        var previous = Data(), sky = 0, loading = true
        XCTAssertTrue(eventually(within: 60) {
            let screen = screenshot(display: displayNumber)
            defer { previous = screen }
            sky = skyPixels(in: screen)
            loading = fileManager.map { threadNames(of: $0.processIdentifier).contains("loader") } ?? false
            return screen == previous && sky >= 20_000 && !loading
        }, "pcmanfm's window never settled showing thumbnails: \(sky) sky pixels, loading \(loading); \(log("pcmanfm.log"))")

        // The test's own listing (after pcmanfm's) writes nothing: the test process draws no thumbnails.
        let names = try FileManager.default.contentsOfDirectory(atPath: harness.path(FileManagerMountTests.folder)).sorted()
        XCTAssertEqual(names.count, FileManagerMountTests.photoCount, "one folder holds every photo")
        let paths = names.map { harness.path(FileManagerMountTests.folder + "/" + $0) }
        XCTAssertTrue(harness.daemonLog.contains("desktop thumbnails before listing"), "pcmanfm's listing wrote thumbnails")

        // No photo was opened (opens are logged with their opener) or downloaded, and every thumbnail is
        // the one photofs wrote (libfm deletes one it finds stale) and valid.
        let opens = harness.daemonLog.split(separator: "\n").filter {
            $0.contains("open not counted as recent") || $0.contains("op=open ") || $0.contains("[PhotoContent] downloaded")
        }
        XCTAssertEqual(opens.count, 0, "photos opened: \(opens.prefix(5)); \((try? explain(opens, paths: paths)) ?? "")")
        XCTAssertEqual(try originalRequests(), 0, "no original was downloaded")
        let invalid = paths.filter { !thumbnailIsValid($0) }
        XCTAssertEqual(invalid, [], "thumbnails GLib or libfm no longer take")
        XCTAssertTrue(fileManager?.isRunning ?? false, "pcmanfm is still running: \(log("pcmanfm.log"))")

        // /recent: pending opens are written at unmount, so the library says whether any counted.
        fileManager?.terminate()
        XCTAssertTrue(eventually(within: 10) { !(fileManager?.isRunning ?? false) })
        XCTAssertEqual(harness.unmount(), 0)
        XCTAssertEqual(try harness.catalog().recentPhotos(limit: 100).map(\.id), [], "/recent stays empty")
    }

    // MARK: Helpers

    /// Why pcmanfm may have opened photos: for each, its thumbnails in `normal` (what libfm 1.3 reads at 128 px)
    /// and `large` (what GLib judges) with their Thumb::MTime against the file's, and the daemon's lines about it.
    func explain(_ opens: [Substring], paths: [String]) throws -> String {
        let ids = Set(opens.compactMap { line in line.split(separator: " ").first { $0.hasPrefix("photo=") }.map { String($0.dropFirst(6)) } })
        guard !ids.isEmpty else { return "" }
        var notes: [String] = []
        for path in paths {
            guard let id = try harness.photoID(ofInode: harness.inode(of: path)), ids.contains(id) else { continue }
            var info = stat()
            stat(path, &info)
            let sizes = [DesktopThumbnailSize.normal, .large].map { size -> String in
                let file = store.fileURL(forURI: FileURI.glib(path: path), size: size)
                guard let data = try? Data(contentsOf: file) else { return "\(size): missing" }
                return "\(size): Thumb::MTime \(PNGTextChunks.entries(in: data)["Thumb::MTime"] ?? "none")"
            }
            let lines = harness.daemonLog.split(separator: "\n").filter { $0.contains(id) && !$0.contains("trace") }
            notes.append("\(id) \(path) mtime \(info.st_mtim.tv_sec): \(sizes.joined(separator: ", ")); log: \(lines.suffix(5))")
        }
        return notes.joined(separator: "\n")
    }

    /// Whether both judges take the file's thumbnail: GLib (`gio info`, which judges the largest it finds:
    /// `large`) and libfm 1.3, which at 128 px reads `normal` and checks only its Thumb::MTime.
    func thumbnailIsValid(_ path: String) -> Bool {
        let result = Shell.run("gio", ["info", "-a", "thumbnail::is-valid", path],
                               environment: ["XDG_CACHE_HOME": harness.xdgCacheHome, "HOME": harness.root.path])
        guard result.text.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "thumbnail::is-valid: TRUE" })
        else { return false }
        var info = stat()
        guard stat(path, &info) == 0, let normal = try? Data(contentsOf: store.fileURL(forURI: FileURI.glib(path: path), size: .normal))
        else { return false }
        return PNGTextChunks.entries(in: normal)["Thumb::MTime"] == String(info.st_mtim.tv_sec)
    }

    var store: DesktopThumbnailStore {
        DesktopThumbnailStore(root: URL(fileURLWithPath: harness.xdgCacheHome).appendingPathComponent("thumbnails"))
    }

    /// GETs the origin answered for photos' originals (the catalog's original URLs).
    func originalRequests() throws -> Int {
        try harness.catalog().allPhotos().reduce(0) { count, photo in
            count + harness.origin.requestCount(method: "GET", path: URL(string: photo.originalURL)?.path ?? "")
        }
    }

    /// Starts Xvfb on a display number it picks itself (`-displayfd`: no clash with another X server) and
    /// returns that number once the server accepts clients.
    func startDisplay() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        process.arguments = ["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try logHandle("xvfb.log")
        process.standardInput = FileHandle.nullDevice
        try process.run()
        display = process
        // Xvfb writes the number and a newline to the descriptor once it listens.
        guard let number = readLine(output.fileHandleForReading.fileDescriptor, within: 30), !number.isEmpty,
              number.allSatisfy(\.isNumber) else {
            throw HarnessError("Xvfb gave no display number within 30 s: \(log("xvfb.log"))")
        }
        // Anything the server (or the xkbcomp it runs) writes there later is read until it exits: a closed
        // pipe would kill the writer with SIGPIPE.
        DispatchQueue.global().async { _ = output.fileHandleForReading.readDataToEndOfFile() }
        return number
    }

    /// HOME, XDG directories and libfm's configuration under the harness root: thumbnails on (libfm's
    /// defaults, written out so a changed default cannot turn the test into one that cannot fail), 128 px
    /// thumbnail view (what libfm shows by default: read from `thumbnails/normal`), no cursor blink (a still
    /// screen means pcmanfm has finished), no session bus (nothing outlives the test).
    ///
    /// `thumbnail_max` is libfm's default and Debian's /etc/xdg/libfm/libfm.conf value, 2048, on purpose.
    /// pcmanfm 1.3.2 loads its configuration a second time about 120 ms after starting, while its loader
    /// thread is already reading thumbnails (seen with an LD_PRELOAD shim logging fm_config_load_from_file
    /// and gdk-pixbuf calls: the reload came after 98 of 200), and a load applies the system file before
    /// the user's. With 0 here the value went 0 → 2048 → 0 under the loader, whose
    /// `if (thumbnail_max > 0) { gdk_pixbuf_get_file_info; if (w * h > thumbnail_max << 10) return NULL }`
    /// then saw 2048, then 0, refused a valid 96×128 thumbnail and drew that photo from its original: the
    /// one photo opened in about 1 run in 10 (the refused thumbnail's only call was get_file_info, w=96
    /// h=128). With the same value in both files the reload changes nothing.
    func fileManagerEnvironment(display: String) throws -> [String: String] {
        let home = harness.root.appendingPathComponent("home")
        let config = home.appendingPathComponent(".config")
        let runtime = harness.root.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: config.appendingPathComponent("libfm"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: config.appendingPathComponent("pcmanfm/default"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try """
            [config]
            thumbnail_local=1
            thumbnail_max=2048

            [ui]
            show_thumbnail=1
            thumbnail_size=128
            """.write(to: config.appendingPathComponent("libfm/libfm.conf"), atomically: true, encoding: .utf8)
        try """
            [ui]
            win_width=1024
            win_height=720
            view_mode=thumbnail
            """.write(to: config.appendingPathComponent("pcmanfm/default/pcmanfm.conf"), atomically: true, encoding: .utf8)
        try "gtk-cursor-blink = 0\n".write(to: home.appendingPathComponent(".gtkrc-2.0"), atomically: true, encoding: .utf8)
        return [
            "DISPLAY": ":" + display, "HOME": home.path, "XDG_CONFIG_HOME": config.path,
            "XDG_CACHE_HOME": harness.xdgCacheHome, "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_RUNTIME_DIR": runtime.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + runtime.appendingPathComponent("no-bus").path,
            "GIO_USE_VOLUME_MONITOR": "unix", "NO_AT_BRIDGE": "1",
        ]
    }

    func start(_ program: String, _ arguments: [String], environment: [String: String], log name: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let handle = try logHandle(name)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The names of a process's threads (/proc/PID/task/*/comm).
    func threadNames(of pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The whole X screen as 8-bit RGB (1280 × 800 × 3 bytes); empty if import failed.
    func screenshot(display: String) -> Data {
        Shell.run("import", ["-display", ":" + display, "-window", "root", "-depth", "8", "rgb:-"]).stdout
    }

    /// Pixels of the demo photos' skies (DemoLibrary.renderImage: blue 230 fading to 150 over green 120–220,
    /// red at most 170), counted in the top of the sky only: pcmanfm's icons and a selection hold a few hundred.
    func skyPixels(in rgb: Data) -> Int {
        var count = 0
        rgb.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset + 2 < bytes.count {
                let (r, g, b) = (Int(bytes[offset]), Int(bytes[offset + 1]), Int(bytes[offset + 2]))
                if b >= 190 && b - g >= 40 && b - r >= 60 { count += 1 }
                offset += 3
            }
        }
        return count
    }

    /// One line from a descriptor, waiting at most `timeout` (poll(2), so a silent Xvfb cannot hang the test).
    func readLine(_ descriptor: Int32, within timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var bytes: [UInt8] = []
        while bytes.last != UInt8(ascii: "\n") {
            let milliseconds = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard milliseconds > 0, poll(&request, 1, milliseconds) > 0 else { return nil }
            var byte: UInt8 = 0
            guard read(descriptor, &byte, 1) == 1 else { return nil }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func logHandle(_ name: String) throws -> FileHandle {
        let path = harness.root.appendingPathComponent(name).path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else { throw HarnessError("cannot write \(path)") }
        return handle
    }

    func log(_ name: String) -> String {
        String((try? String(contentsOfFile: harness.root.appendingPathComponent(name).path, encoding: .utf8))?.suffix(2000) ?? "")
    }
}
