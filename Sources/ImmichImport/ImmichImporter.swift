// `photofs import immich`: the library through LibraryImporter, then favourites and people.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources

public struct ImmichImportReport {
    public var library: ImportReport
    /// Favourites among the photos this import listed, and the named people the library now holds.
    public var favorites: Int
    public var people: Int
    /// API calls made, retries included.
    public var calls: Int
}

/// Runs one import of an Immich library: the photos, deletions and albums as any source's
/// (`LibraryImporter`), then the favourite flags and people of the photos it listed, and the named people.
public final class ImmichImporter {
    private let catalog: Catalog
    private let source: ImmichSource
    private let options: LibraryImportOptions
    private let progress: ImportProgress?
    private let logger: Logger

    public init(catalog: Catalog, source: ImmichSource, options: LibraryImportOptions, progress: ImportProgress?, logger: Logger) {
        self.catalog = catalog; self.source = source; self.options = options; self.progress = progress; self.logger = logger
    }

    public func run() throws -> ImmichImportReport {
        let report = try LibraryImporter(catalog: catalog, source: source, options: options, progress: progress, logger: logger).run()
        let (marks, people) = try source.listedMarksAndPeople()
        do {
            try catalog.applyMarks(marks, people: people)
        } catch {
            throw ImportStopped(cause: ImportError(message: "could not write favourites and people: \(error)"),
                                pagesCommitted: report.pages, otherWrites: true)
        }
        return ImmichImportReport(library: report, favorites: marks.values.filter(\.isFavorite).count, people: people.count,
                                  calls: source.client.calls)
    }
}

/// What signing in learned: who the key belongs to, and the server's version.
public struct ImmichSignIn {
    /// Every permission an import and a mount use: listing (asset.read), originals (asset.download),
    /// renditions (asset.view), albums, people, the user's name.
    public static let neededPermissions = ["asset.read", "asset.download", "asset.view", "album.read", "person.read", "user.read"]

    public var account: ImmichAccount
    public var version: String?

    /// Checks `apiKey` against `server`: its version (no key needed; an older major version gets a warning),
    /// the key's user (`/api/users/me`: a wrong key fails with the server's message), and the key's
    /// permissions (`/api/api-keys/me`): one missing is named. Nothing is stored here.
    public static func check(server: String, apiKey: String, http: HTTPConfiguration, logger: Logger,
                             clock: () -> Date = { Date() }) throws -> ImmichSignIn {
        guard let client = ImmichClient(server: server, apiKey: apiKey, http: http, logger: logger) else {
            throw ImmichError(.status(0), "--server must be an http(s) URL without user, query or fragment (https://photos.example.org)")
        }
        var version: String?
        if let answer = try? client.get("/server/version"), let majorValue = ImmichAssetMapping.integer(answer["major"]) {
            let minor = ImmichAssetMapping.integer(answer["minor"]) ?? 0
            let patch = ImmichAssetMapping.integer(answer["patch"]) ?? 0
            version = "\(majorValue).\(minor).\(patch)"
            if majorValue < 3 {
                logger.warning("this Immich server is older than 3.0; photofs follows Immich's 3.1 API", metadata: ["version": "\(version ?? "")"])
            }
        }
        let user = try client.get("/users/me")
        guard let id = user["id"]?.stringValue, ImmichAssetMapping.isUUID(id) else {
            throw ImmichError(.notJSON, "\(client.server)/api/users/me answered without a user id: not an Immich server?")
        }
        if let key = try? client.get("/api-keys/me"), let granted = key["permissions"]?.arrayValue?.compactMap(\.stringValue),
           !granted.contains("all") {
            let missing = neededPermissions.filter { !granted.contains($0) }
            if !missing.isEmpty {
                throw ImmichError(.forbidden(permission: missing.first),
                                  "the API key lacks the permission\(missing.count > 1 ? "s" : "") \(missing.joined(separator: ", ")) "
                                  + "that photofs needs; make a key with them in Immich (Account Settings → API Keys)")
            }
        }
        let name = user["name"]?.stringValue ?? ""
        let account = ImmichAccount(server: client.server, userID: id.lowercased(), userName: ImmichClient.printable(name, limit: 256),
                                    email: ImmichClient.printable(user["email"]?.stringValue ?? "", limit: 256), apiKey: apiKey,
                                    signedInAt: Int64(clock().timeIntervalSince1970))
        return ImmichSignIn(account: account, version: version)
    }
}
