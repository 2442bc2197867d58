// `photofs import flickr`: fills a library from the Flickr REST API (or any server that speaks its format).
import ArgumentParser
import CommandLineOptions
import FlickrImport
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoSources

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import photo metadata into a library.",
        subcommands: [FlickrImportCommand.self]
    )
}

struct FlickrImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flickr",
        abstract: "Import a photo list from the Flickr REST API.",
        discussion: """
            Pages through flickr.photos.getRecent (or flickr.photos.search with --param), resolves each new
            place to its region with flickr.places.getInfo, and measures every original with a HEAD request so
            that `stat` shows exact sizes before anything is downloaded. Photos already in the library are
            updated, never duplicated. A photo record that cannot be used (no id, no image URL, an id that is
            not an identifier) is skipped with one warning naming it and the field, and counted in the
            summary. If a page fails (an error answer, a bad key, an answer that is not JSON), the library is
            left exactly as it was and the command exits non-zero.

            Example:
              photofs import flickr photos.sqlite --api-key KEY --method flickr.photos.search --param tags=harbour
            """
    )

    @Argument(help: "The library file (SQLite); created if missing.")
    var library: String

    @Option(help: "The Flickr REST endpoint.")
    var endpoint = FlickrSourceOptions.defaultEndpoint

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
        let given: String?
        do {
            given = try SecretSource.resolve(option: apiKey, optionName: "--api-key", file: apiKeyFile, fileOptionName: "--api-key-file",
                                             variable: "PHOTOFS_FLICKR_API_KEY", environment: ProcessInfo.processInfo.environment)
        } catch { throw CommandFailure("\(error)") }
        guard let key = given else {
            throw CommandFailure("no API key: pass --api-key-file, set PHOTOFS_FLICKR_API_KEY, or pass --api-key")
        }
        var options = FlickrSourceOptions()
        options.endpoint = endpoint
        options.method = method
        options.perPage = perPage
        for parameter in parameters {
            guard let (key, value) = ImportCommand.keyAndValue(parameter) else { continue } // refused by validate()
            options.parameters[key] = value
        }
        var importOptions = LibraryImportOptions()
        importOptions.maxPages = maxPages
        var http = HTTPConfiguration()
        http.connectTimeout = connectTimeout
        let catalog: Catalog
        do { catalog = try Catalog(path: library) } catch { throw CommandFailure("\(error)") }
        let source = FlickrSource(options: options, credentials: .apiKey(key), http: http, logger: logger)
        let importer = LibraryImporter(catalog: catalog, source: source, options: importOptions,
                                       progress: TerminalProgress(logger: logger), logger: logger)
        do {
            let report = try importer.run()
            print(ImportCommand.describe(report))
        } catch {
            throw CommandFailure("import failed, library unchanged: \(error)")
        }
    }
}

extension ImportCommand {
    /// "tags=a=b" → ("tags", "a=b"), split at the first "="; nil without one or with an empty key ("=v").
    static func keyAndValue(_ parameter: String) -> (key: String, value: String)? {
        guard let equals = parameter.firstIndex(of: "="), equals > parameter.startIndex else { return nil }
        return (String(parameter[..<equals]), String(parameter[parameter.index(after: equals)...]))
    }

    static func describe(_ report: ImportReport) -> String {
        var text = "imported \(report.photosListed) photos from \(report.pages) page(s): \(report.summary.added) new, "
            + "\(report.summary.updated) updated, \(report.summary.unchanged) unchanged; "
            + "\(report.placesResolved) new place(s), \(report.summary.regions) region(s); "
            + "\(report.sizesMeasured) size(s) measured"
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
