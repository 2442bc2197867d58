// A member's library on the loopback origin: photostream, albums, changes and user lookups as Flickr's API
// documents them (private photos only for their signed-in owner), static image URLs, and edits for tests.
import Foundation

/// A photoset as the origin keeps it.
public struct OriginAlbum: Equatable, Sendable {
    public var id: String
    public var owner: String
    public var title: String
    public var description: String
    /// Members in the album's order (photos and videos).
    public var photoIDs: [String]
    /// The cover photo; nil: the first member.
    public var primary: String?
    public var dateCreate: Int64
    /// Flickr's `date_update`: set to the origin's clock by every edit of the album or its members list.
    public var dateUpdate: Int64

    public init(id: String, owner: String, title: String, description: String = "", photoIDs: [String],
                primary: String? = nil, dateCreate: Int64, dateUpdate: Int64? = nil) {
        self.id = id; self.owner = owner; self.title = title; self.description = description
        self.photoIDs = photoIDs; self.primary = primary; self.dateCreate = dateCreate
        self.dateUpdate = dateUpdate ?? dateCreate
    }
}

/// The origin's time in seconds since 1970: the real time until a test sets it, then fixed until set or
/// advanced again, so `lastupdate` values in a test are exact.
public final class OriginClock: @unchecked Sendable {
    private let lock = NSLock()
    private var fixed: Int64?
    public init() {}
    public var now: Int64 { lock.withLock { fixed ?? Int64(Date().timeIntervalSince1970) } }
    public func set(_ seconds: Int64) { lock.withLock { fixed = seconds } }
    /// Moves the clock on from its current reading (and keeps it fixed there).
    public func advance(by seconds: Int64) {
        lock.withLock { fixed = (fixed ?? Int64(Date().timeIntervalSince1970)) + seconds }
    }
}

/// One REST call as it reached the origin, whatever it was answered (scripted statuses included).
public struct OriginRESTCall: Equatable, Sendable {
    /// The `method` parameter ("" when there was none).
    public var method: String
    /// When it arrived, in seconds of the monotonic clock (`ProcessInfo.systemUptime`): rate checks compare
    /// these with each other, and a wall clock that steps would make them lie.
    public var arrivedAt: TimeInterval
    /// Whether it carried an OAuth signature.
    public var signed: Bool
    /// Its parameters but the credentials' (`api_key`, `oauth_*`) and the answer format's (`method`, `format`,
    /// `nojsoncallback`): what a test checks a client asked for (`extras`, `per_page`, `min_date`).
    public var parameters: [String: String]
}

// MARK: Static image URLs

extension OriginPhoto {
    /// Flickr's documented image URL scheme (https://www.flickr.com/services/api/misc.urls.html):
    /// `/{server}/{id}_{secret}_{suffix}.jpg`, the 500 px size without a suffix, the original as
    /// `/{server}/{id}_{originalsecret}_o.{originalformat}`. Served besides `/photos/...`.
    public func staticPath(_ suffix: String) -> String {
        suffix.isEmpty ? "/\(server)/\(id)_\(secret).jpg" : "/\(server)/\(id)_\(secret)_\(suffix).jpg"
    }

    public var staticOriginalPath: String { "/\(server)/\(id)_\(originalSecret)_o.\(originalFormat)" }

    /// The URL suffix of a `url_<label>` extra: the extras' labels and the URL suffixes differ for three sizes
    /// (url_sq is `_s`, url_s is `_m`, url_l is `_b`; url_m, the 500 px size, has none).
    public static func staticSuffix(ofLabel label: String) -> String {
        switch label {
        case "sq": return "s"
        case "s": return "m"
        case "m": return ""
        case "l": return "b"
        default: return label
        }
    }

