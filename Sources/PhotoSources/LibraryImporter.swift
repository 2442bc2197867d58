// Drives any PhotoSource into the catalog: listing, places, sizes, then one transaction.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent

public struct LibraryImportOptions: Sendable {
    /// Stop after this many pages (nil: the whole listing). A listing cut short records no sync point and
    /// finds no deletions: it did not see everything.
    public var maxPages: Int?
    /// `measure` calls in flight at once. 8 keeps a loopback or CDN origin busy without looking like abuse.
    public var measureConcurrency = 8
    /// List everything even when the source could list only what changed since the last import.
    public var full = false
    /// Import the account's albums (sources without albums list none).
    public var albums = true
    public init() {}
}

/// Why an import stopped. What earlier pages committed stays (each page is one transaction), and the next
/// import continues after them; the message holds no secret.
public struct ImportError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// An import that stopped: why, and how many of its pages were committed before (0: the library is as it was).
public struct ImportStopped: Error, CustomStringConvertible {
    public var cause: Error
    public var pagesCommitted: Int
    /// Whether finishing steps (deletions) were written before it stopped, though no page was.
    public var otherWrites: Bool
    public init(cause: Error, pagesCommitted: Int, otherWrites: Bool = false) {
        self.cause = cause; self.pagesCommitted = pagesCommitted; self.otherWrites = otherWrites
    }
    /// Nothing of this import reached the library.
    public var libraryUnchanged: Bool { pagesCommitted == 0 && !otherWrites }
    public var description: String { "\(cause)" }
}

public struct ImportReport: Sendable {
    public enum Mode: String, Sendable { case full, changes }
    public var mode = Mode.full
    /// The page this import continued from when an earlier one was interrupted (nil: it started afresh).
    public var resumedAfterPage: Int?
    public var summary: ImportSummary
    public var pages = 0
    public var photosListed = 0
    public var placesResolved = 0
    public var sizesMeasured = 0
    /// Photos that could not be measured (HEAD failed, not an image): kept out of the tree until a later
    /// import measures them.
    public var unavailable: [(id: String, reason: String)] = []
    /// Records the source could not use, one per record, in listing order.
    public var skipped: [SkippedRecord] = []
    /// Videos the listing had; photofs shows photos only.
    public var videos = 0
    /// Photos deleted at the origin and removed from the library (their cached bytes may be freed).
    public var removed: [PhotoRecord] = []
    public var albums = AlbumSummary()
    /// Albums whose members were listed again (new or changed since the last import).
    public var albumsListed = 0
    /// Photos the id listing has that the library does not (the list shifted while it was paged): the next
    /// import lists everything to bring them in.
    public var missedByListing = 0
    public init(summary: ImportSummary = ImportSummary()) { self.summary = summary }

    /// Skipped records per field at fault ("id": 2, "url": 1).
    public var skippedByField: [String: Int] { skipped.reduce(into: [:]) { $0[$1.field, default: 0] += 1 } }
}

/// Receives progress as the import goes; the CLI draws a bar on a terminal and logs lines otherwise.
public protocol ImportProgress: AnyObject {
    func update(stage: String, done: Int, total: Int?)
    func finish()
}

/// Lists a source into the catalog page by page. Each page is one transaction that also moves the listing's
/// resume point, so an interrupted import (Ctrl-C, a lost connection) leaves only complete photos and the
/// next one continues after the last committed page. A source that can list changes is followed
/// incrementally after its first complete import; one that follows an account also has its deletions found
/// (by listing its ids) and its albums kept.
public final class LibraryImporter {
    private let catalog: Catalog
    private let source: PhotoSource
    private let options: LibraryImportOptions
    private let progress: ImportProgress?
    private let logger: Logger
    private let clock: @Sendable () -> Date
    /// Set once deletions of this run are written (an import stopped after them changed the library).
    private var finishingWrites = false

    public init(catalog: Catalog, source: PhotoSource, options: LibraryImportOptions = LibraryImportOptions(),
                progress: ImportProgress?, logger: Logger, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.catalog = catalog
        self.source = source
        self.options = options
        self.progress = progress
        self.logger = logger
        self.clock = clock
    }

