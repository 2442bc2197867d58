// Signed-in Flickr accounts, kept in $XDG_CONFIG_HOME/photofs/flickr-accounts.json (0600 in a 0700 directory).
import Foundation
import OAuth1
import PhotoSources

/// One signed-in account: who it is, where its API is, and the four OAuth values that sign its calls. The
/// secrets are not properties anyone can print: `description`, `debugDescription` and the mirror show
/// who and where only, and `credentials` hands them on as a `SourceCredentials`, which never prints them.
public struct FlickrAccount: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var nsid: String
    public var username: String
    public var fullname: String
    public var restEndpoint: String
    public var oauthEndpoint: String
    /// When `photofs login` signed it in (seconds since 1970; nil if the file does not say).
    public var signedInAt: Int64?
    let consumer: OAuthConsumer
    let token: OAuthToken

    public init(nsid: String, username: String, fullname: String, restEndpoint: String, oauthEndpoint: String,
                consumer: OAuthConsumer, token: OAuthToken, signedInAt: Int64? = nil) {
        self.nsid = nsid; self.username = username; self.fullname = fullname
        self.restEndpoint = restEndpoint; self.oauthEndpoint = oauthEndpoint
        self.consumer = consumer; self.token = token; self.signedInAt = signedInAt
    }

    /// What signs this account's REST calls (`FlickrSource(options:credentials:...)`).
    public var credentials: SourceCredentials {
        .oauth1(consumerKey: consumer.key, consumerSecret: consumer.secret, token: token.token, tokenSecret: token.secret)
    }

    /// The options of a source that reads this account's API: its REST endpoint, everything else default.
    public var sourceOptions: FlickrSourceOptions {
        var options = FlickrSourceOptions()
        options.endpoint = restEndpoint
        return options
    }

    /// "ansel (12345678@N01) at https://api.flickr.com/services/rest/": never a secret.
    public var description: String { "\(username) (\(nsid)) at \(restEndpoint)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["nsid": nsid, "username": username, "restEndpoint": restEndpoint], displayStyle: .struct)
    }

    /// The same account of the same API: signing in again replaces it.
    func isSameAccount(as other: FlickrAccount) -> Bool {
        nsid == other.nsid && FlickrEndpoints.sameEndpoint(restEndpoint, other.restEndpoint)
    }
}

/// Why the account store could not do what was asked. The message names the file, the entry and the field,
/// never a value read from the file's secret fields.
public struct AccountStoreError: Error, CustomStringConvertible, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The file of signed-in accounts. Every read checks that the file is a regular file of this user with no
/// permission for anyone else (a wider file is refused, not repaired: its secrets may already have been
/// read, and the user should know); the directory is made 0700, and repaired to 0700 when wider, with a
/// notice. Writes take an exclusive lock on the directory, write a 0600 temporary file, fsync it and rename
/// it over the old one, so a crash leaves the old file or the new one, never half of one. The file is
/// hostile input like any other: a hand-edit gone wrong, a truncated write by another tool, wrong types all
/// end in an `AccountStoreError` naming what is wrong.
public struct FlickrAccountStore: Sendable {
    public static let fileName = "flickr-accounts.json"
    /// Written in the file; a file of another version is refused rather than misread.
    public static let formatVersion = 1
    /// A real file holds a few accounts of ~600 bytes each; 1 MiB means the wrong file.
    static let maxFileSize = 1 << 20
    /// Accounts kept at most: someone with 100 Flickr accounts on one machine is a script gone wrong.
    static let maxAccounts = 100

    public let directory: String
    private let file: PrivateConfigFile

    /// `notice` receives what the store repaired on its own (a directory made 0700).
    public init(directory: String, notice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.directory = directory
        self.file = PrivateConfigFile(directory: directory, name: FlickrAccountStore.fileName, maxSize: FlickrAccountStore.maxFileSize,
                                      revokeAdvice: "revoke photofs's access in your Flickr account settings", notice: notice,
                                      makeError: { AccountStoreError($0) })
    }

