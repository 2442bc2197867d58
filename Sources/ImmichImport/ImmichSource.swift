// Immich as a PhotoSource: the metadata search in pages, changes since updatedAfter, the id listing, albums.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources

/// One Immich user's library (everything the key sees: timeline, archive, partners' shared photos; never the
/// locked folder). Listing is `POST /api/search/metadata` with `withExif` and `withPeople`, 1,000 a page (the
/// most Immich allows), following `nextPage`; changes are the same search with `updatedAfter` and
/// `withDeleted` (trashed photos come back marked and are removed); deletions are confirmed by a full id
/// listing (`type: IMAGE`, no EXIF) whose length must equal the `total` the server gives.
public final class ImmichSource: PhotoSource, @unchecked Sendable {
    public let kind = "immich"
    public let client: ImmichClient
    let mapping: ImmichAssetMapping
    let logger: Logger
    /// 1,000: Immich's maximum page size; 10,000 photos are 10 requests.
    public var pageSize = 1000
    /// How far before the last import's start changes are asked from: a server clock a few hours off from
    /// this machine's loses nothing (as for Flickr); re-listing a day's changes costs one page.
    public var syncMargin: TimeInterval = 86_400
    private let clock: @Sendable () -> Date

    private let lock = NSLock()
    private var me: (id: String, name: String)?
    private var ownerNames: [String: String] = [:]
    private var regions: [String: String] = [:]
    /// Favourite flags and people of the photos listed by this import (written after it by `ImmichImporter`).
    private var listedMarks: [String: PhotoMarks] = [:]
    private var listedPeople: [String: String] = [:]
    private var gone: Set<String> = []

    public init(client: ImmichClient, logger: Logger, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.mapping = ImmichAssetMapping(server: client.server)
        self.logger = logger
        self.clock = clock
    }

    // MARK: PhotoSource

