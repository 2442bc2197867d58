// Signing in to Flickr as a desktop app (OAuth 1.0a, `oob`): request token, authorize URL, verifier, access token.
import Foundation
import Logging
import OAuth1
import PhotoContent
import PhotoSources

/// Where a Flickr API lives: its REST endpoint and its OAuth endpoint (`request_token`, `authorize`,
/// `access_token` are paths under it).
public struct FlickrEndpoints: Sendable, Equatable {
    public static let defaultREST = FlickrSourceOptions.defaultEndpoint
    public static let defaultOAuth = "https://www.flickr.com/services/oauth/"

    public let rest: String
    public let oauth: String

    /// Flickr's own endpoints by default. A custom REST endpoint without an OAuth one (a self-hosted server,
    /// the loopback origin) takes `/services/oauth/` on the same scheme, host and port: Flickr keeps its
    /// OAuth pages on another host, a server that speaks its API keeps both on one.
    public init(rest: String? = nil, oauth: String? = nil) throws {
        let rest = rest ?? FlickrEndpoints.defaultREST
        guard FlickrEndpoints.isHTTPURL(rest) else {
            throw LoginError("the REST endpoint \(URLRedaction.redacted(rest)) is not an http(s) URL")
        }
        let oauth = try oauth ?? FlickrEndpoints.oauthEndpoint(besides: rest)
        guard FlickrEndpoints.isHTTPURL(oauth) else {
            throw LoginError("the OAuth endpoint \(URLRedaction.redacted(oauth)) is not an http(s) URL")
        }
        self.rest = rest
        self.oauth = oauth.hasSuffix("/") ? oauth : oauth + "/"
    }

    /// The OAuth endpoint that goes with a REST endpoint (see `init`).
    static func oauthEndpoint(besides rest: String) throws -> String {
        if sameEndpoint(rest, defaultREST) { return defaultOAuth }
        guard var components = URLComponents(string: rest) else {
            throw LoginError("the REST endpoint \(URLRedaction.redacted(rest)) is not a URL")
        }
        components.user = nil; components.password = nil
        components.percentEncodedQuery = nil; components.fragment = nil
        components.path = "/services/oauth/"
        guard let url = components.string else { throw LoginError("cannot derive an OAuth endpoint from \(URLRedaction.redacted(rest))") }
        return url
    }

    /// The URL of one OAuth step: "request_token", "authorize" or "access_token".
    public func url(_ step: String) -> String { oauth + step }

    /// An absolute http(s) URL with a host, without spaces or control characters, at most 2048 bytes.
    static func isHTTPURL(_ text: String) -> Bool {
        guard text.utf8.count <= 2048, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
              let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty else { return false }
        return true
    }

    /// Two spellings of one endpoint: scheme and host in any case, a missing final "/".
    static func sameEndpoint(_ a: String, _ b: String) -> Bool {
        func normal(_ text: String) -> String {
            var text = text
            if !text.hasSuffix("/") { text += "/" }
            guard var components = URLComponents(string: text) else { return text }
            components.scheme = components.scheme?.lowercased()
            components.host = components.host?.lowercased()
            return components.string ?? text
        }
        return normal(a) == normal(b)
    }
}

/// Why signing in failed, in a sentence for the user. Built from fixed text and the names Flickr's answers
/// use (`oauth_problem`), never from an answer's other fields (Flickr's `debug_sbs` holds the key and the
/// token) nor from a URL with a signature in it; and it passes through the redactor all the same.
public struct LoginError: Error, CustomStringConvertible, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One sign-in: `start()` gets a request token and the page the member opens; `finish(_:verifier:)` trades
/// the code Flickr showed there for an access token and confirms it with `flickr.test.login`.
public final class FlickrLogin: @unchecked Sendable {
    public let endpoints: FlickrEndpoints
    private let consumer: OAuthConsumer
    private let http: HTTPClient
    private let logger: Logger