    /// `$XDG_CONFIG_HOME/photofs` when that is set to an absolute path (the XDG spec ignores a relative
    /// one), else `$HOME/.config/photofs`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config).appendingPathComponent("photofs").path
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".config/photofs").path
    }

    public var path: String { file.path }

    // MARK: Reading

    /// Every signed-in account, in the order they signed in; [] when there is no file.
    public func load() throws -> [FlickrAccount] {
        guard let data = try file.read() else { return [] }
        return try FlickrAccountStore.decode(data, path: path)
    }

    /// The account `selector` names (its NSID, or its username in any case), among those of `endpoint`
    /// when given; with no selector, the only one. Errors list the accounts there are, so the user can pick.
    public func account(_ selector: String?, endpoint: String? = nil) throws -> FlickrAccount {
        let all = try load()
        let candidates = endpoint.map { wanted in all.filter { FlickrEndpoints.sameEndpoint($0.restEndpoint, wanted) } } ?? all
        let place = endpoint.map { " at \($0)" } ?? ""
        guard !candidates.isEmpty else {
            throw AccountStoreError("no Flickr account is signed in\(place): run `photofs login flickr --api-key-file FILE "
                                    + "--api-secret-file FILE` first")
        }
        guard let selector else {
            guard candidates.count == 1 else {
                throw AccountStoreError("\(candidates.count) Flickr accounts are signed in\(place); pick one with "
                                        + "--account NSID|USERNAME:\n" + FlickrAccountStore.list(candidates))
            }
            return candidates[0]
        }
        let matches = candidates.filter { $0.nsid == selector || $0.username.lowercased() == selector.lowercased() }
        switch matches.count {
        case 1: return matches[0]
        case 0:
            throw AccountStoreError("no signed-in Flickr account is \"\(SourceText.clean(selector, limit: 100))\"\(place); "
                                    + "signed in:\n" + FlickrAccountStore.list(candidates))
        default:
            throw AccountStoreError("\(matches.count) signed-in accounts match \"\(SourceText.clean(selector, limit: 100))\" "
                                    + "(the same account of different endpoints); give --endpoint too:\n"
                                    + FlickrAccountStore.list(matches))
        }
    }

    /// "  ansel (12345678@N01) at https://api.flickr.com/services/rest/" per line.
    public static func list(_ accounts: [FlickrAccount]) -> String {
        accounts.map { "  \($0)" }.joined(separator: "\n")
    }

    // MARK: Writing

    /// Adds `account`, replacing the same account of the same endpoint (a second login refreshes its token).
    public func save(_ account: FlickrAccount) throws {
        try FlickrAccountStore.validate(account, entry: "the new account")
        try file.update { data in
            var accounts = try data.map { try FlickrAccountStore.decode($0, path: path) } ?? []
            accounts.removeAll { $0.isSameAccount(as: account) }
            guard accounts.count < FlickrAccountStore.maxAccounts else {
                throw AccountStoreError("\(path) already holds \(accounts.count) accounts; sign some out first")
            }
            accounts.append(account)
            return try FlickrAccountStore.encode(accounts)
        }
    }

    /// Signs out the account `selector` names (see `account(_:endpoint:)`) and returns it. The file goes
    /// when no account is left.
    @discardableResult
    public func remove(_ selector: String?, endpoint: String? = nil) throws -> FlickrAccount {
        var gone: FlickrAccount?
        try file.update { data in
            let found = try account(selector, endpoint: endpoint)
            gone = found
            let kept = try (data.map { try FlickrAccountStore.decode($0, path: path) } ?? []).filter { !$0.isSameAccount(as: found) }
            return kept.isEmpty ? nil : try FlickrAccountStore.encode(kept)
        }
        guard let gone else { throw AccountStoreError("no Flickr account is signed in") }
        return gone
    }

    // MARK: The file

    /// The accounts in a file's bytes; every error names the entry and field, never a value.
    static func decode(_ data: Data, path: String) throws -> [FlickrAccount] {
        let fix = "fix it, or delete it and sign in again"
        let document: JSONValue
        do { document = try JSONValue.parse(data) } catch {
            throw AccountStoreError("\(path) is not valid JSON (\(error)); \(fix)")
        }
        guard case .object(let top) = document else {
            throw AccountStoreError("\(path) holds \(document.kindName), not an object; \(fix)")
        }
        guard case .number(let version)? = top["version"], let number = version.int64 else {
            throw AccountStoreError("\(path) has no numeric \"version\"; \(fix)")
        }
        guard number == Int64(formatVersion) else {
            throw AccountStoreError("\(path) is version \(number) of the format; this photofs reads version \(formatVersion)")
        }
        guard let items = top["accounts"]?.arrayValue else {
            throw AccountStoreError("\(path) has no \"accounts\" list; \(fix)")
        }
        guard items.count <= maxAccounts else { throw AccountStoreError("\(path) lists \(items.count) accounts, more than \(maxAccounts)") }
        var accounts: [FlickrAccount] = []
        for (index, item) in items.enumerated() {
            let entry = "account \(index + 1) of \(path)"
            guard case .object(let fields) = item else { throw AccountStoreError("\(entry) is \(item.kindName), not an object; \(fix)") }
            func text(_ name: String, optional: Bool = false) throws -> String {
                switch fields[name] {
                case .string(let value)?: return value
                case nil where optional, .null? where optional: return ""
                case nil: throw AccountStoreError("\(entry) has no \"\(name)\"; \(fix)")
                case let other?: throw AccountStoreError("\(entry): \"\(name)\" is \(other.kindName), not text; \(fix)")
                }
            }
            var signedIn: Int64?
            if case .number(let when)? = fields["signed_in"] { signedIn = when.int64 }
            let account = FlickrAccount(
                nsid: try text("nsid"), username: try text("username"), fullname: try text("fullname", optional: true),
                restEndpoint: try text("rest_endpoint"), oauthEndpoint: try text("oauth_endpoint"),
                consumer: OAuthConsumer(key: try text("consumer_key"), secret: try text("consumer_secret")),
                token: OAuthToken(token: try text("oauth_token"), secret: try text("oauth_token_secret")),
                signedInAt: signedIn)
            try validate(account, entry: entry)
            accounts.append(account)
        }
        return accounts
    }

    /// The rules every field keeps, so that nothing read from the file can break a URL, a message or a
    /// terminal line: identifiers and secrets are printable ASCII without spaces, names have no control
    /// characters, endpoints are http(s) URLs. Messages name the field only.
    static func validate(_ account: FlickrAccount, entry: String) throws {
        func check(_ name: String, _ value: String, limit: Int, allowEmpty: Bool = false, _ isAllowed: (Unicode.Scalar) -> Bool) throws {
            guard allowEmpty || !value.isEmpty else { throw AccountStoreError("\(entry): \"\(name)\" is empty") }
            guard value.utf8.count <= limit else { throw AccountStoreError("\(entry): \"\(name)\" is longer than \(limit) bytes") }
            guard value.unicodeScalars.allSatisfy(isAllowed) else {
                throw AccountStoreError("\(entry): \"\(name)\" has characters it cannot have")
            }
        }
        let token: (Unicode.Scalar) -> Bool = { $0.value > 0x20 && $0.value < 0x7F }
        let name: (Unicode.Scalar) -> Bool = { !$0.properties.generalCategory.isControlOrFormat }
        try check("nsid", account.nsid, limit: 64) { token($0) && $0 != "/" && $0 != "\\" }
        try check("username", account.username, limit: 256, name)
        try check("fullname", account.fullname, limit: 256, allowEmpty: true, name)
        try check("consumer_key", account.consumer.key, limit: 512, token)
        try check("consumer_secret", account.consumer.secret, limit: 512, token)
        try check("oauth_token", account.token.token, limit: 512, token)
        try check("oauth_token_secret", account.token.secret, limit: 512, token)
        for (field, value) in [("rest_endpoint", account.restEndpoint), ("oauth_endpoint", account.oauthEndpoint)] {
            try check(field, value, limit: 2048, token)
            guard FlickrEndpoints.isHTTPURL(value) else { throw AccountStoreError("\(entry): \"\(field)\" is not an http(s) URL") }
        }
    }

    static func encode(_ accounts: [FlickrAccount]) throws -> Data {
        let items: [[String: Any]] = accounts.map { account in
            var item: [String: Any] = [
                "nsid": account.nsid, "username": account.username, "fullname": account.fullname,
                "rest_endpoint": account.restEndpoint, "oauth_endpoint": account.oauthEndpoint,
                "consumer_key": account.consumer.key, "consumer_secret": account.consumer.secret,
                "oauth_token": account.token.token, "oauth_token_secret": account.token.secret,
            ]
            if let when = account.signedInAt { item["signed_in"] = when }
            return item
        }
        let document: [String: Any] = ["version": formatVersion, "accounts": items]
        do {
            return try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw AccountStoreError("cannot encode the accounts: \(error)")
        }
    }
}

private extension Unicode.GeneralCategory {
    /// Cc, Cf, and line and paragraph separators: what would break a message line or fool a reader of it.
    var isControlOrFormat: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse: return true
        default: return false
        }
    }
}