    /// "/65535/..." (a numeric first segment): a static image path, not `/photos/` or `/services/`.
    static func isStaticPath(_ path: String) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        return segments.count == 3 && segments[0].isEmpty && !segments[1].isEmpty && segments[1].allSatisfy(\.isNumber)
    }

    /// Every static path this photo's bytes are served at. The origin keeps one large image per photo; it
    /// stands in for the 1024 px `_b` size unless an `l` rendition exists, as the original when there is one.
    var staticImages: [(path: String, image: OriginImage)] {
        var list: [(path: String, image: OriginImage)] = []
        if hasOriginal { list.append((staticOriginalPath, image)) }
        list.append((staticPath("b"), renditions["l"] ?? image))
        if let thumbnail { list.append((staticPath("s"), thumbnail)) }
        for (label, rendition) in renditions where label != "l" {
            list.append((staticPath(OriginPhoto.staticSuffix(ofLabel: label)), rendition))
        }
        return list
    }
}

// MARK: Account methods

extension FlickrOriginServer {
    /// Scheme and host of the image URLs (no trailing slash), for `staticHost` in tests.
    public var baseURL: String { String(endpoint.dropLast(FlickrOriginServer.restPath.count)) }

    /// Answers the account methods; nil for any other method.
    func accountMethod(_ method: String, _ request: ServerRequest, caller: OriginCaller) -> ServerResponse? {
        switch method {
        case "flickr.people.getPhotos": return peopleGetPhotos(request, caller: caller)
        case "flickr.people.getPublicPhotos": return peopleGetPublicPhotos(request)
        case "flickr.people.findByUsername": return findByUsername(request)
        case "flickr.people.getInfo": return peopleGetInfo(request)
        case "flickr.photosets.getList": return photosetsGetList(request, caller: caller)
        case "flickr.photosets.getPhotos": return photosetsGetPhotos(request, caller: caller)
        case "flickr.photos.recentlyUpdated": return recentlyUpdated(request, caller: caller)
        case "flickr.photos.getInfo": return photosGetInfo(request, caller: caller)
        default: return nil
        }
    }

    /// flickr.photos.getInfo, as much of it as photofs reads: the photo's id, owner and visibility, or
    /// Flickr's code 1 "Photo not found" for a photo that is gone or that the caller may not see.
    private func photosGetInfo(_ request: ServerRequest, caller: OriginCaller) -> ServerResponse {
        let id = request.query["photo_id"] ?? ""
        guard let photo = withLock({ library.photos.first { $0.id == id } }), FlickrOriginServer.canSee(photo, caller) else {
            return fail(1, "Photo \"\(id)\" not found (invalid ID)")
        }
        return json(["photo": ["id": photo.id, "secret": photo.secret, "server": photo.server,
                               "owner": ["nsid": photo.owner], "title": ["_content": photo.title],
                               "visibility": ["ispublic": photo.isPublic ? 1 : 0, "isfriend": photo.isFriend ? 1 : 0,
                                              "isfamily": photo.isFamily ? 1 : 0]] as [String: Any],
                     "stat": "ok"])
    }

    /// Only the owner sees photos that are not public: the origin models no contacts, so friends and family
    /// photos are as hidden from other members as private ones.
    static func canSee(_ photo: OriginPhoto, _ caller: OriginCaller) -> Bool {
        photo.isPublic || caller.nsid == photo.owner
    }

    /// Whether anyone by this NSID exists: a member who can sign in or the owner of a photo.
    private func knownUser(_ nsid: String) -> Bool {
        withLock { library.accounts.contains { $0.nsid == nsid } || library.photos.contains { $0.owner == nsid } }
    }

    /// A photostream, newest upload first (Flickr's order).
    private func stream(of nsid: String, _ include: (OriginPhoto) -> Bool) -> [OriginPhoto] {
        withLock { library.photos.filter { $0.owner == nsid && include($0) } }
            .sorted { ($0.dateUpload, $0.id) > ($1.dateUpload, $1.id) }
    }

    private func peopleGetPhotos(_ request: ServerRequest, caller: OriginCaller) -> ServerResponse {
        guard let given = request.query["user_id"], !given.isEmpty else { return fail(1, "Required arguments missing") }
        // "me" is the signed-in caller; an unsigned call is nobody.
        guard let nsid = given == "me" ? caller.nsid : given, knownUser(nsid) else { return fail(2, "Unknown user") }
        // Flickr documents no `media` argument for people.getPhotos (flickr.photos.search has one): the
        // photostream comes with its videos whatever the client asks, and the client counts and drops them.
        return photoList(stream(of: nsid) { FlickrOriginServer.canSee($0, caller) }, request, envelope: "photos",
                         honoursMedia: false)
    }

