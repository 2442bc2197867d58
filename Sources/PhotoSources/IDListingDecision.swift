// Whether an import may skip the id listing that finds deletions: the origin's photo count against the library's.
import Foundation

/// The id listing finds photos deleted for good at the origin (Immich: purged from the trash, which no changes
/// listing reports). It costs a page per 1,000 photos; one count request (`PhotoSource.accountPhotoCount`) can
/// stand in for it when the count proves nothing was deleted unseen.
///
/// The count is not the library's own: the origin also counts records the import leaves out (Immich: images it
/// cannot use, such as an unsupported type). So the rule compares differences, not counts: the origin's count
/// minus the library's, stored at each whole id listing (`SyncState.countDifference`), must come back the same.
/// A photo purged unseen lowers the origin's count by one and leaves the library's: the difference drops.
///
/// What else moves either count, and why each is safe:
/// - a photo added, restored from the trash or moved out of the locked folder moves its `updatedAt`, so the
///   changes listing brings it: both counts rise;
/// - a photo trashed or moved to the locked folder comes back marked in the changes listing (`withDeleted`) and
///   leaves the library: both counts fall;
/// - archiving keeps a photo in both counts (Immich counts timeline and archive; the search lists both);
/// - partners' photos are in neither (the count is the user's own, and so are the library's photos compared);
/// - videos are in neither (Immich's statistics count `images` only; the import leaves videos out);
/// - a record the import leaves out that is new to the origin's count raises it as a purge lowers it, and the
///   difference comes back unchanged: so any record left out in this run's listing means the ids are listed
///   (it may be an old one edited; the cost is an id listing while it stays inside the sync margin, a day);
/// - a change between the listing and the count (a photo added after the listing, purged after the count)
///   makes the difference differ, and the ids are listed; the stored difference is only moved by a listing.
/// When any of this is in doubt (no count, no stored difference, a full listing that missed a library photo),
/// the ids are listed.
public enum IDListingDecision: Equatable, Sendable {
    /// The count shows nothing deleted that the listing did not report; `difference` is the one to keep stored.
    case skip(difference: Int)
    /// The ids are listed, for this reason.
    case list(Reason)

    public enum Reason: String, Equatable, Sendable {
        /// The source cannot count (or a key lacks the permission): nothing to compare.
        case noCount
        /// The listing had records the import left out; one may be new to the count and hide a purge.
        case recordsLeftOut
        /// A full listing did not bring every photo the library holds: those are candidates for deletion.
        case notEveryPhotoListed
        /// No difference was measured yet for this listing (a first changes import after an upgrade).
        case noStoredDifference
        /// The origin's count minus the library's is not the stored difference.
        case countsDiffer
    }

    /// - Parameters:
    ///   - mode: the listing this import made. A full listing that brought every photo of the library and left
    ///     nothing out saw everything the origin counts, so the difference must be 0 whatever is stored.
    ///   - everyKeptPhotoListed: every library photo of the account (trashed ones left aside) was in this listing.
    ///   - recordsLeftOut: records this run's listing could not use (`SyncState.skippedCount`, resumed pages
    ///     included). Videos are not among them: they are in neither count.
    ///   - originCount: `accountPhotoCount()`, nil when the source could not say.
    ///   - libraryCount: the library's photos of the account, trashed ones left aside.
    ///   - storedDifference: `SyncState.countDifference`.
    public static func decide(mode: ImportReport.Mode, everyKeptPhotoListed: Bool, recordsLeftOut: Int, originCount: Int?,
                              libraryCount: Int, storedDifference: Int?) -> IDListingDecision {
        guard let originCount else { return .list(.noCount) }
        guard recordsLeftOut == 0 else { return .list(.recordsLeftOut) }
        let expected: Int
        switch mode {
        case .full:
            guard everyKeptPhotoListed else { return .list(.notEveryPhotoListed) }
            expected = 0
        case .changes:
            guard let storedDifference else { return .list(.noStoredDifference) }
            expected = storedDifference
        }
        return originCount - libraryCount == expected ? .skip(difference: expected) : .list(.countsDiffer)
    }

    /// The difference to store after a whole id listing: the origin's count minus what the library holds once
    /// the deletions are applied. Kept only when the listing agrees with the count (`listedOwnPhotos`, the
    /// account's photo ids the listing had, equals it): a photo added or purged between the count and the
    /// listing would otherwise store a difference that is off by one, and nil makes the next import list again.
    public static func differenceToStore(originCount: Int?, listedOwnPhotos: Int, libraryCountAfter: Int) -> Int? {
        guard let originCount, originCount == listedOwnPhotos else { return nil }
        return originCount - libraryCountAfter
    }
}
