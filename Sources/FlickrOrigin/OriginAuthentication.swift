// Who is calling the loopback origin's REST API: the app by its key, or a signed-in account by its OAuth 1.0a
// signature, checked as Flickr does (codes 96–100).
import Foundation
import OAuth1

/// A Flickr member the origin knows (the account a login signs in as).
public struct OriginAccount: Equatable, Sendable {
    public var nsid: String
    public var username: String
    public var fullname: String
    public init(nsid: String, username: String, fullname: String) {
        self.nsid = nsid; self.username = username; self.fullname = fullname
    }
}

/// The caller of one REST request, once its key (and signature, when it carries one) checked out.
public enum OriginCaller: Equatable, Sendable {
    /// An unsigned call with the app's `api_key`: public data only.
    case app
    /// A correctly signed call with an access token of this account.
    case signed(nsid: String)

    public var nsid: String? {
        if case .signed(let nsid) = self { return nsid }
        return nil
    }
}

/// Access tokens the origin issued, and the nonces it has seen (a replayed nonce is refused, as RFC 5849 §3.3
/// lets a server do). Guarded by the server's lock.
struct OriginTokens {
    struct Grant { var secret: String; var nsid: String; var perms: String }
    var access: [String: Grant] = [:]
    var seenNonces = Set<String>()

    static func random(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }
}

extension FlickrOriginServer {
    /// Flickr's error answers for calls it will not serve (https://www.flickr.com/services/api/, "Error Codes").
    enum AuthFailure: Error, Equatable {
        case invalidKey, invalidSignature, missingSignature, invalidToken, insufficientPermissions

        var code: Int {
            switch self {
            case .invalidKey: return 100
            case .invalidSignature: return 96
            case .missingSignature: return 97
            case .invalidToken: return 98
            case .insufficientPermissions: return 99
            }
        }

        var message: String {
            switch self {
            case .invalidKey: return "Invalid API Key (Key has invalid format)"
            case .invalidSignature: return "Invalid signature"
            case .missingSignature: return "Missing signature"
            case .invalidToken: return "Invalid auth token"
            case .insufficientPermissions: return "Insufficient permissions. Method requires read privileges; none granted."
            }
        }
    }

    /// An access token for `nsid` as if its owner had gone through the browser step; tests that are not about
    /// logging in start from here.
    public func issueAccessToken(for nsid: String, perms: String = "read") -> OAuthToken {
        let token = OAuthToken(token: "\(OriginTokens.random(8))-\(OriginTokens.random(8))", secret: OriginTokens.random(8))
        withLock { tokens.access[token.token] = OriginTokens.Grant(secret: token.secret, nsid: nsid, perms: perms) }
        return token
    }

    /// Withdraws every access token of `nsid` (the member revoked the app).
    public func revokeAccessTokens(of nsid: String) {
        withLock { tokens.access = tokens.access.filter { $0.value.nsid != nsid } }
    }

    /// The URL the client signed: this server as the request's Host header names it, and the path.
    func signedURL(of request: ServerRequest) -> String {
        "http://\(request.headers["host"] ?? "127.0.0.1:\(port)")\(request.path)"
    }

    /// Who sent a REST request: unsigned with the app's `api_key`, or signed (HMAC-SHA1 over the consumer
    /// secret and the access token's secret) with one of the access tokens issued.
    func caller(of request: ServerRequest) -> Result<OriginCaller, AuthFailure> {
        let query = request.query
        let isSigned = query.keys.contains { $0.hasPrefix("oauth_") }
        guard isSigned else {
            return query["api_key"] == apiKey ? .success(.app) : .failure(.invalidKey)
        }
        guard query["oauth_consumer_key"] == apiKey else { return .failure(.invalidKey) }
        guard query["oauth_signature"] != nil else { return .failure(.missingSignature) }
        guard query["oauth_signature_method"] == "HMAC-SHA1" else { return .failure(.invalidSignature) }
        guard let tokenValue = query["oauth_token"], let grant = withLock({ tokens.access[tokenValue] }) else {
            return .failure(.invalidToken)
        }
        let parameters = query.map { (name: $0.key, value: $0.value) }
        guard OAuthSignature.isValid(method: request.method, url: signedURL(of: request), parameters: parameters,
                                     consumerSecret: apiSecret, tokenSecret: grant.secret) else {
            return .failure(.invalidSignature)
        }
        // A nonce is good for one request (with its timestamp): a replayed request is refused.
        let nonce = "\(query["oauth_timestamp"] ?? "")/\(query["oauth_nonce"] ?? "")"
        guard withLock({ tokens.seenNonces.insert(nonce).inserted }) else { return .failure(.invalidSignature) }
        return .success(.signed(nsid: grant.nsid))
    }

    func fail(_ failure: AuthFailure) -> ServerResponse { fail(failure.code, failure.message) }
}
