// `--proxy URL` / `-o proxy=URL`: the HTTP proxy (a household's caching nginx, a company's squid) every
// request of a mount goes through, checked before libcurl sees it.
import Foundation
import PhotoContent

public enum ProxySetting {
    /// What libcurl 7.88 can talk to as a proxy.
    public static let schemes: Set<String> = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]
    /// Words that mean "no proxy, even if the environment names one".
    public static let noneWords: Set<String> = ["none", "direct", "off"]

    /// The proxy URL for libcurl, or "" for none. `host:port` means `http://host:port` (libcurl's reading
    /// too). A user name or password is refused: the command line (and an fstab line, through mount(8)) is
    /// in the process list every user can read. Credentials go in `https_proxy`/`http_proxy` instead,
    /// which only the user and root can read (/proc/PID/environ is 0400). The message never repeats the
    /// value, which may hold a password.
    public static func parse(_ text: String, name: String) throws -> String {
        let value = text.trimmingCharacters(in: .whitespaces)
        if noneWords.contains(value.lowercased()) { return "" }
        let withScheme = value.contains("://") ? value : "http://" + value
        guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw OptionError("\(name) takes a proxy URL like http://proxy.home:3128 (or none), and this is not one")
        }
        guard components.user == nil && components.password == nil else {
            throw OptionError("\(name) cannot hold a user name or password: every user can read the command line. "
                + "Put the proxy with its credentials in the https_proxy and http_proxy environment variables instead")
        }
        guard schemes.contains(scheme) else {
            throw OptionError("\(name) takes an http, https, socks4, socks4a, socks5 or socks5h proxy, not \(scheme)://")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil else {
            throw OptionError("\(name) takes a proxy's scheme, host and port only (http://proxy.home:3128), not a path")
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw OptionError("\(name) has a port out of range (1 to 65535)")
        }
        // An IPv6 literal keeps its brackets ("[::1]"), whichever way URLComponents hands it back.
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let hostPart = bare.contains(":") ? "[\(bare)]" : bare
        return "\(scheme)://\(hostPart)" + (components.port.map { ":\($0)" } ?? "")
    }
}

extension ProxySetting {
    /// For the "mounted" log line: the proxy in use, its credentials hidden. libcurl reads the lower-case
    /// `http_proxy` only (an upper-case HTTP_PROXY can be set by a CGI request's `Proxy:` header).
    public static func describe(configured: String?, environment: [String: String]) -> String {
        if let configured { return configured.isEmpty ? "none" : configured }
        for name in ["https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY"] {
            if let value = environment[name], !value.isEmpty {
                return URLRedaction.redacted(value) + " (\(name))"
            }
        }
        return "none"
    }
}
