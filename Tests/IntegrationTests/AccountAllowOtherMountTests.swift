// Issue 9, acceptance 6: mounted with `-o allow_other`, the kernel enforces the photos' modes
// (default_permissions): another local user (nobody) reads public photos and lists /albums, and gets
// "Permission denied" on a private photo and on a directory of only private photos; root, the mounting user,
// reads both.
import FlickrOrigin
import Foundation
import TestRequirements
import XCTest

final class AccountAllowOtherMountTests: XCTestCase {
    var harness: MountHarness!

    override func setUpWithError() throws {
        try TestRequirement.root("to run commands as nobody (setpriv) and to mount with allow_other without user_allow_other")
        harness = try MountHarness(library: DemoLibrary.account(count: 60, scale: 8))
        // nobody must be able to reach the mountpoint: /tmp/photofs-it-…/mnt, each directory searchable.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: harness.root.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: harness.mountpoint)
        try harness.signIn()
        let imported = harness.importAccount()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        try harness.mount(extra: ["-o", "allow_other"])
    }

    override func tearDown() { harness?.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    /// Runs a command as nobody (uid and gid 65534, no supplementary groups).
    func asNobody(_ arguments: [String]) -> CommandResult {
        Shell.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + arguments)
    }

    func testAnotherUserReadsPublicPhotosAndIsDeniedPrivateOnes() throws {
        XCTAssertEqual(asNobody(["id", "-u"]).text, "65534\n", "setpriv switches to nobody")
        let stream = DemoLibrary.stream(of: harness.origin)
        let byID = try harness.mountedFilesByPhotoID(under: "albums")
        // A public photo and a friends-only one side by side in Harbour walks (a 0555 directory), so the
        // refusal comes from the photo's own mode; and Family, a directory of only private photos.
        let publicPhoto = try XCTUnwrap(stream.first { $0.isPublic && byID[$0.id]?.contains { $0.path.hasPrefix("albums/Harbour walks/") } == true })
        let privatePhoto = try XCTUnwrap(stream.first { $0.title == "The party" })
        let publicPath = try XCTUnwrap(byID[publicPhoto.id]?.first { $0.path.hasPrefix("albums/Harbour walks/") }).path
        let privatePath = try XCTUnwrap(byID[privatePhoto.id]?.first).path
        XCTAssertTrue(privatePath.hasPrefix("albums/Harbour walks/"), privatePath)
        let familyFile = try XCTUnwrap(harness.mountedFiles(under: "albums/Family").first).path

        // nobody: public photo read whole, /albums listed.
        let readPublic = asNobody(["cat", harness.path(publicPath)])
        XCTAssertEqual(readPublic.status, 0, readPublic.stderr)
        XCTAssertEqual(readPublic.stdout, publicPhoto.image.data)
        let albums = asNobody(["ls", "-1", harness.path("albums")])
        XCTAssertEqual(albums.status, 0, albums.stderr)
        XCTAssertEqual(Set(albums.text.split(separator: "\n").map(String.init)), ["Family", "Harbour walks", "Trips: 2019\u{FF0F}2024"])
        let listedHarbour = asNobody(["ls", "-1", harness.path("albums/Harbour walks")])
        XCTAssertEqual(listedHarbour.status, 0, listedHarbour.stderr)
        XCTAssertTrue(listedHarbour.text.contains((privatePath as NSString).lastPathComponent), "names are not secret in a 0555 directory")

        // nobody: EACCES on the private photo, on listing Family and on a photo inside it.
        for (what, arguments) in [("the private photo", ["cat", harness.path(privatePath)]),
                                  ("a 0500 directory", ["ls", harness.path("albums/Family")]),
                                  ("a photo in a 0500 directory", ["cat", harness.path(familyFile)])] {
            let denied = asNobody(arguments)
            XCTAssertNotEqual(denied.status, 0, what)
            XCTAssertTrue(denied.stderr.contains("Permission denied"), "\(what): \(denied.stderr)")
            XCTAssertTrue(denied.stdout.isEmpty, "\(what): nothing read or listed")
        }

        // root, the mounting user, reads both and lists Family.
        let rootPrivate = Shell.run("cat", [harness.path(privatePath)])
        XCTAssertEqual(rootPrivate.status, 0, rootPrivate.stderr)
        XCTAssertEqual(rootPrivate.stdout, privatePhoto.image.data)
        XCTAssertEqual(Shell.run("cat", [harness.path(publicPath)]).stdout, publicPhoto.image.data)
        let family = Shell.run("ls", ["-1", harness.path("albums/Family")])
        XCTAssertEqual(family.status, 0, family.stderr)
        XCTAssertEqual(family.text.split(separator: "\n").count, 3)
    }
}
