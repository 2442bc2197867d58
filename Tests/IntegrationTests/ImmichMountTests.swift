// Immich end to end with the built binary: login (wrong key, then the right one from a file), import, a mount whose
// moments, regions and albums hold the right photos with the server's bytes, edits shown live, and the key nowhere.
import FlickrOrigin
import Foundation
import ImmichOrigin
import PhotoCatalog
import XCTest

final class ImmichMountTests: XCTestCase {
    static let key = "immich-it-key-4c2a9e7b1f"
    var harness: MountHarness!
    var origin: ImmichOriginServer!
    var configHome: String { harness.root.appendingPathComponent("config").path }
    var environment: [String: String] { ["XDG_CONFIG_HOME": configHome, "PHOTOFS_IMMICH_API_KEY": ""] }

    override func setUpWithError() throws {
        harness = try MountHarness(library: DemoLibrary.make(count: 1, scale: 16))
        origin = ImmichOriginServer(library: .generated(count: 30, scale: 8), keys: [ImmichMountTests.key: ["all"]])
        try origin.start()
    }

    override func tearDown() {
        harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0)
        origin.stop()
    }

    func keyFile(_ key: String) throws -> String {
        let path = harness.root.appendingPathComponent("key-\(key.count)").path
        try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    var visible: [ImmichOriginAsset] { origin.current.assets.filter { $0.type == "IMAGE" && !$0.isTrashed && $0.visibility != "locked" } }

    func testLoginImportMountBytesAndEdits() throws {
        // A wrong key: the server's message, and nothing stored.
        let wrong = harness.photofs(["login", "immich", "--server", origin.baseURL, "--api-key-file", try keyFile("wrong-key-00000")],
                                    environment: environment)
        XCTAssertNotEqual(wrong.status, 0)
        XCTAssertTrue(wrong.stderr.contains("Invalid API key"), wrong.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: configHome + "/photofs/immich-accounts.json"))

        let login = harness.photofs(["login", "immich", "--server", origin.baseURL, "--api-key-file", try keyFile(ImmichMountTests.key)],
                                    environment: environment)
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertTrue(login.text.contains("Ada Lovelace"), login.text)
        let accounts = harness.photofs(["accounts"], environment: environment)
        XCTAssertTrue(accounts.text.contains("immich"), accounts.text)

        let imported = harness.photofs(["import", "immich", harness.library], environment: environment)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.text.contains("video(s) left out"), imported.text)

        try harness.mount(environment: environment)
        // Every visible photo once under /moments, named by its local time.
        let moments = harness.files(under: "moments")
        XCTAssertEqual(moments.count, visible.count, moments.joined(separator: "\n"))
        let inodes = Set(moments.map(harness.inode(of:)))
        XCTAssertEqual(inodes.count, visible.count, "one inode per asset")
        for asset in visible {
            let stamp = ImmichMountTests.stamp(asset.localTime)
            let name = try XCTUnwrap(moments.first { URL(fileURLWithPath: $0).lastPathComponent.hasPrefix(stamp)
                && (try? harness.photoID(ofInode: harness.inode(of: $0))) == asset.id }, "\(asset.id) at \(stamp)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: name)), asset.bytes, "bytes equal the server's original")
        }
        // Regions: state, else country; the same inodes.
        let regionFiles = harness.files(under: "regions")
        XCTAssertEqual(Set(regionFiles.map(harness.inode(of:))), inodes)
        XCTAssertTrue(regionFiles.contains { $0.contains("/regions/California/Ada Lovelace/") }, regionFiles.joined(separator: "\n"))
        XCTAssertTrue(regionFiles.contains { $0.contains("/regions/Iceland/") })
        // Albums with odd and duplicate names, members as on the server.
        let albumFiles = harness.files(under: "albums")
        XCTAssertEqual(albumFiles.count, origin.current.albums.reduce(0) { $0 + $1.assetIDs.count }, albumFiles.joined(separator: "\n"))

        // Edits on the server, then an import: shown in the live mount within 2 s, no unchanged original fetched.
        let mine = visible.filter { $0.ownerID == origin.current.owner.id }
        let purged = mine[0]
        origin.purge(purged.id)
        let changed = mine[1]
        let newBytes = DemoLibrary.renderImage(width: 30, height: 20, png: false, seed: 7).data
        origin.edit(changed.id) { $0.bytes = newBytes }
        origin.resetCounters()
        let again = harness.photofs(["import", "immich", harness.library], environment: environment)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(origin.count("GET /api/assets/{id}/original"), 0)
        XCTAssertTrue(eventually(within: 2) { harness.files(under: "moments").count == visible.count }, "the deleted photo is gone")
        let changedFile = try XCTUnwrap(harness.files(under: "moments").first { (try? harness.photoID(ofInode: harness.inode(of: $0))) == changed.id })
        XCTAssertTrue(eventually(within: 2) { (try? Data(contentsOf: URL(fileURLWithPath: changedFile))) == newBytes }, "the new bytes")

        // The key: in no URL the server saw, no output, no log, no library file, no process list.
        XCTAssertFalse(origin.targets.contains { $0.contains(ImmichMountTests.key) })
        XCTAssertTrue(origin.headersSeen.contains { $0["x-api-key"] == ImmichMountTests.key })
        for text in [login.text, login.stderr, imported.text, imported.stderr, again.text, again.stderr, harness.daemonLog, accounts.text] {
            XCTAssertFalse(text.contains(ImmichMountTests.key), text)
        }
        for suffix in ["", "-wal"] {
            let data = (try? Data(contentsOf: URL(fileURLWithPath: harness.library + suffix))) ?? Data()
            XCTAssertNil(data.range(of: Data(ImmichMountTests.key.utf8)), "library\(suffix)")
        }
        let processes = Shell.run("ps", ["-eo", "args"]).text
        XCTAssertFalse(processes.contains(ImmichMountTests.key))
    }

    /// "2024-07-14 09.30.12", the moment prefix of a name.
    static func stamp(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH.mm.ss"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
