// A Flickr member's library as a PhotoSource: who the user is, their photostream, changes since the last
// import, every id (for deletions), and their albums.
import Foundation
import PhotoCatalog
import PhotoSources

/// The account mode's user once resolved, and the signed-in member (flickr.test.login), each asked once.
/// Two locks: resolving "me" asks for the signed-in member while holding the first.
final class FlickrResolvedUser: @unchecked Sendable {
    private let userLock = NSLock()
    private let signedInLock = NSLock()
    private var user: SourceAccount?
    private var signedIn: SourceAccount?

    func value(_ resolve: () throws -> SourceAccount) throws -> SourceAccount {
        userLock.lock(); defer { userLock.unlock() }
        if let user { return user }
        let found = try resolve()
        user = found
        return found
    }

    func signedInMember(_ ask: () throws -> SourceAccount) throws -> SourceAccount {
        signedInLock.lock(); defer { signedInLock.unlock() }
        if let signedIn { return signedIn }
        let found = try ask()
        signedIn = found
        return found
    }
}

extension FlickrSource {
    /// How far before the start of an import the next one asks `flickr.photos.recentlyUpdated` from.
    /// `min_date` is compared with Flickr's clock, the sync point is taken from this machine's: a day covers
    /// a clock that is wrong by a time-zone offset (up to 14 h: a hardware clock kept in local time and read
    /// as UTC, common on machines that also boot Windows) and any NTP drift. Overlap costs nothing but
    /// re-reading the day's changed records (one call per 500), since photos whose URL did not change are
    /// not measured again; a gap would lose an edit for good.
    public static let syncSlack: Int64 = 86_400

    /// Photos per page of id listings (deletions, album members): Flickr's maximum, so a 50,000-photo
    /// account takes 100 calls.
    public static let idsPerPage = 500

    /// Whether calls carry an OAuth signature (only then may private photos and `recentlyUpdated` be asked).
    var isSigned: Bool { credentials.oauth1 != nil }

    /// The account mode's user: "me" through flickr.test.login (signed calls only), a user name through
    /// flickr.people.findByUsername, an NSID through flickr.people.getInfo (for its user name). Asked once;
    /// `prepare()` calls it, so an import gets the error ("no Flickr user named …") — until it succeeds `account`
    /// is nil and `listingKey` names the user as given.
    public func resolveUser() throws -> SourceAccount {
        guard let user = options.user else { throw ImportError(message: "not an account listing (no user given)") }
        return try resolved.value {
            if user == "me" {
                guard isSigned else {
                    throw ImportError(message: "--user me needs a signed-in Flickr account (photofs login flickr)")
                }
                return try signedInMember()
            }
            if FlickrSource.isNSID(user) {
                let answer = try lookUp("flickr.people.getInfo", ["user_id": user], notFound: "no Flickr user \(user)")
                return try FlickrSource.readAccount(answer["person"], idKeys: ["nsid", "id"], method: "flickr.people.getInfo",
                                                    fallbackName: user)
            }
            let answer = try lookUp("flickr.people.findByUsername", ["username": user],
                                    notFound: "no Flickr user named \(SkippedRecord.printable(user))")
            return try FlickrSource.readAccount(answer["user"], idKeys: ["nsid", "id"], method: "flickr.people.findByUsername",
                                                fallbackName: user)
        }
    }

    /// Who the signature belongs to (flickr.test.login).
    func signedInMember() throws -> SourceAccount {
        try resolved.signedInMember {
            let answer = try call("flickr.test.login", [:])
            return try FlickrSource.readAccount(answer["user"], idKeys: ["id", "nsid"], method: "flickr.test.login",
                                                fallbackName: nil)
        }
    }

