// Issue 10, acceptance 3 and the attribute half of 4: through the kernel, `getfattr -d` shows a photo's
// metadata and directories their comment; `rsync -aX` and `cp --preserve=xattr` copy it; `setfattr` fails with
// EROFS; the getxattr/listxattr calls keep their exact contract (size probe, ERANGE, ENODATA, EOPNOTSUPP,
// never ENOSYS); hostile values arrive byte for byte; `ls -l` costs the daemon two getxattr calls however
// many files it lists; and an edit at the origin shows after the next import.
import FlickrOrigin
import Foundation
import XCTest

/// libc's getxattr, listxattr, setxattr and removexattr: Swift's Glibc module leaves out <sys/xattr.h>, so
/// they are looked up in libc itself — the same functions rsync, cp and KDE call.
struct ExtendedAttributeCalls {
    typealias Get = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
    typealias List = @convention(c) (UnsafePointer<CChar>, UnsafeMutablePointer<CChar>?, Int) -> Int
    typealias Set = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32
    typealias Remove = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
    let get: Get
    let list: List
    let set: Set
    let remove: Remove

    init() throws {
        guard let libc = dlopen("libc.so.6", RTLD_NOW) else { throw HarnessError("cannot open libc.so.6") }
        func symbol<T>(_ name: String, _ type: T.Type) throws -> T {
            guard let pointer = dlsym(libc, name) else { throw HarnessError("libc has no \(name)") }
            return unsafeBitCast(pointer, to: type)
        }
        get = try symbol("getxattr", Get.self)
        list = try symbol("listxattr", List.self)
        set = try symbol("setxattr", Set.self)
        remove = try symbol("removexattr", Remove.self)
    }
}

final class ExtendedAttributeMountTests: XCTestCase {
    var harness: MountHarness!

    /// Descriptions set at the origin before the first import: text a terminal or a parser could trip on, and
    /// one far past what the kernel can return (30,000 three-byte characters: 90,000 bytes; an import keeps
    /// descriptions up to 65,536 characters).
    static let hostileDescription = "Zeile 1\nZeile 2 — ünïcödé 日本の夏 🌅\t\"quoted\" \\ back\r\n"
    static let longDescription = String(repeating: "日", count: 30_000)

    override func setUpWithError() throws {
        harness = try MountHarness(library: DemoLibrary.account(count: 24, scale: 8))
        let own = publicPhotos
        XCTAssertEqual(own.count, 2, "the fixture: two public photos of the account, in two albums each")
        // Titled, so that the file's name does not come from the description (an untitled photo's does).
        harness.origin.editPhoto(own[0].id) {
            $0.title = "Harbour at dawn"
            $0.description = Self.hostileDescription
            $0.tags = ["harbour", "y2019"]
        }
        harness.origin.editPhoto(own[1].id) { $0.title = "Long story"; $0.description = Self.longDescription }
        try harness.signIn()
        let imported = harness.importAccount()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        try harness.mount()
    }