    /// Runs the import. Any failure is thrown as `ImportStopped`, which says how many pages of this run were
    /// committed before it (and so whether the library changed at all).
    public func run() throws -> ImportReport {
        var pagesCommitted = 0
        do {
            return try importListing(pagesCommitted: &pagesCommitted)
        } catch {
            throw ImportStopped(cause: error, pagesCommitted: pagesCommitted, otherWrites: finishingWrites)
        }
    }

    private func importListing(pagesCommitted: inout Int) throws -> ImportReport {
        var report = ImportReport()
        defer { progress?.finish() }
        try source.prepare()
        let key = source.listingKey
        var state = try catalog.syncState(listingKey: key) ?? SyncState(listingKey: key, sourceKind: source.kind)
        state.sourceKind = source.kind
        if let account = source.account {
            state.accountID = account.id
            state.accountName = account.name
        }

        // Where to start: an interrupted import of the same kind is continued; otherwise changes since the
        // last complete import when the source can list them, else everything.
        var resume: ResumePoint
        if let interrupted = state.resume, !options.full || interrupted.mode == .full,
           interrupted.mode == .full || state.lastSyncPoint != nil {
            resume = interrupted
            report.resumedAfterPage = interrupted.pages
            logger.info("continuing an interrupted import", metadata: [
                "listing": "\(key)", "pages done": "\(interrupted.pages)", "mode": "\(interrupted.mode.rawValue)",
            ])
        } else {
            let point = try source.syncPoint()?.token
            let incremental = !options.full && point != nil && state.lastSyncPoint != nil
            resume = ResumePoint(mode: incremental ? .changes : .full, cursor: nil, syncPoint: point, pages: 0)
            state.skippedCount = 0
            state.videoCount = 0
        }
        report.mode = resume.mode == .changes ? .changes : .full

        // 1. The listing, page by page, each committed with the resume point that follows it.
        var seen = Set<String>()
        var listingDone = resume.pages > 0 && resume.cursor == nil
        var cutShort = false
        var bound = PagingBound()
        let fetchPage = { [source, resume, state] (cursor: PageCursor?) throws -> SourcePage in
            if resume.mode == .changes, let since = state.lastSyncPoint {
                return try source.changesPage(since: SyncPoint(token: since), cursor: cursor)
            }
            return try source.listPage(cursor)
        }
        // The next page is asked for while this one's sizes are measured and written: the two waits overlap.
        // 20,000 photos, pages from the loopback origin (8.7 s for its 40 pages alone) and HEADs to nginx
        // (1.0 s at 8 at once): 12.7-12.8 s with each page's steps one after the other, 10.2 s overlapped.
        var nextPage: (cursor: PageCursor?, page: BackgroundResult<SourcePage>)?
        while !listingDone {
            progress?.update(stage: "pages", done: report.pages, total: nil)
            let cursor = resume.cursor.map(PageCursor.init(token:))
            let page: SourcePage
            if let pending = nextPage, pending.cursor?.token == cursor?.token {
                page = try pending.page.value()
            } else {
                page = try fetchPage(cursor)
            }
            nextPage = nil
            report.pages += 1
            report.videos += page.videos
            for skipped in page.skipped {
                logger.warning("\(source.kind) record skipped", metadata: [
                    "photo": "\(skipped.id ?? "(none)")", "field": "\(skipped.field)", "reason": "\(skipped.reason)",
                ])
            }
            report.skipped += page.skipped
            // A photo listed twice in a page is kept once, the last (lists shift while paging).
            var photos: [SourcePhoto] = []
            var position: [String: Int] = [:]
            var newPhotos = 0
            for photo in page.photos {
                if let existing = position[photo.id] { photos[existing] = photo } else {
                    position[photo.id] = photos.count
                    photos.append(photo)
                }
                if seen.insert(photo.id).inserted { newPhotos += 1 }
            }
            var next = page.next
            if next != nil && !bound.allowsAnother(pageCount: page.pageCount, itemsOnPage: page.photos.count,
                                                   newItems: newPhotos) {
                logger.warning("the listing does not end (a page repeats or the page count is past belief); stopped here",
                               metadata: ["pages": "\(report.pages)"])
                next = nil
                cutShort = true
            }
            if next != nil, let maxPages = options.maxPages, report.pages >= maxPages { cutShort = true }
            listingDone = next == nil || cutShort
            resume.cursor = next?.token
            resume.pages += 1
            // A listing cut short is not one to continue or to sync from: the next import starts afresh.
            state.resume = cutShort ? nil : resume
            state.skippedCount += page.skipped.count
            state.videoCount += page.videos
            if !listingDone, let next {
                let cursor = PageCursor(token: next.token)
                nextPage = (cursor, BackgroundResult(threadName: "next-page") { try fetchPage(cursor) })
            }
            try commit(photos, state: state, into: &report)
            pagesCommitted += 1
            progress?.update(stage: "pages", done: report.pages, total: listingDone ? report.pages : page.pageCount)
            progress?.update(stage: "photos", done: seen.count, total: nil)
        }
        report.photosListed = seen.count

        // 2. Deletions: photos of the account that a complete id listing no longer has, and those the source
        // itself knows are gone (a folder's deleted files).
        if !cutShort, let account = source.account {
            try removeDeleted(of: account, listed: seen, state: &state, into: &report)
        }
        if !cutShort {
            let gone = try source.removedPhotoIDs()
            if !gone.isEmpty {
                report.removed += try catalog.removePhotos(ids: gone)
                finishingWrites = true
            }
        }

        // 3. Albums, listing members again only for albums new or changed since the last import.
        if options.albums, !cutShort, source.account != nil {
            try importAlbums(into: &report)
        }

        // 4. Done: the next import lists changes from the point taken before this one began; after a listing
        // that missed photos (the list shifted while it was paged) or was cut short, it lists everything.
        state.resume = nil
        if !cutShort {
            state.lastSyncPoint = report.missedByListing > 0 ? nil : resume.syncPoint
            state.lastSyncedAt = Int64(clock().timeIntervalSince1970)
        }
        try catalog.saveSyncState(state)
        // A library that held private photos before (a file copied or created with a wider umask) is narrowed
        // even by an import that brought none.
        if (try? catalog.holdsPrivatePhotos()) ?? false { restrictLibrary() }
        return report
    }

