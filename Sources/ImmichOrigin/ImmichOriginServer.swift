// The loopback Immich-format origin: the 3.1 API's stable endpoints photofs uses, checked keys, Range, faults.
import FlickrOrigin
import Foundation
import PhotoContent
import WebPImage

/// Speaks the part of Immich's API (3.1.0, docs in /api) that photofs follows: `POST /api/search/metadata`
/// (pages, `updatedAfter`, `withDeleted`, `albumIds`, `personIds`, `visibility`, `type`), `/api/albums`,
/// `/api/people`, `/api/users/me`, `/api/users/{id}`, `/api/api-keys/me`, `/api/assets/statistics`, `/api/assets/{id}`, its original
/// (one Range) and its thumbnails (WebP 250 px short side, JPEG preview 1440 px), `/api/server/version`.
/// Every request but the version needs `x-api-key`, checked against the key's permissions as Immich does.
/// Tests edit the library between imports and script failures.
public final class ImmichOriginServer: @unchecked Sendable {
    private let lock = NSLock()
    private var library: ImmichOriginLibrary
    /// key → permissions ("all", or Immich's names such as "asset.read").
    private var keys: [String: [String]]
    private var server: LoopbackHTTPServer!
    private var requestTargets: [String] = []
    private var requestHeaders: [[String: String]] = []
    private var searchBodies: [String] = []
    private var counts: [String: Int] = [:]
    private var scripted: [(matches: @Sendable (ServerRequest) -> Bool, response: ServerResponse, remaining: Int?)] = []
    private var renditionCache: [String: Data] = [:]
    private var lastUpdate = Date(timeIntervalSince1970: 0)

    public init(library: ImmichOriginLibrary, keys: [String: [String]]) {
        self.library = library
        self.keys = keys
        self.server = LoopbackHTTPServer(handler: { [unowned self] in self.handle($0) })
    }

    public func start(port: UInt16 = 0) throws { try server.start(port: port) }
    /// Told each request's route ("GET /api/assets/{id}/original") as it arrives: `photofs origin` prints them
    /// for benchmarks that count requests from outside.
    public var onRequest: (@Sendable (String) -> Void)? {
        get { withLock { requestSink } }
        set { withLock { requestSink = newValue } }
    }
    private var requestSink: (@Sendable (String) -> Void)?
    public func stop() { server.stop() }
    /// "http://127.0.0.1:PORT": what `photofs login immich --server` takes.
    public var baseURL: String { server.baseURL }

    // MARK: What tests look at

    public var current: ImmichOriginLibrary { withLock { library } }
    /// Every request's target (path and query) as it arrived: a key must never be in one.
    public var targets: [String] { withLock { requestTargets } }
    /// Every request's headers (names lower-cased).
    public var headersSeen: [[String: String]] { withLock { requestHeaders } }
    /// The JSON bodies of the `POST /api/search/metadata` requests, in order (an incremental import's has
    /// `updatedAfter`).
    public var searchRequests: [String] { withLock { searchBodies } }
    /// Requests per "METHOD /api/path" with ids replaced by {id} ("GET /api/assets/{id}/original").
    public func count(_ route: String) -> Int { withLock { counts[route] ?? 0 } }
    public func resetCounters() { withLock { counts = [:]; requestTargets = []; requestHeaders = []; searchBodies = [] } }
    public func bytes(of id: String) -> Data? { withLock { library.asset(id)?.bytes } }

    // MARK: Edits between imports (each moves the asset's updatedAt, as Immich does)

    public func edit(_ id: String, _ change: (inout ImmichOriginAsset) -> Void) {
        withLock {
            guard let index = library.assets.firstIndex(where: { $0.id == id }) else { return }
            change(&library.assets[index])
            library.assets[index].updatedAt = nextUpdateTime()
        }
    }
    /// Gone for good (emptied from the trash): no listing has it any more.
    public func purge(_ id: String) {
        withLock {
            library.assets.removeAll { $0.id == id }
            for index in library.albums.indices { library.albums[index].assetIDs.removeAll { $0 == id } }
        }
    }
    public func add(_ asset: ImmichOriginAsset) {
        withLock {
            var asset = asset
            asset.updatedAt = nextUpdateTime()
            library.assets.append(asset)
        }
    }
    public func editAlbum(_ id: String, _ change: (inout ImmichOriginAlbum) -> Void) {
        withLock {
            guard let index = library.albums.firstIndex(where: { $0.id == id }) else { return }
            change(&library.albums[index])
            library.albums[index].updatedAt = nextUpdateTime()
        }
    }
    public func setKeys(_ keys: [String: [String]]) { withLock { self.keys = keys } }

