// `photofs import flickr`: pages through a Flickr photo list, resolves places to regions, measures each
// original with HEAD, and writes everything to the catalog in one transaction.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent

public struct ImportOptions: Sendable {
    public static let defaultEndpoint = "https://api.flickr.com/services/rest/"
    /// Every extra the catalog uses; Flickr returns only the extras asked for.
    public static let extras = "description,date_upload,date_taken,owner_name,geo,original_format,"
        + "url_sq,url_q,url_t,url_s,url_n,url_w,url_m,url_z,url_c,url_l,url_h,url_k,url_3k,url_4k,url_5k,url_6k,url_o"

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
}

/// Why an import stopped. The catalog is unchanged whenever one is thrown.
public struct ImportError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

public struct ImportReport: Sendable {
    public var summary: ImportSummary
    public var pages = 0
    public var photosListed = 0
    public var placesResolved = 0
    public var sizesMeasured = 0
    /// Photos that could not be measured (HEAD failed, not an image): kept out of the tree until a later
    /// import measures them.
    public var unavailable: [(id: String, reason: String)] = []
    public var skippedMalformed = 0
}

/// Receives progress as the import goes; the CLI draws a bar on a terminal and logs lines otherwise.
public protocol ImportProgress: AnyObject {
    func update(stage: String, done: Int, total: Int?)
    func finish()
}

public final class FlickrImporter {
    private let catalog: Catalog
    private let http: HTTPClient
    private let options: ImportOptions
    private let progress: ImportProgress?
    private let logger: Logger

    public init(catalog: Catalog, http: HTTPClient, options: ImportOptions, progress: ImportProgress?, logger: Logger) {
        self.catalog = catalog
        self.http = http
        self.options = options
        self.progress = progress
        self.logger = logger
    }

    public func run() throws -> ImportReport {
        var report = ImportReport(summary: ImportSummary())
        defer { progress?.finish() }

        // 1. Photo list, page by page. A photo seen twice (lists shift while paging) is kept once, last wins.
        var photos: [FlickrPhoto] = []
        var position: [String: Int] = [:]
        var page = 1
        var pages = 1
        repeat {
            progress?.update(stage: "pages", done: page - 1, total: pages)
            let answer = try call(options.method, ["extras": ImportOptions.extras, "per_page": String(options.perPage),
                                                   "page": String(page)].merging(options.parameters) { _, user in user })
            guard let list = answer["photos"] as? [String: Any], let items = list["photo"] as? [Any] else {
                throw ImportError(message: "Flickr's answer to \(options.method) has no photos.photo list (page \(page))")
            }
            pages = FlickrJSON.int(list["pages"]) ?? page
            for case let item as [String: Any] in items {
                guard let photo = FlickrPhoto(json: item) else { report.skippedMalformed += 1; continue }
                if let existing = position[photo.id] { photos[existing] = photo } else {
                    position[photo.id] = photos.count
                    photos.append(photo)
                }
            }
            report.pages = page
            if items.isEmpty { break }
            page += 1
        } while page <= pages && (options.maxPages.map { page <= $0 } ?? true)
        report.photosListed = photos.count
        progress?.update(stage: "pages", done: report.pages, total: report.pages)

        // 2. Places: each new place id is resolved once; a place the catalog knows is not asked again.
        let known = try catalog.knownPlaceIDs()
        let newPlaces = Array(Set(photos.compactMap(\.placeID)).subtracting(known)).sorted()
        var resolutions: [PlaceResolution] = []
        for (index, placeID) in newPlaces.enumerated() {
            progress?.update(stage: "places", done: index, total: newPlaces.count)
            resolutions.append(try resolvePlace(placeID))
        }
        report.placesResolved = resolutions.count
        progress?.update(stage: "places", done: newPlaces.count, total: newPlaces.count)

        // 3. Exact sizes: HEAD every original the catalog does not already know at this URL.
        var existing: [String: PhotoRecord] = [:]
        for photo in photos { if let record = try catalog.photo(id: photo.id) { existing[photo.id] = record } }
        let toMeasure = photos.filter { photo in
            guard let old = existing[photo.id] else { return true }
            return old.originalURL != photo.originalURL || !old.isAvailable
        }
        let measured = measure(toMeasure.map { ($0.id, $0.originalURL) })
        report.sizesMeasured = measured.count

        // 4. One transaction: all of it or nothing.
        var imported: [ImportedPhoto] = []
        for photo in photos {
            var record = PhotoRecord(
                id: photo.id, title: photo.title, description: photo.description, placeID: photo.placeID,
                dateTaken: photo.dateTaken, momentAt: photo.takenAt ?? photo.uploadedAt ?? 0,
                uploadedAt: photo.uploadedAt, originalURL: photo.originalURL, thumbnailURL: photo.thumbnailURL,
                latitude: photo.latitude, longitude: photo.longitude)
            record.momentYear = PhotoRecord.year(ofMoment: record.momentAt)
            if let size = measured[photo.id] {
                switch size {
                case .success(let head):
                    record.byteSize = head.size
                    record.contentType = head.contentType
                    record.etag = head.etag
                    record.lastModified = head.lastModified
                case .failure(let reason):
                    report.unavailable.append((photo.id, reason.description))
                    logger.warning("original not measured; photo hidden until a later import measures it",
                                   metadata: ["photo": "\(photo.id)", "url": "\(photo.originalURL)", "reason": "\(reason)"])
                }
            } else if let old = existing[photo.id] {
                record.byteSize = old.byteSize
                record.contentType = old.contentType
                record.etag = old.etag
                record.lastModified = old.lastModified
            }
            imported.append(ImportedPhoto(photo: record, owner: photo.owner, ownerName: photo.ownerName,
                                          renditions: photo.renditions))
        }
        do {
            report.summary = try catalog.applyImport(places: resolutions, photos: imported)
        } catch {
            throw ImportError(message: "could not write the library: \(error)")
        }
        return report
    }