    /// What the member must open, and the request token behind it (its secret never leaves this value).
    public struct Authorization: Sendable, CustomStringConvertible, CustomReflectable {
        /// The page to open in a browser: `authorize?oauth_token=...&perms=read`. It names the request token,
        /// which is what Flickr's flow prints; the token's secret is not in it.
        public let url: String
        let requestToken: OAuthToken
        public var description: String { url }
        public var customMirror: Mirror { Mirror(self, children: ["url": url], displayStyle: .struct) }
    }

    public init(endpoints: FlickrEndpoints, consumerKey: String, consumerSecret: String,
                http configuration: HTTPConfiguration = HTTPConfiguration(), logger: Logger) {
        self.endpoints = endpoints
        consumer = OAuthConsumer(key: consumerKey, secret: consumerSecret)
        self.logger = RedactingLogHandler.logger(logger, redactor: SecretRedactor(secrets: [consumerKey, consumerSecret]))
        http = HTTPClient(configuration: configuration, logger: self.logger)
    }

    /// Step 1 (`request_token`, signed with the consumer secret alone, `oauth_callback=oob`) and the
    /// authorize URL of step 2 (`perms=read`: photofs never changes a library).
    public func start() throws -> Authorization {
        let answer = try oauthCall("request_token", token: nil, extra: [("oauth_callback", "oob")])
        guard answer["oauth_callback_confirmed"] == "true" else {
            throw LoginError("Flickr's answer to request_token does not confirm the callback (oauth_callback_confirmed): "
                             + "not an OAuth 1.0a server")
        }
        guard let token = answer["oauth_token"], let secret = answer["oauth_token_secret"],
              FlickrLogin.isTokenText(token), FlickrLogin.isTokenText(secret) else {
            throw LoginError("Flickr's answer to request_token has no usable oauth_token and oauth_token_secret")
        }
        let url = endpoints.url("authorize") + "?oauth_token=" + OAuthPercent.encode(token) + "&perms=read"
        return Authorization(url: url, requestToken: OAuthToken(token: token, secret: secret))
    }

    /// Step 3: the verifier (the "123-456-789" Flickr showed; spaces around it are dropped) for an access
    /// token, which `flickr.test.login` must then accept as the same member.
    public func finish(_ authorization: Authorization, verifier: String) throws -> FlickrAccount {
        let code = verifier.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !code.isEmpty else { throw LoginError("no verification code given") }
        guard code.utf8.count <= 256, FlickrLogin.isTokenText(code) else {
            throw LoginError("the verification code has characters Flickr's codes never have (expected something like 123-456-789)")
        }
        let answer = try oauthCall("access_token", token: authorization.requestToken, extra: [("oauth_verifier", code)])
        guard let token = answer["oauth_token"], let secret = answer["oauth_token_secret"], let nsid = answer["user_nsid"],
              FlickrLogin.isTokenText(token), FlickrLogin.isTokenText(secret), !nsid.isEmpty else {
            throw LoginError("Flickr's answer to access_token has no usable oauth_token, oauth_token_secret and user_nsid")
        }
        var account = FlickrAccount(
            nsid: nsid, username: answer["username"] ?? nsid, fullname: answer["fullname"] ?? "",
            restEndpoint: endpoints.rest, oauthEndpoint: endpoints.oauth, consumer: consumer,
            token: OAuthToken(token: token, secret: secret), signedInAt: Int64(Date().timeIntervalSince1970))
        let confirmed = try confirm(account)
        guard confirmed.nsid == nsid else {
            throw LoginError("flickr.test.login names another member than the one who signed in: not saving the token")
        }
        if !confirmed.username.isEmpty { account.username = confirmed.username }
        do {
            try FlickrAccountStore.validate(account, entry: "the signed-in account")
        } catch let error as AccountStoreError {
            throw LoginError("Flickr's answer cannot be stored: \(error.message)")
        }
        return account
    }

