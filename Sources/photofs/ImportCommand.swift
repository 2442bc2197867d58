// `photofs import flickr`: fills a library from the Flickr REST API (or any server that speaks its format); `import folder` is in FolderImportCommand.swift.
import ArgumentParser
import CommandLineOptions
import FlickrImport
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoFS
import PhotoSources

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import photo metadata into a library.",
        subcommands: [FlickrImportCommand.self, FolderImportCommand.self, ImmichImportCommand.self]
    )
}

struct FlickrImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flickr",
        abstract: "Import a Flickr account's library, or a photo list, from the Flickr REST API.",
        discussion: """
            With --user, imports a member's library: `--user me` is the account signed in with \
            `photofs login flickr` (every photo it may see, private, friends and family ones included, and its \
            albums); another member (NSID or user name) gives what the signed-in account may see of theirs, or \
            their public photos with just an API key. Videos are counted and left out. The first import lists \
            everything; later ones of the same account are incremental (flickr.photos.recentlyUpdated since the \
            last one, plus new uploads), find photos deleted at Flickr by listing the account's ids, and update \
            albums that changed. --full lists everything again. Photos already in the library are never \
            measured again unless their URL changed.

            Without --user, pages through flickr.photos.getRecent (or flickr.photos.search with --param).

            Each new place is resolved to its region with flickr.places.getInfo, and every new original is \
            measured with a HEAD request so that `stat` shows exact sizes before anything is downloaded. Each \
            page is committed on its own: if the import stops (Ctrl-C, a lost connection, an error answer), \
            the library holds complete photos only and the next `photofs import` of the same listing continues \
            after the last committed page. A record that cannot be used is skipped with one warning naming it \
            and the field. API calls are limited to --api-rate (Flickr allows 3600 an hour per key); HTTP 429 \
            answers and their Retry-After are honoured.

            Examples:
              photofs login flickr --api-key-file key.txt --api-secret-file secret.txt
              photofs import flickr photos.sqlite --user me
              photofs import flickr photos.sqlite --api-key KEY --method flickr.photos.search --param tags=harbour
            """
    )

    @Argument(help: "The library file (SQLite); created if missing.")
    var library: String

    @Option(help: ArgumentHelp("Whose library to import: me (the signed-in account), an NSID or a user name.",
                               valueName: "user"))
    var user: String?

    @Option(help: ArgumentHelp("Which signed-in account to use (NSID or user name) when more than one is signed in.",
                               valueName: "account"))
    var account: String?

    @Flag(inversion: .prefixedNo, help: "Import the account's albums (with --user).")
    var albums = true

    @Flag(help: "List everything again instead of only what changed since the last import.")
    var full = false

    @Option(help: ArgumentHelp("API calls per second, optionally /BURST (default 1/60: Flickr allows 3600 an hour per key).",
                               valueName: "rate"))
    var apiRate = "1/60"

    @Option(help: ArgumentHelp("The Flickr REST endpoint (default: the signed-in account's, else Flickr's).", valueName: "url"))
    var endpoint: String?

    @Option(help: .hidden)
    var staticHost: String?

    @Option(help: "Flickr API key (default: $PHOTOFS_FLICKR_API_KEY). Prefer --api-key-file or the variable: a key on the command line shows in `ps` until photofs starts and blanks it.")
    var apiKey: String?

    @Option(help: "A file holding the Flickr API key on one line (kept out of the process list).")
    var apiKeyFile: String?

    @Option(help: "flickr.photos.getRecent or flickr.photos.search.")
    var method = "flickr.photos.getRecent"

    @Option(name: .customLong("param"), help: "An extra method parameter as key=value (repeatable), e.g. tags=sunset.")
    var parameters: [String] = []

    @Option(help: "Photos per page (Flickr allows 1–500).")
    var perPage = 100

    @Option(help: "Stop after this many pages.")
    var maxPages: Int?

    @Option(help: "Seconds to wait for a connection.")
    var connectTimeout: Double = 10

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard APIRateLimit.parse(apiRate) != nil else {
            throw ValidationError("--api-rate takes calls per second, optionally /BURST (e.g. 1, 0.5/10), got \"\(apiRate)\"")
        }
        if user != nil && (!parameters.isEmpty || method != "flickr.photos.getRecent") {
            throw ValidationError("--user imports a member's library; --method and --param are for getRecent or search")
        }
        guard ["flickr.photos.getRecent", "flickr.photos.search"].contains(method) else {
            throw ValidationError("--method must be flickr.photos.getRecent or flickr.photos.search")
        }
        guard (1...500).contains(perPage) else { throw ValidationError("--per-page must be between 1 and 500") }
        for parameter in parameters where ImportCommand.keyAndValue(parameter) == nil {
            throw ValidationError("--param takes key=value with a non-empty key, got \"\(parameter)\"")
        }
    }

    func run() throws {
        let logger = logging.makeLogger("photofs.import")
        let progress = TerminalProgress(logger: logger)
        var options = FlickrSourceOptions()
        let credentials: SourceCredentials
        if let user {
            (options, credentials) = try accountSource(user: user)
        } else {
            credentials = .apiKey(try apiKeyOrFail())
            options.method = method
            for parameter in parameters {
                guard let (key, value) = ImportCommand.keyAndValue(parameter) else { continue } // refused by validate()
                options.parameters[key] = value
            }
        }
        if let endpoint { options.endpoint = endpoint }
        if let staticHost { options.staticHost = staticHost }
        options.perPage = perPage
        options.apiRate = APIRateLimit.parse(apiRate) ?? .flickrDefault
        var importOptions = LibraryImportOptions()
        importOptions.maxPages = maxPages
        importOptions.full = full
        importOptions.albums = albums
        var http = HTTPConfiguration()
        http.connectTimeout = connectTimeout
        let catalog: Catalog
        do { catalog = try Catalog(path: library) } catch { throw CommandFailure("\(error)") }
        let limiter = APIRateLimiter(limit: options.apiRate, observer: { progress.waiting($0) })
        let source = FlickrSource(options: options, credentials: credentials, http: http, rateLimiter: limiter, logger: logger)
        let importer = LibraryImporter(catalog: catalog, source: source, options: importOptions, progress: progress,
                                       logger: logger)
        // Events that ended more than 48 hours ago settle before this import's photos are written.
        ImportEvents.settleAged(catalog, logger: logger)
        do {
            let report = try importer.run()
            ImportEvents.settle(catalog, logger: logger)
            print(ImportCommand.describe(report, rate: limiter.statistics))
        } catch let stopped as ImportStopped {
            throw CommandFailure(ImportCommand.explain(stopped))
        } catch {
            throw CommandFailure("import stopped: \(error)")
        }
    }

    /// The account mode's options and credentials: the signed-in account's (signed calls, its endpoint) when
    /// there is one, else an API key (a member's public photos only).
    private func accountSource(user: String) throws -> (FlickrSourceOptions, SourceCredentials) {
        let environment = ProcessInfo.processInfo.environment
        let store = FlickrAccountStore(directory: FlickrAccountStore.defaultDirectory(environment: environment),
                                       notice: { FileHandle.standardError.write(Data(("photofs: " + $0 + "\n").utf8)) })
        let signedIn: [FlickrAccount]
        do { signedIn = try store.load() } catch { throw CommandFailure("\(error)") }
        if !signedIn.isEmpty || account != nil {
            let chosen: FlickrAccount
            do { chosen = try store.account(account, endpoint: endpoint) } catch { throw CommandFailure("\(error)") }
            var options = chosen.sourceOptions
            options.user = user
            return (options, chosen.credentials)
        }
        guard user != "me" else {
            throw CommandFailure("--user me needs a signed-in account: run `photofs login flickr` first "
                                 + "(or name the member: --user NSID with --api-key for their public photos)")
        }
        var options = FlickrSourceOptions()
        options.user = user
        return (options, .apiKey(try apiKeyOrFail()))
    }

    private func apiKeyOrFail() throws -> String {
        let given: String?
        do {
            given = try SecretSource.resolve(option: apiKey, optionName: "--api-key", file: apiKeyFile, fileOptionName: "--api-key-file",
                                             variable: "PHOTOFS_FLICKR_API_KEY", environment: ProcessInfo.processInfo.environment)
        } catch { throw CommandFailure("\(error)") }
        guard let key = given else {
            throw CommandFailure("no API key: pass --api-key-file, set PHOTOFS_FLICKR_API_KEY, or pass --api-key "
                                 + "(or sign in with `photofs login flickr` and import with --user me)")
        }
        return key
    }
}

