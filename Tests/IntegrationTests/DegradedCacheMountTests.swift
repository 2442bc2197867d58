// A live mount whose cache cannot keep photos: its disk (a small tmpfs) nearly full, or its directory
// removed under the daemon. Every photo still reads whole, nothing partial stays, one log line says so.
import FlickrOrigin
import Foundation
import TestRequirements
import XCTest

final class DegradedCacheMountTests: MountedTestCase {
    static let library = DemoLibrary.make(count: 12, scale: 4)
    override class var originLibrary: OriginLibrary { DegradedCacheMountTests.library }
    override class var mountsInSetUp: Bool { false }
    private var tmpfs: String?

    override func tearDown() {
        // The daemon first (it holds files in the cache), then the tmpfs, then the harness removes the rest.
        _ = harness.unmount()
        if let tmpfs, umount(tmpfs) != 0 { umount2(tmpfs, Int32(MNT_DETACH)) }
        super.tearDown()
    }

    var photos: [OriginPhoto] { DegradedCacheMountTests.library.photos }

    /// Every photo file in the mount (all three trees), compared with `cmp` against the origin's bytes.
    func assertEveryPhotoReadsWhole(file: StaticString = #filePath, line: UInt = #line) throws {
        let files = harness.files()
        XCTAssertGreaterThanOrEqual(files.count, photos.count, file: file, line: line)
        let expected = harness.root.appendingPathComponent("expected")
        try FileManager.default.createDirectory(at: expected, withIntermediateDirectories: true)
        var seen = Set<String>()
        for path in files {
            let id = try XCTUnwrap(try harness.photoID(ofInode: harness.inode(of: path)), path, file: file, line: line)
            let reference = expected.appendingPathComponent(id).path
            if !FileManager.default.fileExists(atPath: reference) {
                try XCTUnwrap(harness.origin.imageBytes(photoID: id)).write(to: URL(fileURLWithPath: reference))
            }
            let compared = Shell.run("cmp", [reference, path])
            XCTAssertEqual(compared.status, 0, "\(path): \(compared.text)\(compared.stderr)", file: file, line: line)
            seen.insert(id)
        }
        XCTAssertEqual(seen.count, photos.count, file: file, line: line)
    }

    func names(in relative: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: harness.cacheDirectory + "/" + relative)) ?? []).sorted()
    }

    func logLines(containing text: String) -> [Substring] {
        harness.daemonLog.split(separator: "\n").filter { $0.contains(text) }
    }

    /// Every file in `originals/` is a whole photo: nothing partial was renamed into place.
    func assertNothingPartialIsCached(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(names(in: "tmp").filter { $0.hasSuffix(".part") }, [], file: file, line: line)
        let wholePhotos = Set(photos.map(\.image.data))
        for name in names(in: "originals") {
            let data = try Data(contentsOf: URL(fileURLWithPath: harness.cacheDirectory + "/originals/" + name))
            XCTAssertTrue(wholePhotos.contains(data), "originals/\(name) is not a whole photo", file: file, line: line)
        }
    }

    func testANearlyFullCacheDiskServesEveryPhotoWhole() throws {
        try TestRequirement.root("to mount a 4 MiB tmpfs as the cache directory")
        let cache = harness.cacheDirectory
        XCTAssertEqual(mkdir(cache, 0o700), 0)
        guard mount("tmpfs", cache, "tmpfs", 0, "size=4m,mode=0700") == 0 else {
            throw XCTSkip("needs CAP_SYS_ADMIN to mount a tmpfs (root in a container without it?): \(String(cString: strerror(errno)))")
        }
        tmpfs = cache
        // The tmpfs root is the cache directory: tag it as photofs's, then fill it with a file of someone
        // else's (which photofs must leave alone) until it is full: the smallest photos are under 2 KB.
        try Data("Signature: 8a477f597d28d172789f06886806bc55\n# photofs\n".utf8)
            .write(to: URL(fileURLWithPath: cache + "/CACHEDIR.TAG"))
        let filler = cache + "/filler.bin"
        let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        var info = statvfs()
        while write(fd, chunk, chunk.count) > 0 {}
        XCTAssertEqual(errno, ENOSPC)
        close(fd)
        XCTAssertEqual(statvfs(cache, &info), 0)
        XCTAssertEqual(info.f_bavail, 0)
        let fillerSize = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: filler)[.size] as? Int)

        try harness.mount()
        try assertEveryPhotoReadsWhole()
        // Twice: the second pass must not be served from anything half-kept by the first.
        Shell.run("sh", ["-c", "echo 3 > /proc/sys/vm/drop_caches"])
        try assertEveryPhotoReadsWhole()

        try assertNothingPartialIsCached()
        XCTAssertEqual(names(in: "originals"), [])
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: filler)[.size] as? Int, fillerSize)
        XCTAssertEqual(logLines(containing: "cache degraded").count, 1, harness.daemonLog)
        XCTAssertTrue(harness.isMounted)
    }

    func testACacheDirectoryRemovedUnderTheMountServesEveryPhotoWhole() throws {
        try harness.mount(extra: ["--prefetch", "0"])
        // Some photos cached first.
        for index in 0..<3 {
            let path = try XCTUnwrap(paths(of: photos[index].id).first)
            XCTAssertEqual(Shell.run("cat", [path]).stdout, photos[index].image.data)
        }
        // One photo arrives slowly; the directory goes while it is downloading.
        let slow = photos[5]
        harness.origin.setRate(photoID: slow.id, max(8_000, slow.image.data.count / 3))
        let slowPath = try XCTUnwrap(paths(of: slow.id).first)
        let output = harness.root.appendingPathComponent("slow.out")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [slowPath]
        reader.standardOutput = try FileHandle(forWritingTo: output)
        reader.standardError = FileHandle.nullDevice
        try reader.run()
        let deadline = Date().addingTimeInterval(10)
        while names(in: "tmp").isEmpty && Date() < deadline { usleep(10_000) }
        XCTAssertFalse(names(in: "tmp").isEmpty, "the slow download never started")
        XCTAssertEqual(Shell.run("rm", ["-rf", harness.cacheDirectory]).status, 0)
        reader.waitUntilExit()
        XCTAssertEqual(reader.terminationStatus, 0)
        XCTAssertEqual(try Data(contentsOf: output), slow.image.data)
        harness.origin.setRate(photoID: slow.id, nil)

        try assertEveryPhotoReadsWhole()
        try assertNothingPartialIsCached()
        XCTAssertFalse(names(in: "originals").isEmpty, "the re-created directory should cache again")
        XCTAssertTrue(FileManager.default.fileExists(atPath: harness.cacheDirectory + "/CACHEDIR.TAG"))
        XCTAssertEqual(logLines(containing: "cache degraded").count, 1, harness.daemonLog)
        XCTAssertEqual(logLines(containing: "cache directory re-created").count, 1, harness.daemonLog)
        XCTAssertEqual(logLines(containing: "cache resumed").count, 1, harness.daemonLog)
        XCTAssertTrue(harness.isMounted)
    }

    /// Paths of a photo's file in the mount (it appears in several trees).
    func paths(of photoID: String) throws -> [String] {
        try harness.files().filter { try harness.photoID(ofInode: harness.inode(of: $0)) == photoID }
    }
}