    /// Flickr's NSIDs: digits, "@N", two digits ("12345678@N01").
    static func isNSID(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...20).contains(parts[0].count), parts[0].allSatisfy({ ("0"..."9").contains($0) }),
              parts[1].count == 3, parts[1].first == "N" else { return false }
        return parts[1].dropFirst().allSatisfy { ("0"..."9").contains($0) }
    }

    /// A call whose code 1 means "no such user": that becomes a plain message; other failures stay as they are.
    private func lookUp(_ method: String, _ parameters: [String: String], notFound: String) throws -> JSONValue {
        do { return try call(method, parameters) } catch let failure as FlickrREST.Failure where failure.code == 1 {
            throw ImportError(message: notFound)
        }
    }

    /// `{"id" or "nsid": …, "username": {"_content": …}}` as an account; the id must be an identifier.
    static func readAccount(_ value: JSONValue?, idKeys: [String], method: String, fallbackName: String?) throws -> SourceAccount {
        guard let id = idKeys.lazy.compactMap({ FlickrJSON.text(value?[$0]) }).first, SourceIdentifier.isValid(id) else {
            throw ImportError(message: "Flickr's answer to \(method) names no usable user id")
        }
        let name = FlickrJSON.text(value?["username"]).map { SourceText.clean($0, limit: SourceText.nameLimit) }
        return SourceAccount(id: id, name: name.flatMap { $0.isEmpty ? nil : $0 } ?? fallbackName ?? id)
    }

    // MARK: Listing

    /// The photostream: flickr.people.getPhotos when signed (private, friends and family photos included as
    /// far as the signature's member may see them), flickr.people.getPublicPhotos otherwise; photos only.
    func accountListPage(_ cursor: PageCursor?) throws -> SourcePage {
        let nsid = try resolveUser().id
        let page = FlickrSource.pageNumber(cursor, perPage: options.perPage)
        let method = isSigned ? "flickr.people.getPhotos" : "flickr.people.getPublicPhotos"
        let parameters = ["user_id": nsid, "extras": FlickrSourceOptions.accountExtras, "media": "photos",
                          "per_page": String(options.perPage), "page": String(page)]
        let answer = try call(method, parameters.merging(options.parameters) { _, user in user })
        var result = try FlickrSource.readPage(answer, page: page, method: method, context: recordContext(account: nsid))
        if result.next != nil { result.next = FlickrSource.cursor(page: page + 1, perPage: options.perPage) }
        return result
    }

    /// A sync point when `recentlyUpdated` can serve the next import: signed calls, and the account listed
    /// is the signed-in member's (the method lists the caller's own photos, whoever `--user` names). The
    /// moment is this machine's clock less `syncSlack`, taken before the import lists anything.
    func accountSyncPoint() throws -> SyncPoint? {
        guard isSigned else { return nil }
        let account = try resolveUser()
        guard try signedInMember().id == account.id else { return nil }
        return SyncPoint(token: String(max(0, options.now() - FlickrSource.syncSlack)))
    }

    /// flickr.photos.recentlyUpdated since `point` (a Unix time, as `accountSyncPoint` makes them):
    /// new uploads and edited photos, newest change first. It has no media argument, so videos are left
    /// out here (the `media` extra tells them).
    func accountChangesPage(since point: SyncPoint, cursor: PageCursor?) throws -> SourcePage {
        guard isSigned else {
            throw ImportError(message: "changes since the last import need a signed-in account (flickr.photos.recentlyUpdated)")
        }
        guard point.token.utf8.count <= 12, let minDate = Int64(point.token), minDate >= 0 else {
            throw ImportError(message: "the library's sync point \"\(SkippedRecord.printable(point.token))\" is not a Unix time")
        }
        let nsid = try resolveUser().id
        let page = FlickrSource.pageNumber(cursor, perPage: options.perPage)
        let method = "flickr.photos.recentlyUpdated"
        let answer = try call(method, ["min_date": String(minDate), "extras": FlickrSourceOptions.accountExtras,
                                       "per_page": String(options.perPage), "page": String(page)])
        var result = try FlickrSource.readPage(answer, page: page, method: method, context: recordContext(account: nsid))
        if result.next != nil { result.next = FlickrSource.cursor(page: page + 1, perPage: options.perPage) }
        return result
    }

    /// Every photo id of the account, 500 a page with one extra, `media` (the smallest answer that names them
    /// and tells a video from a photo: people.getPhotos lists videos whatever `media` asks, and an unknown
    /// video id would look like a photo the listing missed): what a complete listing no longer has was deleted.
    func accountIDPage(_ cursor: PageCursor?) throws -> SourceIDPage {
        let nsid = try resolveUser().id
        let page = FlickrSource.pageNumber(cursor)
        let method = isSigned ? "flickr.people.getPhotos" : "flickr.people.getPublicPhotos"
        let answer = try call(method, ["user_id": nsid, "media": "photos", "extras": "media",
                                       "per_page": String(FlickrSource.idsPerPage), "page": String(page)])
        return try FlickrSource.readIDPage(answer, envelope: "photos", page: page, method: method)
    }

    /// `photos.photo[].id` (or `photoset.photo[].id`) of one page, in order; records marked as videos are
    /// left out. Ids that are not identifiers are dropped by `SourceIDPage`.
    static func readIDPage(_ answer: JSONValue, envelope: String, page: Int, method: String) throws -> SourceIDPage {
        guard let list = answer[envelope], let items = list["photo"]?.arrayValue else {
            throw ImportError(message: "Flickr's answer to \(method) has no \(envelope).photo list (page \(page))")
        }
        let pages = FlickrJSON.int64(list["pages"]).flatMap { Int(exactly: $0) } ?? page
        let photos = items.filter { !FlickrRecord.isVideo($0) }
        let ids = photos.compactMap { FlickrJSON.text($0["id"]) }
        let next = !items.isEmpty && page < pages ? PageCursor(token: String(page + 1)) : nil
        // `total` counts every item the listing has (videos too when the server ignores media=photos): what
        // the importer checks the whole listing against before it deletes anything.
        let total = FlickrJSON.int64(list["total"]).flatMap { Int(exactly: $0) }.flatMap { $0 >= 0 ? $0 : nil }
        return SourceIDPage(ids: ids, next: next, pageCount: max(pages, page), total: total,
                            otherItems: items.count - ids.count)
    }

    // MARK: Albums

    /// Pages of flickr.photosets.getList read at most: 1,000 × 500 albums is far beyond any account, and a
    /// server announcing more pages than that is not believed.
    static let maxAlbumPages = 1_000

    /// flickr.photosets.getList, every page, in the member's own order. An album listed twice is kept once;
    /// one whose id is not an identifier is skipped with a warning.
    func accountAlbums() throws -> [SourceAlbum] {
        let nsid = try resolveUser().id
        var albums: [SourceAlbum] = []
        var seen = Set<String>()
        var page = 1
        while page <= FlickrSource.maxAlbumPages {
            let answer = try call("flickr.photosets.getList", ["user_id": nsid, "per_page": String(FlickrSource.idsPerPage),
                                                               "page": String(page)])
            guard let list = answer["photosets"], let items = list["photoset"]?.arrayValue else {
                throw ImportError(message: "Flickr's answer to flickr.photosets.getList has no photosets.photoset list (page \(page))")
            }
            for item in items {
                switch FlickrSource.readAlbum(item) {
                case .success(let album):
                    if seen.insert(album.id).inserted { albums.append(album) }
                case .failure(let skipped):
                    logger.warning("flickr album skipped", metadata: [
                        "album": "\(skipped.id ?? "(none)")", "field": "\(skipped.field)", "reason": "\(skipped.reason)",
                    ])
                }
            }
            let pages = FlickrJSON.int64(list["pages"]).flatMap { Int(exactly: $0) } ?? page
            guard !items.isEmpty, page < pages else { break }
            page += 1
        }
        return albums
    }

    /// One element of `photosets.photoset`: id, `title`/`description` as `{"_content": …}` (or plain text),
    /// `date_update` (a string of seconds), `photos` (a number or a string; videos are not counted).
    static func readAlbum(_ value: JSONValue) -> Result<SourceAlbum, SkippedRecord> {
        guard case .object(let json) = value else {
            return .failure(SkippedRecord(id: nil, field: "record", reason: "not a JSON object but \(value.kindName)"))
        }
        guard let id = FlickrJSON.text(json["id"]) else {
            return .failure(SkippedRecord(id: nil, field: "id", reason: json["id"].map { "not a string or number but \($0.kindName)" } ?? "missing"))
        }
        let updated = FlickrJSON.int64(json["date_update"]).flatMap { $0 > 0 ? $0 : nil }
        let photos = FlickrJSON.int64(json["photos"]).flatMap { Int(exactly: $0) }
        guard let album = SourceAlbum(id: id, title: FlickrJSON.text(json["title"]) ?? "",
                                      description: FlickrJSON.text(json["description"]) ?? "", updatedAt: updated,
                                      photoCount: photos) else {
            return .failure(SkippedRecord(id: id, field: "id", reason: SourceIdentifier.rule))
        }
        return .success(album)
    }

    /// flickr.photosets.getPhotos: one page of an album's photo ids in the album's order, 500 a page, photos
    /// only, no extras. An album deleted since `albums()` listed it (Flickr's code 1) has no members.
    func accountAlbumMembersPage(_ albumID: String, cursor: PageCursor?) throws -> SourceIDPage {
        let nsid = try resolveUser().id
        let page = FlickrSource.pageNumber(cursor)
        let method = "flickr.photosets.getPhotos"
        let answer: JSONValue
        do {
            answer = try call(method, ["photoset_id": albumID, "user_id": nsid, "media": "photos",
                                       "per_page": String(FlickrSource.idsPerPage), "page": String(page)])
        } catch let failure as FlickrREST.Failure where failure.code == 1 {
            return SourceIDPage(ids: [], next: nil, pageCount: 0)
        }
        return try FlickrSource.readIDPage(answer, envelope: "photoset", page: page, method: method)
    }
}
