// The API key never appears in what an import prints: log lines (its own and the HTTP client's retries),
// errors, the report, or the descriptions of the values that hold it.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources
import XCTest

/// Every line a logger receives, message and metadata, as the lead's log handlers would print them.
final class CapturedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return lines.joined(separator: "\n") }
    var count: Int { lock.lock(); defer { lock.unlock() }; return lines.count }

    func logger(_ label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in CapturingLogHandler(log: self) }
        logger.logLevel = .trace
        return logger
    }
}

struct CapturingLogHandler: LogHandler {
    let log: CapturedLog
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
             function: String, line: UInt) {
        let fields = self.metadata.merging(metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        log.append("\(level) \(message) \(fields.joined(separator: " "))")
    }
}

final class ImportSecretsTests: XCTestCase {
    /// Characters that URLs encode in several ways ("+", "/", "=", a space): each encoding must be caught.
    static let key = "9f86d081884c7d65+9a2f/eaa0c55ad=15 a3bf"
    var origin: FlickrOriginServer!
    var directory: URL!
    var catalog: Catalog!
    let log = CapturedLog()

    override func setUpWithError() throws {
        origin = FlickrOriginServer(library: DemoLibrary.make(count: 12, scale: 8), apiKey: ImportSecretsTests.key)
        try origin.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        catalog = try Catalog(path: directory.appendingPathComponent("library.sqlite").path)
    }