    /// Places, sizes and one transaction for one page's photos.
    private func commit(_ photos: [SourcePhoto], state: SyncState, into report: inout ImportReport) throws {
        // Places: each new place id is resolved once; a place the catalog knows is not asked again.
        let known = try catalog.knownPlaceIDs()
        let newPlaces = Array(Set(photos.compactMap(\.placeID)).subtracting(known)).sorted()
        var resolutions: [PlaceResolution] = []
        for (index, placeID) in newPlaces.enumerated() {
            progress?.update(stage: "places", done: index, total: newPlaces.count)
            resolutions.append(try source.resolvePlace(placeID))
        }
        if !newPlaces.isEmpty { progress?.update(stage: "places", done: newPlaces.count, total: newPlaces.count) }
        report.placesResolved += resolutions.count

        // Exact sizes: only originals the catalog does not already know at this URL.
        let existing = try catalog.photos(ids: photos.map(\.id))
        let toMeasure = photos.filter { photo in
            guard photo.content == nil else { return false } // the source knew its bytes at listing
            guard let old = existing[photo.id] else { return true }
            return old.originalURL != photo.originalURL || !old.isAvailable
        }
        let measured = measure(toMeasure.map { ($0.id, $0.originalURL) })
        report.sizesMeasured += measured.count

        var imported: [ImportedPhoto] = []
        for photo in photos {
            var record = photo.catalogRecord()
            if let known = photo.content {
                record.byteSize = known.size
                record.contentType = known.contentType
                record.etag = known.etag
                record.lastModified = known.lastModified
            } else if let size = measured[photo.id] {
                switch size {
                case .success(let head):
                    record.byteSize = head.size
                    record.contentType = head.contentType
                    record.etag = head.etag
                    record.lastModified = head.lastModified
                case .failure(let reason):
                    report.unavailable.append((photo.id, reason.description))
                    logger.warning("original not measured; photo hidden until a later import measures it",
                                   metadata: ["photo": "\(photo.id)", "url": "\(URLRedaction.redacted(photo.originalURL))", "reason": "\(reason)"])
                }
            } else if let old = existing[photo.id] {
                record.byteSize = old.byteSize
                record.contentType = old.contentType
                record.etag = old.etag
                record.lastModified = old.lastModified
            }
            imported.append(ImportedPhoto(photo: record, owner: photo.owner, ownerName: photo.ownerName,
                                          renditions: photo.renditions, camera: photo.camera))
        }
        // Before the private rows are written, not after: no moment when the file holds them readable by all.
        if photos.contains(where: { !$0.visibility.isPublic }) { restrictLibrary() }
        let summary: ImportSummary
        do {
            summary = try catalog.applyImport(places: resolutions, photos: imported, state: state)
        } catch {
            throw ImportError(message: "could not write the library: \(error)")
        }
        report.summary.added += summary.added
        report.summary.updated += summary.updated
        report.summary.unchanged += summary.unchanged
        report.summary.regions = summary.regions
    }

