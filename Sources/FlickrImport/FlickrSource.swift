// Flickr as a PhotoSource: its REST calls, how its answers are read, its URL and rendition rules.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources

public struct FlickrSourceOptions: Sendable {
    public static let defaultEndpoint = "https://api.flickr.com/services/rest/"
    /// Every extra the catalog uses; Flickr returns only the extras asked for.
    public static let extras = "description,date_upload,date_taken,owner_name,geo,original_format,"
        + "url_sq,url_q,url_t,url_s,url_n,url_w,url_m,url_z,url_c,url_l,url_h,url_k,url_3k,url_4k,url_5k,url_6k,url_o"

    public var endpoint = FlickrSourceOptions.defaultEndpoint
    public var method = "flickr.photos.getRecent"
    /// Extra method parameters (`tags=harbour`); they override the importer's own.
    public var parameters: [String: String] = [:]
    /// Flickr's own default is 100 and its maximum 500.
    public var perPage = 100
    public init() {}
}

/// Answers of the Flickr REST API (or any server speaking its format, like `FlickrOriginServer`).
/// Signed calls (OAuth 1.0a) are the next issue: they change `restURL` and the credentials, nothing else.
public final class FlickrSource: PhotoSource {
    public let kind = "flickr"
    public let contentAccess = ContentAccess.http
    private let options: FlickrSourceOptions
    private let credentials: SourceCredentials
    private let redactor: SecretRedactor
    private let http: HTTPClient
    private let measurer: HTTPContentMeasurer
    private let logger: Logger

    /// The source owns its HTTP client, so it can give it a logger that redacts this source's secrets
    /// from every line (the client logs request URLs when it retries).
    public init(options: FlickrSourceOptions, credentials: SourceCredentials,
                http configuration: HTTPConfiguration = HTTPConfiguration(), logger: Logger) {
        self.options = options
        self.credentials = credentials
        redactor = credentials.redactor
        self.logger = RedactingLogHandler.logger(logger, redactor: redactor)
        http = HTTPClient(configuration: configuration, logger: self.logger)
        measurer = HTTPContentMeasurer(http: http, redactor: redactor)
    }

    /// Flickr's `sq` (75 px) and `q` (150 px) are centre crops, fit only for square variants.
    public static let squareCropLabels: Set<String> = ["sq", "q"]

    public func isSquareCrop(renditionLabel: String) -> Bool { FlickrSource.squareCropLabels.contains(renditionLabel) }

    public func measure(_ url: String) -> Result<MeasuredContent, MeasureFailure> { measurer.measure(url) }

    /// `flickr.photos.recentlyUpdated` comes with issue 9; until then every import lists everything.
    public func changes(since point: SyncPoint) throws -> SourceChanges { .fullListingRequired }

    // MARK: Listing

    public func listPage(_ cursor: PageCursor?) throws -> SourcePage {
        let page = cursor.flatMap { Int($0.token) }.map { max(1, $0) } ?? 1
        let answer = try call(options.method, ["extras": FlickrSourceOptions.extras, "per_page": String(options.perPage),
                                               "page": String(page)].merging(options.parameters) { _, user in user })
        return try FlickrSource.readPage(answer, page: page, method: options.method)
    }

    /// One answer of a photo list method, read record by record.
    static func readPage(_ answer: JSONValue, page: Int, method: String) throws -> SourcePage {
        guard let list = answer["photos"], let items = list["photo"]?.arrayValue else {
            throw ImportError(message: "Flickr's answer to \(method) has no photos.photo list (page \(page))")
        }
        let pages = FlickrJSON.int64(list["pages"]).flatMap { Int(exactly: $0) } ?? page
        var photos: [SourcePhoto] = []
        var skipped: [SkippedRecord] = []
        for item in items {
            switch FlickrRecord.read(item) {
            case .success(let photo): photos.append(photo)
            case .failure(let record): skipped.append(record)
            }
        }
        // An empty page ends the listing whatever `pages` says: a list that shrank while paging.
        let next = !items.isEmpty && page < pages ? PageCursor(token: String(page + 1)) : nil
        return SourcePage(photos: photos, skipped: skipped, next: next, pageCount: max(pages, page))
    }

    // MARK: Places

