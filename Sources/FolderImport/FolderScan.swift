// One folder import's plan: walk, reconcile with what the library remembers, read only what changed.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoSources

/// What an import of some folders will write: the photos to add or update (validated), their places, the
/// photos no file holds any more, and every file as the next import will remember it.
public struct FolderPlan: Sendable {
    public var photosByRoot: [String: [SourcePhoto]] = [:]
    public var places: [String: PlaceResolution] = [:]
    public var removedByRoot: [String: [String]] = [:]
    public var files: [FolderFileRecord] = []
    /// Roots that were walked (their remembered files are replaced by `files`).
    public var walkedRoots: Set<String> = []
    /// What the library remembered before (so only the rows that change are written).
    public var previousFiles: [FolderFileRecord] = []
    public var counts = FolderImportCounts()
    /// Every walked file is the one remembered at its path and nothing vanished (`UnchangedReimport`): nothing
    /// to write, and `files`/`previousFiles` are left empty (the remembered rows stay as they are).
    public var nothingChanged = false
    /// The files under the walked roots refused for what they hold, as the next import will remember them, and
    /// as the library remembered them before.
    public var refusedFiles: [RefusedFolderFile] = []
    public var previousRefusedFiles: [RefusedFolderFile] = []
}

/// The summary of a folder import.
public struct FolderImportCounts: Equatable, Sendable {
    public var imageFiles = 0
    public var new = 0
    public var unchanged = 0
    public var edited = 0
    public var renamedOrMoved = 0
    /// Files beyond the first of each set of identical files (one photo for them all).
    public var duplicateFiles = 0
    /// Photos whose last file is gone, removed from the library.
    public var removed = 0
    /// Left out by kind: video, raw, other; and images that could not be read (corrupt, truncated, empty,
    /// unreadable, changed while read).
    public var skipped: [String: Int] = [:]
    public var warnings = 0
    /// Files opened to read their bytes (the first 128 KiB of each, plus whole files hashed or decoded), those
    /// that turned out empty, corrupt or unreadable too: what an unchanged re-import must not do.
    public var filesRead = 0
    public init() {}
}

public final class FolderScan {
    private let catalog: Catalog
    private let roots: [String]
    private let logger: Logger
    private let progress: ImportProgress?
    private let cities: () -> NearestCity
    private let now: Int64
    private let deferred: Set<String>
    /// Whether an unchanged re-import may be recognised by `UnchangedReimport` (tests turn it off to compare it
    /// with the full reconciliation).
    private let recognisesUnchanged: Bool
    /// The roots are not walked but taken as walked and empty (`import folder --forget`): every photo only
    /// they held is removed.
    private let forgetting: Bool

    /// `roots` are absolute, canonical folder paths. `cities` is asked only when a photo has GPS. `deferred`
    /// are files still being written (`--watch`): left as the library remembers them, read by a later import.
    public init(catalog: Catalog, roots: [String], logger: Logger, progress: ImportProgress?,
                cities: @escaping () -> NearestCity = { NearestCity(cities: GeonamesCities.all) },
                now: Int64 = Int64(Date().timeIntervalSince1970), deferred: Set<String> = [],
                recognisesUnchanged: Bool = true, forgetting: Bool = false) {
        self.catalog = catalog; self.roots = roots; self.logger = logger; self.progress = progress
        self.cities = cities; self.now = now; self.deferred = deferred; self.recognisesUnchanged = recognisesUnchanged
        self.forgetting = forgetting
    }