extension ImportCommand {
    /// What an import that stopped changed: nothing, or its committed pages (which the next run continues after).
    static func explain(_ stopped: ImportStopped) -> String {
        if stopped.libraryUnchanged {
            return "import stopped, library unchanged: \(stopped.cause)"
        }
        if stopped.pagesCommitted == 0 {
            return "import stopped: \(stopped.cause). Photos deleted at the origin were removed before it; "
                + "run the same command again to finish"
        }
        return "import stopped: \(stopped.cause). The \(stopped.pagesCommitted) page(s) it committed before are kept, "
            + "whole; run the same command again to continue after them"
    }

    /// "tags=a=b" → ("tags", "a=b"), split at the first "="; nil without one or with an empty key ("=v").
    static func keyAndValue(_ parameter: String) -> (key: String, value: String)? {
        guard let equals = parameter.firstIndex(of: "="), equals > parameter.startIndex else { return nil }
        return (String(parameter[..<equals]), String(parameter[parameter.index(after: equals)...]))
    }

    static func describe(_ report: ImportReport, rate: RateLimitStatistics? = nil) -> String {
        let how = report.mode == .changes ? "changes since the last import" : "the whole listing"
        var text = ""
        if let page = report.resumedAfterPage { text += "continued an interrupted import after page \(page)\n" }
        text += "imported \(report.photosListed) photos from \(report.pages) page(s) of \(how): \(report.summary.added) new, "
            + "\(report.summary.updated) updated, \(report.summary.unchanged) unchanged; "
            + "\(report.placesResolved) new place(s), \(report.summary.regions) region(s); "
            + "\(report.sizesMeasured) size(s) measured"
        if !report.removed.isEmpty { text += "\n\(report.removed.count) photo(s) deleted at the origin removed" }
        if report.albums != AlbumSummary() || report.albumsListed > 0 {
            text += "\nalbums: \(report.albums.added) new, \(report.albums.updated) changed, \(report.albums.removed) removed "
                + "(\(report.albumsListed) listed again)"
        }
        if report.videos > 0 { text += "\n\(report.videos) video(s) left out (photofs shows photos)" }
        if let rate, rate.calls > 0 {
            text += "\n\(rate.calls) API call(s)"
            if rate.totalWaitSeconds >= 0.05 {
                text += String(format: ", %.1f s waited for the rate limit or the server", rate.totalWaitSeconds)
            }
        }
        if !report.unavailable.isEmpty {
            text += "\n\(report.unavailable.count) photo(s) not shown until a later import can measure them:"
            for (id, reason) in report.unavailable.prefix(10) { text += "\n  \(id): \(reason)" }
        }
        if !report.skipped.isEmpty {
            // "3 record(s) skipped (id: 1, url: 2); each is named in a warning above"
            let byField = report.skippedByField.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            text += "\n\(report.skipped.count) record(s) skipped (\(byField.joined(separator: ", "))); "
                + "each is named in a warning above"
        }
        return text
    }
}
