// A source's secrets, which print as "redacted", and the redaction every message and log line passes through.
import Foundation
import Logging
import PhotoContent

/// What a source signs its calls with. Its `description`, `debugDescription` and mirror never show a
/// secret, so `"\(credentials)"`, `dump(credentials)` and a struct that holds it print safely.
public struct SourceCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private enum Storage: Sendable {
        case none
        case apiKey(String)
        /// OAuth 1.0a (Flickr's signed calls, next issue): consumer key and secret, access token and secret.
        case oauth1(consumerKey: String, consumerSecret: String, token: String, tokenSecret: String)
    }
    private let storage: Storage

    public static let none = SourceCredentials(storage: .none)
    public static func apiKey(_ key: String) -> SourceCredentials { SourceCredentials(storage: .apiKey(key)) }
    public static func oauth1(consumerKey: String, consumerSecret: String, token: String, tokenSecret: String) -> SourceCredentials {
        SourceCredentials(storage: .oauth1(consumerKey: consumerKey, consumerSecret: consumerSecret, token: token,
                                           tokenSecret: tokenSecret))
    }

    /// The key sent as `api_key` (an OAuth consumer key is also the API key, as Flickr has it).
    public var apiKey: String? {
        switch storage {
        case .none: return nil
        case .apiKey(let key): return key
        case .oauth1(let consumerKey, _, _, _): return consumerKey
        }
    }

    /// The four OAuth 1.0a values, for the signer only; nil for other credentials.
    public var oauth1: (consumerKey: String, consumerSecret: String, token: String, tokenSecret: String)? {
        if case .oauth1(let key, let secret, let token, let tokenSecret) = storage { return (key, secret, token, tokenSecret) }
        return nil
    }

    /// Every secret value, for `SecretRedactor`.
    public var secrets: [String] {
        switch storage {
        case .none: return []
        case .apiKey(let key): return [key]
        case .oauth1(let key, let secret, let token, let tokenSecret): return [key, secret, token, tokenSecret]
        }
    }

    public var redactor: SecretRedactor { SecretRedactor(secrets: secrets) }

    public var description: String {
        switch storage {
        case .none: return "no credentials"
        case .apiKey: return "API key (redacted)"
        case .oauth1: return "OAuth 1.0a token (redacted)"
        }
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// Removes secrets from text before it is shown: the values themselves in every encoding a URL or a
/// message may carry them in (wherever they appear), and the value of any `name=value` whose name is a
/// credential's. Which names those are is decided in one place, `URLRedaction.isSensitive(name:)`, and both
/// mask with the same `URLRedaction.placeholder`, so a log reader sees one convention.
public struct SecretRedactor: Sendable {
    public static let mask = URLRedaction.placeholder
    /// Secrets shorter than this are replaced only where a secret parameter carries them: replacing a
    /// 3-letter value everywhere would mangle ordinary words. Flickr keys are 32 hex digits, secrets 16.
    public static let minimumValueLength = 6

    private let variants: [String]

    public init(secrets: [String]) {
        var variants = Set<String>()
        for secret in secrets where secret.count >= SecretRedactor.minimumValueLength {
            variants.insert(secret)
            for allowed in [CharacterSet.alphanumerics, .urlQueryAllowed, .urlPathAllowed] {
                if let encoded = secret.addingPercentEncoding(withAllowedCharacters: allowed) {
                    variants.insert(encoded)
                    variants.insert(encoded.replacingOccurrences(of: "%20", with: "+"))
                    variants.insert(SecretRedactor.lowercasingEscapes(encoded))
                }
            }
        }
        // Longest first, so a secret that contains another is replaced whole.
        self.variants = variants.sorted { $0.count > $1.count }
    }

    public func redact(_ text: String) -> String {
        var text = text
        for variant in variants where text.contains(variant) {
            text = text.replacingOccurrences(of: variant, with: SecretRedactor.mask)
        }
        return SecretRedactor.redactParameters(text)
    }

    /// `name=value` wherever `URLRedaction.isSensitive(name:)` calls the name a credential's: the value, up
    /// to the next `&`, space, quote or end, is masked. A name is the run of letters, digits, `_` and `%`
    /// just before the `=` (so `api%5Fkey=` is found too; the check percent-decodes and lower-cases it).
    public static func redactParameters(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var nameStart = 0
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "=", nameStart < index,
               URLRedaction.isSensitive(name: Substring(String(String.UnicodeScalarView(scalars[nameStart..<index])))) {
                result.append(scalar)
                index += 1
                // A quoted value (`password="a b"`) is masked to its closing quote, which stays.
                if index < scalars.count, scalars[index] == "\"" || scalars[index] == "'" {
                    let quote = scalars[index]
                    result.append(quote)
                    index += 1
                    while index < scalars.count, scalars[index] != quote { index += 1 }
                } else {
                    while index < scalars.count, !isValueEnd(scalars[index]) { index += 1 }
                }
                result.append(contentsOf: mask.unicodeScalars)
                nameStart = index
                continue
            }
            result.append(scalar)
            index += 1
            if !isNameScalar(scalar) { nameStart = index }
        }
        return String(result)
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "%"
    }

    private static func isValueEnd(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "&" || scalar == "\"" || scalar == "'" || scalar == ")" || scalar == ">" || scalar == "#"
            || scalar.properties.isWhitespace || scalar.value < 0x20
    }

    private static func lowercasingEscapes(_ text: String) -> String {
        var result = ""
        var pendingHex = 0
        for character in text {
            if character == "%" { pendingHex = 2; result.append(character); continue }
            if pendingHex > 0 { pendingHex -= 1; result += character.lowercased(); continue }
            result.append(character)
        }
        return result
    }
}

/// A log handler that passes every message and metadata value through a `SecretRedactor` before the
/// handler it wraps sees it. Sources wrap the logger they give their HTTP client, whose retry lines carry
/// the request URL, so a secret in a query string never reaches a log whatever that client does.
public struct RedactingLogHandler: LogHandler {
    private var upstream: LogHandler
    private let redactor: SecretRedactor

    public init(wrapping upstream: LogHandler, redactor: SecretRedactor) {
        self.upstream = upstream
        self.redactor = redactor
    }

    /// `logger` with every line redacted.
    public static func logger(_ logger: Logger, redactor: SecretRedactor) -> Logger {
        var wrapped = logger
        wrapped.handler = RedactingLogHandler(wrapping: logger.handler, redactor: redactor)
        return wrapped
    }

    public var logLevel: Logger.Level {
        get { upstream.logLevel }
        set { upstream.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { upstream.metadata }
        set { upstream.metadata = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { upstream[metadataKey: key] }
        set { upstream[metadataKey: key] = newValue }
    }

    public func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
                    file: String, function: String, line: UInt) {
        let cleaned = metadata?.mapValues(redact)
        upstream.log(level: level, message: "\(redactor.redact(message.description))", metadata: cleaned,
                     source: source, file: file, function: function, line: line)
    }

    private func redact(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): return .string(redactor.redact(text))
        case .stringConvertible(let convertible): return .string(redactor.redact(convertible.description))
        case .array(let values): return .array(values.map(redact))
        case .dictionary(let values): return .dictionary(values.mapValues(redact))
        }
    }
}
