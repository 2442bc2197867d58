// The signed-in Immich servers: server, user and API key in a 0600 file beside Flickr's, never printed.
import Foundation
import PhotoSources

/// One Immich server signed in to with one API key. Its description, debug description and mirror never
/// show the key, so it prints safely anywhere.
public struct ImmichAccount: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var server: String
    public var userID: String
    public var userName: String
    public var email: String
    public var signedInAt: Int64?
    let apiKey: String

    public init(server: String, userID: String, userName: String, email: String, apiKey: String, signedInAt: Int64?) {
        self.server = server; self.userID = userID; self.userName = userName; self.email = email
        self.apiKey = apiKey; self.signedInAt = signedInAt
    }

    /// The key, for the client and a mount's request credentials only.
    public var credentials: SourceCredentials { .apiKey(apiKey) }
    public var description: String { "\(userName) (\(email.isEmpty ? userID : email)) at \(server)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["server": server, "user": userName], displayStyle: .struct) }
}

/// `$XDG_CONFIG_HOME/photofs/immich-accounts.json`, with the rules of Flickr's file: the directory 0700
/// (repaired with a notice), the file 0600 of this user (a wider one is refused: its key may have been read),
/// no symlink, at most 1 MiB, written to a 0600 temporary file, fsynced and renamed under a directory lock.
public struct ImmichAccountStore: Sendable {
    public static let fileName = "immich-accounts.json"
    public static let formatVersion = 1
    static let maxFileSize = 1 << 20
    static let maxAccounts = 100

    public let directory: String
    private let file: PrivateConfigFile

    public init(directory: String, notice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.directory = directory
        self.file = PrivateConfigFile(directory: directory, name: ImmichAccountStore.fileName, maxSize: ImmichAccountStore.maxFileSize,
                                      revokeAdvice: "revoke the API key in Immich (Account Settings → API Keys)", notice: notice,
                                      makeError: { AccountFileError($0) })
    }

    public var path: String { file.path }

    public func load() throws -> [ImmichAccount] {
        guard let data = try file.read() else { return [] }
        return try ImmichAccountStore.decode(data, path: path)
    }

    /// The account of `server` (any spelling `ImmichClient.normalizedServer` accepts), else the only one.
    public func account(server: String?) throws -> ImmichAccount {
        let all = try load()
        guard !all.isEmpty else {
            throw AccountFileError("no Immich server is signed in: run `photofs login immich --server URL --api-key-file FILE` first")
        }
        if let server {
            guard let wanted = ImmichClient.normalizedServer(server) else { throw AccountFileError("--server is not an http(s) URL") }
            guard let match = all.first(where: { $0.server == wanted }) else {
                throw AccountFileError("\(wanted) is not signed in; signed in:\n" + all.map { "  \($0)" }.joined(separator: "\n"))
            }
            return match
        }
        guard all.count == 1 else {
            throw AccountFileError("\(all.count) Immich servers are signed in; pick one with --server URL:\n"
                                   + all.map { "  \($0)" }.joined(separator: "\n"))
        }
        return all[0]
    }

    /// Adds `account`, replacing the one of the same server (a second login changes the key).
    public func save(_ account: ImmichAccount) throws {
        try ImmichAccountStore.validate(account, entry: "the new account")
        try file.update { data in
            var accounts = try data.map { try ImmichAccountStore.decode($0, path: path) } ?? []
            accounts.removeAll { $0.server == account.server }
            guard accounts.count < ImmichAccountStore.maxAccounts else {
                throw AccountFileError("\(path) already holds \(accounts.count) servers; sign some out first")
            }
            accounts.append(account)
            return try ImmichAccountStore.encode(accounts)
        }
    }

    /// Forgets the account of `server` (or the only one) and returns it; the file goes with the last one.
    @discardableResult
    public func remove(server: String?) throws -> ImmichAccount {
        var gone: ImmichAccount?
        try file.update { data in
            let accounts = try data.map { try ImmichAccountStore.decode($0, path: path) } ?? []
            let chosen = try account(server: server)
            gone = chosen
            let kept = accounts.filter { $0.server != chosen.server }
            return kept.isEmpty ? nil : try ImmichAccountStore.encode(kept)
        }
        guard let gone else { throw AccountFileError("no Immich server is signed in") }
        return gone
    }

    static func decode(_ data: Data, path: String) throws -> [ImmichAccount] {
        let fix = "fix it, or delete it and sign in again"
        let document: JSONValue
        do { document = try JSONValue.parse(data) } catch { throw AccountFileError("\(path) is not valid JSON (\(error)); \(fix)") }
        guard case .number(let version)? = document["version"], version.int64 == Int64(formatVersion) else {
            throw AccountFileError("\(path) is not version \(formatVersion) of the Immich accounts file; \(fix)")
        }
        guard let items = document["accounts"]?.arrayValue, items.count <= maxAccounts else {
            throw AccountFileError("\(path) has no \"accounts\" list of at most \(maxAccounts); \(fix)")
        }
        return try items.enumerated().map { index, item in
            let entry = "account \(index + 1) of \(path)"
            func text(_ name: String) throws -> String {
                guard case .string(let value)? = item[name] else { throw AccountFileError("\(entry) has no text \"\(name)\"; \(fix)") }
                return value
            }
            var signedIn: Int64?
            if case .number(let when)? = item["signed_in"] { signedIn = when.int64 }
            let account = ImmichAccount(server: try text("server"), userID: try text("user_id"), userName: try text("user_name"),
                                        email: try text("email"), apiKey: try text("api_key"), signedInAt: signedIn)
            try validate(account, entry: entry)
            return account
        }
    }

    /// Nothing read from the file may break a header, a URL or a terminal line: the key is printable ASCII
    /// without spaces (it goes into a header), names have no control characters, the server is a normalised URL.
    static func validate(_ account: ImmichAccount, entry: String) throws {
        guard ImmichClient.normalizedServer(account.server) == account.server else {
            throw AccountFileError("\(entry): \"server\" is not a normalised http(s) URL")
        }
        guard (1...512).contains(account.apiKey.utf8.count),
              account.apiKey.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw AccountFileError("\(entry): \"api_key\" is empty, longer than 512 bytes or has characters a key cannot have")
        }
        for (name, value) in [("user_id", account.userID), ("user_name", account.userName), ("email", account.email)] {
            guard value.utf8.count <= 512, value.unicodeScalars.allSatisfy({ $0.properties.generalCategory != .control }) else {
                throw AccountFileError("\(entry): \"\(name)\" is longer than 512 bytes or has control characters")
            }
        }
    }

    static func encode(_ accounts: [ImmichAccount]) throws -> Data {
        let items: [[String: Any]] = accounts.map { account in
            var item: [String: Any] = ["server": account.server, "user_id": account.userID, "user_name": account.userName,
                                       "email": account.email, "api_key": account.apiKey]
            if let when = account.signedInAt { item["signed_in"] = when }
            return item
        }
        do {
            return try JSONSerialization.data(withJSONObject: ["version": formatVersion, "accounts": items],
                                              options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        } catch { throw AccountFileError("cannot encode the accounts: \(error)") }
    }
}

public struct AccountFileError: Error, CustomStringConvertible, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
