// Flickr as a PhotoSource: its REST calls, how its answers are read, its URL and rendition rules.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources

public struct FlickrSourceOptions: Sendable {
    public static let defaultEndpoint = "https://api.flickr.com/services/rest/"
    /// Every extra the catalog uses; Flickr returns only the extras asked for.
    public static let extras = "description,date_upload,date_taken,owner_name,geo,original_format,media,"
        + "url_sq,url_q,url_t,url_s,url_n,url_w,url_m,url_z,url_c,url_l,url_h,url_k,url_3k,url_4k,url_5k,url_6k,url_o"

    /// Where Flickr's documented URL scheme puts image files (records without any url_* are built from it).
    public static let defaultStaticHost = "https://live.staticflickr.com"
    /// The account listing asks for these too: tags, views, `lastupdate`, and `media` to tell videos apart.
    public static let accountExtras = extras + ",tags,views,last_update"

    public var endpoint = FlickrSourceOptions.defaultEndpoint
    /// The query mode's method (getRecent or search); unused in the account mode.
    public var method = "flickr.photos.getRecent"
    /// Extra method parameters (`tags=harbour`); they override the importer's own.
    public var parameters: [String: String] = [:]
    /// Flickr's own default is 100 and its maximum 500.
    public var perPage = 100
    /// The account mode: whose library to import, "me" (the signed-in account), an NSID ("12345678@N01")
    /// or a user name. nil: the query mode (`method`, `parameters`).
    public var user: String?
    /// Scheme and host of static image URLs, without a trailing slash (tests: the loopback origin).
    public var staticHost = FlickrSourceOptions.defaultStaticHost
    /// The local clock, seconds since 1970, for `syncPoint()` (tests fix it).
    public var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    /// The API call budget (`--api-rate`), used when the source is not given a shared `APIRateLimiter`.
    public var apiRate = APIRateLimit.flickrDefault
    public init() {}
}

/// Answers of the Flickr REST API (or any server speaking its format, like `FlickrOriginServer`): a query
/// (getRecent, search) or, with `options.user`, a member's library (FlickrAccountListing.swift). Signed
/// calls (OAuth 1.0a credentials) change `FlickrREST`'s requests and what an account listing may see.
public final class FlickrSource: PhotoSource {
    public let kind = "flickr"
    public let contentAccess = ContentAccess.http
    let options: FlickrSourceOptions
    let credentials: SourceCredentials
    private let redactor: SecretRedactor
    private let http: HTTPClient
    private let measurer: HTTPContentMeasurer
    let rest: FlickrREST
    let logger: Logger
    /// The account mode's user, once resolved (see `resolveUser()`).
    let resolved = FlickrResolvedUser()
    /// Every REST call of this source takes a permit here first; its statistics say how long calls waited.
    public let rateLimiter: APIRateLimiter

    /// The source owns its HTTP client, so it can give it a logger that redacts this source's secrets
    /// from every line (the client logs request URLs when it retries). `rateLimiter` is shared by every call
    /// (nil: a new one at `options.apiRate`); give one with an observer to show its waits in progress.
    public init(options: FlickrSourceOptions, credentials: SourceCredentials,
                http configuration: HTTPConfiguration = HTTPConfiguration(), rateLimiter: APIRateLimiter? = nil,
                logger: Logger) {
        self.options = options
        self.credentials = credentials
        redactor = credentials.redactor
        self.logger = RedactingLogHandler.logger(logger, redactor: redactor)
        http = HTTPClient(configuration: configuration, logger: self.logger)
        measurer = HTTPContentMeasurer(http: http, redactor: redactor)
        self.rateLimiter = rateLimiter ?? APIRateLimiter(limit: options.apiRate)
        rest = FlickrREST(endpoint: options.endpoint, credentials: credentials, http: http, redactor: redactor,
                          limiter: self.rateLimiter, logger: self.logger)
    }

    /// One REST call (see `FlickrREST.call`).
    func call(_ method: String, _ parameters: [String: String]) throws -> JSONValue {
        try rest.call(method, parameters)
    }

    /// Flickr's `sq` (75 px) and `q` (150 px) are centre crops, fit only for square variants.
    public static let squareCropLabels: Set<String> = ["sq", "q"]

    public func isSquareCrop(renditionLabel: String) -> Bool { FlickrSource.squareCropLabels.contains(renditionLabel) }

    public func measure(_ url: String) -> Result<MeasuredContent, MeasureFailure> { measurer.measure(url) }

    // MARK: Account sync (the account mode, FlickrAccountListing.swift; a query source has none of it)

    public var listingKey: String {
        if let user = options.user {
            // Who looks is part of the listing: another viewer sees another subset, whose deletions and sync
            // point are its own ("flickr user A" is A's own signed view).
            let key = "flickr user \((try? resolveUser())?.id ?? user)"
            guard let account = account else { return key }
            if account.seesPrivatePhotos { return key }
            guard isSigned, let viewer = try? signedInMember() else { return key + " public" }
            return key + " as \(viewer.id)"
        }
        let parameters = options.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return (["flickr", options.method] + parameters).joined(separator: " ")
    }
    /// The account mode resolves its user (`resolveUser()`); a query has nothing to resolve.
    /// Resolves the member listed and, when signed, who signs: a failure here ends the import before anything
    /// is written, and `listingKey` and `account` then read only what was resolved (never a guess).
    public func prepare() throws {
        guard options.user != nil else { return }
        _ = try resolveUser()
        if isSigned { _ = try signedInMember() }
    }
    /// The member listed; it sees private photos only when the calls are signed by that member.
    public var account: SourceAccount? {
        guard options.user != nil, var account = try? resolveUser() else { return nil }
        account.seesPrivatePhotos = isSigned && (try? signedInMember())?.id == account.id
        return account
    }
    public func syncPoint() throws -> SyncPoint? { options.user == nil ? nil : try accountSyncPoint() }
    public func changesPage(since point: SyncPoint, cursor: PageCursor?) throws -> SourcePage {
        options.user == nil ? try listPage(cursor) : try accountChangesPage(since: point, cursor: cursor)
    }
    public func idPage(_ cursor: PageCursor?) throws -> SourceIDPage? {
        options.user == nil ? nil : try accountIDPage(cursor)
    }
    /// flickr.photos.getInfo: Flickr's code 1 ("Photo not found") for a photo that is gone, or that this
    /// viewer may no longer see; any other failure ends the import, deleting nothing.
    public func stillExists(_ photoID: String) throws -> Bool? {
        do {
            _ = try call("flickr.photos.getInfo", ["photo_id": photoID])
            return true
        } catch let failure as FlickrREST.Failure where failure.code == 1 {
            return false
        }
    }