    public func plan() throws -> FolderPlan {
        var plan = FolderPlan()
        progress?.update(stage: "walk", done: 0, total: nil)
        // What an unchanged re-import compares is read from the catalog while the folders are walked: the walk
        // waits on the kernel, the read on SQLite, and there are two cores (100,000 files: ~0.2 s each).
        let rememberedStats = deferred.isEmpty && recognisesUnchanged && !forgetting
            ? BackgroundResult(threadName: "catalog-read") { [catalog, roots] in try catalog.rememberedStats(roots: roots, pathOfURL: LocalFileContent.path(fromFileURI:)) }
            : nil
        var walk = forgetting ? FolderWalkResult(walkedRoots: Set(roots)) : FolderWalk.walk(roots: roots)
        let deferredFiles = walk.images.filter { deferred.contains($0.path) }
        if !deferred.isEmpty { walk.images.removeAll { deferred.contains($0.path) } }
        for line in walk.warnings { warn(line, &plan) }
        for (_, kinds) in walk.skipped { for (kind, count) in kinds { plan.counts.skipped[kind.rawValue, default: 0] += count } }
        if walk.skippedForTheirNames > 0 { plan.counts.skipped["names to fix", default: 0] += walk.skippedForTheirNames }
        if walk.brokenLinks > 0 { plan.counts.skipped["broken links", default: 0] += walk.brokenLinks }
        plan.walkedRoots = walk.walkedRoots
        plan.counts.imageFiles = walk.images.count
        progress?.update(stage: "walk", done: walk.images.count, total: walk.images.count)
        // Files an earlier import refused for what they held, not changed since: skipped unread (and so, without
        // a warning each time; the summary still counts them, `status` lists how many).
        plan.previousRefusedFiles = try catalog.refusedFolderFiles(roots: walk.walkedRoots)
        let refusedBefore = Dictionary(plan.previousRefusedFiles.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        walk.images.removeAll { file in
            guard let refused = refusedBefore[file.path], refused.reader == PhotoFileReader.version,
                  refused.stat == file.stat else { return false }
            plan.refusedFiles.append(refused)
            return true
        }
        if !plan.refusedFiles.isEmpty {
            plan.counts.skipped["unreadable", default: 0] += plan.refusedFiles.count
            logger.info("\(plan.refusedFiles.count) file(s) skipped unread: refused as images by an earlier import, unchanged since")
        }
        let refusedAgain = Set(plan.refusedFiles.map(\.path))
        if let stats = try rememberedStats?.value(),
           let unchanged = UnchangedReimport.counts(walked: walk.images, roots: roots, walkedRoots: walk.walkedRoots, stats: stats) {
            plan.counts.unchanged = unchanged.unchanged
            plan.counts.duplicateFiles = unchanged.duplicateFiles
            plan.nothingChanged = true
            return plan
        }

        plan.previousFiles = try catalog.folderFiles()
        let remembered = plan.previousFiles
        // A file being written keeps what was remembered of it, as a file that cannot be read does, and so do
        // the files of a folder the walk could not look at (FolderWalkResult.unreadable).
        // A refused file skipped unread holds no photo; a photo the library remembers at its path all the same (a
        // library from before a reader's version changed) is kept, as an unreadable file's is.
        func isKept(_ file: RememberedFile) -> Bool {
            deferred.contains(file.path) || walk.isUnreadable(file.path) || refusedAgain.contains(file.path)
        }
        let keptRemembered = remembered.filter { walk.walkedRoots.contains($0.root) && isKept($0) }
        let mine = remembered.filter { walk.walkedRoots.contains($0.root) && !isKept($0) }
        let others = remembered.filter { !walk.walkedRoots.contains($0.root) }
        let classification = FileReconciliation.classify(remembered: mine, walked: walk.images)

        // Read what changed (metadata and partial hash); a file that cannot be read keeps what was remembered
        // of it, so a passing problem (permissions, a file being written) removes no photo.
        var readings: [String: FileReading] = [:]
        var candidates: [FileReconciliation.Candidate] = []
        var keptAsRemembered: [RememberedFile] = keptRemembered
        let toRead = Set(classification.pathsToRead)
        let filesToRead = walk.images.filter { toRead.contains($0.path) && classification.changes[$0.path] != nil }
        // Overlapping roots may walk a path twice: both get its one reading.
        let read = Dictionary(zip(filesToRead.map(\.path), ParallelFileReading.read(filesToRead, progress: progress)),
                              uniquingKeysWith: { first, _ in first })
        for file in walk.images {
            guard let (change, previous) = classification.changes[file.path] else { continue }
            if let result = read[file.path] {
                plan.counts.filesRead += 1 // read, whatever it held (an empty or corrupt file too)
                do {
                    let reading = try result.get()
                    readings[file.path] = reading
                    candidates.append(.init(file: file, change: change, previous: previous, partialHash: reading.partialHash))
                } catch {
                    warn("image skipped: \(FolderScan.printable(file.path)): \(error)", &plan)
                    plan.counts.skipped["unreadable", default: 0] += 1
                    if var previous {
                        // Kept at the path it is at now: a renamed file's old path may hold another file now, and
                        // two rows for one path would leave a photo without its file.
                        previous.path = file.path
                        previous.root = file.root
                        keptAsRemembered.append(previous)
                    }
                    // Remembered only when no photo was read from it: a photo's file an edit made corrupt keeps its
                    // photo, which the mount then fails to open, so its warning must come at every import.
                    if previous == nil, let failure = error as? FileReadFailure, failure.isAboutContent {
                        plan.refusedFiles.append(RefusedFolderFile(path: file.path, root: file.root, stat: file.stat,
                                                                   reason: failure.description, reader: PhotoFileReader.version))
                    }
                }
            } else if let previous {
                candidates.append(.init(file: file, change: change, previous: previous, partialHash: previous.partialHash))
            }
        }

        let rememberedIDs = Set(remembered.map(\.photoID))
        var previousRepresentative: [String: String] = [:]
        for (id, url) in try catalog.localPhotoURLs() where rememberedIDs.contains(id) {
            if let path = LocalFileContent.path(fromFileURI: url) { previousRepresentative[id] = path }
        }
        // A remembered file gone from its path whose inode and size are a deferred file's was moved there (`mv`
        // of its folder, found with files still settling): kept as it was, so no import in between removes its
        // photo and the import that reads it finds it renamed (same inode, same photo). The size too: a deleted
        // file's inode is soon reused, and a new file being written into it is not the photo it held.
        let deferredIdentities = Set(deferredFiles.map { FileIdentity(device: $0.device, inode: $0.inode, size: $0.size) })
        keptAsRemembered += classification.vanished.filter {
            deferredIdentities.contains(FileIdentity(device: $0.device, inode: $0.inode, size: $0.size))
        }
        let kept = Set(keptAsRemembered.map(\.path))
        let vanished = classification.vanished.filter { !kept.contains($0.path) }
        let takenIDs = Set(try catalog.photos(ids: candidates.filter { $0.change == .new }.map { FolderScan.newID($0) }).keys)
        let resolution = FileReconciliation.unchanged(candidates: candidates, vanished: vanished,
                                                      others: others + keptAsRemembered,
                                                      previousRepresentative: previousRepresentative)
            ?? FileReconciliation.resolve(
            candidates: candidates, vanished: vanished,
            others: others + keptAsRemembered, previousRepresentative: previousRepresentative,
            newID: FolderScan.newID, takenIDs: takenIDs,
            fullHash: { path in
                plan.counts.filesRead += 1
                return ContentHash.full(path: path)
            })
        plan.counts.duplicateFiles = resolution.duplicateFiles
        for change in resolution.changes.values {
            switch change {
            case .unchanged: plan.counts.unchanged += 1
            case .edited: plan.counts.edited += 1
            case .renamed, .moved: plan.counts.renamedOrMoved += 1
            case .new: plan.counts.new += 1
            }
        }
        plan.files = resolution.files + keptAsRemembered

        // Photos to write, each from its representative file (read now if it was not).
        let rootOf = Dictionary(walk.images.map { ($0.path, $0.root) }, uniquingKeysWith: { a, _ in a })
        let walkedByPath = Dictionary(walk.images.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        let firstRoot = roots.first { walk.walkedRoots.contains($0) } ?? roots.first ?? ""
        var nearest: NearestCity?
        // A photo the library had whose file now says nothing of its date but its mtime (renamed from
        // "IMG_20190304_050607.jpg" to "Beach day.jpg", copied elsewhere, edited) keeps the date it had: a rename
        // moved such a photo to the year of its mtime. Unless that date was a remembered file's mtime itself:
        // then it follows the mtime (`touch -d` corrects it). Looked up only for such photos.
        var rememberedByPhoto: [String: [RememberedFile]]?
        func earlierDate(of id: String) throws -> CaptureDate? {
            guard rememberedIDs.contains(id), let photo = try catalog.photos(ids: [id])[id] else { return nil }
            if rememberedByPhoto == nil { rememberedByPhoto = Dictionary(grouping: remembered, by: \.photoID) }
            let fromMtime = rememberedByPhoto?[id]?.contains {
                CaptureDateRules.localWallClock(ofUnixTime: $0.mtimeNanos / 1_000_000_000) == photo.momentAt
            } ?? false
            return fromMtime ? nil : FolderScan.captureDate(of: photo)
        }
        for id in resolution.photosToWrite.sorted() {
            guard let path = resolution.representative[id] else { continue }
            var reading = readings[path]
            if reading == nil, let file = walkedByPath[path] ?? others.first(where: { $0.path == path }).flatMap(FolderScan.walked) {
                reading = try? PhotoFileReader.read(file)
                if reading != nil { plan.counts.filesRead += 1 }
            }
            guard let reading else {
                warn("image skipped: \(FolderScan.printable(path)): could not be read again", &plan)
                continue
            }
            for problem in PhotoMetadataRules.unusableValues(reading.exif, now: now) {
                warn("image \(FolderScan.printable(path)): EXIF \(problem)", &plan)
            }
            var photo = PhotoMetadataRules.metadata(
                exif: reading.exif, fileName: (path as NSString).lastPathComponent,
                modifiedWallClock: CaptureDateRules.localWallClock(ofUnixTime: reading.file.mtimeNanos / 1_000_000_000),
                now: now, headerSize: reading.headerSize)
            if photo.captured?.origin == .fileModified, let kept = try earlierDate(of: id) {
                photo.captured = kept
            }
            var placeID: String?
            if let latitude = photo.latitude, let longitude = photo.longitude {
                if nearest == nil { nearest = cities() }
                if let city = nearest?.nearest(latitude: latitude, longitude: longitude) {
                    let resolution = FolderScan.place(city)
                    plan.places[resolution.placeID] = resolution
                    placeID = resolution.placeID
                }
            }
            do {
                let source = try FolderScan.sourcePhoto(id: id, reading: reading, metadata: photo, placeID: placeID)
                plan.photosByRoot[rootOf[path] ?? firstRoot, default: []].append(source)
            } catch {
                warn("image skipped: \(FolderScan.printable(path)): \(error)", &plan)
            }
        }
        for id in resolution.removedPhotoIDs {
            let root = mine.first { $0.photoID == id }?.root ?? firstRoot
            plan.removedByRoot[root, default: []].append(id)
        }
        plan.counts.removed = resolution.removedPhotoIDs.count
        return plan
    }

    private func warn(_ line: String, _ plan: inout FolderPlan) {
        plan.counts.warnings += 1
        logger.warning("\(line)")
    }

    /// "file-" and 20 hex digits of the partial hash: the same bytes get the same id in any library, and an
    /// id says nothing about the file's name or folder.
    static func newID(_ candidate: FileReconciliation.Candidate) -> String {
        "file-" + candidate.partialHash.prefix(20)
    }

    static func place(_ city: City) -> PlaceResolution {
        let key = StableHash.fnv1a64([city.name, city.state, city.country].joined(separator: "\n"))
        let name = [city.name, city.state, city.country].filter { !$0.isEmpty }.joined(separator: ", ")
        return PlaceResolution(placeID: "geonames-" + String(key, radix: 16), placeName: name, regionName: city.regionName)
    }

    static func sourcePhoto(id: String, reading: FileReading, metadata: FileMetadata, placeID: String?) throws -> SourcePhoto {
        let file = reading.file
        let url = FileURI.glib(path: file.path)
        let owner: String
        switch metadata.photographer {
        case .artist(let name): owner = "folder-artist-" + String(StableHash.fnv1a64(name), radix: 16)
        case .camera(let name): owner = "folder-camera-" + String(StableHash.fnv1a64(name), radix: 16)
        case .unknown: owner = "folder-unknown"
        }
        let modified = file.mtimeNanos / 1_000_000_000
        let renditions = metadata.pixelWidth.flatMap { width in
            metadata.pixelHeight.map { [Rendition(label: "o", url: url, width: width, height: $0)] }
        } ?? []
        return try SourcePhoto(
            id: id, owner: owner, ownerName: metadata.photographer.name, title: metadata.title,
            description: metadata.description, dateTaken: metadata.captured?.text, takenAt: metadata.captured?.wallClock,
            uploadedAt: modified, placeID: placeID, latitude: metadata.latitude, longitude: metadata.longitude,
            originalURL: url, thumbnailURL: nil, renditions: renditions,
            visibility: file.readableByOthers ? .everyone : .privateOnly, lastUpdate: modified,
            content: MeasuredContent(size: file.size, contentType: file.kind.contentType ?? "",
                                     etag: LocalFileContent.etag(partialHash: reading.partialHash, size: file.size,
                                                                 mtimeNanos: file.mtimeNanos),
                                     lastModified: String(file.mtimeNanos)),
            access: .localFile, camera: metadata.camera)
    }

    /// A photo's stored date taken as a capture date (its wall clock and the offset its text ends with).
    static func captureDate(of photo: PhotoRecord) -> CaptureDate? {
        guard let text = photo.dateTaken, text.utf8.count >= 19, MomentRange.dateTakenText(photo.momentAt) == String(text.prefix(19)) else {
            return nil
        }
        return CaptureDate(wallClock: photo.momentAt, offsetMinutes: CaptureDateRules.offsetMinutes(String(text.dropFirst(19))),
                           origin: .earlierImport)
    }

    static func walked(_ file: RememberedFile) -> WalkedFile? {
        var info = stat(), link = stat()
        guard stat(file.path, &info) == 0 else { return nil }
        return WalkedFile(path: file.path, root: file.root, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                          size: Int64(info.st_size), mtimeNanos: Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec),
                          kind: ImageFileKind.fromName(file.path),
                          readableByOthers: info.st_mode & S_IROTH != 0
                              && FolderWalk.othersMayEnter((file.path as NSString).deletingLastPathComponent),
                          isLink: lstat(file.path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK)
    }

    /// A path as a log line may show it: control characters escaped, so one line stays one line.
    static func printable(_ path: String) -> String {
        var text = ""
        for scalar in path.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) {
                text += "\\u{\(String(scalar.value, radix: 16))}"
            } else { text.unicodeScalars.append(scalar) }
        }
        return text
    }
}

/// What stays when a file is renamed within a file system: its device, inode and size.
struct FileIdentity: Hashable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
}
