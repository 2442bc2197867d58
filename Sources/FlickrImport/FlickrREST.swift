// Flickr's REST transport: one method call in, its JSON answer (or Flickr's own failure) out.
import Foundation
import Logging
import OAuth1
import PhotoContent
import PhotoSources

/// Calls REST methods on one endpoint with one set of credentials. Every message it builds passes through
/// the redactor, and none is built from a request URL (which carries the key). Every attempt of every call
/// takes a permit from `limiter` first, so the import's calls never exceed its rate, retries included.
final class FlickrREST: @unchecked Sendable {
    let endpoint: String
    let credentials: SourceCredentials
    let http: HTTPClient
    let redactor: SecretRedactor
    let limiter: APIRateLimiter
    let retryPolicy: APIRetryPolicy
    private let logger: Logger

    init(endpoint: String, credentials: SourceCredentials, http: HTTPClient, redactor: SecretRedactor,
         limiter: APIRateLimiter = APIRateLimiter(), retryPolicy: APIRetryPolicy = APIRetryPolicy(),
         logger: Logger = Logger(label: "photofs.flickr")) {
        self.endpoint = endpoint; self.credentials = credentials; self.http = http; self.redactor = redactor
        self.limiter = limiter; self.retryPolicy = retryPolicy
        self.logger = RedactingLogHandler.logger(logger, redactor: redactor)
    }

    struct Failure: Error, CustomStringConvertible {
        var code: Int
        var message: String
        var description: String { message }
    }

    /// Calls one REST method and returns the answer, a JSON object; any failure is an ImportError (or a
    /// FlickrREST.Failure for Flickr's own "stat": "fail") naming the cause. No message is built from the request
    /// URL, which carries the key; every message still passes through the redactor. A throttling answer
    /// (429, or 503 with Retry-After) holds every call of the import for as long as the server asked
    /// (`APIRetryPolicy`: at most 60 s a time, 6 attempts); other retryable failures are retried as the HTTP
    /// client would. Each attempt is signed anew: a fresh nonce and timestamp, as Flickr refuses a replay.
    func call(_ method: String, _ parameters: [String: String]) throws -> JSONValue {
        let response = try fetch(method, parameters)
        return try read(method, response)
    }

    private func fetch(_ method: String, _ parameters: [String: String]) throws -> HTTPResponse {
        var throttled = 0
        var attempt = 0
        while true {
            attempt += 1
            // The permit first, then the signature: a request signed before a long wait for the rate limit
            // or a Retry-After would carry an old timestamp, which Flickr refuses (timestamp_refused).
            limiter.acquire()
            let url = try requestURL(method, parameters)
            do {
                return try http.getOnce(url, limit: 32 << 20)
            } catch let error as HTTPError {
                switch retryPolicy.decide(after: error, attempt: attempt, throttledSoFar: throttled, http: http.configuration) {
                case .retry(let wait, let hold):
                    logger.info("retrying", metadata: ["url": "\(URLRedaction.redacted(url))", "error": "\(error)",
                                                       "wait_s": "\(wait)"])
                    if hold, case .status(let status) = error.kind {
                        throttled += 1
                        limiter.holdOff(wait, status: status)
                    } else {
                        Thread.sleep(forTimeInterval: wait)
                    }
                case .giveUp(let reason):
                    let why = reason.map { " (\($0))" } ?? ""
                    throw ImportError(message: redactor.redact("\(method) failed: \(FlickrREST.cause(of: error))\(why)"))
                }
            }
        }
    }

    /// The request URL of one attempt: method, format, parameters and the key, or the OAuth signature.
    private func requestURL(_ method: String, _ parameters: [String: String]) throws -> String {
        guard var components = URLComponents(string: endpoint),
              endpoint.lowercased().hasPrefix("http://") || endpoint.lowercased().hasPrefix("https://") else {
            throw ImportError(message: redactor.redact("not an http(s) endpoint: \(URLRedaction.redacted(endpoint))"))
        }
        var pairs: [(name: String, value: String)] = [("method", method), ("format", "json"), ("nojsoncallback", "1")]
        pairs += parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let oauth = credentials.oauth1 {
            // Signed (OAuth 1.0a): the consumer key identifies the app, so no api_key; the signature covers
            // every parameter of the query, including the endpoint's own.
            let consumer = OAuthConsumer(key: oauth.consumerKey, secret: oauth.consumerSecret)
            let token = OAuthToken(token: oauth.token, secret: oauth.tokenSecret)
            guard let signed = OAuthSignature.sign(method: "GET", url: endpoint, parameters: pairs, consumer: consumer,
                                                   token: token) else {
                throw ImportError(message: redactor.redact("cannot sign a request to the endpoint \(URLRedaction.redacted(endpoint))"))
            }
            pairs += signed
        } else if let key = credentials.apiKey {
            pairs.insert(("api_key", key), at: 1)
        }
        // RFC 3986 encoding of every name and value ("+" and "/" included): what was signed is what is sent.
        let query = pairs.map { OAuthPercent.encode($0.name) + "=" + OAuthPercent.encode($0.value) }.joined(separator: "&")
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + query
        guard let url = components.url?.absoluteString else {
            throw ImportError(message: redactor.redact("cannot make a request URL from the endpoint \(URLRedaction.redacted(endpoint))"))
        }
        return url
    }

    /// The answer as a JSON object with "stat": "ok", or the failure it says.
    private func read(_ method: String, _ response: HTTPResponse) throws -> JSONValue {
        let answer: JSONValue
        do { answer = try JSONValue.parse(response.body) } catch {
            let start = String(decoding: response.body.prefix(120), as: UTF8.self)
            throw ImportError(message: redactor.redact(
                "\(method) answered malformed JSON (\(response.body.count) bytes, \(error), starting \"\(start)\")"))
        }
        guard case .object = answer else {
            throw ImportError(message: "\(method) answered JSON that is not an object")
        }
        if FlickrJSON.text(answer["stat"]) != "ok" {
            let message = FlickrJSON.text(answer["message"]).map { SourceText.clean($0, limit: 500) } ?? "no message"
            let code = FlickrJSON.int64(answer["code"]).flatMap { Int(exactly: $0) } ?? -1
            throw Failure(code: code, message: redactor.redact("Flickr refused \(method): \(message) (code \(code))"))
        }
        return answer
    }

    /// What went wrong, without the URL `HTTPError.description` appends.
    static func cause(of error: HTTPError) -> String {
        if case .status(let status) = error.kind { return "HTTP \(status)" }
        if case .transport(_, let message) = error.kind { return message }
        if case .sink(let message) = error.kind { return message }
        return "not an http(s) URL"
    }
}
