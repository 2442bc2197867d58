// The loopback origin's sign-in (Flickr's OAuth 1.0a endpoints for desktop apps) and its throttling hooks (429).
import Foundation
import OAuth1

/// Request tokens handed out by `request_token` and not yet exchanged, and who the authorize page signs in.
/// Guarded by the server's lock.
struct OriginOAuthFlow {
    struct RequestGrant {
        var secret: String
        var callback: String
        /// Set by the authorize page: the member who said yes, and the code they were shown.
        var authorizedBy: String?
        var verifier: String?
        var perms: String?
    }
    var requestTokens: [String: RequestGrant] = [:]
    /// nil: the library's first account, as a browser already signed in to Flickr would be.
    var authorizingNSID: String?
}

/// Retry-After for scripted throttling answers (arrival times are in the REST call log).
struct OriginThrottling {
    var retryAfter: String?
}

extension FlickrOriginServer {
    public static let oauthPath = "/services/oauth/"
    /// The OAuth endpoint of this origin (`request_token`, `authorize`, `access_token` go after it).
    public var oauthEndpoint: String { "http://127.0.0.1:\(port)\(FlickrOriginServer.oauthPath)" }

    // MARK: Test hooks

    /// The member the authorize page signs in as (nil: the library's first account).
    public func setAuthorizingAccount(nsid: String?) { withLock { oauthFlow.authorizingNSID = nsid } }

    /// Scripted 429 and 503 answers (REST: `scriptRESTStatuses`; images: `scriptStatuses`) carry this
    /// `Retry-After` value, sent as it is: "2", an HTTP date, or garbage to see a client ignore it. nil: none.
    public func setScriptedRetryAfter(_ value: String?) { withLock { throttling.retryAfter = value } }

    /// When each REST request arrived (since the last `resetCounters()`), in monotonic seconds, oldest first.
    public var restArrivalTimes: [TimeInterval] { restCallLog.map(\.arrivedAt) }

    /// How many request tokens are waiting to be exchanged (issued, not yet used).
    public var pendingRequestTokenCount: Int { withLock { oauthFlow.requestTokens.count } }

    // MARK: Hooks the request handlers call

    /// A scripted failure answer; 429 and 503 carry the scripted Retry-After.
    func scriptedFailure(_ status: Int) -> ServerResponse {
        var response = ServerResponse.text(status, "scripted failure")
        if status == 429 || status == 503, let value = withLock({ throttling.retryAfter }) {
            response.headers.append(("Retry-After", value))
        }
        return response
    }

    /// Routes `/services/oauth/...`; nil for any other path.
    func handleOAuth(_ request: ServerRequest) -> ServerResponse? {
        guard request.path.hasPrefix(FlickrOriginServer.oauthPath) else { return nil }
        switch request.path.dropFirst(FlickrOriginServer.oauthPath.count) {
        case "request_token": return requestToken(request)
        case "authorize": return authorize(request)
        case "access_token": return accessToken(request)
        default: return .text(404, "not found")
        }
    }

    // MARK: The three endpoints (https://www.flickr.com/services/api/auth.oauth.html)

    /// Step 1: a request token for a consumer whose request is signed with its secret alone.
    private func requestToken(_ request: ServerRequest) -> ServerResponse {
        if let refusal = checkConsumerRequest(request, tokenSecret: nil) { return refusal }
        guard let callback = request.query["oauth_callback"], !callback.isEmpty else {
            return problem("parameter_absent&oauth_parameters_absent=oauth_callback")
        }
        // Flickr's request tokens look like "72157626737672178-022bbd2f4c2f3432", secrets like "fccb68c4e6103197".
        let token = "72157\(Self.randomDigits(12))-\(OriginTokens.random(8))"
        let secret = OriginTokens.random(8)
        withLock { oauthFlow.requestTokens[token] = OriginOAuthFlow.RequestGrant(secret: secret, callback: callback) }
        return form([("oauth_callback_confirmed", "true"), ("oauth_token", token), ("oauth_token_secret", secret)])
    }

    /// Step 2: the page a member sees in the browser. The origin's member is already signed in and says yes
    /// at once; with `oauth_callback=oob` the page shows the 9-digit verifier to type into the app, as
    /// Flickr's does, otherwise it redirects to the callback with the verifier.
    private func authorize(_ request: ServerRequest) -> ServerResponse {
        let token = request.query["oauth_token"] ?? ""
        let perms = request.query["perms"] ?? "read"
        guard ["read", "write", "delete"].contains(perms) else {
            return page(400, "Oops!", "The app asked for permissions (\(Self.html(perms))) that Flickr does not know.")
        }
        enum Outcome { case refused(String), granted(verifier: String, callback: String, account: OriginAccount) }
        let outcome: Outcome = withLock {
            guard var grant = oauthFlow.requestTokens[token] else {
                return .refused("This authorization request is not valid: the token is unknown, expired or already used.")
            }
            let wanted = oauthFlow.authorizingNSID
            guard let account = wanted.map({ nsid in library.accounts.first { $0.nsid == nsid } })
                    ?? library.accounts.first else {
                return .refused("Nobody is signed in to this origin (its library has no accounts).")
            }
            let verifier = grant.verifier ?? "\(Self.randomDigits(3))-\(Self.randomDigits(3))-\(Self.randomDigits(3))"
            grant.authorizedBy = account.nsid
            grant.verifier = verifier
            grant.perms = perms
            oauthFlow.requestTokens[token] = grant
            return .granted(verifier: verifier, callback: grant.callback, account: account)
        }
        switch outcome {
        case .refused(let reason):
            return page(400, "Oops!", Self.html(reason))
        case .granted(let verifier, let callback, let account) where callback == "oob":
            return page(200, "You have successfully authorized the application",
                        "Signed in as <b>\(Self.html(account.username))</b>. Access: \(Self.html(perms)).</p>"
                        + "<p>Copy this code into the application to finish:</p>"
                        + "<p id=\"verifier\" style=\"font-size:2em\"><span>\(verifier)</span>")
        case .granted(let verifier, let callback, _):
            let separator = callback.contains("?") ? "&" : "?"
            let location = callback + separator + "oauth_token=" + OAuthPercent.encode(token)
                + "&oauth_verifier=" + OAuthPercent.encode(verifier)
            return ServerResponse(status: 302, headers: [("Location", location)])
        }
    }

