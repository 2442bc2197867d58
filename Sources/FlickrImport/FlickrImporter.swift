// `photofs import flickr` in one call: a FlickrSource driven into the catalog by the LibraryImporter.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources

// The import vocabulary lives in PhotoSources; these names keep the CLI's `import FlickrImport` enough.
public typealias ImportReport = PhotoSources.ImportReport
public typealias ImportError = PhotoSources.ImportError
public typealias ImportProgress = PhotoSources.ImportProgress

/// The options of `photofs import flickr`, as one value. Prints without its key.
public struct ImportOptions: Sendable, CustomStringConvertible {
    public static let defaultEndpoint = FlickrSourceOptions.defaultEndpoint
    public static let extras = FlickrSourceOptions.extras

    public var endpoint = ImportOptions.defaultEndpoint
    public var apiKey: String
    public var method = "flickr.photos.getRecent"
    public var parameters: [String: String] = [:]
    /// Flickr's own default is 100 and its maximum 500.
    public var perPage = 100
    public var maxPages: Int?
    /// HEAD requests in flight at once. 8 keeps a loopback or CDN origin busy without looking like abuse.
    public var headConcurrency = 8

    public init(apiKey: String) { self.apiKey = apiKey }

    public var description: String {
        "ImportOptions(endpoint: \(SecretRedactor.redactParameters(endpoint)), method: \(method), api key: redacted)"
    }

    var source: FlickrSourceOptions {
        var source = FlickrSourceOptions()
        source.endpoint = endpoint
        source.method = method
        source.parameters = parameters
        source.perPage = perPage
        return source
    }

    var library: LibraryImportOptions {
        var library = LibraryImportOptions()
        library.maxPages = maxPages
        library.measureConcurrency = headConcurrency
        return library
    }
}

public final class FlickrImporter {
    private let importer: LibraryImporter

    /// `http`'s configuration is used, not the client itself: the source builds its own client whose log
    /// lines are redacted (see `FlickrSource.init`).
    public init(catalog: Catalog, http: HTTPClient, options: ImportOptions, progress: ImportProgress?, logger: Logger) {
        let source = FlickrSource(options: options.source, credentials: .apiKey(options.apiKey),
                                  http: http.configuration, logger: logger)
        importer = LibraryImporter(catalog: catalog, source: source, options: options.library, progress: progress,
                                   logger: logger)
    }

    public func run() throws -> ImportReport { try importer.run() }
}
