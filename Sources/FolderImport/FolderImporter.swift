// `photofs import folder`: scans the folders, imports each one's photos as a source, then remembers the files.
import Foundation
import Logging
import PhotoCatalog
import PhotoSources

public struct FolderImportReport: Sendable {
    public var counts: FolderImportCounts
    /// Photos added, updated or left as they were by the catalog writes.
    public var written = ImportSummary()
    public var roots: [String]
    /// The roots the walk could look at (not missing, readable, not a photofs mount or the kernel's).
    public var walkedRoots: Set<String> = []
    /// The walk matched the remembered files exactly and nothing but the folders' sync times was written: the
    /// photos, and so their events, are as before.
    public var changedNothing = false
}

public final class FolderImporter {
    private let catalog: Catalog
    private let roots: [String]
    private let logger: Logger
    private let progress: ImportProgress?
    private let scan: FolderScan

    /// `deferred`: files still being written (`--watch`), left as remembered until a later import.
    public init(catalog: Catalog, roots: [String], logger: Logger, progress: ImportProgress?,
                cities: @escaping () -> NearestCity = { NearestCity(cities: GeonamesCities.all) },
                deferred: Set<String> = [], recognisesUnchanged: Bool = true, forgetting: Bool = false) {
        self.catalog = catalog; self.roots = roots; self.logger = logger; self.progress = progress
        self.scan = FolderScan(catalog: catalog, roots: roots, logger: logger, progress: progress, cities: cities,
                               deferred: deferred, recognisesUnchanged: recognisesUnchanged, forgetting: forgetting)
    }

    /// Stops following `roots` (`import folder --forget`): the photos only their files held are removed, as if
    /// each were empty, and the library no longer lists them. A folder deleted, renamed or on a disk retired
    /// is otherwise kept as it was: a root that is not there is never read as empty (it may be a disk not
    /// plugged in).
    public static func forget(catalog: Catalog, roots: [String], logger: Logger) throws -> FolderImportReport {
        let report = try FolderImporter(catalog: catalog, roots: roots, logger: logger, progress: nil, forgetting: true).run()
        try catalog.deleteSyncStates(listingKeys: roots.map(FolderSource.listingKey(root:)))
        return report
    }

    /// The folders of `roots` the library no longer follows: imported once, then forgotten (`forget`, from
    /// another process while a watcher follows them). A watcher drops them, or its next import would bring
    /// back every photo the user just removed.
    public static func forgottenRoots(_ roots: [String], catalog: Catalog) throws -> [String] {
        let followed = try followedRoots(catalog: catalog)
        return roots.filter { !followed.contains($0) }
    }

    /// The folders the library follows: each folder source's root, from the sync states in one read.
    public static func followedRoots(catalog: Catalog) throws -> Set<String> {
        Set(try catalog.syncStates().filter { $0.sourceKind == "folder" }.map { FolderSource.root(ofListingKey: $0.listingKey) })
    }

    /// A folder to import that lies inside another one the library follows, or one named with it, and is not
    /// followed itself yet: its photos already come with the folder holding it, and following both made its
    /// files move between the two at each import, counted as new and duplicate (a trial). Nil when none does;
    /// a library that follows nested folders already (from before this rule) imports them as before. A folder
    /// on another file system than its holder (a disk mounted inside it, a photofs mount the walk refuses) is
    /// not judged here (`onOneFileSystem`).
    public static func nestedRoot(_ roots: [String], followed: Set<String>,
                                  onOneFileSystem: (String, String) -> Bool) -> (root: String, holder: String)? {
        let holders = followed.union(roots).sorted()
        for root in roots where !followed.contains(root) {
            let holder = holders.first { $0 != root && root.hasPrefix($0 == "/" ? "/" : $0 + "/") && onOneFileSystem(root, $0) }
            if let holder { return (root, holder) }
        }
        return nil
    }

    /// Scans, then writes each folder's photos through `LibraryImporter` (a page a transaction), then the
    /// files it remembers. Stopped before the last step, the next import reads the changed files again and
    /// finds the same photos (ids come from their bytes), so nothing is lost or doubled. `beforeWriting` runs
    /// once the scan found something to write, before anything is (the CLI settles the events that aged past
    /// 48 hours there, so the new photos cannot join them: `LibraryEvents.settleAged`).
    public func run(beforeWriting: () -> Void = {}) throws -> FolderImportReport {
        let plan = try scan.plan()
        var report = FolderImportReport(counts: plan.counts, roots: roots)
        report.walkedRoots = plan.walkedRoots
        if plan.nothingChanged, try noteSynced(plan.walkedRoots) {
            try rememberRefused(plan)
            report.changedNothing = true
            return report
        }
        beforeWriting()
        for root in roots where plan.walkedRoots.contains(root) {
            let source = FolderSource(root: root, photos: plan.photosByRoot[root] ?? [], places: plan.places,
                                      removed: plan.removedByRoot[root] ?? [], videos: 0)
            var options = LibraryImportOptions()
            options.albums = false
            let importer = LibraryImporter(catalog: catalog, source: source, options: options, progress: progress,
                                           logger: logger)
            let result = try importer.run()
            report.written.added += result.summary.added
            report.written.updated += result.summary.updated
            report.written.unchanged += result.summary.unchanged
            report.written.regions = result.summary.regions
        }
        if !plan.nothingChanged {
            try catalog.updateFolderFiles(roots: plan.walkedRoots, previous: plan.previousFiles, to: plan.files)
        }
        try rememberRefused(plan)
        return report
    }

    /// The refused files of the walked roots, written when they differ from what the library remembered.
    private func rememberRefused(_ plan: FolderPlan) throws {
        guard Set(plan.refusedFiles) != Set(plan.previousRefusedFiles) else { return }
        try catalog.replaceRefusedFolderFiles(roots: plan.walkedRoots, with: plan.refusedFiles)
    }

    /// When nothing changed, all a `LibraryImporter` run per folder would write is the time of its last
    /// complete import: written here for every folder in one transaction (the importers' transactions,
    /// queries and fsyncs were ~50 ms of an unchanged re-import of 100,000 files). False, and nothing
    /// written, when a folder's last import was interrupted: the importer continues it as usual.
    private func noteSynced(_ walkedRoots: Set<String>) throws -> Bool {
        var states: [SyncState] = []
        let now = Int64(Date().timeIntervalSince1970)
        for root in roots where walkedRoots.contains(root) {
            let key = FolderSource.listingKey(root: root)
            var state = try catalog.syncState(listingKey: key) ?? SyncState(listingKey: key, sourceKind: "folder")
            guard state.resume == nil, state.sourceKind == "folder" else { return false }
            state.lastSyncedAt = now
            states.append(state)
        }
        try catalog.saveSyncStates(states)
        return true
    }
}
