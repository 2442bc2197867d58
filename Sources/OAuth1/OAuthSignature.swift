// OAuth 1.0a request signing with HMAC-SHA1 (RFC 5849 §3.4), for the client and for the origin that checks it.
import CCrypto
import Foundation

/// RFC 5849 §3.6 percent-encoding: every byte of the UTF-8 text but ALPHA, DIGIT, "-", ".", "_" and "~" as
/// "%XX" with upper-case hex. Stricter than `addingPercentEncoding(.urlQueryAllowed)`, which leaves "+",
/// "=", "&" and "/" alone: a signature over those would not match the server's.
public enum OAuthPercent {
    public static func encode(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
            }
        }
        return result
    }

    /// Decodes "%XX" escapes and, as `application/x-www-form-urlencoded` has it, "+" as a space. nil for a
    /// malformed escape or bytes that are not UTF-8 (an answer to refuse, not to guess at).
    public static func decode(_ text: String, plusIsSpace: Bool = true) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else if byte == UInt8(ascii: "+") && plusIsSpace {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// "a=1&b=x%20y" as pairs in order; nil when any part does not decode. The OAuth endpoints answer in
    /// this form (RFC 5849 §2.1, §2.3).
    public static func parseForm(_ body: String) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for part in body.split(separator: "&", omittingEmptySubsequences: true) {
            let fields = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(String(fields[0])),
                  let value = decode(fields.count > 1 ? String(fields[1]) : "") else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }
}

/// The application's identity (Flickr's "key" and "secret" of an app).
public struct OAuthConsumer: Sendable, Equatable {
    public var key: String
    public var secret: String
    public init(key: String, secret: String) { self.key = key; self.secret = secret }
}

/// A temporary (request) or access token and its secret.
public struct OAuthToken: Sendable, Equatable {
    public var token: String
    public var secret: String
    public init(token: String, secret: String) { self.token = token; self.secret = secret }
}

public enum OAuthSignature {
    public typealias Parameter = (name: String, value: String)

    /// RFC 5849 §3.4.1.2: scheme and host in lower case, the port only when it is not the scheme's default,
    /// the path ("/" when empty); no query, no fragment. nil for a URL without scheme or host.
    public static func baseURI(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty else { return nil }
        var text = "\(scheme)://\(host)"
        if let port = components.port, !(scheme == "http" && port == 80) && !(scheme == "https" && port == 443) {
            text += ":\(port)"
        }
        let path = components.percentEncodedPath
        return text + (path.isEmpty ? "/" : path)
    }

    /// The query of `url` as decoded pairs (RFC 5849 §3.4.1.3.1: query parameters are signed too).
    public static func queryParameters(_ url: String) -> [Parameter] {
        guard let query = URLComponents(string: url)?.percentEncodedQuery else { return [] }
        return OAuthPercent.parseForm(query) ?? []
    }

    /// RFC 5849 §3.4.1.3.2: every name and value encoded, sorted by name then value (byte order of the
    /// encoded text), joined as "name=value" with "&". `oauth_signature` is never part of it.
    public static func normalizedParameters(_ parameters: [Parameter]) -> String {
        parameters.filter { $0.name != "oauth_signature" }
            .map { (OAuthPercent.encode($0.name), OAuthPercent.encode($0.value)) }
            .sorted { $0.0 == $1.0 ? Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8))
                                   : Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// RFC 5849 §3.4.1.1: `METHOD&encoded base URI&encoded normalized parameters`. `parameters` are the
    /// request's other parameters (form body, oauth_*); the query of `url` is added here.
    public static func baseString(method: String, url: String, parameters: [Parameter]) -> String? {
        guard let uri = baseURI(url) else { return nil }
        let all = queryParameters(url) + parameters
        return method.uppercased() + "&" + OAuthPercent.encode(uri) + "&" + OAuthPercent.encode(normalizedParameters(all))
    }

    /// RFC 5849 §3.4.2: base64 of HMAC-SHA1 over the base string with key `consumer secret&token secret`
    /// (each encoded; the token secret empty before there is one). Empty only when libcrypto refuses (an
    /// OpenSSL configuration without SHA-1); `sign` and `isValid` refuse an empty signature.
    public static func hmacSHA1(baseString: String, consumerSecret: String, tokenSecret: String?) -> String {
        let key = Array((OAuthPercent.encode(consumerSecret) + "&" + OAuthPercent.encode(tokenSecret ?? "")).utf8)
        let data = Array(baseString.utf8)
        guard key.count <= Int(Int32.max) else { return "" }
        var code = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // HMAC() answers NULL on failure and writes the code's length; SHA-1's is 20 bytes. Given an output
        // buffer it keeps no state (only a NULL one means its static buffer), so threads may sign at once.
        guard HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &code, &length) != nil, length == 20 else { return "" }
        return Data(code.prefix(Int(length))).base64EncodedString()
    }

    /// The protocol parameters of one signed request (RFC 5849 §3.1), `oauth_signature` included; add them to
    /// the query (or form body) next to `parameters`. `extra` holds `oauth_callback` or `oauth_verifier`.
    /// nil for a URL without scheme or host, or when libcrypto cannot sign (see `hmacSHA1`).
    public static func sign(method: String, url: String, parameters: [Parameter], consumer: OAuthConsumer,
                            token: OAuthToken?, extra: [Parameter] = [], nonce: String = newNonce(),
                            timestamp: Int64 = Int64(Date().timeIntervalSince1970),
                            includeVersion: Bool = true) -> [Parameter]? {
        // `oauth_version` is optional (§3.1); Flickr's examples send it, RFC 5849's do not.
        var protocolParameters: [Parameter] = [
            ("oauth_consumer_key", consumer.key), ("oauth_nonce", nonce), ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", String(timestamp)),
        ]
        if includeVersion { protocolParameters.append(("oauth_version", "1.0")) }
        if let token { protocolParameters.append(("oauth_token", token.token)) }
        protocolParameters += extra
        guard let base = baseString(method: method, url: url, parameters: parameters + protocolParameters) else { return nil }
        let signature = hmacSHA1(baseString: base, consumerSecret: consumer.secret, tokenSecret: token?.secret)
        guard !signature.isEmpty else { return nil }
        return protocolParameters + [("oauth_signature", signature)]
    }

    /// Whether `parameters` (query, form body and oauth_* of a received request, `oauth_signature`
    /// included) carry a valid HMAC-SHA1 signature for these secrets. `url` is the request's URL without
    /// its query (the query's pairs are in `parameters`). Compared in constant time.
    public static func isValid(method: String, url: String, parameters: [Parameter], consumerSecret: String,
                               tokenSecret: String?) -> Bool {
        guard let given = parameters.first(where: { $0.name == "oauth_signature" })?.value,
              let uri = baseURI(url) else { return false }
        let base = method.uppercased() + "&" + OAuthPercent.encode(uri) + "&" + OAuthPercent.encode(normalizedParameters(parameters))
        let expected = hmacSHA1(baseString: base, consumerSecret: consumerSecret, tokenSecret: tokenSecret)
        let a = Array(given.utf8), b = Array(expected.utf8)
        guard !b.isEmpty, a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// 32 hex digits from the system's random source: unique per request, as §3.3 asks.
    public static func newNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &generator)) }.joined()
    }
}
