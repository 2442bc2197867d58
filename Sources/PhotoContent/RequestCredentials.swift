// Headers that carry a credential (Immich's x-api-key) added to the requests of one server, never printed.
import Foundation

/// Secret request headers, each bound to the URL prefix of the server it belongs to. `HTTPClient` adds a
/// header only to requests whose URL starts with its prefix, so the key of one server never reaches another
/// (nor a redirect target: requests that carry one do not follow redirects). Keys stay out of URLs, and so
/// out of cache keys, proxy logs and the library. Its description, debug description and mirror show no value.
public struct RequestCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    struct Entry: Sendable {
        /// "http://host:port/api/": scheme and host lower-cased, ending in "/".
        let prefix: String
        let name: String
        let value: String
    }
    private var entries: [Entry] = []

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }

    /// Adds `name: value` to every request under `prefix`. Refused (false) when the prefix is not an http(s)
    /// URL, or the name or value could split a header line (CR, LF, NUL) or is empty.
    @discardableResult
    public mutating func add(prefix: String, name: String, value: String) -> Bool {
        guard let normalized = RequestCredentials.normalizedPrefix(prefix), !name.isEmpty, !value.isEmpty,
              name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != ":" }),
              value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else { return false }
        entries.removeAll { $0.prefix == normalized && $0.name.lowercased() == name.lowercased() }
        entries.append(Entry(prefix: normalized, name: name, value: value))
        return true
    }

    /// The header lines ("x-api-key: …") for a request to `url`; empty for a URL of no registered server.
    /// The URL's scheme and host are compared without case; its path as it is.
    public func headers(for url: String) -> [String] {
        guard !entries.isEmpty, let target = RequestCredentials.normalizedPrefix(url, keepPath: true) else { return [] }
        return entries.filter { target.hasPrefix($0.prefix) }.map { "\($0.name): \($0.value)" }
    }

    /// Every secret value, for redacting text that might hold one.
    public var secrets: [String] { entries.map(\.value) }

    /// "http://HOST:1/api" → "http://host:1/api/"; with `keepPath`, the path is kept as it is (a request URL).
    static func normalizedPrefix(_ url: String, keepPath: Bool = false) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let hostEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let host = rest[..<hostEnd].lowercased()
        guard !host.isEmpty, !host.contains("@") else { return nil }
        var path = String(rest[hostEnd...])
        if !keepPath {
            if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<cut]) }
            if !path.hasSuffix("/") { path += "/" }
        } else if path.isEmpty {
            path = "/"
        }
        return "\(scheme)://\(host)\(path)"
    }

    public var description: String {
        "request credentials for \(entries.count) server(s) (redacted)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
