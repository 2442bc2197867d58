// Takes credentials out of a URL before it goes into a log line or an error message.
import Foundation

/// The one place that decides what of a URL may be shown.
///
/// Replaced by "…":
/// - the user information (`https://user:pass@host/` → `https://…@host/`);
/// - the value of every query (and fragment) parameter whose name, percent-decoded and lower-cased, is one
///   of `sensitiveNames` or contains one of `sensitiveFragments`. The fragments are deliberately broad
///   ("key" also hides `keyword=`): hiding a harmless value costs a log reader little, showing a secret
///   cannot be undone.
///
/// Kept: scheme, host, port, path (a Flickr image path holds the photo's own secret, which is already in
/// the library file and names the photo in every log line; it is not an account credential) and the
/// values of other parameters. The result is for people, not for requests: never fetch it.
public enum URLRedaction {
    public static let placeholder = "…"
    /// Flickr's and OAuth 1.0a's credential parameters, and common ones of other services.
    public static let sensitiveNames: Set<String> = [
        "api_key", "api_secret", "api_sig", "oauth_token", "oauth_signature", "oauth_consumer_key",
        "oauth_verifier", "oauth_token_secret", "secret", "token", "auth_token", "access_token",
        "refresh_token", "password", "passwd", "sig", "auth", "authorization", "code",
    ]
    public static let sensitiveFragments = ["secret", "token", "signature", "key", "password", "passwd", "credential"]

    public static func redacted(_ url: String) -> String {
        var rest = Substring(url)
        var output = ""
        // Scheme and authority: "scheme://[userinfo@]host[:port]".
        if let schemeEnd = rest.range(of: "://") {
            output += rest[..<schemeEnd.upperBound]
            rest = rest[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                output += placeholder + authority[at...]
            } else {
                output += authority
            }
            rest = rest[authorityEnd...]
        }
        let fragmentStart = rest.firstIndex(of: "#")
        let beforeFragment = rest[..<(fragmentStart ?? rest.endIndex)]
        if let queryStart = beforeFragment.firstIndex(of: "?") {
            output += beforeFragment[...queryStart]
            output += redactParameters(beforeFragment[beforeFragment.index(after: queryStart)...])
        } else {
            output += beforeFragment
        }
        if let fragmentStart {
            // OAuth's implicit flow returns "#access_token=...": a fragment is redacted like a query.
            output += "#" + redactParameters(rest[rest.index(after: fragmentStart)...])
        }
        return output
    }

    /// Whether a parameter's name (as it appears in the URL, possibly percent-encoded) is a credential's.
    public static func isSensitive(name: Substring) -> Bool {
        let decoded = percentDecoded(name).lowercased()
        return sensitiveNames.contains(decoded) || sensitiveFragments.contains { decoded.contains($0) }
    }

    private static func redactParameters(_ query: Substring) -> String {
        // "&" and ";" both separate parameters (HTML 4 allowed ";"); empty pieces are kept as they were.
        var result = ""
        var piece = Substring()
        var pieceStart = query.startIndex
        func flush(_ end: Substring.Index) {
            piece = query[pieceStart..<end]
            if let equals = piece.firstIndex(of: "="), isSensitive(name: piece[..<equals]) {
                result += piece[...equals] + placeholder
            } else {
                result += piece
            }
        }
        var index = query.startIndex
        while index < query.endIndex {
            if query[index] == "&" || query[index] == ";" {
                flush(index)
                result.append(query[index])
                pieceStart = query.index(after: index)
            }
            index = query.index(after: index)
        }
        flush(query.endIndex)
        return result
    }

    /// "%5F" → "_", "+" → " "; a malformed escape is kept as written (this only decides what to hide).
    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.first {
            utf8 = utf8.dropFirst()
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), utf8.count >= 2,
                      let high = hexValue(utf8[utf8.startIndex]), let low = hexValue(utf8[utf8.startIndex + 1]) {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