    override func tearDown() { harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    /// The account's public photos (in the "Harbour walks" and "Trips" albums), upload order.
    var publicPhotos: [OriginPhoto] {
        DemoLibrary.stream(of: harness.origin).filter { $0.isPublic && !$0.isVideo }.sorted { $0.id < $1.id }
    }

    /// The photo's file under /moments.
    func momentsPath(of id: String) throws -> String {
        let files = try harness.mountedFilesByPhotoID(under: "moments")
        return harness.path(try XCTUnwrap(files[id]?.first, "no file for \(id)").path)
    }

    /// `getfattr --only-values -n NAME PATH`: the value's exact bytes.
    func value(_ name: String, _ path: String) -> CommandResult {
        Shell.run("getfattr", ["--only-values", "--absolute-names", "-n", name, path])
    }

    func testGetfattrShowsThePhotosMetadataAndDirectoriesTheirComment() throws {
        let photo = publicPhotos[0]
        let path = try momentsPath(of: photo.id)
        let dump = Shell.run("getfattr", ["-d", "--absolute-names", path])
        XCTAssertEqual(dump.status, 0, dump.stderr)
        for line in ["user.xdg.origin.url=\"https://www.flickr.com/photos/\(DemoLibrary.account.nsid)/\(photo.id)/\"",
                     "user.xdg.tags=\"harbour,y2019\"", "user.xdg.creator=\"Ansel Adams\"",
                     "user.photofs.id=\"\(photo.id)\"",
                     "user.photofs.albums=\"Harbour walks\\012Trips: 2019/2024\""] {
            XCTAssertTrue(dump.text.contains(line + "\n"), "\(line) not in:\n\(dump.text)")
        }
        let names = Set(dump.text.split(separator: "\n").compactMap { $0.split(separator: "=").first.map(String.init) })
        XCTAssertTrue(names.isSuperset(of: ["user.xdg.comment", "user.photofs.taken", "user.photofs.region",
                                            "user.photofs.place", "user.photofs.latitude", "user.photofs.longitude"]),
                      dump.text)
        let taken = try XCTUnwrap(photo.dateTaken)
        XCTAssertEqual(value("user.photofs.taken", path).text, taken.replacingOccurrences(of: " ", with: "T"))
        XCTAssertEqual(try XCTUnwrap(Double(value("user.photofs.latitude", path).text)), try XCTUnwrap(photo.latitude),
                       accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(Double(value("user.photofs.longitude", path).text)), try XCTUnwrap(photo.longitude),
                       accuracy: 1e-6)
        // The region is the directory the photo is filed under in /regions.
        let inRegions = try XCTUnwrap(try harness.mountedFilesByPhotoID(under: "regions")[photo.id]?.first)
        let regionDirectory = inRegions.path.split(separator: "/")[1]
        XCTAssertEqual(value("user.photofs.region", path).text, String(regionDirectory))
        let place = try XCTUnwrap(DemoLibrary.places.first { $0.placeID == photo.placeID })
        XCTAssertEqual(value("user.photofs.place", path).text, place.name)
        // The same photo under every tree: one inode, the same attributes.
        for file in try XCTUnwrap(try harness.mountedFilesByPhotoID()[photo.id]) {
            XCTAssertEqual(Shell.run("getfattr", ["-d", harness.path(file.path)]).text.split(separator: "\n").dropFirst(),
                           dump.text.split(separator: "\n").dropFirst(), file.path)
        }

        let album = Shell.run("getfattr", ["-d", "--absolute-names", harness.path("albums/Harbour walks")])
        XCTAssertTrue(album.text.contains("user.xdg.comment=\"Mornings by the water\"\n"), album.text)
        let region = value("user.xdg.comment", harness.path("regions/" + regionDirectory))
        XCTAssertEqual(region.status, 0, region.stderr)
        XCTAssertTrue(region.text.contains(place.name), region.text)
        for bare in ["", "moments", "albums/Family"] {
            let none = Shell.run("getfattr", ["-d", "--absolute-names", harness.path(bare)])
            XCTAssertEqual(none.status, 0, none.stderr)
            XCTAssertEqual(none.text, "", "\(bare): nothing to show")
        }
    }

    func testHostileValuesArriveByteForByteAndLongOnesAreCutAtXATTR_SIZE_MAX() throws {
        let hostile = value("user.xdg.comment", try momentsPath(of: publicPhotos[0].id))
        XCTAssertEqual(hostile.status, 0, hostile.stderr)
        XCTAssertEqual(hostile.stdout, Data(Self.hostileDescription.utf8))
        let long = value("user.xdg.comment", try momentsPath(of: publicPhotos[1].id))
        XCTAssertEqual(long.status, 0, long.stderr)
        // 65,536 is not a multiple of 3: the cut keeps whole characters, 21,845 of them.
        XCTAssertEqual(long.stdout.count, 65_535)
        XCTAssertEqual(long.text, String(repeating: "日", count: 21_845))
    }

    /// getxattr(2) and calls.list(2) called directly, as rsync, cp and KDE do, from this process (the daemon
    /// is another process): every branch of the contract, and no ENOSYS.
    func testTheSystemCallsKeepTheirContract() throws {
        let path = try momentsPath(of: publicPhotos[0].id)
        let calls = try ExtendedAttributeCalls()
        func get(_ name: String, _ size: Int) -> (Int, Int32, [UInt8]) {
            var buffer = [UInt8](repeating: 0, count: max(size, 1))
            let (result, code) = buffer.withUnsafeMutableBytes { bytes in
                let result = calls.get(path, name, size == 0 ? nil : bytes.baseAddress, size)
                return (result, errno)
            }
            return (result, result < 0 ? code : 0, Array(buffer.prefix(max(result, 0))))
        }
        let comment = Array(Self.hostileDescription.utf8)
        XCTAssertEqual(get("user.xdg.comment", 0).0, comment.count, "a size-0 probe returns the length")
        XCTAssertEqual(get("user.xdg.comment", comment.count - 1).1, ERANGE, "a short buffer")
        XCTAssertEqual(get("user.xdg.comment", 1).1, ERANGE)
        let exact = get("user.xdg.comment", comment.count)
        XCTAssertEqual(exact.0, comment.count)
        XCTAssertEqual(exact.2, comment)
        XCTAssertEqual(get("user.xdg.comment", 65_536).2, comment, "a bigger buffer")
        for name in ["user.nothing", "user.baloo.rating", "user.xdg.comment.x"] {
            XCTAssertEqual(get(name, 0).1, ENODATA, name)
            XCTAssertEqual(get(name, 100).1, ENODATA, name)
        }
        for name in ["security.selinux", "system.posix_acl_access", "trusted.x", "security.capability"] {
            XCTAssertEqual(get(name, 0).1, EOPNOTSUPP, name)
            XCTAssertEqual(get(name, 100).1, EOPNOTSUPP, name)
        }

        let length = calls.list(path, nil, 0)
        XCTAssertGreaterThan(length, 0)
        var short = [CChar](repeating: 0, count: length - 1)
        XCTAssertEqual(calls.list(path, &short, length - 1), -1)
        XCTAssertEqual(errno, ERANGE)
        var names = [CChar](repeating: 0, count: length)
        XCTAssertEqual(calls.list(path, &names, length), length)
        let listed = names.split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        XCTAssertEqual(listed, ["user.xdg.origin.url", "user.xdg.comment", "user.xdg.tags", "user.xdg.creator",
                                "user.photofs.id", "user.photofs.taken", "user.photofs.region", "user.photofs.place",
                                "user.photofs.latitude", "user.photofs.longitude", "user.photofs.albums"])
        for name in listed { XCTAssertGreaterThan(get(name, 0).0, 0, "every listed name has a value: \(name)") }
        XCTAssertEqual(calls.list(harness.mountpoint, nil, 0), 0, "the root carries nothing")
        XCTAssertFalse(harness.daemonLog.contains("request failed"), "no expected answer is logged as a failure")
    }

    func testWritesFailWithEROFS() throws {
        let path = try momentsPath(of: publicPhotos[0].id)
        for arguments in [["-n", "user.x", "-v", "y", path], ["-x", "user.xdg.comment", path],
                          ["-n", "user.x", "-v", "y", harness.path("albums/Harbour walks")]] {
            let result = Shell.run("setfattr", arguments)
            XCTAssertNotEqual(result.status, 0)
            XCTAssertTrue(result.stderr.contains("Read-only file system"), result.stderr)
        }
        let calls = try ExtendedAttributeCalls()
        XCTAssertEqual(calls.set(path, "user.x", "y", 1, 0), -1)
        XCTAssertEqual(errno, EROFS)
        XCTAssertEqual(calls.remove(path, "user.xdg.comment"), -1)
        XCTAssertEqual(errno, EROFS)
        XCTAssertEqual(value("user.xdg.comment", path).stdout, Data(Self.hostileDescription.utf8), "unchanged")
    }

    /// ext4 (the test's /tmp) holds at most one block of attributes a file, so the copies are of the photo
    /// whose values are short; the long description is checked on the mount above.
    func testRsyncAndCpCopyTheAttributes() throws {
        let photo = publicPhotos[0]
        let path = try momentsPath(of: photo.id)
        let original = Shell.run("getfattr", ["-d", "--absolute-names", path])
        XCTAssertTrue(original.text.contains("user.xdg.comment="), original.text)
        let copies = harness.root.appendingPathComponent("copies").path
        try FileManager.default.createDirectory(atPath: copies, withIntermediateDirectories: true)

        let rsync = Shell.run("rsync", ["-aX", path, copies + "/rsync.jpg"])
        XCTAssertEqual(rsync.status, 0, rsync.stderr)
        let cp = Shell.run("cp", ["--preserve=xattr", path, copies + "/cp.jpg"])
        XCTAssertEqual(cp.status, 0, cp.stderr)
        // The album directory alone: it also holds the photo whose 64 KiB description ext4 cannot store.
        let album = Shell.run("rsync", ["-aX", "--exclude=Harbour walks/*", harness.path("albums/Harbour walks"), copies + "/"])
        XCTAssertEqual(album.status, 0, album.stderr)
        func attributes(_ dump: CommandResult) -> [Substring] { dump.text.split(separator: "\n").dropFirst().map { $0 } }
        for copy in ["rsync.jpg", "cp.jpg"] {
            let copied = Shell.run("getfattr", ["-d", "--absolute-names", copies + "/" + copy])
            XCTAssertEqual(attributes(copied), attributes(original), copy)
        }
        let directory = Shell.run("getfattr", ["-d", "--absolute-names", copies + "/Harbour walks"])
        XCTAssertTrue(directory.text.contains("user.xdg.comment=\"Mornings by the water\"\n"), directory.text)
    }

    /// GNU `ls -l` asks every file for security.selinux and system.posix_acl_access, and the kernel caches
    /// no attribute. Answered EOPNOTSUPP, `ls` remembers "unsupported" for the device after the first: the
    /// daemon sees 2 getxattr per `ls -l`, not 2 per file (libfuse's debug log names every request).
    func testLsLongAsksTheDaemonTwiceWhateverTheNumberOfFiles() throws {
        XCTAssertEqual(harness.unmount(), 0)
        try harness.mount(extra: ["-o", "debug"])
        let entries = harness.files().count
        XCTAssertGreaterThanOrEqual(entries, 20, "every tree of the mount")
        func getxattrRequests() -> Int { harness.daemonLog.components(separatedBy: "opcode: GETXATTR").count - 1 }
        let listing = Shell.run("ls", ["-lR", harness.mountpoint])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        // libfuse logs each request as it reads it, before the reply: complete when ls has its answers.
        let before = getxattrRequests()
        XCTAssertEqual(Shell.run("ls", ["-lR", harness.mountpoint]).status, 0)
        // ENODATA instead would cost 2 a file (ls caches only "unsupported"): over \(2 * entries) here.
        XCTAssertEqual(getxattrRequests() - before, 2, "\(entries) files listed")
    }

    /// Acceptance 4, attributes: an edit at the origin shows after the next import, in a live mount.
    func testAnEditAtTheOriginShowsAfterTheNextImport() throws {
        let photo = publicPhotos[0]
        let path = try momentsPath(of: photo.id)
        XCTAssertEqual(value("user.xdg.tags", path).text, "harbour,y2019")
        harness.origin.clock.advance(by: 3600)
        harness.origin.editPhoto(photo.id) { $0.description = "Edited at the origin"; $0.tags = ["edited"] }
        XCTAssertEqual(value("user.xdg.comment", path).stdout, Data(Self.hostileDescription.utf8), "not before the import")
        let second = harness.importAccount()
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(eventually(within: 5) { value("user.xdg.comment", path).text == "Edited at the origin" },
                      "\(value("user.xdg.comment", path))")
        XCTAssertEqual(value("user.xdg.tags", path).text, "edited")
        XCTAssertEqual(value("user.photofs.id", path).text, photo.id)
    }
}
