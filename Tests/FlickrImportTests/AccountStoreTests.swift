// The accounts file on a real disk: modes checked with stat, atomic replacement, several accounts, picking
// one, signing out, and hand-edited, truncated or wrongly typed files ending in clear errors without secrets.
@testable import FlickrImport
import Foundation
import OAuth1
import XCTest

final class AccountStoreTests: XCTestCase {
    var root: URL!
    var directory: String { root.appendingPathComponent("config/photofs").path }

    override func setUpWithError() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("photofs-accounts-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: root) }

    static func account(_ nsid: String, _ username: String, endpoint: String = "https://api.flickr.com/services/rest/",
                        token: String = "72157626318069415-087bfc7b5816092c") -> FlickrAccount {
        FlickrAccount(nsid: nsid, username: username, fullname: "Full \(username)", restEndpoint: endpoint,
                      oauthEndpoint: "https://www.flickr.com/services/oauth/",
                      consumer: OAuthConsumer(key: "consumer-key-for-tests-01", secret: "consumer-secret-zz9"),
                      token: OAuthToken(token: token, secret: "token-secret-\(nsid.prefix(4))x"), signedInAt: 1_700_000_000)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, path)
        return info.st_mode & 0o7777
    }

    func testTheDefaultDirectoryFollowsXDG() {
        XCTAssertEqual(FlickrAccountStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "/x/conf", "HOME": "/home/u"]), "/x/conf/photofs")
        XCTAssertEqual(FlickrAccountStore.defaultDirectory(environment: ["HOME": "/home/u"]), "/home/u/.config/photofs")
        XCTAssertEqual(FlickrAccountStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"]),
                       "/home/u/.config/photofs", "a relative XDG_CONFIG_HOME is ignored, as the spec says")
        XCTAssertEqual(FlickrAccountStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "", "HOME": "/home/u"]), "/home/u/.config/photofs")
    }

    func testSavingMakesA0600FileInA0700DirectoryAndReadsBack() throws {
        umask(0o022) // the usual umask: what a careless write would turn into 0644 / 0755
        let store = FlickrAccountStore(directory: directory)
        XCTAssertEqual(try store.load(), [])
        let ansel = AccountStoreTests.account("10000001@N01", "ansel")
        try store.save(ansel)
        XCTAssertEqual(mode(directory), 0o700)
        XCTAssertEqual(mode(root.appendingPathComponent("config").path), 0o700, "a parent photofs made is 0700 too (XDG)")
        XCTAssertEqual(mode(store.path), 0o600)
        XCTAssertEqual(try store.load(), [ansel])
        // Nothing but the file is left behind (the temporary file was renamed, not copied).
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [FlickrAccountStore.fileName])
        // It is JSON a person can read, with the fields named.
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        XCTAssertTrue(text.contains("\"nsid\" : \"10000001@N01\""), text)
    }

    func testSeveralAccountsAreKeptPickedAndSignedOut() throws {
        let store = FlickrAccountStore(directory: directory)
        let ansel = AccountStoreTests.account("10000001@N01", "ansel")
        let dorothea = AccountStoreTests.account("20000002@N02", "Dorothea")
        let anselAtHome = AccountStoreTests.account("10000001@N01", "ansel", endpoint: "http://127.0.0.1:8080/services/rest/")
        try store.save(ansel)
        XCTAssertEqual(try store.account(nil), ansel, "one account needs no --account")
        try store.save(dorothea)
        try store.save(anselAtHome)
        XCTAssertEqual(try store.load().count, 3)

        XCTAssertThrowsError(try store.account(nil)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("3 Flickr accounts are signed in"), text)
            XCTAssertTrue(text.contains("--account NSID|USERNAME"), text)
            XCTAssertTrue(text.contains("Dorothea (20000002@N02) at https://api.flickr.com/services/rest/"), text)
            self.assertNoSecret(text)
        }
        XCTAssertEqual(try store.account("20000002@N02"), dorothea)
        XCTAssertEqual(try store.account("dorothea"), dorothea, "usernames match in any case")
        XCTAssertThrowsError(try store.account("ansel")) { error in
            XCTAssertTrue("\(error)".contains("give --endpoint too"), "\(error)")
        }
        XCTAssertEqual(try store.account("ansel", endpoint: "http://127.0.0.1:8080/services/rest"), anselAtHome)
        XCTAssertThrowsError(try store.account("nobody")) { error in
            XCTAssertTrue("\(error)".contains("no signed-in Flickr account is \"nobody\""), "\(error)")
            XCTAssertTrue("\(error)".contains("ansel (10000001@N01)"), "\(error)")
        }

        // Signing in again replaces the account's token instead of adding a fourth.
        let refreshed = AccountStoreTests.account("20000002@N02", "Dorothea", token: "72157000000000000-aaaaaaaaaaaaaaaa")
        try store.save(refreshed)
        XCTAssertEqual(try store.load(), [ansel, anselAtHome, refreshed])

        XCTAssertEqual(try store.remove("dorothea"), refreshed)
        XCTAssertEqual(try store.load(), [ansel, anselAtHome])
        XCTAssertEqual(mode(store.path), 0o600, "still 0600 after a rewrite")
        XCTAssertEqual(try store.remove("ansel", endpoint: "https://api.flickr.com/services/rest/"), ansel)
        XCTAssertEqual(try store.remove(nil), anselAtHome, "the only one left needs no --account")
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path), "no account left: no file")
        XCTAssertThrowsError(try store.remove(nil)) { error in
            XCTAssertTrue("\(error)".contains("no Flickr account is signed in"), "\(error)")
        }
    }

    func testAWideDirectoryIsRepairedAndAWideFileRefused() throws {
        let notices = NoticeLog()
        let store = FlickrAccountStore(directory: directory, notice: { notices.append($0) })
        try store.save(AccountStoreTests.account("10000001@N01", "ansel"))
        XCTAssertEqual(chmod(directory, 0o755), 0)
        XCTAssertEqual(try store.load().count, 1)
        XCTAssertEqual(mode(directory), 0o700)
        XCTAssertEqual(notices.lines, ["\(directory) was mode 0755; repaired to 0700 so that only you can enter it"])

        XCTAssertEqual(chmod(store.path, 0o644), 0)
        XCTAssertThrowsError(try store.load()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("is mode 0644: other users may have read its secrets"), text)
            XCTAssertTrue(text.contains("chmod 600"), text)
            self.assertNoSecret(text)
        }
        XCTAssertThrowsError(try store.save(AccountStoreTests.account("20000002@N02", "d")), "nor written over")
        XCTAssertEqual(mode(store.path), 0o644, "left for the user to look at, not silently fixed")
        XCTAssertEqual(chmod(store.path, 0o600), 0)
        XCTAssertEqual(try store.load().count, 1)
    }

    func testASymbolicLinkOrADirectoryInThePlaceOfTheFileIsRefused() throws {
        let store = FlickrAccountStore(directory: directory)
        try store.save(AccountStoreTests.account("10000001@N01", "ansel"))
        let elsewhere = root.appendingPathComponent("elsewhere.json").path
        XCTAssertEqual(rename(store.path, elsewhere), 0)
        XCTAssertEqual(symlink(elsewhere, store.path), 0)
        XCTAssertThrowsError(try store.load()) { error in XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)") }
        XCTAssertEqual(unlink(store.path), 0)
        XCTAssertEqual(mkdir(store.path, 0o700), 0)
        XCTAssertThrowsError(try store.load()) { error in XCTAssertTrue("\(error)".contains("not a regular file"), "\(error)") }
    }

    /// Hand edits gone wrong, truncated writes, wrong types, absurd values: each is a clear error naming the
    /// entry and the field, and never quotes a secret.
    func testHostileFilesEndInClearErrors() throws {
        let store = FlickrAccountStore(directory: directory)
        try store.save(AccountStoreTests.account("10000001@N01", "ansel"))
        let good = try String(contentsOfFile: store.path, encoding: .utf8)
        let cases: [(String, String)] = [
            ("", "is not valid JSON"),
            (String(good.prefix(good.count / 2)), "is not valid JSON"),
            ("[]", "holds an array, not an object"),
            ("{\"accounts\": []}", "no numeric \"version\""),
            ("{\"version\": \"1\", \"accounts\": []}", "no numeric \"version\""),
            ("{\"version\": 2, \"accounts\": []}", "is version 2 of the format"),
            ("{\"version\": 1e999, \"accounts\": []}", "no numeric \"version\""),
            ("{\"version\": 1}", "no \"accounts\" list"),
            ("{\"version\": 1, \"accounts\": {}}", "no \"accounts\" list"),
            ("{\"version\": 1, \"accounts\": [7]}", "account 1 of"),
            (good.replacingOccurrences(of: "\"nsid\" : \"10000001@N01\"", with: "\"nsid\" : 10000001"), "\"nsid\" is a number, not text"),
            (good.replacingOccurrences(of: "\"consumer_secret\" : \"consumer-secret-zz9\"", with: "\"consumer_secret\" : null"),
             "\"consumer_secret\" is null, not text"),
            (good.replacingOccurrences(of: "\"oauth_token_secret\"", with: "\"renamed\""), "has no \"oauth_token_secret\""),
            (good.replacingOccurrences(of: "\"consumer_secret\" : \"consumer-secret-zz9\"", with: "\"consumer_secret\" : \"a b\\nc\""),
             "\"consumer_secret\" has characters it cannot have"),
            (good.replacingOccurrences(of: "https://api.flickr.com/services/rest/", with: "file:///etc/passwd"),
             "\"rest_endpoint\" is not an http(s) URL"),
            (good.replacingOccurrences(of: "\"username\" : \"ansel\"", with: "\"username\" : \"\\u001b[31mred\""),
             "\"username\" has characters it cannot have"),
            (good.replacingOccurrences(of: "\"nsid\" : \"10000001@N01\"", with: "\"nsid\" : \"\(String(repeating: "9", count: 65))\""),
             "\"nsid\" is longer than 64 bytes"),
            (String(repeating: "[", count: 100_000), "is not valid JSON"),
            ("{\"version\": 1, \"accounts\": [" + Array(repeating: "{}", count: 101).joined(separator: ",") + "]}", "more than 100"),
        ]
        for (text, expected) in cases {
            try Data(text.utf8).write(to: URL(fileURLWithPath: store.path))
            XCTAssertEqual(chmod(store.path, 0o600), 0)
            XCTAssertThrowsError(try store.load(), expected) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(expected), "expected \"\(expected)\" in: \(message)")
                XCTAssertTrue(message.contains(store.path), message)
                self.assertNoSecret(message)
            }
        }
        // A file larger than any accounts file is not read whole.
        try Data(count: (1 << 20) + 1).write(to: URL(fileURLWithPath: store.path))
        XCTAssertEqual(chmod(store.path, 0o600), 0)
        XCTAssertThrowsError(try store.load()) { error in XCTAssertTrue("\(error)".contains("larger than"), "\(error)") }
        // Extra fields a later version might add are ignored.
        try Data(good.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 1, \"comment\" : [1, {}]").utf8)
            .write(to: URL(fileURLWithPath: store.path))
        XCTAssertEqual(try store.load().count, 1)
    }

    /// The new file replaces the old one by rename: a reader never sees half of either, and a failed write
    /// leaves the old file as it was.
    func testAFailedWriteLeavesTheOldFile() throws {
        let store = FlickrAccountStore(directory: directory)
        let ansel = AccountStoreTests.account("10000001@N01", "ansel")
        try store.save(ansel)
        let inode = { () -> ino_t in var info = stat(); stat(store.path, &info); return info.st_ino }
        let before = inode()
        try store.save(AccountStoreTests.account("20000002@N02", "d"))
        XCTAssertNotEqual(inode(), before, "a new file was renamed into place, not the old one rewritten")
        // A directory where nothing can be created: the save fails, the file keeps both accounts.
        XCTAssertEqual(chmod(directory, 0o500), 0)
        defer { chmod(directory, 0o700) }
        if geteuid() != 0 { // root writes through any mode; the rename path is then covered by the inode check above
            XCTAssertThrowsError(try store.save(AccountStoreTests.account("30000003@N03", "e")))
            XCTAssertEqual(try store.load().count, 2)
        }
        XCTAssertThrowsError(try store.save(AccountStoreTests.account("bad nsid", "e"))) { error in
            XCTAssertTrue("\(error)".contains("\"nsid\" has characters it cannot have"), "\(error)")
        }
        chmod(directory, 0o700)
        XCTAssertEqual(try store.load().count, 2)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [FlickrAccountStore.fileName],
                       "no temporary file left behind")
    }

    /// Two processes signing in at once both keep their account (the directory lock).
    func testConcurrentSavesLoseNoAccount() throws {
        let store = FlickrAccountStore(directory: directory)
        let failures = NoticeLog()
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            do { try store.save(AccountStoreTests.account("\(10_000_000 + index)@N01", "user\(index)")) } catch {
                failures.append("\(error)")
            }
        }
        XCTAssertEqual(failures.lines, [])
        XCTAssertEqual(Set(try store.load().map(\.nsid)).count, 20)
    }

    func assertNoSecret(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        for secret in ["consumer-key-for-tests-01", "consumer-secret-zz9", "72157626318069415-087bfc7b5816092c", "token-secret-"] {
            XCTAssertFalse(text.contains(secret), "secret in: \(text)", file: file, line: line)
        }
    }
}

final class NoticeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ line: String) { lock.lock(); items.append(line); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
