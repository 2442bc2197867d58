// The mounted tree as ls, find, stat and cat see it: every photo once per tree, exact sizes, valid names.
import FlickrOrigin
import Foundation
import XCTest

final class MountedTreeTests: MountedTestCase {
    static let library = DemoLibrary.make(count: 48, scale: 4)
    override class var originLibrary: OriginLibrary { MountedTreeTests.library }

    func testEveryPhotoAppearsOnceUnderMomentsAndOnceUnderRegions() throws {
        let expected = Set(MountedTreeTests.library.photos.map(\.id))
        for tree in ["moments", "regions"] {
            let files = harness.files(under: tree)
            XCTAssertEqual(files.count, expected.count, tree)
            let ids = try files.map { try harness.photoID(ofInode: harness.inode(of: $0)) }
            XCTAssertEqual(Set(ids.compactMap { $0 }), expected, tree)
            XCTAssertEqual(Set(ids.compactMap { $0 }).count, files.count, "\(tree) shows a photo twice")
        }
    }

    func testPlacesOfOneRegionAreOneDirectory() throws {
        let regions = try FileManager.default.contentsOfDirectory(atPath: harness.path("regions")).sorted()
        XCTAssertEqual(regions, ["Bayern", "California", "Hokkaidō", "Iceland", "New South Wales", "Île-de-France"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: harness.path("moments")).sorted(),
                       ["2019", "2020", "2021", "2022", "2023", "2024"])
    }

    func testStatSizeEqualsBytesReadEqualsOriginBytes() throws {
        for file in harness.files(under: "regions") {
            let id = try XCTUnwrap(try harness.photoID(ofInode: harness.inode(of: file)))
            let expected = try XCTUnwrap(harness.origin.imageBytes(photoID: id))
            let statSize = Shell.run("stat", ["-c", "%s", file]).text.trimmingCharacters(in: .whitespacesAndNewlines)
            let read = Shell.run("cat", [file])
            XCTAssertEqual(read.status, 0, read.stderr)
            XCTAssertEqual(statSize, String(expected.count), file)
            XCTAssertEqual(read.stdout, expected, file)
        }
    }

    func testNamesAreValidVisibleAndUniqueForOddTitles() throws {
        let listing = Shell.run("find", [harness.mountpoint, "-mindepth", "1", "-print0"])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        var seen: [String: Set<String>] = [:]
        for path in listing.stdout.split(separator: 0).map({ String(decoding: $0, as: UTF8.self) }) {
            let url = URL(fileURLWithPath: path)
            let name = url.lastPathComponent
            XCTAssertLessThanOrEqual(name.utf8.count, 255, name)
            XCTAssertFalse(name.hasPrefix("."), name)
            XCTAssertFalse(name.hasPrefix(" ") || name.hasSuffix(" "), name)
            XCTAssertFalse(name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "\u{202E}" }, name)
            let key = name.lowercased()
            XCTAssertFalse(seen[url.deletingLastPathComponent().path, default: []].contains(key), "duplicate \(name)")
            seen[url.deletingLastPathComponent().path, default: []].insert(key)
        }
        // The odd titles of the demo library really are in there.
        let names = Set(harness.files(under: "regions").map { URL(fileURLWithPath: $0).lastPathComponent })
        for expected in ["a／b／c.jpg", "nul inside.jpg", "hidden.jpg", "Untitled.jpg", "Unknown.jpg", "reportgpj.exe.jpg",
                         "Only the description names this one.jpg"] {
            XCTAssertTrue(names.contains(expected) || names.contains { $0.hasPrefix(expected.dropLast(4)) }, expected)
        }
        XCTAssertTrue(names.contains { $0.utf8.count >= 250 && $0.hasSuffix("é.jpg") }, "the 300-é title is cut, not dropped")
    }

    func testAttributesAreThoseOfAReadOnlyPhotoLibrary() throws {
        let file = try XCTUnwrap(harness.files(under: "moments/2021").first)
        let fields = Shell.run("stat", ["-c", "%a %U %h %Y", file]).text.split(separator: " ")
        XCTAssertEqual(fields[0], "444")
        XCTAssertEqual(fields[1], "root")
        XCTAssertEqual(fields[2], "3", "a photo has a name in /regions, /moments and /events")
        // The name starts with the date taken, read as UTC; the mtime is that moment.
        let name = URL(fileURLWithPath: file).lastPathComponent
        let stamp = Shell.run("date", ["-u", "-d", "@" + fields[3].trimmingCharacters(in: .whitespacesAndNewlines),
                                       "+%Y-%m-%d %H.%M.%S"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(name.hasPrefix(stamp), "\(name) vs \(stamp)")
        XCTAssertEqual(Shell.run("stat", ["-c", "%a", harness.path("regions")]).text, "555\n")
        // Listing the root first (readdirplus fills the kernel's attributes) must not change what stat says.
        Shell.run("ls", ["-la", harness.mountpoint])
        XCTAssertEqual(Shell.run("stat", ["-c", "%h", harness.path("regions")]).text, "8\n", "2 + 6 regions")
        XCTAssertEqual(Shell.run("stat", ["-c", "%h", harness.path("moments")]).text, "8\n", "2 + 6 years")
        let lsLR = Shell.run("ls", ["-lR", harness.mountpoint])
        XCTAssertEqual(lsLR.status, 0, lsLR.stderr)
        XCTAssertEqual(harness.origin.requestCount(method: "GET"), 0, "listing and stat must not download")
    }

    func testTheSamePhotoIsTheSameInodeEverywhere() throws {
        let regionFile = try XCTUnwrap(harness.files(under: "regions").first)
        let inode = harness.inode(of: regionFile)
        let matches = Shell.run("find", [harness.mountpoint, "-inum", String(inode)]).text.split(separator: "\n")
        XCTAssertEqual(matches.count, 3, "/regions, /moments, /events: \(matches)")
    }

    func testMissingNamesAreENOENTAndPhotosAreNotDirectories() throws {
        let missing = Shell.run("stat", [harness.path("regions/Nowhere")])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("No such file or directory"), missing.stderr)
        let file = try XCTUnwrap(harness.files(under: "regions").first)
        let notDir = Shell.run("ls", [file + "/x"])
        XCTAssertTrue(notDir.stderr.contains("Not a directory"), notDir.stderr)
    }
}