    /// The library holds (or is about to hold) private photos: readable by its owner only from now on.
    private func restrictLibrary() {
        let narrowed = catalog.restrictToOwner()
        if !narrowed.isEmpty {
            logger.notice("the library holds private photos: made readable by its owner only (mode 0600)",
                          metadata: ["files": "\(narrowed.count)"])
        }
    }

    /// Lists every id the account has and removes the account's photos that are not among them — only when
    /// the id listing is provably whole: the source said how many items it has and the listing held exactly
    /// that many. A short or cut listing (a missing `total`, an empty or repeated page, a photo deleted while
    /// it was paged) deletes nothing, since a photo wrongly removed would not come back with the next
    /// incremental import.
    /// `listed`: the ids this run's listing brought. `state.countDifference` is kept, set or cleared here
    /// (`IDListingDecision`).
    private func removeDeleted(of account: SourceAccount, listed: Set<String>, state: inout SyncState,
                               into report: inout ImportReport) throws {
        let owner = SourceIdentifier.encoded(account.id) ?? account.id
        // Photos a listing that does not see private ones could never have listed are not its to delete.
        let local = try catalog.photoIDs(owner: owner, publicOnly: !account.seesPrivatePhotos)
        // The origin's count of the account's photos (one request) can stand in for the id listing's pages (10
        // for 10,000 photos) when it gives the same difference to the library's count as the last id listing
        // measured (IDListingDecision says why, and what else could make counts coincide). Photos the listing
        // reported trashed are removed just after this; they no longer count.
        let removedBySource = try source.removedPhotoIDs()
        let kept = local.subtracting(removedBySource)
        let originCount = try? source.accountPhotoCount()
        let decision = IDListingDecision.decide(mode: report.mode, everyKeptPhotoListed: kept.isSubset(of: listed),
                                                recordsLeftOut: state.skippedCount, originCount: originCount,
                                                libraryCount: kept.count, storedDifference: state.countDifference)
        switch decision {
        case .skip(let difference):
            logger.debug("the origin's photo count gives the stored difference to the library's; no id listing",
                         metadata: ["count": "\(originCount.map(String.init) ?? "none")",
                                    "difference": "\(difference)"])
            state.countDifference = difference
            return
        case .list(let reason):
            logger.debug("listing the ids to find deletions", metadata: ["reason": "\(reason.rawValue)"])
        }
        // Until this listing proves whole, no difference is trusted.
        state.countDifference = nil
        var ids = Set<String>()
        var others = 0
        var total: Int?
        var cursor: PageCursor?
        var bound = PagingBound()
        repeat {
            progress?.update(stage: "ids", done: bound.pages, total: nil)
            guard let page = try source.idPage(cursor) else { return } // the source cannot list ids
            let before = ids.count
            ids.formUnion(page.ids)
            others += page.otherItems
            if bound.pages == 0 { total = page.total }
            cursor = page.next
            // Only photo ids count as items: a page of videos alone brings no id and must not look repeated.
            if cursor != nil && !bound.allowsAnother(pageCount: page.pageCount, itemsOnPage: page.ids.count,
                                                     newItems: ids.count - before) {
                logger.warning("the id listing does not end; nothing deleted", metadata: ["account": "\(account.id)"])
                return
            }
        } while cursor != nil
        // Only a full listing can have missed photos by a shift; in a changes listing, ids the library lacks are
        // records skipped by an earlier import.
        if report.mode == .full {
            let skipped = Set(report.skipped.compactMap(\.id))
            report.missedByListing = ids.subtracting(local).subtracting(skipped).count
        }
        guard let total, ids.count + others == total else {
            logger.warning("the id listing is not whole (its count differs from the total the origin gave); nothing deleted",
                           metadata: ["account": "\(account.id)", "listed": "\(ids.count + others)",
                                      "total": "\(total.map(String.init) ?? "none")"])
            return
        }
        // Each photo is asked about once more before it goes: two changes while the list was paged (one photo
        // gone before the cursor, one added after it) keep the count right yet slide a live photo past the
        // listing. One call per deleted photo; deletions are few.
        var gone: [String] = []
        for (index, id) in local.subtracting(ids).sorted().enumerated() {
            progress?.update(stage: "deleted", done: index, total: nil)
            if try source.stillExists(id) != true { gone.append(id) } else { report.missedByListing += 1 }
        }
        state.countDifference = IDListingDecision.differenceToStore(
            originCount: originCount, listedOwnPhotos: ids.count,
            libraryCountAfter: kept.subtracting(gone).count)
        guard !gone.isEmpty else { return }
        report.removed = try catalog.removePhotos(ids: gone)
        finishingWrites = true
        logger.info("photos deleted at the origin removed", metadata: ["count": "\(report.removed.count)"])
    }