    /// Step 3: the access token, for a request signed with the consumer secret and the request token's secret
    /// and carrying the verifier the member was shown. A request token is good for one exchange: any
    /// attempt with a known token uses it up, so a verifier cannot be guessed by trying again.
    private func accessToken(_ request: ServerRequest) -> ServerResponse {
        let token = request.query["oauth_token"] ?? ""
        guard let grant = withLock({ oauthFlow.requestTokens[token] }) else { return problem("token_rejected") }
        if let refusal = checkConsumerRequest(request, tokenSecret: grant.secret) { return refusal }
        // The signature is right: the token is spent whatever follows.
        guard withLock({ oauthFlow.requestTokens.removeValue(forKey: token) }) != nil else { return problem("token_rejected") }
        guard let nsid = grant.authorizedBy, let expected = grant.verifier else { return problem("permission_unknown") }
        guard let verifier = request.query["oauth_verifier"], Self.constantTimeEqual(verifier, expected) else {
            return problem("verifier_invalid")
        }
        let account = withLock { library.accounts.first { $0.nsid == nsid } }
            ?? OriginAccount(nsid: nsid, username: nsid, fullname: "")
        let access = issueAccessToken(for: nsid, perms: grant.perms ?? "read")
        return form([("fullname", account.fullname), ("oauth_token", access.token), ("oauth_token_secret", access.secret),
                     ("user_nsid", account.nsid), ("username", account.username)])
    }

    // MARK: Checks and answers

    /// The consumer key, signature method and HMAC-SHA1 signature of a request to an OAuth endpoint; nil
    /// when they check out, else Flickr's 401 answer. A wrong signature answers `signature_invalid` with the
    /// base string the origin computed (`debug_sbs`), as Flickr does: the client must never print it, it
    /// holds the consumer key and the token.
    private func checkConsumerRequest(_ request: ServerRequest, tokenSecret: String?) -> ServerResponse? {
        let query = request.query
        guard query["oauth_consumer_key"] == apiKey else { return problem("consumer_key_unknown") }
        guard query["oauth_signature_method"] == "HMAC-SHA1" else { return problem("signature_method_rejected") }
        guard query["oauth_signature"] != nil else { return problem("parameter_absent&oauth_parameters_absent=oauth_signature") }
        let parameters = query.map { (name: $0.key, value: $0.value) }
        let url = signedURL(of: request)
        guard OAuthSignature.isValid(method: request.method, url: url, parameters: parameters, consumerSecret: apiSecret,
                                     tokenSecret: tokenSecret) else {
            let base = OAuthSignature.baseString(method: request.method, url: url, parameters: parameters) ?? ""
            return problem("signature_invalid&debug_sbs=\(base)")
        }
        let nonce = "\(query["oauth_timestamp"] ?? "")/\(query["oauth_nonce"] ?? "")"
        guard withLock({ tokens.seenNonces.insert(nonce).inserted }) else { return problem("nonce_used") }
        return nil
    }

    /// Flickr's refusal of an OAuth request: HTTP 401 with `oauth_problem=...` as the body (RFC 5849 §3.2
    /// says 401 for a bad signature or token; the problem names come from the OAuth Problem Reporting
    /// extension, which Flickr follows).
    private func problem(_ text: String) -> ServerResponse {
        ServerResponse(status: 401, headers: [("Content-Type", "text/plain; charset=utf-8")],
                       body: Data("oauth_problem=\(text)".utf8))
    }

    private func form(_ pairs: [(String, String)]) -> ServerResponse {
        let body = pairs.map { OAuthPercent.encode($0.0) + "=" + OAuthPercent.encode($0.1) }.joined(separator: "&")
        return ServerResponse(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(body.utf8))
    }

    private func page(_ status: Int, _ title: String, _ body: String) -> ServerResponse {
        let html = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Flickr: \(title)</title></head>"
            + "<body><h1>\(title)</h1><p>\(body)</p></body></html>"
        return ServerResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")], body: Data(html.utf8))
    }

    static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }

    static func randomDigits(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
