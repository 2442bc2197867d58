// `photofs login flickr` as a user runs it: the built binary against the loopback origin, the code copied from
// the authorize page into standard input; then the credentials file's modes, `photofs accounts`, `logout`.
import FlickrOrigin
import Foundation
import PhotoContent
import XCTest

final class LoginCommandLineTests: XCTestCase {
    static let key = "it-login-key-0123456789abcdef"
    var harness: MountHarness!
    /// The consumer secret the origin checks signatures with.
    var secret: String { harness.origin.apiSecret }
    var configHome: String { harness.configHome }
    var accountsFile: String { configHome + "/photofs/flickr-accounts.json" }
    var environment: [String: String] { harness.accountEnvironment }

    override func setUpWithError() throws {
        var library = DemoLibrary.make(count: 2, scale: 16)
        library.accounts = [OriginAccount(nsid: "10000001@N01", username: "ansel", fullname: "Ansel Adams")]
        harness = try MountHarness(library: library, apiKey: LoginCommandLineTests.key)
    }

    override func tearDown() { harness.tearDown(failed: (testRun?.failureCount ?? 0) > 0) }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, path)
        return info.st_mode & 0o7777
    }

    func testLoginAccountsLogoutWithoutASecretInAnyOutput() throws {
        // The key and secret on the command line: photofs blanks them in its process list entry.
        let run = try harness.login(["--api-key", LoginCommandLineTests.key, "--api-secret", secret])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first.map { $0.hasPrefix(harness.origin.oauthEndpoint + "authorize?oauth_token=") }, true, run.stdout)
        XCTAssertTrue(lines.first?.hasSuffix("&perms=read") ?? false, run.stdout)
        XCTAssertTrue(run.stdout.contains("Signed in to Flickr as ansel (10000001@N01)."), run.stdout)
        let shown = try XCTUnwrap(run.commandLine, "the command never waited for the code")
        XCTAssertFalse(shown.contains(secret) || shown.contains(LoginCommandLineTests.key), shown)
        XCTAssertTrue(shown.contains(String(repeating: "x", count: secret.count)), shown)

        // The credentials: a 0600 file in a 0700 directory, holding the secrets the output must not show.
        XCTAssertEqual(mode(configHome + "/photofs"), 0o700)
        XCTAssertEqual(mode(accountsFile), 0o600)
        let stored = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: accountsFile)))
            as? [String: Any])
        let account = try XCTUnwrap((stored["accounts"] as? [[String: Any]])?.first)
        let secrets = try ["consumer_key", "consumer_secret", "oauth_token", "oauth_token_secret"].map {
            try XCTUnwrap(account[$0] as? String, $0)
        }
        XCTAssertEqual(secrets[1], secret, "the file holds the secrets, so their absence below means something")

        let listed = harness.photofs(["accounts"], environment: environment)
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.text.contains("ansel"), listed.text)
        XCTAssertTrue(listed.text.contains("10000001@N01"), listed.text)
        XCTAssertTrue(listed.text.contains(harness.origin.endpoint), listed.text)

        let loggedOut = harness.photofs(["logout", "flickr"], environment: environment)
        XCTAssertEqual(loggedOut.status, 0, loggedOut.stderr)
        XCTAssertTrue(loggedOut.text.contains("Signed out ansel (10000001@N01)"), loggedOut.text)
        XCTAssertFalse(FileManager.default.fileExists(atPath: accountsFile))
        let none = harness.photofs(["accounts"], environment: environment)
        XCTAssertTrue(none.text.contains("No account is signed in"), none.text)
        XCTAssertNotEqual(harness.photofs(["logout", "flickr"], environment: environment).status, 0)

        for output in [run.stdout, run.stderr, listed.text, listed.stderr, loggedOut.text, loggedOut.stderr, none.text] {
            for secret in secrets { XCTAssertFalse(output.contains(secret), "a secret in: \(output)") }
        }
    }

    func testAWrongSecretFailsWithFlickrsMessage() throws {
        let keyFile = harness.root.appendingPathComponent("key").path
        let secretFile = harness.root.appendingPathComponent("secret").path
        try (LoginCommandLineTests.key + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        try "wrong-secret-555\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let run = try harness.login(["--api-key-file", keyFile, "--api-secret-file", secretFile])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertNil(run.commandLine, "no authorize page without a request token")
        XCTAssertTrue(run.stderr.contains("oauth_problem=signature_invalid"), run.stderr)
        XCTAssertTrue(run.stderr.contains("API secret"), run.stderr)
        for secret in [LoginCommandLineTests.key, "wrong-secret-555", secret] {
            XCTAssertFalse(run.stderr.contains(secret) || run.stdout.contains(secret), run.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: accountsFile), "nothing saved")

        // A code the page never showed: Flickr's verifier_invalid, nothing saved.
        try (secret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
        let wrongCode = harness.photofs(["login", "flickr", "--endpoint", harness.origin.endpoint, "--no-browser",
                                         "--api-key-file", keyFile, "--api-secret-file", secretFile, "--verifier", "000-000-000"],
                                        environment: environment)
        XCTAssertNotEqual(wrongCode.status, 0)
        XCTAssertTrue(wrongCode.stderr.contains("oauth_problem="), wrongCode.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: accountsFile))
    }
}
