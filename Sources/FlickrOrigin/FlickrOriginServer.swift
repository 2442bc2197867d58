// A loopback origin that answers like the public Flickr REST API (JSON) and serves the photos' bytes.
import Foundation
import Logging

/// One photo as the origin knows it; `imagePath` keys the bytes in `OriginLibrary.images`.
public struct OriginPhoto: Sendable {
    public var id: String
    public var owner: String
    /// nil: Flickr sent no `ownername` (the importer must fall back to the owner id).
    public var ownerName: String?
    public var title: String
    public var description: String
    public var dateTaken: String?
    public var dateUpload: Int64
    public var placeID: String?
    public var latitude: Double?
    public var longitude: Double?
    /// false: the photographer hides originals, so the answer has no `url_o` and the largest is `url_l`.
    public var hasOriginal: Bool
    public var image: OriginImage
    public var thumbnail: OriginImage?
    /// Further sizes by Flickr label ("z" = 640 px long edge...), served as `url_<label>` with their sizes.
    public var renditions: [String: OriginImage] = [:]
    /// Where the original really is when another server (nginx in `make bench`) serves the bytes.
    public var externalURL: String?
    /// Flickr's `secret`, part of every image URL. Flickr gives a replaced photo a new one, so its URLs change.
    public var secret = "5ec4e7"
    /// Who may see it (Flickr's `ispublic`, `isfriend`, `isfamily`); all three false is private.
    public var isPublic = true
    public var isFriend = false
    public var isFamily = false
    /// Flickr's normalised tags (lower case, no spaces), sent space-separated with the `tags` extra.
    public var tags: [String] = []
    public var views: Int64 = 0
    /// Flickr's `lastupdate`: the upload date until an edit sets it to the origin's clock.
    public var lastUpdate: Int64
    /// "photo" or "video" (a video's `image` is its poster frame, as Flickr's url_* of a video are).
    public var media = "photo"
    /// Flickr's server id, the first path segment of its static image URLs.
    public var server = "65535"
    /// The original's own secret (`originalsecret`); Flickr changes it with the photo's bytes.
    public var originalSecret = "0a1b2c"

    public init(id: String, owner: String, ownerName: String?, title: String, description: String = "",
                dateTaken: String?, dateUpload: Int64, placeID: String?, latitude: Double? = nil,
                longitude: Double? = nil, hasOriginal: Bool = true, image: OriginImage, thumbnail: OriginImage? = nil) {
        self.id = id; self.owner = owner; self.ownerName = ownerName; self.title = title
        self.description = description; self.dateTaken = dateTaken; self.dateUpload = dateUpload
        self.placeID = placeID; self.latitude = latitude; self.longitude = longitude
        self.hasOriginal = hasOriginal; self.image = image; self.thumbnail = thumbnail
        lastUpdate = dateUpload
    }

    /// `originalformat`: the original's file extension.
    public var originalFormat: String { image.fileExtension }
    public var isVideo: Bool { media == "video" }

    var imageSuffix: String { hasOriginal ? "o" : "l" }
    var imagePath: String { "/photos/\(id)_\(secret)_\(imageSuffix).\(image.fileExtension)" }
    var thumbnailPath: String { "/photos/\(id)_\(secret)_sq.jpg" }
    public func renditionPath(_ label: String) -> String { "/photos/\(id)_\(secret)_\(label).jpg" }
}

public struct OriginImage: Sendable {
    public var data: Data
    public var contentType: String
    public var width: Int
    public var height: Int
    public init(data: Data, contentType: String, width: Int, height: Int) {
        self.data = data; self.contentType = contentType; self.width = width; self.height = height
    }
    var fileExtension: String { contentType == "image/png" ? "png" : "jpg" }
    /// The strong ETag the origin sends with these bytes: a hash of them, so new bytes get a new tag.
    public var etag: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "\"\(String(hash, radix: 16))\""
    }
}

