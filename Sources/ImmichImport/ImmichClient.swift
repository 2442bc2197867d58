// The Immich API over HTTP: the key only in the x-api-key header, Immich's error messages, retries, no secret in logs.
import Foundation
import Logging
import PhotoContent
import PhotoSources

/// Why an Immich call failed, in words for the user. Never holds the key (messages pass the redactor).
public struct ImmichError: Error, CustomStringConvertible, Equatable {
    public enum Kind: Equatable, Sendable {
        /// 401: a wrong, revoked or missing key.
        case unauthorized
        /// 403: the key lacks a permission (`permission` when the server named it).
        case forbidden(permission: String?)
        /// Any other refusal or server error, with its HTTP status.
        case status(Int)
        /// Not reachable (connection refused, DNS, timeout).
        case unreachable
        /// An answer that is not the JSON asked for (an HTML page from a reverse proxy, a truncated body).
        case notJSON
    }
    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }
    public var description: String { message }
}

/// One Immich server reached with one API key. Every request carries the key in `x-api-key` (added by the
/// HTTP client for this server's URLs only: `RequestCredentials`), never in a URL; every log line and error
/// passes a redactor that knows the key.
public final class ImmichClient: @unchecked Sendable {
    /// "https://photos.example.org" (no trailing slash, no /api).
    public let server: String
    public let http: HTTPClient
    let redactor: SecretRedactor
    let logger: Logger
    let retryPolicy: APIRetryPolicy
    /// Calls made (attempts included): the summary's count, and what the bench compares.
    private let counter = NSLock()
    private var callCount = 0

    /// nil when `server` is not an http(s) URL.
    public init?(server: String, apiKey: String, http configuration: HTTPConfiguration = HTTPConfiguration(),
                 logger: Logger, retryPolicy: APIRetryPolicy = APIRetryPolicy()) {
        guard let normalized = ImmichClient.normalizedServer(server) else { return nil }
        self.server = normalized
        self.redactor = SecretRedactor(secrets: [apiKey])
        self.logger = RedactingLogHandler.logger(logger, redactor: redactor)
        var configuration = configuration
        guard configuration.credentials.add(prefix: normalized + "/api/", name: "x-api-key", value: apiKey) else { return nil }
        self.http = HTTPClient(configuration: configuration, logger: self.logger)
        self.retryPolicy = retryPolicy
    }

    public var calls: Int { counter.lock(); defer { counter.unlock() }; return callCount }

    /// "HTTPS://Photos.example.org/api/" → "https://photos.example.org": scheme and host lower-cased, a
    /// trailing "/" or "/api" dropped; nil for anything but an http(s) URL without user info, query or fragment.
    public static func normalizedServer(_ text: String) -> String? {
        var text = text.trimmingCharacters(in: .whitespaces)
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https", !text.contains("?"), !text.contains("#"),
              text.utf8.count <= 1024, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let host = rest[..<hostEnd].lowercased()
        guard !host.isEmpty, !host.contains("@") else { return nil }
        text = "\(scheme)://\(host)\(rest[hostEnd...])"
        while text.hasSuffix("/") { text.removeLast() }
        if text.lowercased().hasSuffix("/api") { text.removeLast(4) }
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// The URL of an API path ("/assets/ID/original" → "https://host/api/assets/ID/original").
    public func url(_ path: String) -> String { server + "/api" + path }

    public func get(_ path: String) throws -> JSONValue { try call(path, body: nil) }

    public func post(_ path: String, body: [String: Any]) throws -> JSONValue {
        guard let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) else {
            throw ImmichError(.status(0), "could not encode the request to \(path)")
        }
        return try call(path, body: data)
    }