    /// A strictly later time than any update so far: two edits in one millisecond still order.
    private func nextUpdateTime() -> Date {
        lastUpdate = max(Date(), lastUpdate.addingTimeInterval(0.001))
        return lastUpdate
    }

    // MARK: Faults

    /// Answers requests that `matches` picks with `response`, `times` times (nil: until `clearFaults`).
    public func script(_ response: ServerResponse, times: Int? = nil, when matches: @escaping @Sendable (ServerRequest) -> Bool) {
        withLock { scripted.append((matches, response, times)) }
    }
    public func clearFaults() { withLock { scripted = [] } }

    /// A reverse proxy's HTML page (nginx's 502 when Immich is down).
    public static func htmlErrorPage(status: Int) -> ServerResponse {
        ServerResponse(status: status, headers: [("Content-Type", "text/html")],
                       body: Data("<html><head><title>\(status) Bad Gateway</title></head><body><center><h1>\(status) Bad Gateway</h1></center><hr><center>nginx</center></body></html>".utf8))
    }

    public static func tooManyRequests(retryAfter seconds: Int) -> ServerResponse {
        var response = jsonResponse(429, ["message": "Too Many Requests", "statusCode": 429])
        response.headers.append(("Retry-After", "\(seconds)"))
        return response
    }

    // MARK: Serving