    /// cs193p TopRegions: the region is `place.region._content`; else the country; else the fallback region.
    public func resolvePlace(_ placeID: String) throws -> PlaceResolution {
        let answer: JSONValue
        do {
            answer = try call("flickr.places.getInfo", ["place_id": placeID])
        } catch let failure as FlickrFailure {
            // Code 1 is "place not found": a photo's place can vanish; the photo still belongs somewhere.
            guard failure.code == 1 else { throw ImportError(message: failure.message) }
            logger.warning("place not found; its photos go to the fallback region", metadata: ["place": "\(placeID)"])
            return PlaceResolution(placeID: placeID, placeName: nil, regionName: "Unknown Region")
        }
        return FlickrSource.readPlace(placeID, answer)
    }

    /// A `flickr.places.getInfo` answer as a region: `place.region._content`, else the country, else the
    /// fallback region.
    static func readPlace(_ placeID: String, _ answer: JSONValue) -> PlaceResolution {
        let place = answer["place"]
        let name = FlickrJSON.text(place?["name"]).map { SourceText.clean($0, limit: SourceText.nameLimit) }
        for key in ["region", "country"] {
            if let value = FlickrJSON.text(place?[key])?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty {
                return PlaceResolution(placeID: placeID, placeName: name,
                                       regionName: SourceText.clean(value, limit: SourceText.nameLimit))
            }
        }
        return PlaceResolution(placeID: placeID, placeName: name, regionName: "Unknown Region")
    }

    // MARK: REST

    struct FlickrFailure: Error, CustomStringConvertible {
        var code: Int
        var message: String
        var description: String { message }
    }

    /// Calls one REST method and returns the answer, a JSON object; any failure is an ImportError (or a
    /// FlickrFailure for Flickr's own "stat": "fail") naming the cause. No message is built from the request
    /// URL, which carries the key; every message still passes through the redactor.
    private func call(_ method: String, _ parameters: [String: String]) throws -> JSONValue {
        guard var components = URLComponents(string: options.endpoint),
              options.endpoint.lowercased().hasPrefix("http://") || options.endpoint.lowercased().hasPrefix("https://") else {
            throw ImportError(message: redactor.redact("not an http(s) endpoint: \(URLRedaction.redacted(options.endpoint))"))
        }
        var items = [URLQueryItem(name: "method", value: method), URLQueryItem(name: "format", value: "json"),
                     URLQueryItem(name: "nojsoncallback", value: "1")]
        if let key = credentials.apiKey { items.insert(URLQueryItem(name: "api_key", value: key), at: 1) }
        items += parameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        components.queryItems = items
        // "+" is a space in a query string; URLComponents leaves it alone, Flickr would read a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url?.absoluteString else {
            throw ImportError(message: redactor.redact("cannot make a request URL from the endpoint \(URLRedaction.redacted(options.endpoint))"))
        }
        let response: HTTPResponse
        do {
            response = try http.get(url, limit: 32 << 20)
        } catch let error as HTTPError {
            throw ImportError(message: redactor.redact("\(method) failed: \(FlickrSource.cause(of: error))"))
        }
        let answer: JSONValue
        do { answer = try JSONValue.parse(response.body) } catch {
            let start = String(decoding: response.body.prefix(120), as: UTF8.self)
            throw ImportError(message: redactor.redact(
                "\(method) answered malformed JSON (\(response.body.count) bytes, \(error), starting \"\(start)\")"))
        }
        guard case .object = answer else {
            throw ImportError(message: "\(method) answered JSON that is not an object")
        }
        if FlickrJSON.text(answer["stat"]) != "ok" {
            let message = FlickrJSON.text(answer["message"]).map { SourceText.clean($0, limit: 500) } ?? "no message"
            let code = FlickrJSON.int64(answer["code"]).flatMap { Int(exactly: $0) } ?? -1
            throw FlickrFailure(code: code, message: redactor.redact("Flickr refused \(method): \(message) (code \(code))"))
        }
        return answer
    }

    /// What went wrong, without the URL `HTTPError.description` appends.
    static func cause(of error: HTTPError) -> String {
        if case .status(let status) = error.kind { return "HTTP \(status)" }
        if case .transport(_, let message) = error.kind { return message }
        if case .sink(let message) = error.kind { return message }
        return "not an http(s) URL"
    }
}