/// A place as `flickr.places.getInfo` describes it.
public struct OriginPlace: Sendable {
    public var placeID: String
    public var name: String
    public var region: String?
    public var country: String?
    public init(placeID: String, name: String, region: String?, country: String?) {
        self.placeID = placeID; self.name = name; self.region = region; self.country = country
    }
}

public struct OriginLibrary: Sendable {
    public var photos: [OriginPhoto]
    public var places: [String: OriginPlace]
    /// Members who can sign in (OAuth); the first is who the authorize page signs in by default.
    public var accounts: [OriginAccount]
    /// Photosets, in their owners' order.
    public var albums: [OriginAlbum]
    public init(photos: [OriginPhoto], places: [OriginPlace], accounts: [OriginAccount] = [], albums: [OriginAlbum] = []) {
        self.photos = photos
        self.places = Dictionary(places.map { ($0.placeID, $0) }, uniquingKeysWith: { $1 })
        self.accounts = accounts
        self.albums = albums
    }
}

/// Serves `/services/rest/` (flickr.photos.getRecent, flickr.photos.search, flickr.places.getInfo,
/// flickr.test.login, and a member's library: OriginAccountMethods.swift), `/services/oauth/` (sign-in,
/// OriginOAuthEndpoints.swift) and image bytes at `/photos/...` and at Flickr's static URL paths
/// (`/{server}/{id}_{secret}_{suffix}.jpg`) with Content-Length, Range and ETag. Tests change its behaviour
/// through the fault hooks and edits, and read its request counters and REST call log.
public final class FlickrOriginServer: @unchecked Sendable {
    public static let restPath = "/services/rest/"
    /// The app's key (also its OAuth consumer key) and its secret (the consumer secret).
    public let apiKey: String
    public let apiSecret: String
    let lock = NSLock()
    /// Issued access tokens and seen nonces (guarded by `lock`, through `withLock`).
    var tokens = OriginTokens()
    /// Request tokens of the sign-in flow, and scripted throttling (OriginOAuthEndpoints.swift; guarded by `lock`).
    var oauthFlow = OriginOAuthFlow()
    var throttling = OriginThrottling()
    var library: OriginLibrary
    var images: [String: OriginImage] = [:]
    private var server: LoopbackHTTPServer!

    // Fault hooks and counters (guarded by `lock`).
    private var missing = Set<String>()
    private var truncated = Set<String>()
    private var contentTypeOverrides: [String: String] = [:]
    private var scriptedStatuses: [String: [Int]] = [:]
    private var delays: [String: TimeInterval] = [:]
    private var rates: [String: Int] = [:]
    private var truncateOnce = Set<String>()
    private var replaceAfterNextAnswer: [String: OriginImage] = [:]
    private var requestCounts: [String: Int] = [:]
    /// Image body bytes handed to the socket, by path (`bodyBytesSent`).
    private var sentBytes: [String: Int] = [:]
    var rawRecords: [String: String] = [:]
    private var restStatuses: [Int] = []
    public var malformedAnswers = false
    /// Account methods' state (guarded by `lock`): the REST call log and photos sent without any url_*.
    var restCalls: [OriginRESTCall] = []
    var withoutURLs = Set<String>()
    /// Photos left out of lists asked without extras (an id listing), though still counted in their `total`.
    var hiddenFromIDListings = Set<String>()
    var uncountedInIDListings = Set<String>()
    /// Holds and status answers for chosen requests (OriginRequestHooks.swift; guarded by `lock`).
    var requestHooks = OriginRequestHooks()
    /// The origin's time, for `lastupdate` and `date_update` of edits; tests set and advance it.
    public let clock = OriginClock()

    public init(library: OriginLibrary, apiKey: String, apiSecret: String = "0r1g1n-s3cr3t",
                logger: Logger = Logger(label: "photofs.origin")) {
        self.library = library
        self.apiKey = apiKey
        self.apiSecret = apiSecret
        rebuildImages()
        server = LoopbackHTTPServer(handler: { [unowned self] in self.handle($0) }, logger: logger)
    }