    private func importAlbums(into report: inout ImportReport) throws {
        let owner = source.account.map { SourceIdentifier.encoded($0.id) ?? $0.id }
        let albums = try source.albums()
        let known = try catalog.albumUpdateTimes()
        var imports: [AlbumImport] = []
        for (index, album) in albums.enumerated() {
            progress?.update(stage: "albums", done: index, total: albums.count)
            var members: [String]?
            // Same update time as stored: its members did not change (Flickr moves date_update with them).
            if options.full || known[album.id] == nil || known[album.id] != album.updatedAt || album.updatedAt == nil {
                var ids: [String] = []
                var seen = Set<String>()
                var cursor: PageCursor?
                var bound = PagingBound()
                var whole = true
                repeat {
                    let page = try source.albumMembersPage(album.id, cursor: cursor)
                    let fresh = page.ids.filter { seen.insert($0).inserted }
                    ids += fresh
                    cursor = page.next
                    if cursor != nil && !bound.allowsAnother(pageCount: page.pageCount, itemsOnPage: page.ids.count,
                                                             newItems: fresh.count) {
                        cursor = nil
                        whole = false
                    }
                } while cursor != nil
                if whole {
                    members = ids
                } else {
                    // A member list that does not end is not believed: the stored members stay, and no update
                    // time is kept, so the next import lists the album again.
                    logger.warning("an album's member list does not end; its members are kept as they were",
                                   metadata: ["album": "\(album.id)"])
                    imports.append(AlbumImport(sourceID: album.id, owner: owner, title: album.title,
                                               description: album.description, updatedAt: nil, memberIDs: nil))
                    continue
                }
                report.albumsListed += 1
            }
            imports.append(AlbumImport(sourceID: album.id, owner: owner, title: album.title,
                                       description: album.description, updatedAt: album.updatedAt, memberIDs: members))
        }
        progress?.update(stage: "albums", done: albums.count, total: albums.count)
        // No album at all, where the library has some, is more likely a broken answer than an account that
        // deleted every album at once: nothing is removed on its word.
        let keep: Set<String>? = albums.isEmpty && !known.isEmpty ? nil : Set(albums.map(\.id))
        if keep == nil { logger.warning("the account listed no albums; the library's are kept") }
        report.albums = try catalog.applyAlbums(imports, keepingOnly: keep, owner: owner)
    }

    /// Measures the originals, `measureConcurrency` at a time.
    private func measure(_ targets: [(id: String, url: String)]) -> [String: Result<MeasuredContent, MeasureFailure>] {
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var byID: [String: Result<MeasuredContent, MeasureFailure>] = [:]
        }
        let results = Results()
        let source = self.source
        let progress = self.progress.map(UncheckedProgress.init)
        BoundedParallel.forEach(count: targets.count, width: options.measureConcurrency) { index in
            let result = source.measure(targets[index].url)
            results.lock.lock()
            results.byID[targets[index].id] = result
            let done = results.byID.count
            results.lock.unlock()
            progress?.progress.update(stage: "sizes", done: done, total: targets.count)
        }
        return results.byID
    }

    /// Progress objects are called from the measuring threads; the CLI's takes its own lock.
    private struct UncheckedProgress: @unchecked Sendable { let progress: ImportProgress }
}
