// Secrets and the process list: an API key given on the command line is blanked in /proc/PID/cmdline (what
// `ps` shows) once photofs has parsed it, and --api-key-file keeps it off the command line altogether.
import FlickrOrigin
import Foundation
import XCTest

final class ProcessListSecretsTests: MountedTestCase {
    override class var originLibrary: OriginLibrary { DemoLibrary.make(count: 3, scale: 4) }
    override class var mountsInSetUp: Bool { false }

    /// A REST endpoint that holds each request until the test lets it go: while it is held, the import is
    /// running with its arguments parsed (it sends the key only after parsing), so the test looks then.
    final class HeldEndpoint: @unchecked Sendable {
        let arrived = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var keys: [String] = []
        var server: LoopbackHTTPServer!

        init() throws {
            server = LoopbackHTTPServer { [unowned self] request in
                self.lock.lock(); self.keys.append(request.query["api_key"] ?? ""); self.lock.unlock()
                self.arrived.signal()
                // Bounded, so a failing test cannot hang the suite.
                _ = self.release.wait(timeout: .now() + 30)
                return ServerResponse(status: 200, headers: [("Content-Type", "application/json")],
                                      body: Data(#"{"stat":"fail","code":100,"message":"Invalid API Key (Key has invalid format)"}"#.utf8))
            }
            try server.start()
        }
        var endpoint: String { server.baseURL + FlickrOriginServer.restPath }
        var receivedKeys: [String] { lock.lock(); defer { lock.unlock() }; return keys }
    }

    func commandLine(of pid: Int32) -> String {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    func testAnAPIKeyOnTheCommandLineIsBlankedInTheProcessList() throws {
        let endpoint = try HeldEndpoint()
        defer { endpoint.server.stop() }
        let secret = "S3cr3tK3y0fTw3nty"
        for keyArguments in [["--api-key", secret], ["--api-key=\(secret)"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: MountHarness.binary)
            process.arguments = ["import", "flickr", harness.library, "--endpoint", endpoint.endpoint] + keyArguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            XCTAssertEqual(endpoint.arrived.wait(timeout: .now() + 30), .success, "the import never asked the endpoint")
            XCTAssertTrue(process.isRunning)
            let shown = commandLine(of: process.processIdentifier)
            XCTAssertFalse(shown.contains(secret), shown)
            XCTAssertTrue(shown.contains("import flickr \(harness.library)"), "the rest is left as it was: \(shown)")
            XCTAssertTrue(shown.contains(String(repeating: "x", count: secret.count)), shown)
            let ps = Shell.run("ps", ["-o", "args=", "-p", String(process.processIdentifier)])
            XCTAssertFalse(ps.text.isEmpty, "ps saw the process")
            XCTAssertFalse(ps.text.contains(secret), ps.text)
            endpoint.release.signal()
            process.waitUntilExit()
            XCTAssertNotEqual(process.terminationStatus, 0, "the endpoint refused the key")
        }
        // Blanking the process list did not blank the key the import uses.
        XCTAssertEqual(endpoint.receivedKeys.first, secret)
        XCTAssertEqual(Set(endpoint.receivedKeys), [secret])
    }

    func testAnAPIKeyFileImportsAndNeverShows() throws {
        let keyFile = harness.root.appendingPathComponent("flickr.key").path
        try (harness.origin.apiKey + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        let imported = harness.photofs(["import", "flickr", harness.library, "--endpoint", harness.origin.endpoint,
                                        "--api-key-file", keyFile])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.text.contains("imported 3 photos"), imported.text)

        let both = harness.photofs(["import", "flickr", harness.library, "--endpoint", harness.origin.endpoint,
                                    "--api-key-file", keyFile, "--api-key", "other"])
        XCTAssertNotEqual(both.status, 0)
        XCTAssertTrue(both.stderr.contains("give --api-key or --api-key-file, not both"), both.stderr)

        let missing = harness.photofs(["import", "flickr", harness.library, "--endpoint", harness.origin.endpoint,
                                       "--api-key-file", keyFile + ".missing"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("--api-key-file \(keyFile).missing: cannot read it"), missing.stderr)
    }
}