    public func start(port: UInt16 = 0) throws { try server.start(port: port) }
    public func stop() { server.stop() }
    public var port: UInt16 { server.port }
    public var endpoint: String { "\(server.baseURL)\(FlickrOriginServer.restPath)" }

    public func replaceLibrary(_ library: OriginLibrary) {
        lock.lock(); defer { lock.unlock() }
        self.library = library
        rebuildImages()
    }

    public var photos: [OriginPhoto] { lock.lock(); defer { lock.unlock() }; return library.photos }

    /// The bytes a client should get for a photo's largest rendition (what photofs serves as the original).
    public func imageBytes(photoID: String) -> Data? {
        lock.lock(); defer { lock.unlock() }
        return library.photos.first { $0.id == photoID }?.image.data
    }

    public func imagePath(photoID: String) -> String? {
        lock.lock(); defer { lock.unlock() }
        return library.photos.first { $0.id == photoID }?.imagePath
    }

    // MARK: Fault hooks

    public func setMissing(photoID: String, _ isMissing: Bool = true) { mutate(photoID) { missing.toggle($0, on: isMissing) } }
    public func setTruncated(photoID: String, _ isTruncated: Bool = true) { mutate(photoID) { truncated.toggle($0, on: isTruncated) } }
    public func overrideContentType(photoID: String, _ type: String?) { mutate(photoID) { contentTypeOverrides[$0] = type } }
    /// Every request for the photo's image waits this long before the answer starts (a slow origin).
    public func setDelay(photoID: String, _ seconds: TimeInterval) { mutate(photoID) { delays[$0] = seconds } }
    /// The photo's image is sent at about this many bytes per second (nil: full speed).
    public func setRate(photoID: String, _ bytesPerSecond: Int?) { mutate(photoID) { rates[$0] = bytesPerSecond } }
    /// Only the next answer for the photo's image is cut short (a dropped connection).
    public func truncateNextAnswer(photoID: String) { mutate(photoID) { truncateOnce.insert($0) } }
    /// After the next GET of the photo's image is answered (from the current bytes), the same URL serves
    /// `image` instead: the photo changes at the origin in the middle of a download, without a new URL.
    public func replaceImageAfterNextAnswer(photoID: String, with image: OriginImage) {
        mutate(photoID) { replaceAfterNextAnswer[$0] = image }
    }
    /// The next GETs of the photo's image answer these statuses, in order, before serving normally.
    public func scriptStatuses(photoID: String, _ statuses: [Int]) { mutate(photoID) { scriptedStatuses[$0] = statuses } }

    /// The photo's record in photo lists is this text, sent as it is (any bytes: broken escapes, absurd
    /// numbers, wrong types); nil restores the generated record. The photo's images are still served.
    public func setRawRecord(photoID: String, json: String?) {
        lock.lock(); defer { lock.unlock() }
        rawRecords[photoID] = json
    }

    /// The next REST calls answer these HTTP statuses, in order, before answering normally (a flaky API).
    public func scriptRESTStatuses(_ statuses: [Int]) {
        lock.lock(); defer { lock.unlock() }
        restStatuses = statuses
    }

    /// How many requests of `method` reached `path` (or every image path, for nil).
    public func requestCount(method: String, path: String? = nil) -> Int {
        lock.lock(); defer { lock.unlock() }
        if let path { return requestCounts["\(method) \(path)"] ?? 0 }
        return requestCounts.filter {
            $0.key.hasPrefix("\(method) /photos/") || ($0.key.hasPrefix("\(method) ") && OriginPhoto.isStaticPath(String($0.key.dropFirst(method.count + 1))))
        }.values.reduce(0, +)
    }

