// The demo account's library on a real loopback origin, and Flickr sources against it, signed or not.
@testable import FlickrImport
import FlickrOrigin
import Foundation
import PhotoSources

final class AccountFixture {
    static let key = "account-key-1234"
    static let secret = "account-secret-5678"
    /// The demo account (every 12th demo photo, its private photos, videos and albums) and another member.
    static let owner = DemoLibrary.account
    static let stranger = OriginAccount(nsid: "10000002@N02", username: "dorothea", fullname: "Dorothea Lange")

    let origin: FlickrOriginServer
    let log = CapturedLog()

    init(library: OriginLibrary? = nil) throws {
        var library = library ?? DemoLibrary.account(count: 24, scale: 8)
        if !library.accounts.contains(where: { $0.nsid == AccountFixture.stranger.nsid }) {
            library.accounts.append(AccountFixture.stranger)
        }
        origin = FlickrOriginServer(library: library, apiKey: AccountFixture.key, apiSecret: AccountFixture.secret)
        try origin.start()
    }

    func stop() { origin.stop() }

    func options(user: String?, perPage: Int = 100) -> FlickrSourceOptions {
        var options = FlickrSourceOptions()
        options.endpoint = origin.endpoint
        options.user = user
        options.perPage = perPage
        options.staticHost = origin.baseURL
        return options
    }

    func credentials(signedInAs nsid: String?) -> SourceCredentials {
        guard let nsid else { return .apiKey(AccountFixture.key) }
        let token = origin.issueAccessToken(for: nsid)
        return .oauth1(consumerKey: AccountFixture.key, consumerSecret: AccountFixture.secret, token: token.token,
                       tokenSecret: token.secret)
    }

    /// A source for `user`, signed in as `nsid` (nil: the app's key only).
    func source(user: String?, signedInAs nsid: String? = AccountFixture.owner.nsid, perPage: Int = 100,
                configure: (inout FlickrSourceOptions) -> Void = { _ in }) -> FlickrSource {
        var options = self.options(user: user, perPage: perPage)
        configure(&options)
        return FlickrSource(options: options, credentials: credentials(signedInAs: nsid), logger: log.logger())
    }

    /// The owner's photos as the origin holds them, by id.
    func ownerPhotos(_ include: (OriginPhoto) -> Bool = { _ in true }) -> [OriginPhoto] {
        origin.photos.filter { $0.owner == AccountFixture.owner.nsid && include($0) }
    }
}

/// Every page of a paged listing, at most 100 (a listing that never ends fails the test instead of hanging).
func allPages(_ read: (PageCursor?) throws -> SourcePage) throws -> [SourcePage] {
    var pages: [SourcePage] = []
    var cursor: PageCursor?
    repeat {
        let page = try read(cursor)
        pages.append(page)
        cursor = page.next
    } while cursor != nil && pages.count < 100
    return pages
}

func allIDs(_ read: (PageCursor?) throws -> SourceIDPage) throws -> [String] {
    var ids: [String] = []
    var cursor: PageCursor?
    var count = 0
    repeat {
        let page = try read(cursor)
        ids += page.ids
        cursor = page.next
        count += 1
    } while cursor != nil && count < 100
    return ids
}