    /// One call with its retries: connection failures and 5xx with the HTTP client's backoff (3 attempts),
    /// 429 and 503 as `APIRetryPolicy` says (Retry-After honoured up to 60 s).
    func call(_ path: String, body: Data?) throws -> JSONValue {
        let target = url(path)
        var attempt = 0
        var throttled = 0
        while true {
            attempt += 1
            counter.lock(); callCount += 1; counter.unlock()
            let failure: HTTPError
            let response: HTTPResponse
            do {
                response = try http.sendAnswer(target, json: body, limit: 256 << 20)
            } catch let error as HTTPError {
                failure = error
                if case .retry(let wait, _) = retryPolicy.decide(after: failure, attempt: attempt, throttledSoFar: throttled,
                                                                 http: http.configuration) {
                    logger.info("retrying an Immich call", metadata: ["path": "\(path)", "error": "\(error)", "wait_s": "\(wait)"])
                    Thread.sleep(forTimeInterval: wait)
                    continue
                }
                throw ImmichError(.unreachable, redactor.redact("cannot reach the Immich server at \(server): \(describe(error))"))
            }
            if (200...299).contains(response.status) {
                do { return try JSONValue.parse(response.body) } catch {
                    throw ImmichError(.notJSON, "the Immich server's answer to \(path) is not JSON (\(error))\(ImmichClient.htmlHint(response))")
                }
            }
            let statusError = HTTPError(kind: .status(response.status), url: target,
                                        retryAfter: RetryAfter.delay(response.headers["retry-after"]))
            if statusError.isRetryable,
               case .retry(let wait, _) = retryPolicy.decide(after: statusError, attempt: attempt, throttledSoFar: throttled,
                                                             http: http.configuration) {
                if response.status == 429 || response.status == 503 { throttled += 1 }
                logger.info("retrying an Immich call", metadata: ["path": "\(path)", "status": "\(response.status)", "wait_s": "\(wait)"])
                Thread.sleep(forTimeInterval: wait)
                continue
            }
            throw ImmichClient.error(status: response.status, response: response, path: path, redactor: redactor)
        }
    }

    private func describe(_ error: HTTPError) -> String {
        switch error.kind {
        case .transport(_, let message): return message
        default: return "\(error)"
        }
    }

    /// The server's own words: `message` (a string, or Immich's list of validation messages), else what the
    /// body is (an HTML page's title). 403's message names the missing permission.
    static func error(status: Int, response: HTTPResponse, path: String, redactor: SecretRedactor) -> ImmichError {
        let said = serverMessage(response)
        switch status {
        case 401:
            return ImmichError(.unauthorized, redactor.redact("the Immich server refused the API key: \(said ?? "HTTP 401")"))
        case 403:
            let permission = said.flatMap(permissionNamed)
            let text = permission.map { "the API key lacks the permission \($0) (\(said ?? ""))" }
                ?? "the Immich server refused \(path): \(said ?? "HTTP 403")"
            return ImmichError(.forbidden(permission: permission), redactor.redact(text))
        default:
            let text = said.map { "the Immich server answered HTTP \(status) to \(path): \($0)" }
                ?? "the Immich server answered HTTP \(status) to \(path)\(htmlHint(response))"
            return ImmichError(.status(status), redactor.redact(text))
        }
    }

    /// `message` of an Immich error body, cut to one short line; nil when the body is not Immich's JSON.
    static func serverMessage(_ response: HTTPResponse) -> String? {
        guard let json = try? JSONValue.parse(response.body) else { return nil }
        let text: String?
        switch json["message"] {
        case .string(let message)?: text = message
        case .array(let items)?: text = items.compactMap(\.stringValue).joined(separator: "; ")
        default: text = nil
        }
        return text.map { printable($0, limit: 300) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// "Missing required permission: asset.read" → "asset.read" (Immich's wording since 1.116).
    static func permissionNamed(_ message: String) -> String? {
        guard let range = message.range(of: "permission:") ?? message.range(of: "permission ") else { return nil }
        let name = message[range.upperBound...].trimmingCharacters(in: .whitespaces)
            .prefix { $0.isLetter || $0 == "." || $0 == "_" || $0 == "-" }
        return name.isEmpty ? nil : String(name)
    }

    /// " (an HTML page: \"502 Bad Gateway\" — a reverse proxy in front of Immich?)" for an HTML body.
    static func htmlHint(_ response: HTTPResponse) -> String {
        let head = String(decoding: response.body.prefix(4096), as: UTF8.self)
        guard head.range(of: "<html", options: .caseInsensitive) != nil
              || (response.contentType ?? "").lowercased().contains("html") else { return "" }
        var title = ""
        if let start = head.range(of: "<title>", options: .caseInsensitive),
           let end = head.range(of: "</title>", options: .caseInsensitive, range: start.upperBound..<head.endIndex) {
            title = printable(String(head[start.upperBound..<end.lowerBound]), limit: 100)
        }
        return " (an HTML page\(title.isEmpty ? "" : ": \"\(title)\""): a reverse proxy in front of Immich, or not an Immich server?)"
    }

    /// Control characters out, at most `limit` characters: server text goes into one terminal line.
    static func printable(_ text: String, limit: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(limit) {
            scalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        return String(scalars).trimmingCharacters(in: .whitespaces)
    }
}