    /// Image body bytes the origin handed to its sockets for `path` (or for every image, for nil): what it
    /// sent, whatever the client did with it. Exact for a photo served with `setRate` (the bytes go out a
    /// chunk at a time, so a client that hangs up stops the count); at full speed a whole answer fits the
    /// loopback socket's buffers and counts whole.
    public func bodyBytesSent(path: String? = nil) -> Int {
        lock.lock(); defer { lock.unlock() }
        if let path { return sentBytes[path] ?? 0 }
        return sentBytes.values.reduce(0, +)
    }

    /// Forgets every request counted so far, the REST call log included.
    public func resetCounters() { lock.lock(); requestCounts = [:]; sentBytes = [:]; restCalls = []; lock.unlock() }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock(); defer { lock.unlock() }
        return try body()
    }

    private func mutate(_ photoID: String, _ body: (String) -> Void) {
        lock.lock(); defer { lock.unlock() }
        guard let path = library.photos.first(where: { $0.id == photoID })?.imagePath else { return }
        body(path)
    }

    func rebuildImages() {
        images = [:]
        for photo in library.photos {
            images[photo.imagePath] = photo.image
            if let thumbnail = photo.thumbnail { images[photo.thumbnailPath] = thumbnail }
            for (label, image) in photo.renditions { images[photo.renditionPath(label)] = image }
            for (path, image) in photo.staticImages { images[path] = image }
        }
    }

    // MARK: Requests

    private func handle(_ request: ServerRequest) -> ServerResponse {
        lock.lock()
        requestCounts["\(request.method) \(request.path)", default: 0] += 1
        lock.unlock()
        let isREST = request.path == FlickrOriginServer.restPath || request.path == "/services/rest"
        if isREST { logRESTCall(request) }
        if let hooked = applyRequestHooks(request) { return hooked }
        if isREST { return handleREST(request) }
        if request.path.hasPrefix("/photos/") || OriginPhoto.isStaticPath(request.path) { return handleImage(request) }
        if let answer = handleOAuth(request) { return answer }
        return .text(404, "not found")
    }

    private func handleREST(_ request: ServerRequest) -> ServerResponse {
        lock.lock()
        let scripted = restStatuses.isEmpty ? nil : restStatuses.removeFirst()
        lock.unlock()
        if let scripted { return scriptedFailure(scripted) }
        if malformedAnswers {
            return ServerResponse(status: 200, headers: [("Content-Type", "application/json")],
                                  body: Data("{\"photos\":{\"page\":1,\"photo\":[{\"id\":".utf8))
        }
        let caller: OriginCaller
        switch self.caller(of: request) {
        case .success(let who): caller = who
        case .failure(let failure): return fail(failure)
        }
        switch request.query["method"] ?? "" {
        case "flickr.test.login":
            guard let nsid = caller.nsid else { return fail(.insufficientPermissions) }
            let account = withLock { library.accounts.first { $0.nsid == nsid } }
            return json(["user": ["id": nsid, "username": ["_content": account?.username ?? nsid]], "stat": "ok"])
        case "flickr.photos.getRecent", "flickr.photos.search": return photoPage(request, caller: caller)
        case "flickr.places.getInfo": return placeInfo(request)
        case let method:
            if let answer = accountMethod(method, request, caller: caller) { return answer }
            return fail(112, "Method \"\(method)\" not found")
        }
    }

    private func photoPage(_ request: ServerRequest, caller: OriginCaller) -> ServerResponse {
        lock.lock()
        // getRecent lists public photos only; search also the signed caller's own (Flickr's docs).
        var photos = library.photos.filter { $0.isPublic || (caller.nsid == $0.owner && request.query["method"] == "flickr.photos.search") }
        lock.unlock()
        if let user = request.query["user_id"], !user.isEmpty { photos = photos.filter { $0.owner == user } }
        if let text = request.query["text"], !text.isEmpty {
            photos = photos.filter { $0.title.localizedCaseInsensitiveContains(text) }
        }
        // Flickr sends `pages` and `total` as numbers in getRecent and as strings in search; mimic both.
        let isSearch = request.query["method"] == "flickr.photos.search"
        return photoList(photos, request, envelope: "photos", numbersAsText: isSearch)
    }

    /// One record of a photo list; `withURLs` false leaves out every url_* (a fault hook: real answers
    /// sometimes have none).
    func photoJSON(_ photo: OriginPhoto, extras: Set<String>, host: String, withURLs: Bool = true) -> [String: Any] {
        var item: [String: Any] = [
            "id": photo.id, "owner": photo.owner, "secret": photo.secret, "server": photo.server, "farm": 66,
            "title": photo.title, "ispublic": photo.isPublic ? 1 : 0, "isfriend": photo.isFriend ? 1 : 0,
            "isfamily": photo.isFamily ? 1 : 0,
        ]
        if extras.contains("description") { item["description"] = ["_content": photo.description] }
        if extras.contains("date_upload") { item["dateupload"] = String(photo.dateUpload) }
        if extras.contains("date_taken") {
            item["datetaken"] = photo.dateTaken ?? "2001-01-01 00:00:00" // what Flickr sends when unknown
            item["datetakengranularity"] = 0
            item["datetakenunknown"] = photo.dateTaken == nil ? "1" : "0"
        }
        if extras.contains("owner_name"), let name = photo.ownerName { item["ownername"] = name }
        if extras.contains("geo") {
            // Flickr sends 0 (a number) for photos without a location, strings otherwise.
            item["latitude"] = photo.latitude.map { String($0) as Any } ?? 0
            item["longitude"] = photo.longitude.map { String($0) as Any } ?? 0
            item["accuracy"] = photo.latitude == nil ? 0 : "16"
            if let place = photo.placeID { item["place_id"] = place; item["woeid"] = "2487956" }
        }
        if extras.contains("original_format") && photo.hasOriginal {
            item["originalsecret"] = photo.originalSecret
            item["originalformat"] = photo.originalFormat
        }
        // Flickr sends these as strings: "tags": "a b", "views": "12", "lastupdate": "1700000000".
        if extras.contains("tags") { item["tags"] = photo.tags.joined(separator: " ") }
        if extras.contains("views") { item["views"] = String(photo.views) }
        if extras.contains("last_update") { item["lastupdate"] = String(photo.lastUpdate) }
        if extras.contains("media") { item["media"] = photo.media; item["media_status"] = "ready" }
        if !withURLs { return item }
        if extras.contains("url_sq"), let thumbnail = photo.thumbnail {
            item["url_sq"] = host + photo.thumbnailPath
            item["width_sq"] = thumbnail.width
            item["height_sq"] = thumbnail.height
        }
        for (label, image) in photo.renditions where extras.contains("url_\(label)") {
            item["url_\(label)"] = host + photo.renditionPath(label)
            item["width_\(label)"] = image.width
            item["height_\(label)"] = image.height
        }
        let suffix = photo.imageSuffix
        if extras.contains("url_\(suffix)") {
            item["url_\(suffix)"] = photo.externalURL ?? host + photo.imagePath
            item["width_\(suffix)"] = photo.image.width
            item["height_\(suffix)"] = String(photo.image.height)
        }
        return item
    }

    private func placeInfo(_ request: ServerRequest) -> ServerResponse {
        lock.lock()
        let place = request.query["place_id"].flatMap { library.places[$0] }
        lock.unlock()
        guard let place else { return fail(1, "Not a valid place id") }
        var body: [String: Any] = [
            "place_id": place.placeID, "woeid": "12345", "latitude": "37.7", "longitude": "-122.4",
            "place_url": "/places/\(place.placeID)", "place_type": "locality", "name": place.name,
            "locality": ["_content": place.name, "place_id": place.placeID],
        ]
        if let region = place.region { body["region"] = ["_content": region, "place_id": "r-\(place.placeID)"] }
        if let country = place.country { body["country"] = ["_content": country, "place_id": "c-\(place.placeID)"] }
        return json(["place": body, "stat": "ok"])
    }

    private func handleImage(_ request: ServerRequest) -> ServerResponse {
        lock.lock()
        let image = images[request.path]
        let isMissing = missing.contains(request.path)
        let isTruncated = truncated.contains(request.path) || (request.method == "GET" && truncateOnce.remove(request.path) != nil)
        let rate = rates[request.path]
        let typeOverride = contentTypeOverrides[request.path]
        let delay = delays[request.path] ?? 0
        if request.method == "GET", image != nil, let replacement = replaceAfterNextAnswer.removeValue(forKey: request.path) {
            images[request.path] = replacement
            if let index = library.photos.firstIndex(where: { $0.imagePath == request.path }) {
                library.photos[index].image = replacement
            }
        }
        var scripted: Int?
        if request.method == "GET", var statuses = scriptedStatuses[request.path], !statuses.isEmpty {
            scripted = statuses.removeFirst()
            scriptedStatuses[request.path] = statuses
        }
        lock.unlock()
        if let scripted { return scriptedFailure(scripted) }
        guard let image, !isMissing else { return .text(404, "no such photo") }
        let etag = image.etag
        var headers = [("Content-Type", typeOverride ?? image.contentType), ("ETag", etag), ("Accept-Ranges", "bytes"),
                       ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")]
        if request.headers["if-none-match"] == etag { return ServerResponse(status: 304, headers: headers) }
        let total = image.data.count
        // If-Range (RFC 9110 §13.1.5): a range only of the version the client has, else the whole new one.
        let rangeApplies = request.headers["if-range"].map { $0 == etag } ?? true
        if rangeApplies, let range = request.headers["range"], let (start, end) = parseRange(range, total: total) {
            if start > end { return ServerResponse(status: 416, headers: [("Content-Range", "bytes */\(total)")]) }
            headers.append(("Content-Range", "bytes \(start)-\(end)/\(total)"))
            var partial = ServerResponse(status: 206, headers: headers, body: image.data.subdata(in: start..<end + 1),
                                         truncateAfter: isTruncated ? (end + 1 - start) / 2 : nil)
            partial.delay = delay
            partial.bytesPerSecond = rate
            partial.bodySent = countSent(request.path)
            return partial
        }
        var response = ServerResponse(status: 200, headers: headers, body: image.data,
                                      truncateAfter: isTruncated ? total / 2 : nil)
        response.delay = delay
        response.bytesPerSecond = rate
        response.bodySent = countSent(request.path)
        return response
    }

    private func countSent(_ path: String) -> @Sendable (Int) -> Void {
        { [weak self] count in
            guard let self else { return }
            lock.lock()
            sentBytes[path, default: 0] += count
            lock.unlock()
        }
    }

    /// One "bytes=a-b", "bytes=a-" or "bytes=-n" range; nil for anything else (served whole, as RFC 9110 allows).
    private func parseRange(_ header: String, total: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[0].isEmpty, let suffix = Int(spec[1]) { return (max(0, total - suffix), total - 1) }
        guard let start = Int(spec[0]) else { return nil }
        let end = spec[1].isEmpty ? total - 1 : min(Int(spec[1]) ?? total - 1, total - 1)
        return start >= total ? (1, 0) : (start, end)
    }

    func fail(_ code: Int, _ message: String) -> ServerResponse {
        json(["stat": "fail", "code": code, "message": message])
    }

    func json(_ object: [String: Any]) -> ServerResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return ServerResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")], body: data)
    }
}

private extension Set {
    mutating func toggle(_ element: Element, on: Bool) {
        if on { insert(element) } else { remove(element) }
    }
}