    private func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock(); defer { lock.unlock() }
        return try body()
    }

    static func route(_ request: ServerRequest) -> String {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map { part -> String in
            part.count == 36 && part.filter({ $0 == "-" }).count == 4 ? "{id}" : String(part)
        }
        return "\(request.method) \(parts.joined(separator: "/"))"
    }

    private func handle(_ request: ServerRequest) -> ServerResponse {
        let fault: ServerResponse? = withLock {
            var target = request.path
            if !request.query.isEmpty {
                target += "?" + request.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
            }
            requestTargets.append(target)
            requestHeaders.append(request.headers)
            if request.method == "POST" && request.path == "/api/search/metadata" {
                searchBodies.append(String(decoding: request.body, as: UTF8.self))
            }
            counts[ImmichOriginServer.route(request), default: 0] += 1
            requestSink?(ImmichOriginServer.route(request))
            guard let index = scripted.firstIndex(where: { $0.matches(request) }) else { return nil }
            let response = scripted[index].response
            if let remaining = scripted[index].remaining {
                if remaining <= 1 { scripted.remove(at: index) } else { scripted[index].remaining = remaining - 1 }
            }
            return response
        }
        if let fault { return fault }
        let path = request.path
        guard path.hasPrefix("/api/") else { return ImmichOriginServer.jsonResponse(404, ["message": "Not Found", "statusCode": 404]) }
        if request.method == "GET" && path == "/api/server/version" {
            return ImmichOriginServer.jsonResponse(200, ["major": 3, "minor": 1, "patch": 0, "prerelease": NSNull()])
        }
        // Immich's own order: who you are first (401), then what you may do (403), then what you asked (400).
        guard let key = request.headers["x-api-key"], !key.isEmpty else {
            return ImmichOriginServer.error(401, "Authentication required")
        }
        guard let permissions = withLock({ keys[key] }) else { return ImmichOriginServer.error(401, "Invalid API key") }
        let parts = path.split(separator: "/").map(String.init) // ["api", "assets", id, "original"]
        func need(_ permission: String) -> ServerResponse? {
            permissions.contains("all") || permissions.contains(permission) ? nil
                : ImmichOriginServer.error(403, "Missing required permission: \(permission)")
        }
        switch (request.method, parts.count > 1 ? parts[1] : "") {
        case ("POST", "search") where parts.count == 3 && parts[2] == "metadata":
            return need("asset.read") ?? search(request)
        case ("GET", "albums") where parts.count == 2:
            return need("album.read") ?? albums()
        case ("GET", "people") where parts.count == 2:
            return need("person.read") ?? people(request)
        case ("GET", "users") where parts.count == 3:
            if let denied = need("user.read") { return denied }
            if parts[2] == "me" { return ImmichOriginServer.jsonResponse(200, userJSON(withLock { library.owner })) }
            guard ImmichOriginServer.isUUID(parts[2]) else { return ImmichOriginServer.badID() }
            let user = withLock { ([library.owner] + library.partners).first { $0.id == parts[2] } }
            return user.map { ImmichOriginServer.jsonResponse(200, userJSON($0)) } ?? ImmichOriginServer.error(400, "User not found")
        case ("GET", "api-keys") where parts.count == 3 && parts[2] == "me":
            return ImmichOriginServer.jsonResponse(200, ["id": "5b7c35a8-0d0f-4b8e-9d8e-1c1d3a7a9f10", "name": "photofs",
                                                         "permissions": permissions, "createdAt": "2024-01-01T00:00:00.000Z",
                                                         "updatedAt": "2024-01-01T00:00:00.000Z"])
        case ("GET", "assets") where parts.count == 3 && parts[2] == "statistics":
            return need("asset.statistics") ?? statistics(request)
        case ("GET", "assets"), ("HEAD", "assets"):
            guard parts.count >= 3 else { break }
            guard ImmichOriginServer.isUUID(parts[2]) else { return ImmichOriginServer.badID() }
            let asset = withLock { library.asset(parts[2]) }
            // Immich answers an asset the key cannot see with 400 "Not found or no asset.read access".
            guard let asset, asset.visibility != "locked" else { return ImmichOriginServer.error(400, "Not found or no access") }
            if parts.count == 3 { return need("asset.read") ?? ImmichOriginServer.jsonResponse(200, assetJSON(asset, exif: true)) }
            if parts.count == 4 && parts[3] == "original" { return need("asset.download") ?? original(asset, request) }
            if parts.count == 4 && parts[3] == "thumbnail" { return need("asset.view") ?? thumbnail(asset, request) }
        default: break
        }
        return ImmichOriginServer.jsonResponse(404, ["message": "Cannot \(request.method) \(path)", "error": "Not Found", "statusCode": 404])
    }

    private func search(_ request: ServerRequest) -> ServerResponse {
        guard let object = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] else {
            return ImmichOriginServer.error(400, "body must be a JSON object")
        }
        let page = (object["page"] as? Int) ?? 1
        let size = (object["size"] as? Int) ?? 250
        guard page >= 1, (1...1000).contains(size) else { return ImmichOriginServer.error(400, "size must not be greater than 1000") }
        let withExif = object["withExif"] as? Bool ?? false
        let withPeople = object["withPeople"] as? Bool ?? false
        let withDeleted = object["withDeleted"] as? Bool ?? false
        let updatedAfter = (object["updatedAfter"] as? String).flatMap(ImmichOriginServer.parseDate)
        if object["updatedAfter"] != nil && updatedAfter == nil { return ImmichOriginServer.error(400, "updatedAfter must be a Date instance") }
        let visibility = object["visibility"] as? String
        let type = object["type"] as? String
        let albumIDs = object["albumIds"] as? [String] ?? []
        let personIDs = object["personIds"] as? [String] ?? []
        let (assets, albums) = withLock { (library.assets, library.albums) }
        var matching = assets.filter { asset in
            if let visibility { if asset.visibility != visibility { return false } } else if asset.visibility == "locked" { return false }
            if !withDeleted && asset.isTrashed { return false }
            if let type, asset.type != type { return false }
            if let updatedAfter, asset.updatedAt <= updatedAfter { return false }
            for album in albumIDs where !(albums.first { $0.id == album }?.assetIDs.contains(asset.id) ?? false) { return false }
            for person in personIDs where !asset.personIDs.contains(person) { return false }
            return true
        }
        // Immich orders by fileCreatedAt, newest first; the id breaks ties so pages never overlap.
        matching.sort { ($0.localTime - $0.utcOffset, $0.id) > ($1.localTime - $1.utcOffset, $1.id) }
        let start = min((page - 1).multipliedReportingOverflow(by: size).partialValue, matching.count)
        let slice = matching[max(0, start)..<min(matching.count, start + size)]
        let items = slice.map { assetJSON($0, exif: withExif, people: withPeople) }
        let next: Any = start + size < matching.count ? String(page + 1) : NSNull()
        return ImmichOriginServer.jsonResponse(200, [
            "albums": ["total": 0, "count": 0, "items": [], "facets": [], "nextPage": NSNull()],
            "assets": ["total": matching.count, "count": items.count, "items": items, "facets": [], "nextPage": next],
        ])
    }

    /// Immich's counts of the user's own assets: timeline and archive (hidden and locked left out), in the trash
    /// or not as `isTrashed` says (both without it).
    private func statistics(_ request: ServerRequest) -> ServerResponse {
        let trashed = request.query["isTrashed"].map { $0 == "true" }
        let (assets, owner) = withLock { (library.assets, library.owner) }
        let counted = assets.filter { asset in
            asset.ownerID == owner.id && (asset.visibility == "timeline" || asset.visibility == "archive")
                && (trashed.map { asset.isTrashed == $0 } ?? true)
        }
        let images = counted.filter { $0.type == "IMAGE" }.count
        return ImmichOriginServer.jsonResponse(200, ["images": images, "videos": counted.count - images, "total": counted.count])
    }

    private func albums() -> ServerResponse {
        let (albums, owner) = withLock { (library.albums, library.owner) }
        let items: [[String: Any]] = albums.map { album in
            ["id": album.id, "albumName": album.name, "description": album.description, "assetCount": album.assetIDs.count,
             "albumThumbnailAssetId": album.assetIDs.first ?? NSNull(), "albumUsers": [["role": "editor", "user": userJSON(owner)]],
             "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": ImmichOriginServer.format(album.updatedAt),
             "hasSharedLink": false, "isActivityEnabled": true, "shared": false, "ownerId": owner.id]
        }
        let body = (try? JSONSerialization.data(withJSONObject: items, options: [.sortedKeys])) ?? Data("[]".utf8)
        return ServerResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")], body: body)
    }

    private func people(_ request: ServerRequest) -> ServerResponse {
        let page = request.query["page"].flatMap { Int($0) } ?? 1
        let size = request.query["size"].flatMap { Int($0) } ?? 500
        guard page >= 1, (1...1000).contains(size) else { return ImmichOriginServer.error(400, "size must not be greater than 1000") }
        let withHidden = request.query["withHidden"] == "true"
        let all = withLock { library.people }.filter { withHidden || !$0.isHidden }
        let start = min((page - 1) * size, all.count)
        let items = all[start..<min(all.count, start + size)].map(personJSON)
        return ImmichOriginServer.jsonResponse(200, ["people": items, "total": all.count,
                                                     "hidden": all.filter(\.isHidden).count, "hasNextPage": start + size < all.count])
    }

    private func original(_ asset: ImmichOriginAsset, _ request: ServerRequest) -> ServerResponse {
        let data = asset.bytes
        var headers = [("Content-Type", asset.mimeType), ("Accept-Ranges", "bytes"),
                       ("Cache-Control", "private, max-age=86400, no-transform"),
                       ("Content-Disposition", "attachment; filename=\"\(asset.originalFileName.filter { $0 != "\"" })\"")]
        let total = data.count
        if let range = request.headers["range"], let (start, end) = ImmichOriginServer.parseRange(range, total: total) {
            guard start <= end else { return ServerResponse(status: 416, headers: [("Content-Range", "bytes */\(total)")]) }
            headers.append(("Content-Range", "bytes \(start)-\(end)/\(total)"))
            return ServerResponse(status: 206, headers: headers, body: data.subdata(in: start..<end + 1))
        }
        return ServerResponse(status: 200, headers: headers, body: data)
    }

    private func thumbnail(_ asset: ImmichOriginAsset, _ request: ServerRequest) -> ServerResponse {
        let size = request.query["size"] ?? "thumbnail"
        guard size == "thumbnail" || size == "preview" else { return ImmichOriginServer.error(400, "size must be a valid enum value") }
        let key = "\(asset.id) \(asset.checksum) \(size)"
        if let cached = withLock({ renditionCache[key] }) {
            return ServerResponse(status: 200, headers: [("Content-Type", size == "preview" ? "image/jpeg" : "image/webp")], body: cached)
        }
        guard let rendition = ImmichOriginServer.rendition(of: asset, size: size) else {
            return ImmichOriginServer.error(500, "Could not render a thumbnail")
        }
        withLock { renditionCache[key] = rendition }
        return ServerResponse(status: 200, headers: [("Content-Type", size == "preview" ? "image/jpeg" : "image/webp")], body: rendition)
    }

    /// Immich's renditions: the short side scaled to 250 px (WebP) or 1440 px (JPEG), never enlarged.
    public static func rendition(of asset: ImmichOriginAsset, size: String) -> Data? {
        let short = size == "preview" ? 1440 : 250
        let scale = min(1, Double(short) / Double(max(1, min(asset.width, asset.height))))
        let long = max(1, Int((Double(max(asset.width, asset.height)) * scale).rounded()))
        guard let rendered = try? VariantRenderer.render(asset.bytes, contentType: asset.mimeType, spec: .fit(long),
                                                         outputType: "image/jpeg") else { return nil }
        if size == "preview" { return rendered.data }
        guard let pixels = try? ImageCodec.decodeJPEG(rendered.data) else { return nil }
        return try? WebPCodec.encode(pixels, quality: 80)
    }

    // MARK: JSON

    private func userJSON(_ user: ImmichOriginUser) -> [String: Any] {
        ["id": user.id, "name": user.name, "email": user.email, "profileImagePath": "", "avatarColor": "primary",
         "profileChangedAt": "2024-01-01T00:00:00.000Z"]
    }

    private func personJSON(_ person: ImmichOriginPerson) -> [String: Any] {
        ["id": person.id, "name": person.name, "birthDate": NSNull(), "thumbnailPath": "/upload/thumbs/\(person.id).jpeg",
         "isHidden": person.isHidden, "isFavorite": false, "updatedAt": "2024-01-01T00:00:00.000Z"]
    }

    private func assetJSON(_ asset: ImmichOriginAsset, exif: Bool, people: Bool = false) -> [String: Any] {
        let local = Date(timeIntervalSince1970: TimeInterval(asset.localTime))
        let created = local.addingTimeInterval(TimeInterval(-asset.utcOffset))
        var json: [String: Any] = [
            "id": asset.id, "ownerId": asset.ownerID, "type": asset.type, "originalFileName": asset.originalFileName,
            "originalMimeType": asset.mimeType, "originalPath": "/data/library/\(asset.ownerID)/\(asset.originalFileName)",
            "checksum": asset.checksum, "localDateTime": ImmichOriginServer.format(local),
            "fileCreatedAt": ImmichOriginServer.format(created), "fileModifiedAt": ImmichOriginServer.format(created),
            "createdAt": ImmichOriginServer.format(created), "updatedAt": ImmichOriginServer.format(asset.updatedAt),
            "isFavorite": asset.isFavorite, "isArchived": asset.visibility == "archive", "isTrashed": asset.isTrashed,
            "isOffline": false, "isEdited": false, "hasMetadata": exif, "visibility": asset.visibility,
            "duration": asset.type == "VIDEO" ? "0:00:05.000000" : "0:00:00.00000", "thumbhash": NSNull(),
            "width": asset.width, "height": asset.height, "livePhotoVideoId": NSNull(), "duplicateId": NSNull(),
        ]
        if exif {
            json["exifInfo"] = [
                "description": asset.description ?? "", "city": asset.city ?? NSNull(), "state": asset.state ?? NSNull(),
                "country": asset.country ?? NSNull(), "fileSizeInByte": asset.bytes.count,
                "exifImageWidth": asset.width, "exifImageHeight": asset.height, "make": "Example", "model": "Camera 1",
                "dateTimeOriginal": ImmichOriginServer.format(created), "timeZone": "UTC",
            ] as [String: Any]
        }
        if people {
            let known = withLock { library.people }
            json["people"] = asset.personIDs.compactMap { id in known.first { $0.id == id }.map(personJSON) }
        }
        return json
    }

    static func jsonResponse(_ status: Int, _ object: Any) -> ServerResponse {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return ServerResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")], body: body)
    }

    /// Immich's error shape: `{"message", "error", "statusCode", "correlationId"}`.
    static func error(_ status: Int, _ message: String) -> ServerResponse {
        let names = [400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error"]
        return jsonResponse(status, ["message": message, "error": names[status] ?? "Error", "statusCode": status,
                                     "correlationId": "loopback"])
    }

    static func badID() -> ServerResponse {
        jsonResponse(400, ["message": ["id must be a UUID"], "error": "Bad Request", "statusCode": 400])
    }

    static func isUUID(_ text: String) -> Bool {
        let characters = Array(text.lowercased())
        guard characters.count == 36 else { return false }
        for (index, character) in characters.enumerated() {
            if [8, 13, 18, 23].contains(index) { if character != "-" { return false } } else if !character.isHexDigit { return false }
        }
        return true
    }

    static let formatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }()
    static let formatLock = NSLock()

    static func format(_ date: Date) -> String { formatLock.lock(); defer { formatLock.unlock() }; return formatter.string(from: date) }
    static func parseDate(_ text: String) -> Date? {
        formatLock.lock(); defer { formatLock.unlock() }
        return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }

    static func parseRange(_ header: String, total: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[0].isEmpty, let suffix = Int(spec[1]) { return (max(0, total - suffix), total - 1) }
        guard let start = Int(spec[0]) else { return nil }
        let end = spec[1].isEmpty ? total - 1 : min(Int(spec[1]) ?? total - 1, total - 1)
        return start >= total ? (1, 0) : (start, end)
    }
}
