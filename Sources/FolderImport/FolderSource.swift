// A folder of photo files as a PhotoSource: the photos of one imported folder that its scan found to write.
import Foundation
import PhotoCatalog
import PhotoSources

/// One imported folder as the importer sees it. The walk, the reconciliation and the reading are done
/// before (`FolderScan`); this hands their result to `LibraryImporter` as pages, so the catalog writes, the
/// page transactions and the per-listing state are those of every source. Its bytes are local files
/// (`contentAccess` `.localFile`), measured at listing (`SourcePhoto.content`), so `measure` is never asked.
public final class FolderSource: PhotoSource, @unchecked Sendable {
    public let kind = "folder"
    public let root: String
    private let photos: [SourcePhoto]
    private let places: [String: PlaceResolution]
    private let removed: [String]
    private let videos: Int
    /// 500 photos a page: one transaction each, as Flickr's largest page.
    static let pageSize = 500

    public init(root: String, photos: [SourcePhoto], places: [String: PlaceResolution], removed: [String], videos: Int) {
        self.root = root; self.photos = photos; self.places = places; self.removed = removed; self.videos = videos
    }

    /// "folder /home/me/Pictures": `photofs status` lists each imported folder.
    public var listingKey: String { FolderSource.listingKey(root: root) }
    public static func listingKey(root: String) -> String { "folder \(root)" }
    /// The folder a folder source's `listingKey` names.
    public static func root(ofListingKey key: String) -> String { String(key.dropFirst("folder ".count)) }
    public var account: SourceAccount? { nil }
    public var contentAccess: ContentAccess { .localFile }

    public func listPage(_ cursor: PageCursor?) throws -> SourcePage {
        let start = cursor.flatMap { Int($0.token) } ?? 0
        let end = min(photos.count, max(0, start) + FolderSource.pageSize)
        let slice = start < end ? Array(photos[max(0, start)..<end]) : []
        let pages = max(1, (photos.count + FolderSource.pageSize - 1) / FolderSource.pageSize)
        return SourcePage(photos: slice, skipped: [], next: end < photos.count ? PageCursor(token: String(end)) : nil,
                          pageCount: pages, videos: start == 0 ? videos : 0)
    }

    public func syncPoint() throws -> SyncPoint? { nil }
    public func changesPage(since point: SyncPoint, cursor: PageCursor?) throws -> SourcePage { try listPage(cursor) }
    public func idPage(_ cursor: PageCursor?) throws -> SourceIDPage? { nil }
    public func albums() throws -> [SourceAlbum] { [] }
    public func albumMembersPage(_ albumID: String, cursor: PageCursor?) throws -> SourceIDPage {
        SourceIDPage(ids: [], next: nil, pageCount: 1)
    }

    public func resolvePlace(_ placeID: String) throws -> PlaceResolution {
        places[placeID] ?? PlaceResolution(placeID: placeID, placeName: nil, regionName: "Unknown Region")
    }

    public func measure(_ url: String) -> Result<MeasuredContent, MeasureFailure> {
        .failure(MeasureFailure("a folder's files are measured when they are read"))
    }

    public func isSquareCrop(renditionLabel: String) -> Bool { false }

    public func removedPhotoIDs() throws -> [String] { removed }
}