    override func tearDownWithError() throws {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func runImport(key: String = ImportSecretsTests.key, endpoint: String? = nil, attempts: Int = 3) -> Result<ImportReport, Error> {
        var options = FlickrSourceOptions()
        options.endpoint = endpoint ?? origin.endpoint
        options.perPage = 5
        var http = HTTPConfiguration()
        http.attempts = attempts
        http.retryBaseDelay = 0.01
        let source = FlickrSource(options: options, credentials: .apiKey(key), http: http, logger: log.logger())
        let importer = LibraryImporter(catalog: catalog, source: source, progress: nil, logger: log.logger())
        return Result { try importer.run() }
    }

    /// Every form the key could take in a line: as is, percent-encoded any way, and its distinctive parts.
    func assertNoSecret(_ text: String, key: String = ImportSecretsTests.key, file: StaticString = #filePath, line: UInt = #line) {
        var forms: Set<String> = [key, "9f86d081884c7d65", "eaa0c55ad", "a3bf"]
        for allowed in [CharacterSet.alphanumerics, .urlQueryAllowed, .urlPathAllowed] {
            if let encoded = key.addingPercentEncoding(withAllowedCharacters: allowed) { forms.insert(encoded) }
        }
        for form in forms {
            XCTAssertFalse(text.contains(form), "\"\(form)\" in: \(text)", file: file, line: line)
        }
    }

    func testRetriedAndFailedCallsNeverPrintTheKey() throws {
        // Two 503s then success: the HTTP client logs both retries with the request URL.
        origin.scriptRESTStatuses([503, 503])
        let report = try runImport().get()
        XCTAssertEqual(report.summary.added, 12)
        XCTAssertTrue(log.text.contains("retrying"), "the retry lines must exist for this test to mean anything: \(log.text)")
        XCTAssertTrue(log.text.contains("api_key=\(SecretRedactor.mask)"), log.text)

        // Every attempt fails: the error names the method and the status, not the URL.
        origin.scriptRESTStatuses([500, 500, 500])
        let failure = runImport()
        guard case .failure(let error) = failure else { return XCTFail("expected a failure") }
        XCTAssertTrue("\(error)".contains("HTTP 500"), "\(error)")
        assertNoSecret("\(error)")
        assertNoSecret(String(reflecting: error))

        // Nothing listens: a transport error.
        let unreachable = runImport(endpoint: "http://127.0.0.1:1/services/rest/", attempts: 2)
        guard case .failure(let transport) = unreachable else { return XCTFail("expected a failure") }
        assertNoSecret("\(transport)")

        // Measuring failures (a photo gone, another answering 500s) are warnings naming the photo.
        origin.setMissing(photoID: origin.photos[0].id)
        try catalog.removePhotos(ids: origin.photos.map(\.id))
        _ = try runImport().get()
        XCTAssertTrue(log.text.contains("original not measured"), log.text)

        XCTAssertGreaterThan(log.count, 3)
        assertNoSecret(log.text)
    }

    func testAWrongKeyIsNotPrintedEither() throws {
        let wrong = "0123456789abcdef0123456789abcdef"
        guard case .failure(let error) = runImport(key: wrong) else { return XCTFail("expected a failure") }
        XCTAssertTrue("\(error)".contains("Invalid API Key"), "\(error)")
        assertNoSecret("\(error)", key: wrong)
        assertNoSecret(log.text, key: wrong)
    }

    func testAMalformedAnswerEchoingTheRequestIsRedacted() throws {
        // A proxy's error page that quotes the request line, key and all.
        origin.setRawRecord(photoID: origin.photos[0].id, json: "}{ GET /services/rest/?api_key=\(ImportSecretsTests.key)")
        guard case .failure(let error) = runImport() else { return XCTFail("expected a failure") }
        XCTAssertTrue("\(error)".contains("malformed JSON"), "\(error)")
        assertNoSecret("\(error)")
    }

    /// Credentials in a URL that is not the source's own (user information, a token parameter) are masked
    /// too: in the warning about a photo that could not be measured, and in an error naming the endpoint.
    func testURLCredentialsInPhotoURLsAndTheEndpointAreMasked() throws {
        var library = DemoLibrary.make(count: 2, scale: 8)
        library.photos[0].externalURL = "http://someone:hunter2pass@127.0.0.1:1/photo.jpg?token=t0kenvalue&size=o"
        origin.replaceLibrary(library)
        _ = try runImport(attempts: 1).get()
        XCTAssertTrue(log.text.contains("original not measured"), log.text)
        XCTAssertTrue(log.text.contains("size=o"), "the rest of the URL is still shown: \(log.text)")
        for secret in ["hunter2pass", "someone", "t0kenvalue"] {
            XCTAssertFalse(log.text.contains(secret), "\"\(secret)\" in: \(log.text)")
        }

        guard case .failure(let error) = runImport(endpoint: "ftp://someone:hunter2pass@example.invalid/rest") else {
            return XCTFail("expected a failure")
        }
        XCTAssertTrue("\(error)".contains("not an http(s) endpoint"), "\(error)")
        XCTAssertFalse("\(error)".contains("hunter2pass"), "\(error)")
    }

    func testCredentialsAndOptionsPrintWithoutSecrets() {
        let oauth = SourceCredentials.oauth1(consumerKey: "consumer-key-1234", consumerSecret: "consumer-secret-5678",
                                             token: "access-token-9012", tokenSecret: "token-secret-3456")
        var dumped = ""
        dump(oauth, to: &dumped)
        for text in ["\(oauth)", String(reflecting: oauth), dumped, "\(SourceCredentials.apiKey(ImportSecretsTests.key))"] {
            for secret in oauth.secrets + [ImportSecretsTests.key] { XCTAssertFalse(text.contains(secret), text) }
        }
        XCTAssertEqual(oauth.apiKey, "consumer-key-1234")
    }

    func testRedactorCatchesEveryEncodingAndSecretParameters() {
        let redactor = SourceCredentials.apiKey(ImportSecretsTests.key).redactor
        let encoded = ImportSecretsTests.key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        for text in ["key \(ImportSecretsTests.key)!", "u?api_key=\(encoded)&x=1", "u?API_KEY=\(encoded.lowercased())",
                     "u?x=\(encoded.replacingOccurrences(of: "%20", with: "+"))",
                     "a?oauth_token=abc&oauth_signature=xyz%3D"] {
            let redacted = redactor.redact(text)
            assertNoSecret(redacted)
            XCTAssertTrue(redacted.contains(SecretRedactor.mask), redacted)
            XCTAssertFalse(redacted.contains("abc") || redacted.contains("xyz"), redacted)
        }
        // Which names are credentials' is URLRedaction's decision (deliberately broad: any name containing
        // "key" or "token"), found anywhere in free text, percent-encoded or not; other parameters stay.
        XCTAssertEqual(SecretRedactor.redactParameters("u?not_api_key=1&my_oauth_token=2&page=3"), "u?not_api_key=…&my_oauth_token=…&page=3")
        XCTAssertEqual(SecretRedactor.redactParameters("GET /rest?api%5Fkey=abc123 HTTP/1.1 (password=\"p w\")"),
                       "GET /rest?api%5Fkey=… HTTP/1.1 (password=\"…\")")
        XCTAssertEqual(SecretRedactor.redactParameters("per_page=5 keyword=x=y, a==b"), "per_page=5 keyword=… a==b")
        for name in ["api_key", "oauth_token", "oauth_signature", "access_token", "password", "sig", "code"] {
            XCTAssertTrue(URLRedaction.isSensitive(name: Substring(name)), name)
            XCTAssertEqual(SecretRedactor.redactParameters("x \(name)=v1 y"), "x \(name)=… y")
        }
        XCTAssertEqual(SecretRedactor.mask, URLRedaction.placeholder)
    }
}