    private func peopleGetPublicPhotos(_ request: ServerRequest) -> ServerResponse {
        guard let nsid = request.query["user_id"], !nsid.isEmpty, knownUser(nsid) else { return fail(1, "User not found") }
        return photoList(stream(of: nsid) { $0.isPublic }, request, envelope: "photos", honoursMedia: false)
    }

    private func findByUsername(_ request: ServerRequest) -> ServerResponse {
        let name = request.query["username"] ?? ""
        // Flickr matches user names without regard to case.
        guard let account = withLock({ library.accounts.first { $0.username.caseInsensitiveCompare(name) == .orderedSame } })
        else { return fail(1, "User not found") }
        return json(["user": ["id": account.nsid, "nsid": account.nsid, "username": ["_content": account.username]],
                     "stat": "ok"])
    }

    private func peopleGetInfo(_ request: ServerRequest) -> ServerResponse {
        let nsid = request.query["user_id"] ?? ""
        let (account, ownerName) = withLock {
            (library.accounts.first { $0.nsid == nsid }, library.photos.first { $0.owner == nsid }.map { $0.ownerName ?? nsid })
        }
        guard let username = account?.username ?? ownerName else { return fail(1, "User not found") }
        return json(["person": ["id": nsid, "nsid": nsid, "ispro": 0, "username": ["_content": username],
                                "realname": ["_content": account?.fullname ?? ""]], "stat": "ok"])
    }

    private func photosetsGetList(_ request: ServerRequest, caller: OriginCaller) -> ServerResponse {
        // user_id defaults to the calling user.
        let given = request.query["user_id"].flatMap { $0.isEmpty ? nil : $0 }
        guard let nsid = given ?? caller.nsid, knownUser(nsid) else { return fail(1, "User not found") }
        let (albums, photos) = withLock {
            (library.albums.filter { $0.owner == nsid }, Dictionary(library.photos.map { ($0.id, $0) }, uniquingKeysWith: { $1 }))
        }
        // "If page is not provided, all sets are returned"; with paging at most 500 a page.
        let paged = request.query["page"] != nil || request.query["per_page"] != nil
        let perPage = paged ? FlickrOriginServer.clampedNumber(request.query["per_page"], default: 500, range: 1...500)
                            : max(1, albums.count)
        let pages = max(1, (albums.count + perPage - 1) / perPage)
        let page = FlickrOriginServer.clampedNumber(request.query["page"], default: 1, range: 1...Int(Int32.max))
        let slice = page > pages ? [] : Array(albums.dropFirst((page - 1) * perPage).prefix(perPage))
        let sets: [[String: Any]] = slice.map { album in
            let visible = album.photoIDs.compactMap { photos[$0] }.filter { FlickrOriginServer.canSee($0, caller) }
            let videos = visible.filter(\.isVideo).count
            let primary = album.primary ?? album.photoIDs.first ?? "0"
            // Counts are numbers, the dates and view counts strings, title and description {"_content"}: as
            // Flickr sends them.
            return [
                "id": album.id, "owner": album.owner, "primary": primary, "secret": photos[primary]?.secret ?? "0",
                "server": photos[primary]?.server ?? "0", "farm": 66, "photos": visible.count - videos, "videos": videos,
                "title": ["_content": album.title], "description": ["_content": album.description],
                "needs_interstitial": 0, "visibility_can_see_set": 1, "count_views": "0", "count_comments": "0",
                "can_comment": 0, "date_create": String(album.dateCreate), "date_update": String(album.dateUpdate),
            ]
        }
        return json(["photosets": ["page": page, "pages": pages, "perpage": perPage, "total": albums.count,
                                   "photoset": sets], "stat": "ok"])
    }