    /// `flickr.test.login`, signed with the new token: who Flickr says the token belongs to.
    func confirm(_ account: FlickrAccount) throws -> (nsid: String, username: String) {
        let credentials = account.credentials
        let rest = FlickrREST(endpoint: endpoints.rest, credentials: credentials, http: http, redactor: credentials.redactor,
                              limiter: APIRateLimiter(), logger: logger)
        let answer: JSONValue
        do {
            answer = try rest.call("flickr.test.login", [:])
        } catch let failure as FlickrREST.Failure {
            throw LoginError("Flickr did not accept the new token: \(failure.message)")
        } catch let error as ImportError {
            throw LoginError(error.message)
        }
        guard let nsid = FlickrJSON.text(answer["user"]?["id"]) else {
            throw LoginError("Flickr's answer to flickr.test.login names no user")
        }
        let username = FlickrJSON.text(answer["user"]?["username"]).map { SourceText.clean($0, limit: 256) } ?? ""
        return (nsid, username)
    }

    // MARK: OAuth requests

    /// One signed GET to an OAuth endpoint, its `application/x-www-form-urlencoded` answer as a dictionary.
    private func oauthCall(_ step: String, token: OAuthToken?, extra: [OAuthSignature.Parameter]) throws -> [String: String] {
        var secrets = [consumer.key, consumer.secret]
        if let token { secrets += [token.token, token.secret] }
        let redactor = SecretRedactor(secrets: secrets)
        let url = endpoints.url(step)
        guard let signed = OAuthSignature.sign(method: "GET", url: url, parameters: [], consumer: consumer, token: token,
                                               extra: extra) else {
            throw LoginError(redactor.redact("cannot sign a request to \(URLRedaction.redacted(url))"))
        }
        let query = signed.map { OAuthPercent.encode($0.name) + "=" + OAuthPercent.encode($0.value) }.joined(separator: "&")
        let response: HTTPResponse
        do {
            response = try http.getAnswer(url + "?" + query)
        } catch let error as HTTPError {
            throw LoginError(redactor.redact("\(step) failed: \(FlickrREST.cause(of: error)) (\(URLRedaction.redacted(url)))"))
        }
        let body = String(decoding: response.body, as: UTF8.self)
        let pairs = OAuthPercent.parseForm(body.trimmingCharacters(in: .whitespacesAndNewlines)) ?? []
        var fields: [String: String] = [:]
        for pair in pairs where fields[pair.name] == nil { fields[pair.name] = pair.value }
        guard (200...299).contains(response.status) else {
            throw LoginError(redactor.redact(FlickrLogin.explain(step: step, status: response.status, problem: fields["oauth_problem"])))
        }
        return fields
    }

    /// A sentence for a refused OAuth request: what Flickr's `oauth_problem` means and what to do.
    static func explain(step: String, status: Int, problem: String?) -> String {
        // Only a problem *name* is shown: letters and "_", at most 64 (the answer is the server's, hostile).
        let name = problem.flatMap { text -> String? in
            guard !text.isEmpty, text.utf8.count <= 64,
                  text.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || $0 == "_" }) else { return nil }
            return text
        }
        let quoted = name.map { " (oauth_problem=\($0))" } ?? " (HTTP \(status))"
        switch name {
        case "signature_invalid"?:
            return "Flickr refused the signature of \(step)\(quoted): the API secret is not the one of this API key "
                + "(check --api-secret)"
        case "consumer_key_unknown"?, "consumer_key_rejected"?, "consumer_key_refused"?:
            return "Flickr does not accept this API key\(quoted): check --api-key"
        case "token_rejected"?, "token_expired"?, "token_revoked"?, "token_used"?:
            return "Flickr rejected the request token\(quoted): it was already used, expired, or never authorized; "
                + "run `photofs login flickr` again"
        case "verifier_invalid"?:
            return "Flickr refused the verification code\(quoted): it is not the code the authorize page showed for "
                + "this sign-in; run `photofs login flickr` again (each sign-in has its own code)"
        case "permission_unknown"?, "permission_denied"?:
            return "the authorize page was not confirmed\(quoted): open the URL, allow photofs, then enter the code shown"
        case "nonce_used"?, "timestamp_refused"?:
            return "Flickr refused the request's timestamp or nonce\(quoted): check the computer's clock"
        default:
            return "Flickr refused \(step)\(quoted)"
        }
    }

    /// Token-like text: printable ASCII, no spaces (what goes into a URL and the accounts file).
    static func isTokenText(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 512 && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }
}