    /// Who the key belongs to (`/api/users/me`): the account whose deletions are followed.
    public func prepare() throws {
        let user = try client.get("/users/me")
        guard let id = user["id"]?.stringValue, ImmichAssetMapping.isUUID(id) else {
            throw ImmichError(.notJSON, "the Immich server's /api/users/me has no user id: not an Immich server?")
        }
        let name = user["name"]?.stringValue.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 } ?? id
        withLock {
            me = (id.lowercased(), SourceText.clean(name, limit: SourceText.nameLimit))
            ownerNames[id] = me?.name
            ownerNames[id.lowercased()] = me?.name
        }
    }

    public var listingKey: String { "immich \(client.server) user \(withLock { me?.id } ?? "?")" }

    public var account: SourceAccount? {
        withLock { me.map { SourceAccount(id: $0.id, name: $0.name, seesPrivatePhotos: true) } }
    }

    public func syncPoint() throws -> SyncPoint? {
        SyncPoint(token: ImmichSource.isoFormat(clock().addingTimeInterval(-syncMargin)))
    }

    public func listPage(_ cursor: PageCursor?) throws -> SourcePage {
        try searchPage(cursor: cursor, extra: [:])
    }

    public func changesPage(since point: SyncPoint, cursor: PageCursor?) throws -> SourcePage {
        try searchPage(cursor: cursor, extra: ["updatedAfter": point.token, "withDeleted": true])
    }

    public func idPage(_ cursor: PageCursor?) throws -> SourceIDPage? {
        let answer = try client.post("/search/metadata", body: [
            "page": ImmichSource.pageNumber(cursor), "size": pageSize, "type": "IMAGE", "withExif": false,
        ])
        let assets = answer["assets"]
        var ids: [String] = []
        var others = 0
        let owner = withLock { me?.id }
        for item in assets?["items"]?.arrayValue ?? [] {
            // Partners' photos count as other items: the deletions followed are the account's own (as for
            // Flickr), and a partner's id would otherwise look like a photo the listing missed.
            if let id = item["id"]?.stringValue, ImmichAssetMapping.isUUID(id),
               item["ownerId"]?.stringValue?.lowercased() == owner {
                ids.append(id.lowercased())
            } else {
                others += 1
            }
        }
        var total: Int?
        if case .number(let number)? = assets?["total"], let value = number.int64, value >= 0, value <= Int64(Int32.max) {
            total = Int(value)
        }
        return SourceIDPage(ids: ids, next: ImmichSource.next(assets?["nextPage"]), pageCount: nil, total: total, otherItems: others)
    }

    /// `GET /api/assets/statistics?isTrashed=false`: the user's own images outside the trash and the locked
    /// folder (timeline and archive), what the id listing would count. Needs `asset.statistics`; a key without
    /// it (or a server that cannot answer) gives nil, and the id listing runs instead.
    public func accountPhotoCount() throws -> Int? {
        guard let answer = try? client.get("/assets/statistics?isTrashed=false"),
              let images = ImmichAssetMapping.integer(answer["images"]), (0...Int64(Int32.max)).contains(images) else { return nil }
        return Int(images)
    }

    /// `GET /api/assets/{id}`: a trashed or missing asset is gone.
    public func stillExists(_ photoID: String) throws -> Bool? {
        guard ImmichAssetMapping.isUUID(photoID) else { return false }
        do {
            let asset = try client.get("/assets/\(photoID)")
            return asset["isTrashed"] != .bool(true) && asset["visibility"]?.stringValue != "locked"
        } catch let error as ImmichError {
            // Immich answers 400 "Not found or no asset.read access" for an asset that is gone.
            if case .status(let status) = error.kind, status == 400 || status == 404 { return false }
            throw error
        }
    }

    public func albums() throws -> [SourceAlbum] {
        let answer = try client.get("/albums")
        guard let items = answer.arrayValue else {
            throw ImmichError(.notJSON, "the Immich server's /api/albums is \(answer.kindName), not a list")
        }
        return items.compactMap { item in
            guard let id = item["id"]?.stringValue, ImmichAssetMapping.isUUID(id) else {
                logger.warning("immich album skipped", metadata: ["reason": "no UUID id"])
                return nil
            }
            // Adding photos moves lastModifiedAssetTimestamp; renaming moves updatedAt: either lists it again.
            let times = [item["updatedAt"], item["lastModifiedAssetTimestamp"]].compactMap { $0?.stringValue.flatMap(ImmichDate.parse)?.instant }
            var count: Int?
            if case .number(let number)? = item["assetCount"], let value = number.int64, value >= 0, value < Int64(Int32.max) { count = Int(value) }
            return SourceAlbum(id: id.lowercased(), title: item["albumName"]?.stringValue ?? "", description: item["description"]?.stringValue ?? "",
                               updatedAt: times.max(), photoCount: count)
        }
    }

    public func albumMembersPage(_ albumID: String, cursor: PageCursor?) throws -> SourceIDPage {
        let answer = try client.post("/search/metadata", body: [
            "albumIds": [albumID], "page": ImmichSource.pageNumber(cursor), "size": pageSize, "type": "IMAGE", "withExif": false,
        ])
        let ids = (answer["assets"]?["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue?.lowercased() }
        return SourceIDPage(ids: ids, next: ImmichSource.next(answer["assets"]?["nextPage"]), pageCount: nil)
    }

    public func resolvePlace(_ placeID: String) throws -> PlaceResolution {
        let name = withLock { regions[placeID] }
        return PlaceResolution(placeID: placeID, placeName: name, regionName: name ?? "Unknown Region")
    }

    /// Not needed: every listed photo carries its size (`fileSizeInByte`). A record without one is measured
    /// with a HEAD of the original (the key goes as a header).
    public func measure(_ url: String) -> Result<MeasuredContent, MeasureFailure> {
        HTTPContentMeasurer(http: client.http, redactor: client.redactor).measure(url)
    }

    public var contentAccess: ContentAccess { .http }
    public func isSquareCrop(renditionLabel: String) -> Bool { false }

    /// Trashed (and locked) photos a changes listing named.
    public func removedPhotoIDs() throws -> [String] { withLock { gone.sorted() } }

    // MARK: Favourites and people

    /// The marks of every photo this run listed, and named people (`/api/people`) for their names.
    public func listedMarksAndPeople() throws -> (marks: [String: PhotoMarks], people: [String: String]) {
        var people: [String: String] = [:]
        var page = 1
        var bound = PagingBound()
        while true {
            let answer = try client.get("/people?page=\(page)&size=1000&withHidden=false")
            let items = answer["people"]?.arrayValue ?? []
            var fresh = 0
            for item in items {
                guard let id = item["id"]?.stringValue, ImmichAssetMapping.isUUID(id), item["isHidden"] != .bool(true),
                      let name = item["name"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty else { continue }
                if people.updateValue(SourceText.clean(name, limit: SourceText.nameLimit), forKey: id.lowercased()) == nil { fresh += 1 }
            }
            guard answer["hasNextPage"] == .bool(true), bound.allowsAnother(pageCount: nil, itemsOnPage: items.count, newItems: fresh) else { break }
            page += 1
        }
        return withLock {
            for (id, name) in listedPeople where people[id] == nil { people[id] = name }
            return (listedMarks, people)
        }
    }

    // MARK: Pages

    private func searchPage(cursor: PageCursor?, extra: [String: Any]) throws -> SourcePage {
        var body: [String: Any] = ["page": ImmichSource.pageNumber(cursor), "size": pageSize, "withExif": true, "withPeople": true]
        for (key, value) in extra { body[key] = value }
        let answer = try client.post("/search/metadata", body: body)
        guard let assets = answer["assets"], let items = assets["items"]?.arrayValue else {
            throw ImmichError(.notJSON, "the Immich server's search answer has no assets.items list")
        }
        try resolveOwners(items)
        var photos: [SourcePhoto] = []
        var skipped: [SkippedRecord] = []
        var videos = 0
        let names = withLock { ownerNames }
        for item in items {
            switch mapping.map(item, ownerName: { names[$0] ?? names[$0.lowercased()] }) {
            case .photo(let photo, let marks, let people, let region):
                photos.append(photo)
                withLock {
                    listedMarks[photo.id] = marks
                    for (id, name) in people { listedPeople[id] = name }
                    if let region, let place = photo.placeID { regions[place] = region }
                    gone.remove(photo.id)
                }
            case .video: videos += 1
            case .trashed(let id), .locked(let id): withLock { _ = gone.insert(id.lowercased()) }
            case .skipped(let record): skipped.append(record)
            }
        }
        return SourcePage(photos: photos, skipped: skipped, next: ImmichSource.next(assets["nextPage"]), pageCount: nil, videos: videos)
    }

    /// Names of owners other than the key's user (partners sharing their timeline), asked once each
    /// (`/api/users/{id}`); one that cannot be asked is shown by its id.
    private func resolveOwners(_ items: [JSONValue]) throws {
        let unknown = Set(items.compactMap { item -> String? in
            guard let owner = item["ownerId"]?.stringValue, ImmichAssetMapping.isUUID(owner), item["owner"]?["name"] == nil else { return nil }
            return owner
        }).filter { owner in withLock { ownerNames[owner] == nil } }
        for owner in unknown.sorted() {
            var name = owner
            do {
                if let given = try client.get("/users/\(owner)")["name"]?.stringValue, !given.trimmingCharacters(in: .whitespaces).isEmpty {
                    name = SourceText.clean(given, limit: SourceText.nameLimit)
                }
            } catch let error as ImmichError where error.kind != .unauthorized && error.kind != .unreachable {
                logger.warning("immich owner's name unknown; shown by id", metadata: ["owner": "\(owner)", "reason": "\(error)"])
            }
            withLock { ownerNames[owner] = name }
        }
    }

    /// Page numbers as text cursors ("2"); the first page is 1.
    static func pageNumber(_ cursor: PageCursor?) -> Int {
        guard let token = cursor?.token, let page = Int(token), page >= 1 else { return 1 }
        return page
    }

    /// `nextPage` is a string ("2") in 3.x; a number is taken too. Anything else ends the listing.
    static func next(_ value: JSONValue?) -> PageCursor? {
        switch value {
        case .string(let text)?:
            guard let page = Int(text), page >= 2, page <= PagingBound.maxPages else { return nil }
            return PageCursor(token: String(page))
        case .number(let number)?:
            guard let page = number.int64, page >= 2, page <= Int64(PagingBound.maxPages) else { return nil }
            return PageCursor(token: String(page))
        default:
            return nil
        }
    }

    static func isoFormat(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    private func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock(); defer { lock.unlock() }
        return try body()
    }
}