    private func photosetsGetPhotos(_ request: ServerRequest, caller: OriginCaller) -> ServerResponse {
        let id = request.query["photoset_id"] ?? ""
        guard let album = withLock({ library.albums.first { $0.id == id } }) else { return fail(1, "Photoset not found") }
        if let user = request.query["user_id"], !user.isEmpty, user != album.owner { return fail(1, "Photoset not found") }
        let (members, account) = withLock {
            (album.photoIDs.compactMap { member in library.photos.first { $0.id == member } },
             library.accounts.first { $0.nsid == album.owner })
        }
        let primary = album.primary ?? album.photoIDs.first ?? "0"
        let ownerName = account?.username ?? members.first?.ownerName ?? album.owner
        // Records of a set carry no owner (the set does) and say which one is its cover, as a string.
        return photoList(members.filter { FlickrOriginServer.canSee($0, caller) }, request, envelope: "photoset",
                         defaultPerPage: 500, header: [
                             ("id", FlickrOriginServer.jsonText(album.id)), ("primary", FlickrOriginServer.jsonText(primary)),
                             ("owner", FlickrOriginServer.jsonText(album.owner)),
                             ("ownername", FlickrOriginServer.jsonText(ownerName)),
                             ("title", FlickrOriginServer.jsonText(album.title)),
                         ], perPageTwice: true) { photo, item in
            item["owner"] = nil
            item["isprimary"] = photo.id == primary ? "1" : "0"
        }
    }

    private func recentlyUpdated(_ request: ServerRequest, caller: OriginCaller) -> ServerResponse {
        guard let nsid = caller.nsid else { return fail(.insufficientPermissions) }
        guard let text = request.query["min_date"], !text.isEmpty else {
            return fail(1, "Required argument missing.")
        }
        // Flickr also takes English dates ("yesterday"); the origin takes the Unix timestamps photofs sends.
        guard let minDate = Int64(text.trimmingCharacters(in: .whitespaces)) else { return fail(2, "Not a valid date") }
        // Newest change first (Flickr's order); `lastupdate` is in every record of this method. No media
        // argument: Flickr documents none for it.
        let changed = withLock { library.photos.filter { $0.owner == nsid && $0.lastUpdate >= minDate } }
            .sorted { ($0.lastUpdate, $0.id) > ($1.lastUpdate, $1.id) }
        return photoList(changed, request, envelope: "photos", honoursMedia: false) { photo, item in
            item["lastupdate"] = String(photo.lastUpdate)
        }
    }

    // MARK: Photo lists

    /// A number parameter clamped into `range` (a hostile page=99999999999999999999 is the last page, not a
    /// trap), `fallback` when missing or not a number.
    static func clampedNumber(_ text: String?, default fallback: Int, range: ClosedRange<Int>) -> Int {
        guard let text, let value = Int(text.trimmingCharacters(in: .whitespaces)) else { return fallback }
        return min(max(value, range.lowerBound), range.upperBound)
    }