    // MARK: Flickr REST

    /// Calls one REST method and returns the decoded answer; any failure is an ImportError naming the cause.
    private func call(_ method: String, _ parameters: [String: String]) throws -> [String: Any] {
        var components = URLComponents(string: options.endpoint)
        guard components != nil, options.endpoint.hasPrefix("http") else {
            throw ImportError(message: "not an http(s) endpoint: \(options.endpoint)")
        }
        var items = [URLQueryItem(name: "method", value: method), URLQueryItem(name: "api_key", value: options.apiKey),
                     URLQueryItem(name: "format", value: "json"), URLQueryItem(name: "nojsoncallback", value: "1")]
        items += parameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        components!.queryItems = items
        // "+" is a space in a query string; URLComponents leaves it alone, Flickr would read a space.
        components!.percentEncodedQuery = components!.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        let url = components!.url!.absoluteString
        let redacted = url.replacingOccurrences(of: options.apiKey.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? options.apiKey, with: "…")
        let response: HTTPResponse
        do {
            response = try http.get(url, limit: 32 << 20)
        } catch let error as HTTPError {
            throw ImportError(message: "\(method) failed: \(error.description.replacingOccurrences(of: url, with: redacted))")
        }
        let decoded: Any
        do { decoded = try JSONSerialization.jsonObject(with: response.body) } catch {
            let start = String(decoding: response.body.prefix(120), as: UTF8.self)
            throw ImportError(message: "\(method) answered malformed JSON (\(response.body.count) bytes, starting \"\(start)\")")
        }
        guard let object = decoded as? [String: Any] else {
            throw ImportError(message: "\(method) answered JSON that is not an object")
        }
        if FlickrJSON.text(object["stat"]) != "ok" {
            let message = FlickrJSON.text(object["message"]) ?? "no message"
            let code = FlickrJSON.text(object["code"]) ?? "?"
            throw FlickrFailure(code: Int(code) ?? -1, message: "Flickr refused \(method): \(message) (code \(code))")
        }
        return object
    }

    struct FlickrFailure: Error, CustomStringConvertible {
        var code: Int
        var message: String
        var description: String { message }
    }

    /// cs193p TopRegions: the region is `place.region._content`; else the country; else the fallback region.
    private func resolvePlace(_ placeID: String) throws -> PlaceResolution {
        let answer: [String: Any]
        do {
            answer = try call("flickr.places.getInfo", ["place_id": placeID])
        } catch let failure as FlickrFailure {
            // Code 1 is "place not found": a photo's place can vanish; the photo still belongs somewhere.
            guard failure.code == 1 else { throw ImportError(message: failure.message) }
            logger.warning("place not found; its photos go to the fallback region", metadata: ["place": "\(placeID)"])
            return PlaceResolution(placeID: placeID, placeName: nil, regionName: "Unknown Region")
        }
        let place = answer["place"] as? [String: Any] ?? [:]
        let name = FlickrJSON.text(place["name"])
        for key in ["region", "country"] {
            if let value = FlickrJSON.text(place[key])?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty {
                return PlaceResolution(placeID: placeID, placeName: name, regionName: value)
            }
        }
        return PlaceResolution(placeID: placeID, placeName: name, regionName: "Unknown Region")
    }

    // MARK: Sizes

    struct HeadResult { var size: Int64; var contentType: String; var etag: String?; var lastModified: String? }

    /// HEADs the originals, `headConcurrency` at a time.
    private func measure(_ targets: [(id: String, url: String)]) -> [String: Result<HeadResult, MeasureFailure>] {
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var byID: [String: Result<HeadResult, MeasureFailure>] = [:]
        }
        let results = Results()
        BoundedParallel.forEach(count: targets.count, width: options.headConcurrency) { [self] index in
            let result = measureOne(targets[index].url)
            results.lock.lock()
            results.byID[targets[index].id] = result
            let done = results.byID.count
            results.lock.unlock()
            progress?.update(stage: "sizes", done: done, total: targets.count)
        }
        return results.byID
    }

    struct MeasureFailure: Error, CustomStringConvertible { var description: String }

    private func measureOne(_ url: String) -> Result<HeadResult, MeasureFailure> {
        do {
            var response = try http.head(url)
            if response.contentLength == nil {
                // No Content-Length on HEAD (chunked origins): count the bytes of a GET instead.
                response = try http.get(url)
                response.headers["content-length"] = String(response.body.count)
            }
            let type = response.contentType ?? ""
            guard ImageContentType.isAccepted(type) else {
                return .failure(MeasureFailure(description: "content type \"\(type)\" is not a JPEG, PNG, GIF or WebP image"))
            }
            guard let size = response.contentLength, size > 0 else {
                return .failure(MeasureFailure(description: "origin gave no size"))
            }
            return .success(HeadResult(size: size, contentType: ImageContentType.normalized(type),
                                       etag: response.headers["etag"], lastModified: response.headers["last-modified"]))
        } catch {
            return .failure(MeasureFailure(description: "\(error)"))
        }
    }
}