    public func albums() throws -> [SourceAlbum] { options.user == nil ? [] : try accountAlbums() }
    public func albumMembersPage(_ albumID: String, cursor: PageCursor?) throws -> SourceIDPage {
        options.user == nil ? SourceIDPage(ids: [], next: nil, pageCount: 0) : try accountAlbumMembersPage(albumID, cursor: cursor)
    }

    // MARK: Listing

    public func listPage(_ cursor: PageCursor?) throws -> SourcePage {
        if options.user != nil { return try accountListPage(cursor) }
        let page = FlickrSource.pageNumber(cursor, perPage: options.perPage)
        let answer = try call(options.method, ["extras": FlickrSourceOptions.extras, "per_page": String(options.perPage),
                                               "page": String(page)].merging(options.parameters) { _, user in user })
        var result = try FlickrSource.readPage(answer, page: page, method: options.method, context: recordContext(account: nil))
        if result.next != nil { result.next = FlickrSource.cursor(page: page + 1, perPage: options.perPage) }
        return result
    }

    /// The page a cursor names: 1 for none; a token that is no page number (the cursor came back from a
    /// library file) starts over at 1 rather than trapping or skipping pages.
    static func pageNumber(_ cursor: PageCursor?) -> Int {
        guard let token = cursor?.token, token.utf8.count <= 9, let page = Int(token) else { return 1 }
        return max(1, page)
    }

    /// A listing cursor that remembers the page size it counts in: "<page>:<per page>". An import resumed with
    /// another `--per-page` would otherwise ask for page 11 of 500 where page 11 of 100 was next, and skip
    /// photos 1,001–5,000 for good.
    static func cursor(page: Int, perPage: Int) -> PageCursor { PageCursor(token: "\(page):\(perPage)") }

    /// The page to ask for at `perPage`: the page holding the first photo not yet read when the cursor counted
    /// in another size (some photos are read twice, none skipped). "<page>" alone counts in `perPage`.
    static func pageNumber(_ cursor: PageCursor?, perPage: Int) -> Int {
        guard let token = cursor?.token else { return 1 }
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ (1...9).contains($0.utf8.count) }),
              let page = Int(parts[0]), page >= 1 else { return 1 }
        guard parts.count == 2, let countedIn = Int(parts[1]), countedIn >= 1, countedIn != perPage, perPage >= 1 else {
            return page
        }
        // Both factors are below 10^9, so the product fits in Int64.
        return (page - 1) * countedIn / perPage + 1
    }

    /// How records of this source are read; `account` owns the records of an account list.
    func recordContext(account: String?) -> FlickrRecordContext {
        var host = options.staticHost
        while host.hasSuffix("/") { host.removeLast() }
        var context = FlickrRecordContext(staticHost: host, account: account)
        // A member's own list, signed, carries the visibility flags; a record without them is taken as
        // private (0400), never public: failing closed keeps a private photo from other users.
        context.missingFlagsMeanPrivate = account != nil && isSigned
        return context
    }

    /// One answer of a photo list method (`envelope` is "photos", or "photoset" for a set's members), read
    /// record by record; videos are counted and left out.
    static func readPage(_ answer: JSONValue, page: Int, method: String, envelope: String = "photos",
                         context: FlickrRecordContext = FlickrRecordContext()) throws -> SourcePage {
        guard let list = answer[envelope], let items = list["photo"]?.arrayValue else {
            throw ImportError(message: "Flickr's answer to \(method) has no \(envelope).photo list (page \(page))")
        }
        let pages = FlickrJSON.int64(list["pages"]).flatMap { Int(exactly: $0) } ?? page
        var photos: [SourcePhoto] = []
        var skipped: [SkippedRecord] = []
        var videos = 0
        for item in items {
            if FlickrRecord.isVideo(item) { videos += 1; continue }
            switch FlickrRecord.read(item, context: context) {
            case .success(let photo): photos.append(photo)
            case .failure(let record): skipped.append(record)
            }
        }
        // An empty page ends the listing whatever `pages` says: a list that shrank while paging.
        let next = !items.isEmpty && page < pages ? PageCursor(token: String(page + 1)) : nil
        return SourcePage(photos: photos, skipped: skipped, next: next, pageCount: max(pages, page), videos: videos)
    }

    // MARK: Places

    /// cs193p TopRegions: the region is `place.region._content`; else the country; else the fallback region.
    public func resolvePlace(_ placeID: String) throws -> PlaceResolution {
        let answer: JSONValue
        do {
            answer = try call("flickr.places.getInfo", ["place_id": placeID])
        } catch let failure as FlickrREST.Failure {
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
}