    static func jsonText(_ value: String) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])) ?? Data("\"\"".utf8),
               as: UTF8.self)
    }

    /// One page of a photo list under `envelope` ("photos" or "photoset"): Flickr's `page`, `pages`,
    /// `perpage`, `total` and `photo` array, the `extras` asked for, `media` ("all", "photos", "videos")
    /// applied when the method has it. Records set with `setRawRecord` go in byte for byte. `numbersAsText`
    /// sends `pages` and `total` as strings (flickr.photos.search does); `header` adds fields of the envelope
    /// (already JSON); `perPageTwice` adds `per_page` beside `perpage` (photosets.getPhotos sends both).
    func photoList(_ photos: [OriginPhoto], _ request: ServerRequest, envelope: String, defaultPerPage: Int = 100,
                   numbersAsText: Bool = false, honoursMedia: Bool = true, header: [(String, String)] = [],
                   perPageTwice: Bool = false, adjust: ((OriginPhoto, inout [String: Any]) -> Void)? = nil) -> ServerResponse {
        var photos = photos
        if honoursMedia {
            switch request.query["media"] ?? "all" {
            case "photos": photos = photos.filter { !$0.isVideo }
            case "videos": photos = photos.filter(\.isVideo)
            default: break
            }
        }
        // Flickr: per_page defaults to 100 (photosets: 500), at most 500; pages count from 1.
        let perPage = FlickrOriginServer.clampedNumber(request.query["per_page"], default: defaultPerPage, range: 1...500)
        let page = FlickrOriginServer.clampedNumber(request.query["page"], default: 1, range: 1...Int(Int32.max))
        let pages = max(1, (photos.count + perPage - 1) / perPage)
        let slice = page > pages ? [] : Array(photos.dropFirst((page - 1) * perPage).prefix(perPage))
        let extras = Set((request.query["extras"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let host = "http://127.0.0.1:\(port)"
        let (raw, urlless, hidden) = withLock { (rawRecords, withoutURLs, hiddenFromIDListings) }
        // Each record is serialised on its own so that a raw one (a fault hook) goes in byte for byte.
        let listed = FlickrOriginServer.asksForPhotoExtras(request.query) ? slice : slice.filter { !hidden.contains($0.id) }
        let items = listed.map { photo -> String in
            if let text = raw[photo.id] { return text }
            var item = photoJSON(photo, extras: extras, host: host, withURLs: !urlless.contains(photo.id))
            adjust?(photo, &item)
            return String(decoding: (try? JSONSerialization.data(withJSONObject: item, options: [.sortedKeys])) ?? Data("{}".utf8),
                          as: UTF8.self)
        }
        let pagesText = numbersAsText ? "\"\(pages)\"" : "\(pages)"
        let uncounted = FlickrOriginServer.asksForPhotoExtras(request.query) ? 0
            : withLock { photos.filter { uncountedInIDListings.contains($0.id) }.count }
        let total = photos.count - uncounted
        let totalText = numbersAsText || envelope == "photoset" ? "\"\(total)\"" : "\(total)"
        var fields = header.map { "\"\($0.0)\":\($0.1)," }.joined()
        fields += "\"page\":\(page),\"pages\":\(pagesText),\"perpage\":\(perPage),"
        if perPageTwice { fields += "\"per_page\":\(perPage)," }
        let body = "{\"\(envelope)\":{\(fields)\"photo\":[\(items.joined(separator: ","))],\"total\":\(totalText)},\"stat\":\"ok\"}"
        return ServerResponse(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")], body: Data(body.utf8))
    }

    // MARK: Call log

    func logRESTCall(_ request: ServerRequest) {
        let plumbing: Set<String> = ["api_key", "method", "format", "nojsoncallback"]
        let call = OriginRESTCall(method: request.query["method"] ?? "", arrivedAt: ProcessInfo.processInfo.systemUptime,
                                  signed: request.query["oauth_signature"] != nil,
                                  parameters: request.query.filter { !plumbing.contains($0.key) && !$0.key.hasPrefix("oauth_") })
        withLock { restCalls.append(call) }
    }

    /// Every REST call since the start or the last `resetCounters()`, in order of arrival.
    public var restCallLog: [OriginRESTCall] { withLock { restCalls } }

    /// REST calls by method since the start or the last `resetCounters()`.
    public var restCallCounts: [String: Int] {
        withLock { restCalls.reduce(into: [:]) { $0[$1.method, default: 0] += 1 } }
    }

    public func restCallCount(_ method: String) -> Int { restCallCounts[method] ?? 0 }

    // MARK: Edits between imports (each stamps the origin's clock as Flickr stamps `lastupdate`/`date_update`)

    public var albums: [OriginAlbum] { withLock { library.albums } }

    public func photo(id: String) -> OriginPhoto? { withLock { library.photos.first { $0.id == id } } }

    /// Changes a photo as an edit at Flickr would: `lastupdate` becomes now. False: no such photo.
    @discardableResult
    public func editPhoto(_ photoID: String, _ change: (inout OriginPhoto) -> Void) -> Bool {
        let now = clock.now
        return withLock {
            guard let index = library.photos.firstIndex(where: { $0.id == photoID }) else { return false }
            change(&library.photos[index])
            library.photos[index].lastUpdate = now
            rebuildImages()
            return true
        }
    }

    @discardableResult
    public func setTitle(photoID: String, _ title: String) -> Bool { editPhoto(photoID) { $0.title = title } }

    /// New bytes under new URLs, as Flickr's "replace photo" does: a new secret and original secret (derived
    /// from the bytes, so a replacement is deterministic), sizes made again (the old ones are gone; the
    /// 320 px "n" is made anew from the new bytes).
    @discardableResult
    public func replacePhoto(photoID: String, with image: OriginImage, thumbnail: OriginImage? = nil) -> Bool {
        editPhoto(photoID) { photo in
            let tag = image.etag.filter(\.isHexDigit)
            photo.secret = String(tag.prefix(10))
            photo.originalSecret = String(tag.suffix(10))
            photo.image = image
            photo.thumbnail = thumbnail
            photo.renditions = [:]
            if let small = DemoLibrary.smallRendition(of: image) { photo.renditions["n"] = small }
        }
    }

    /// A new upload: `lastupdate` is now, so `recentlyUpdated` lists it.
    public func addPhoto(_ photo: OriginPhoto) {
        var photo = photo
        photo.lastUpdate = clock.now
        withLock {
            library.photos.removeAll { $0.id == photo.id }
            library.photos.append(photo)
            rebuildImages()
        }
    }

    /// Deletes a photo and takes it out of its albums (which count as updated).
    @discardableResult
    public func deletePhoto(_ photoID: String) -> Bool {
        let now = clock.now
        return withLock {
            guard library.photos.contains(where: { $0.id == photoID }) else { return false }
            library.photos.removeAll { $0.id == photoID }
            for index in library.albums.indices where library.albums[index].photoIDs.contains(photoID) {
                library.albums[index].photoIDs.removeAll { $0 == photoID }
                if library.albums[index].primary == photoID { library.albums[index].primary = nil }
                library.albums[index].dateUpdate = now
            }
            rebuildImages()
            return true
        }
    }

    /// Photos sent without any url_* (only server, id, secret and, with `original_format`, the original's
    /// secret and format): one real record in 20 looks like this. Their static URLs are still served.
    public func setWithoutURLs(photoID: String, _ isWithout: Bool = true) {
        withLock { if isWithout { withoutURLs.insert(photoID) } else { withoutURLs.remove(photoID) } }
    }

    /// The photo is left out of lists asked without photo extras (the id listing an import finds deletions with)
    /// but still counted in their `total`: a listing that silently lost an item, as a list shifting while it
    /// is paged does.
    public func hideFromIDListings(photoID: String, _ isHidden: Bool = true) {
        withLock { if isHidden { hiddenFromIDListings.insert(photoID) } else { hiddenFromIDListings.remove(photoID) } }
    }

    /// Like `hideFromIDListings`, and left out of those lists' `total` too: a listing whose count adds up
    /// though it lost a photo (one gone before the cursor while another was added after it).
    public func dropFromIDListingsAndTotal(photoID: String) {
        withLock {
            hiddenFromIDListings.insert(photoID)
            uncountedInIDListings.insert(photoID)
        }
    }

    public func addAlbum(_ album: OriginAlbum) {
        var album = album
        album.dateUpdate = clock.now
        withLock {
            library.albums.removeAll { $0.id == album.id }
            library.albums.append(album)
        }
    }

    @discardableResult
    public func deleteAlbum(_ albumID: String) -> Bool {
        withLock {
            let before = library.albums.count
            library.albums.removeAll { $0.id == albumID }
            return library.albums.count != before
        }
    }

    @discardableResult
    public func editAlbum(_ albumID: String, _ change: (inout OriginAlbum) -> Void) -> Bool {
        let now = clock.now
        return withLock {
            guard let index = library.albums.firstIndex(where: { $0.id == albumID }) else { return false }
            change(&library.albums[index])
            library.albums[index].dateUpdate = now
            return true
        }
    }

    @discardableResult
    public func renameAlbum(_ albumID: String, title: String) -> Bool { editAlbum(albumID) { $0.title = title } }

    /// Adds a member at the end (or at `position`), as Flickr's photosets.addPhoto does.
    @discardableResult
    public func addToAlbum(_ albumID: String, photoID: String, at position: Int? = nil) -> Bool {
        editAlbum(albumID) { album in
            album.photoIDs.removeAll { $0 == photoID }
            album.photoIDs.insert(photoID, at: min(max(0, position ?? album.photoIDs.count), album.photoIDs.count))
        }
    }

    @discardableResult
    public func removeFromAlbum(_ albumID: String, photoID: String) -> Bool {
        editAlbum(albumID) { album in
            album.photoIDs.removeAll { $0 == photoID }
            if album.primary == photoID { album.primary = nil }
        }
    }
}
