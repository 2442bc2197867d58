// The disk cache of original photo bytes: download to a temporary file, verify, rename into place.
import Foundation
import Logging
import PhotoCatalog

/// What the cache needs to know about one photo; the filesystem layer fills it from the catalog.
public struct ContentSource: Sendable, Equatable {
    public var photoID: String
    public var url: String
    /// Exact size the catalog reported to `stat`; a download of any other size is refused.
    public var expectedSize: Int64
    public var contentType: String
    public var etag: String?
    public init(photoID: String, url: String, expectedSize: Int64, contentType: String, etag: String? = nil) {
        self.photoID = photoID; self.url = url; self.expectedSize = expectedSize
        self.contentType = contentType; self.etag = etag
    }
}

/// Why a photo's bytes could not be had. Carries the photo id and URL so a log line names both.
public struct ContentError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Error, Sendable, Equatable {
        case unreachable(String)
        case httpStatus(Int)
        case truncated(expected: Int64, received: Int64)
        case sizeMismatch(expected: Int64, received: Int64)
        case wrongContentType(String)
        /// The origin's bytes are another version than the catalog's or than the first answer's (ETag).
        case changedAtOrigin(expected: String, received: String)
        case noSpace
        case localIO(String)

        /// The cache could not keep the bytes (as opposed to the origin not delivering them).
        public var isLocalIO: Bool {
            if case .localIO = self { return true }
            return false
        }
    }
    public var kind: Kind
    public var photoID: String
    public var url: String
    /// `url` is kept with its credentials replaced (`URLRedaction`): errors end up in logs and messages.
    public init(kind: Kind, photoID: String, url: String) {
        self.kind = kind; self.photoID = photoID; self.url = URLRedaction.redacted(url)
    }

    public var description: String {
        let what: String
        switch kind {
        case .unreachable(let message): what = "origin unreachable: \(message)"
        case .httpStatus(let status): what = "origin answered HTTP \(status)"
        case .truncated(let expected, let received): what = "download ended after \(received) of \(expected) bytes"
        case .sizeMismatch(let expected, let received):
            what = "origin sent \(received) bytes, the catalog says \(expected)"
        case .wrongContentType(let type): what = "origin sent content type \"\(type)\", not the photo's image type"
        case .changedAtOrigin(let expected, let received):
            what = "the origin now has another version of the photo (ETag \(received), expected \(expected)); "
                + "it is not served, so no reader gets a mix of versions, until the library records the new one"
        case .noSpace: what = "no space left in the cache directory"
        // A folder import's photo is read where it is: its file's problem, not the cache's.
        case .localIO(let message): what = (url.hasPrefix("file:") ? "photo file: " : "cache I/O failed: ") + message
        }
        return "photo \(photoID): \(what) (\(url))"
    }
}

/// An open photo's bytes: the finished cache file, or a download (still arriving or not, on disk or in
/// memory) that every read goes through, so a reader never depends on where the bytes are kept.
public final class ContentHandle: @unchecked Sendable {
    public let key: String
    public let size: Int64
    private let cachedFile: OpenFile?
    let download: Download?
    let photoID: String

    /// Whether the handle counts as a reader of its download (`Download.closed` at release): not for a
    /// finished download kept in memory, which no longer asks for anything.
    let isReader: Bool

    /// A local photo's file as its open's check saw it (device, inode, size, mtime); nil for any other handle.
    public let localFile: LocalFileIdentity?

    init(cachedFile: OpenFile, key: String, size: Int64, photoID: String, localFile: LocalFileIdentity? = nil) {
        self.cachedFile = cachedFile; self.download = nil; self.key = key; self.size = size; self.photoID = photoID
        self.localFile = localFile
        isReader = false
    }

    init(download: Download, key: String, reader: Bool) {
        self.cachedFile = nil; self.download = download; self.key = key; localFile = nil
        self.size = download.source.expectedSize; self.photoID = download.source.photoID
        isReader = reader
    }

    /// The open file and the part of it a read of `count` bytes at `offset` gets, for a photo whose bytes are
    /// all in one file (a finished cache file, a local photo): the kernel can take them from the file itself
    /// (splice). Nil while the bytes come through a download. `count` is 0 past the end.
    public func fileRange(count: Int, at offset: Int64) -> (descriptor: Int32, offset: Int64, count: Int)? {
        guard download == nil, let cachedFile else { return nil }
        guard offset >= 0, offset < size, count > 0 else { return (cachedFile.fd, max(0, offset), 0) }
        return (cachedFile.fd, offset, Int(min(Int64(count), size - offset)))
    }

    /// The open file holding all of the photo's bytes (a finished cache file, a local photo); nil while they
    /// come through a download.
    public var wholeFileDescriptor: Int32? { download == nil ? cachedFile?.fd : nil }

    /// Whether the bytes are kept in memory for this open (the cache could not take them).
    public var isInMemory: Bool { download?.isInMemory ?? false }

    /// Calls `resume` when `read(into:at:)` of `count` bytes at `offset` will not wait: at once for a cached
    /// photo, else when the download has stored them (or failed: then with the error).
    public func whenReadable(count: Int, at offset: Int64, _ resume: @escaping (ContentError?) -> Void) {
        guard let download else { return resume(nil) }
        download.whenBytesAvailable(upTo: max(0, offset).saturatingAdd(Int64(max(0, count))), resume)
    }

    /// Reads up to `buffer.count` bytes at `offset`: fewer only at the end of the photo. Bytes not downloaded
    /// yet are waited for; a download that fails before they arrive throws.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        if let download { return try download.read(into: buffer, at: offset) }
        guard let cachedFile, offset >= 0, offset < size, buffer.count > 0 else { return 0 }
        let wanted = Int(min(Int64(buffer.count), size - offset))
        do { return try cachedFile.read(into: buffer.baseAddress!, count: wanted, at: offset) } catch let kind as ContentError.Kind {
            throw ContentError(kind: kind, photoID: photoID, url: "")
        }
    }
}

/// Counters for `photofs cache stats`.
public struct CacheStatistics: Codable, Sendable, Equatable {
    public var hits = 0
    public var misses = 0
    public var downloadedBytes: Int64 = 0
    public var evictions = 0
    public init() {}

    /// `statistics.json` is a file anyone may have edited: missing, negative or absurd counters read as 0
    /// (too large for their type fails the decode; the caller then starts from zero).
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hits = max(0, (try? container.decodeIfPresent(Int.self, forKey: .hits)) ?? 0)
        misses = max(0, (try? container.decodeIfPresent(Int.self, forKey: .misses)) ?? 0)
        downloadedBytes = max(0, (try? container.decodeIfPresent(Int64.self, forKey: .downloadedBytes)) ?? 0)
        evictions = max(0, (try? container.decodeIfPresent(Int.self, forKey: .evictions)) ?? 0)
    }
}

/// The disk cache of original photo bytes, bounded with least-recently-used eviction, and degrading to
/// memory when the disk cannot take a photo.
///
/// Layout: `CACHEDIR.TAG` (the directory is photofs's; see `CacheDirectory`), `originals/<key>` complete
/// photos (the key changes when the photo does), `partial/<key>` verified prefixes of photos whose readers
/// all left before the end (`PartialEntry`: a later open continues them with a Range request),
/// `tmp/<key>.<random>.part` downloads under way, `statistics.json`, `limit` (the bound last used). The files
/// themselves are the index: a file's mtime is its last use, so the LRU order and the bound survive restarts
/// with no separate database; partial entries are counted and evicted like whole ones. Only names photofs
/// writes are read, counted, evicted or removed.
///
/// Degraded mode: when a download's temporary file cannot be created (disk full, quota, directory removed
/// and not re-creatable, read-only, no permission), or there is less free space than the photo needs, or the
/// disk fills during the download, that download keeps its bytes in memory instead (see `Download`): its
/// readers are served whole, nothing of it is cached, and the memory goes with the last handle. One warning
/// is logged when this starts and one notice when a download is cached again.
public final class OriginalCache: @unchecked Sendable {
    public let directory: URL
    public let maxBytes: Int64
    let engine: DownloadEngine
    private let logger: Logger
    // Plain paths: URL.appendingPathComponent on a file URL stats the disk to decide on a trailing slash,
    // a system call per open for nothing.
    private let directoryPath: String
    private let objectsPath: String
    private let partialPath: String
    private let temporaryPath: String

    /// One file the cache counts: a whole photo in `originals/`, or a verified prefix in `partial/` (a key
    /// has at most one of them: a prefix is taken out of `partial/` when its download resumes).
    private struct Entry {
        var size: Int64
        var lastUse: Date
        var isPartial = false
    }

    private let lock = NSLock()
    private let repairLock = NSLock()
    private var entries: [String: Entry] = [:]
    private var totalBytes: Int64 = 0
    private var openCounts: [String: Int] = [:]
    private var statistics = CacheStatistics()
    private var statisticsDirty = false
    /// Why the cache is not caching right now; nil while it is.
    private var degradedReason: String?
    /// Finished downloads that were not cached, while a handle still holds them: a second open of the photo
    /// shares their bytes instead of downloading again.
    private var uncached: [String: WeakDownload] = [:]

    /// 2 GiB: a few hundred originals of today's cameras, small beside a disk, large beside a typical
    /// browsing session.
    public static let defaultMaxBytes: Int64 = 2 << 30
    /// 256 MiB: the largest stored variant `storedData` reads back (a rendered variant is a few MB).
    static let storedDataLimit = 256 << 20

    /// Claims the cache directory (refusing a foreign one: `CacheDirectoryError`), creates `originals/`,
    /// `partial/` and `tmp/` (0700: cached photos may be private), removes leftovers of downloads a crash
    /// interrupted (never renamed into place, so nothing is lost) and evicts down to `maxBytes`. `demand` sizes
    /// the requests of downloads that readers open (`DownloadDemand`).
    public init(directory: URL, http: HTTPClient, maxBytes: Int64 = OriginalCache.defaultMaxBytes,
                maxTransfers: Int = 16, demand: DownloadDemand.Tuning = DownloadDemand.Tuning(), logger: Logger) throws {
        self.directory = directory
        self.maxBytes = max(0, maxBytes)
        self.logger = logger
        directoryPath = directory.path
        objectsPath = directoryPath + "/originals"
        partialPath = directoryPath + "/partial"
        temporaryPath = directoryPath + "/tmp"
        engine = DownloadEngine(http: http, maxTransfers: maxTransfers, logger: logger)
        engine.demandTuning = demand
        try CacheDirectory.claim(directoryPath)
        chmod(directoryPath, 0o700)
        for path in [objectsPath, partialPath, temporaryPath] {
            if let problem = OriginalCache.makeSubdirectory(path) { throw CacheDirectoryError(path: path, reason: problem) }
        }
        for leftover in (try? FileManager.default.contentsOfDirectory(atPath: temporaryPath)) ?? []
        where CacheDirectory.isTemporaryName(leftover) {
            unlink(temporaryPath + "/" + leftover)
        }
        scanEntries()
        if let data = CacheDirectory.readSmallFile(directoryPath + "/statistics.json", limit: 64 << 10),
           let saved = try? JSONDecoder().decode(CacheStatistics.self, from: data) {
            statistics = saved
        }
        writeSmallFile("limit", Data(String(self.maxBytes).utf8))
        engine.onComplete = { [weak self] download in self?.added(download) }
        engine.onPark = { [weak self] download in self?.keepPrefix(of: download) }
        engine.makeStorage = { [weak self] download in
            self?.makeStorage(for: download) ?? .memory(reason: .localIO("the cache is closing"))
        }
        engine.onMovedToMemory = { [weak self] download, reason in
            self?.noteDegraded("the disk filled while photo \(download.source.photoID) was downloading (\(reason))")
        }
        lock.lock()
        evictLocked()
        lock.unlock()
    }

    /// The cache file name for a source. It changes whenever the URL, size, type or ETag does, so a photo
    /// changed in the catalog is never served from bytes of its previous version.
    public static func key(for source: ContentSource) -> String {
        let hash = StableHash.fnv1a64(parts: [source.url, String(source.expectedSize), source.contentType, source.etag ?? ""])
        return "\(fileNamePrefix(photoID: source.photoID))-\(String(hash, radix: 16))"
    }

    /// The start of every cache file name of a photo's bytes: its id with anything but ASCII letters and
    /// digits as "_", at most 64 characters (variants of the photo use the id "variant-<id>").
    /// Byte by byte: `CharacterSet.alphanumerics` made this a tenth of a warm local photo's open (perf).
    static func fileNamePrefix(photoID: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        for scalar in photoID.unicodeScalars.prefix(64) {
            let value = scalar.value
            let kept = (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
            bytes.append(kept ? UInt8(truncatingIfNeeded: value) : UInt8(ascii: "_"))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One photo whose cached bytes are to be freed: every cache file of it except `keeping` (the key of the
    /// version the catalog still shows). Its variants go too when it left the catalog (`keeping` nil); a
    /// replaced photo keeps them: they are keyed by the original they were made from and age out by LRU,
    /// while freeing them would make every --size mount render it again.
    public struct Removal: Sendable {
        public var photoID: String
        public var keeping: String?
        public init(photoID: String, keeping: String?) { self.photoID = photoID; self.keeping = keeping }
    }

    /// Frees the cached bytes of photos that were deleted or replaced, in one pass over the cache's entries
    /// (a few thousand removals against tens of thousands of files stays linear). Files open right now are
    /// kept. Two ids that differ only in punctuation share a file-name prefix; freeing the other's bytes then
    /// costs a download, never a wrong byte (the key names the version). Returns the bytes freed.
    @discardableResult
    public func discard(_ removals: [Removal]) -> Int64 {
        var byPrefix: [String: (keeping: String?, isVariant: Bool)] = [:]
        for removal in removals {
            byPrefix[OriginalCache.fileNamePrefix(photoID: removal.photoID)] = (removal.keeping, false)
            if removal.keeping == nil {
                byPrefix[OriginalCache.fileNamePrefix(photoID: "variant-" + removal.photoID)] = (nil, true)
            }
        }
        guard !byPrefix.isEmpty else { return 0 }
        lock.lock()
        var doomed: [(key: String, entry: Entry)] = []
        for (key, entry) in entries where openCounts[key] == nil {
            guard let dash = key.lastIndex(of: "-"), let rule = byPrefix[String(key[..<dash])], key != rule.keeping else { continue }
            doomed.append((key, entry))
            entries[key] = nil
            totalBytes = max(0, totalBytes.saturatingAdd(-entry.size))
        }
        lock.unlock()
        // Unlinked outside the lock: opens of other photos do not wait for the disk. A file that could not be
        // removed goes back into the books, so eviction still counts and removes it later.
        var freed: Int64 = 0
        var kept: [(key: String, entry: Entry)] = []
        for (key, entry) in doomed {
            if unlink(path(of: key, entry)) == 0 || errno == ENOENT { freed = freed.saturatingAdd(entry.size) } else { kept.append((key, entry)) }
        }
        if !kept.isEmpty {
            lock.lock()
            for (key, entry) in kept where entries[key] == nil {
                entries[key] = Entry(size: entry.size, lastUse: .distantPast, isPartial: entry.isPartial)
                totalBytes = totalBytes.saturatingAdd(entry.size)
            }
            lock.unlock()
        }
        return freed
    }

    /// Path of a complete cached copy, or nil. Only a regular file (never a symlink planted there) of the
    /// expected size counts; a file of the wrong size (a crash before its data reached the disk) is removed.
    public func cachedPath(for source: ContentSource) -> String? {
        let key = OriginalCache.key(for: source)
        let path = objectsPath + "/" + key
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        if Int64(info.st_size) == source.expectedSize { return path }
        unlink(path)
        lock.lock()
        if let old = entries[key], !old.isPartial {
            entries[key] = nil
            totalBytes = max(0, totalBytes.saturatingAdd(-old.size))
        }
        lock.unlock()
        return nil
    }

    /// Opens a photo for reading. A cached photo opens at once; otherwise its download starts (or is joined)
    /// at user priority and this returns as soon as the origin's answer is verified, so the first bytes can
    /// be read while the rest arrives; a photo with a partial entry opens at once, its download continuing
    /// only if a read needs more than the prefix holds. The download asks for what the handle's reads need
    /// (`DownloadDemand`), and stops when the last handle closes. When the cache cannot take the photo, the
    /// handle reads it from memory. `thumbnailer` names the thumbnailing process behind the open: its download
    /// waits behind every other and counts against that process's limit (`DownloadEngine.perRequesterLimit`).
    public func open(_ source: ContentSource, thumbnailer: String? = nil) throws -> ContentHandle {
        let key = OriginalCache.key(for: source)
        if let file = openCachedFile(source, key: key) {
            noteOpen(key, hit: true)
            return ContentHandle(cachedFile: file, key: key, size: source.expectedSize, photoID: source.photoID)
        }
        if let held = heldUncached(key) {
            noteOpen(key, hit: true)
            return ContentHandle(download: held, key: key, reader: false)
        }
        let download = startDownload(source, key: key, priority: thumbnailer == nil ? .user : .thumbnailer,
                                     requester: thumbnailer, want: .reader)
        do { try download.waitUntilVerified() } catch {
            download.closed()
            throw error
        }
        noteOpen(key, hit: false)
        return ContentHandle(download: download, key: key, reader: true)
    }

    /// Ends a use of a handle (the LRU may now evict its file). Its bytes (a descriptor or memory) go when the
    /// last reference to it does; its download stops if no other reader or whole-photo want is left.
    public func release(_ handle: ContentHandle) {
        if handle.isReader { handle.download?.closed() }
        lock.lock()
        if let count = openCounts[handle.key] { openCounts[handle.key] = count > 1 ? count - 1 : nil }
        evictLocked()
        lock.unlock()
    }

    /// Starts downloading a photo whole at low priority unless it is cached (a download readers opened is
    /// made to complete). Not while the cache is degraded: a prefetched photo nobody holds would be
    /// downloaded into memory and dropped.
    public func prefetch(_ source: ContentSource) {
        let key = OriginalCache.key(for: source)
        guard degradation == nil, cachedPath(for: source) == nil else { return }
        _ = startDownload(source, key: key, priority: .prefetch, want: .whole)
    }

    /// Downloads a photo completely (if needed) and returns its cache path. Throws if the photo could not be
    /// cached (the cache is degraded: `.noSpace` or `.localIO`); `fetchBytes` works then too.
    public func fetch(_ source: ContentSource) throws -> String {
        if let path = cachedPath(for: source) { return path }
        let key = OriginalCache.key(for: source)
        let download = startDownload(source, key: key, priority: .user, want: .whole)
        if let path = try download.waitUntilEnded() { return path }
        throw ContentError(kind: download.uncachedReason ?? .localIO("not cached"), photoID: source.photoID, url: source.url)
    }

    /// A photo's whole bytes: from the cache, or downloaded (and cached if the cache can take them).
    public func fetchBytes(_ source: ContentSource, priority: DownloadPriority = .user) throws -> Data {
        let key = OriginalCache.key(for: source)
        if let file = openCachedFile(source, key: key), source.expectedSize <= Download.memoryLimit,
           let data = CacheDirectory.readAll(fd: file.fd, count: Int(source.expectedSize)) {
            noteUse(key)
            return data
        }
        return try (heldUncached(key) ?? startDownload(source, key: key, priority: priority, want: .whole)).allBytes()
    }

    /// Keeps bytes made here (a rendered variant) under `key` (a name `key(for:)` makes), written to a
    /// temporary file and renamed into place like a download, and counted against the same bound: variants
    /// and originals share one LRU. On a full disk this throws (`.noSpace`) and keeps nothing.
    public func store(_ data: Data, key: String) throws {
        guard CacheDirectory.isEntryName(key) else {
            throw ContentError(kind: .localIO("not a cache key"), photoID: String(key.prefix(80)), url: "")
        }
        _ = ensureDirectories()
        let partPath = temporaryPath + "/\(key).\(UInt32.random(in: 0...UInt32.max)).part"
        let failure = data.withUnsafeBytes { bytes -> Int32? in
            let fd = Glibc.open(partPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return errno }
            let file = OpenFile(fd: fd)
            return file.write(bytes, at: 0)
        }
        if let failure {
            unlink(partPath)
            throw ContentError(kind: failure == ENOSPC || failure == EDQUOT ? .noSpace : .localIO(CacheDirectory.errnoText(failure)),
                               photoID: key, url: "")
        }
        guard rename(partPath, objectsPath + "/" + key) == 0 else {
            let message = CacheDirectory.errnoText()
            unlink(partPath)
            throw ContentError(kind: .localIO(message), photoID: key, url: "")
        }
        lock.lock()
        if let old = entries[key] { totalBytes = max(0, totalBytes.saturatingAdd(-old.size)) }
        entries[key] = Entry(size: Int64(data.count), lastUse: Date())
        totalBytes = totalBytes.saturatingAdd(Int64(data.count))
        evictLocked()
        lock.unlock()
    }

    /// Bytes stored with `store`, or nil; a use that moves the file up the LRU order. Only a regular file
    /// named like a key is read.
    public func storedData(key: String) -> Data? {
        guard CacheDirectory.isEntryName(key),
              let data = CacheDirectory.readSmallFile(objectsPath + "/" + key, limit: OriginalCache.storedDataLimit) else {
            return nil
        }
        lock.lock()
        let known = entries[key] != nil
        lock.unlock()
        if known { noteUse(key) }
        return data
    }

    public var currentStatistics: CacheStatistics { lock.lock(); defer { lock.unlock() }; return statistics }
    public var currentBytes: Int64 { lock.lock(); defer { lock.unlock() }; return totalBytes }
    /// Why photos are not being cached right now (nil: they are).
    public var degradation: String? { lock.lock(); defer { lock.unlock() }; return degradedReason }

    /// Writes the counters for `photofs cache stats` (at unmount, and after downloads).
    public func saveStatistics() {
        lock.lock()
        let snapshot = statistics
        statisticsDirty = false
        lock.unlock()
        if let data = try? JSONEncoder().encode(snapshot) { writeSmallFile("statistics.json", data) }
    }

    // MARK: Internals

    private final class WeakDownload {
        weak var download: Download?
        init(_ download: Download) { self.download = download }
    }

    /// The photo's download, joined or started; a new one continues the photo's partial entry if it has a
    /// valid one.
    private func startDownload(_ source: ContentSource, key: String, priority: DownloadPriority,
                               requester: String? = nil, want: DownloadWant) -> Download {
        let restored = engine.isInFlight(key) ? nil : takePartial(source, key: key)
        return engine.start(key: key, source: source, finalPath: objectsPath + "/" + key, priority: priority,
                            requester: requester, want: want, restored: restored)
    }

    /// The photo's partial entry, moved to `tmp/` for a download to continue (the rename is the claim: two
    /// openers cannot both take it) and checked (`PartialEntry.open`). One that fails a check is removed and
    /// logged: it is never served.
    private func takePartial(_ source: ContentSource, key: String) -> RestoredPrefix? {
        lock.lock()
        let known = entries[key]?.isPartial == true
        lock.unlock()
        // Only what the index knows (the scan at start, or a park since): no system call for every open of a
        // photo that never had one.
        guard known else { return nil }
        let claimed = temporaryPath + "/\(key).\(UInt32.random(in: 0...UInt32.max)).part"
        let moved = rename(partialPath + "/" + key, claimed) == 0
        lock.lock()
        if let entry = entries[key], entry.isPartial {
            entries[key] = nil
            totalBytes = max(0, totalBytes.saturatingAdd(-entry.size))
        }
        lock.unlock()
        guard moved else { return nil }
        guard let (file, entry) = PartialEntry.open(path: claimed, photoSize: source.expectedSize, catalogETag: source.etag) else {
            unlink(claimed)
            logger.warning("partial cache entry discarded: it does not check out", metadata: [
                "photo": "\(source.photoID)", "file": "\(partialPath)/\(key)",
            ])
            return nil
        }
        logger.debug("resuming from a partial cache entry", metadata: [
            "photo": "\(source.photoID)", "received": "\(entry.prefixLength)", "bytes": "\(source.expectedSize)",
        ])
        return RestoredPrefix(file: file, temporaryPath: claimed, received: entry.prefixLength, etag: entry.etag)
    }

    /// Keeps the prefix of a download nobody wants more of as a partial entry (called by the engine under its
    /// lock, so no opener joins the download meanwhile). A prefix in memory (degraded cache), an empty one, or
    /// one that cannot be written is dropped.
    private func keepPrefix(of download: Download) {
        let prefix = download.takeParkedPrefix()
        recordFetched(download.fetchedBytes)
        guard let path = prefix.temporaryPath else { return }
        guard let file = prefix.file, prefix.received > 0,
              let size = PartialEntry.seal(file, received: prefix.received, photoSize: download.source.expectedSize,
                                           etag: prefix.etag),
              rename(path, partialPath + "/" + download.key) == 0 else {
            unlink(path)
            return
        }
        lock.lock()
        if let old = entries[download.key] { totalBytes = max(0, totalBytes.saturatingAdd(-old.size)) }
        entries[download.key] = Entry(size: size, lastUse: Date(), isPartial: true)
        totalBytes = totalBytes.saturatingAdd(size)
        evictLocked()
        lock.unlock()
    }

    private func recordFetched(_ bytes: Int64) {
        lock.lock()
        statistics.downloadedBytes = statistics.downloadedBytes.saturatingAdd(max(0, bytes))
        statisticsDirty = true
        lock.unlock()
    }

    /// The cache file of `key` (the source's), opened without following a symlink, when it is a regular file of
    /// the expected size; one of another size is removed, as `cachedPath` does. Opened first and checked on its
    /// descriptor: an `lstat` of the path before the open, and the key computed twice, were ~4 % of the daemon's
    /// samples while a reader opened and closed 255 cached photos in turn (perf).
    private func openCachedFile(_ source: ContentSource, key: String) -> OpenFile? {
        let path = objectsPath + "/" + key
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        let file = OpenFile(fd: fd)
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        guard Int64(info.st_size) == source.expectedSize else {
            _ = cachedPath(for: source) // removes the file of the wrong size and forgets its entry
            return nil
        }
        return file
    }

    /// A finished, uncached download of `key` some handle still holds.
    private func heldUncached(_ key: String) -> Download? {
        lock.lock()
        defer { lock.unlock() }
        uncached = uncached.filter { $0.value.download != nil }
        return uncached[key]?.download
    }

    /// Where a new download keeps its bytes (on its transfer thread): a temporary file in `tmp/` when the
    /// disk has room for the whole photo and the file can be made, otherwise memory.
    private func makeStorage(for download: Download) -> DownloadStorage {
        if let problem = ensureDirectories() {
            noteDegraded(problem)
            return .memory(reason: .localIO(problem))
        }
        // Checked first so a disk that is full stays "degraded" quietly instead of every download filling
        // it, failing and moving to memory (statvfs is one system call; the race it leaves is handled by
        // the move). f_bavail: what an unprivileged writer may use.
        var info = statvfs()
        if statvfs(temporaryPath, &info) == 0 {
            let (free, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
            if !overflow, free < download.source.expectedSize {
                noteDegraded("no space left in the cache directory (\(free) bytes free, photo \(download.source.photoID) needs \(download.source.expectedSize))")
                return .memory(reason: .noSpace)
            }
        }
        let partPath = temporaryPath + "/\(download.key).\(UInt32.random(in: 0...UInt32.max)).part"
        let fd = Glibc.open(partPath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            noteDegraded("cannot create a file in \(temporaryPath) (\(CacheDirectory.errnoText(code)))")
            return .memory(reason: code == ENOSPC || code == EDQUOT ? .noSpace : .localIO(CacheDirectory.errnoText(code)))
        }
        return .file(OpenFile(fd: fd), temporaryPath: partPath)
    }

    /// Re-creates the cache directory (tagged), `originals/` and `tmp/` if they were removed under a running
    /// mount. Returns why the cache cannot be used, or nil.
    private func ensureDirectories() -> String? {
        var info = stat()
        if lstat(objectsPath, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
           lstat(partialPath, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
           lstat(temporaryPath, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            return nil
        }
        // One repair at a time: two transfer threads re-creating at once would each see the other's
        // half-written tag as a foreign file.
        repairLock.lock()
        defer { repairLock.unlock() }
        if lstat(objectsPath, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
           lstat(partialPath, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
           lstat(temporaryPath, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            return nil
        }
        do { try CacheDirectory.claim(directoryPath) } catch { return "\(error)" }
        for path in [objectsPath, partialPath, temporaryPath] {
            if let problem = OriginalCache.makeSubdirectory(path) { return "\(path): \(problem)" }
        }
        logger.notice("cache directory re-created", metadata: ["directory": "\(directoryPath)"])
        // Whatever the index held is gone with the directory.
        lock.lock()
        entries = entries.filter { access(path(of: $0.key, $0.value), F_OK) == 0 }
        totalBytes = entries.values.reduce(0) { $0.saturatingAdd($1.size) }
        lock.unlock()
        return nil
    }

    /// Creates a 0700 directory, or says why `path` is not one photofs can use (a symlink is refused: what it
    /// points to is not ours).
    private static func makeSubdirectory(_ path: String) -> String? {
        var info = stat()
        if lstat(path, &info) != 0 {
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else { return "cannot be created (\(CacheDirectory.errnoText()))" }
            guard lstat(path, &info) == 0 else { return "vanished as it was created" }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "is not a directory" }
        chmod(path, 0o700)
        return nil
    }

    /// Reads the index from `originals/`: regular files named like keys only.
    private func scanEntries() {
        var found: [String: Entry] = [:]
        var total: Int64 = 0
        // Whole photos first: a prefix of a photo that is also whole is useless, and is removed.
        for (directory, isPartial) in [(objectsPath, false), (partialPath, true)] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where CacheDirectory.isEntryName(name) {
                var info = stat()
                guard lstat(directory + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
                if isPartial, found[name] != nil {
                    unlink(directory + "/" + name)
                    continue
                }
                let size = max(0, Int64(info.st_size))
                // A hostile mtime is any Int: Date takes any Double, and the LRU only compares them.
                found[name] = Entry(size: size, lastUse: Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec)),
                                    isPartial: isPartial)
                total = total.saturatingAdd(size)
            }
        }
        lock.lock()
        entries = found
        totalBytes = total
        lock.unlock()
    }

    /// Writes a small file at the top of the cache through `tmp/` and a rename, so a crash or a full disk
    /// leaves the old one or nothing; failures are ignored (these files are only informative).
    private func writeSmallFile(_ name: String, _ data: Data) {
        let partPath = temporaryPath + "/\(name).\(UInt32.random(in: 0...UInt32.max)).part"
        let fd = Glibc.open(partPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let failure = data.withUnsafeBytes { OpenFile(fd: fd).write($0, at: 0) }
        if failure != nil || rename(partPath, directoryPath + "/" + name) != 0 { unlink(partPath) }
    }

    /// Logs the start of degraded mode once, however many downloads it affects.
    private func noteDegraded(_ reason: String) {
        lock.lock()
        let first = degradedReason == nil
        if first { degradedReason = reason }
        lock.unlock()
        if first {
            logger.warning("cache degraded: photos are served from memory and not cached", metadata: [
                "directory": "\(directoryPath)", "reason": "\(reason)",
            ])
        }
    }

    private func noteCachingWorks() {
        lock.lock()
        let wasDegraded = degradedReason != nil
        degradedReason = nil
        lock.unlock()
        if wasDegraded { logger.notice("cache resumed: photos are cached again", metadata: ["directory": "\(directoryPath)"]) }
    }

    private func noteOpen(_ key: String, hit: Bool) {
        lock.lock()
        openCounts[key, default: 0] += 1
        if hit { statistics.hits = statistics.hits.saturatingAdd(1) } else { statistics.misses = statistics.misses.saturatingAdd(1) }
        lock.unlock()
        noteUse(key)
    }

    private func noteUse(_ key: String) {
        lock.lock()
        let now = Date()
        var touch = false
        var path: String?
        if var entry = entries[key] {
            // Record the use on disk too (mtime), at most once a minute per file: the LRU order must
            // survive a restart, but a rsync re-reading thousands of photos should not rewrite inodes.
            touch = !(now.timeIntervalSince(entry.lastUse) <= 60)
            entry.lastUse = now
            entries[key] = entry
            path = self.path(of: key, entry)
        }
        lock.unlock()
        if touch, let path {
            let stamp = timespec(tv_sec: Int(now.timeIntervalSince1970), tv_nsec: 0)
            var times = [stamp, stamp]
            utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
        }
    }

    private func added(_ download: Download) {
        if let reason = download.uncachedReason {
            lock.lock()
            uncached[download.key] = WeakDownload(download)
            lock.unlock()
            noteDegraded("photo \(download.source.photoID) could not be cached (\(reason))")
            return
        }
        noteCachingWorks()
        lock.lock()
        if let old = entries[download.key] {
            totalBytes = max(0, totalBytes.saturatingAdd(-old.size))
            // A prefix of the photo parked while this download ran from the start: the whole photo supersedes it.
            if old.isPartial { unlink(path(of: download.key, old)) }
        }
        entries[download.key] = Entry(size: max(0, download.source.expectedSize), lastUse: Date())
        totalBytes = totalBytes.saturatingAdd(max(0, download.source.expectedSize))
        // What crossed the network for it: a resumed photo counts only the bytes after its prefix.
        statistics.downloadedBytes = statistics.downloadedBytes.saturatingAdd(download.fetchedBytes)
        statisticsDirty = true
        evictLocked()
        lock.unlock()
    }

    /// Where an entry's file is.
    private func path(of key: String, _ entry: Entry) -> String {
        (entry.isPartial ? partialPath : objectsPath) + "/" + key
    }

    /// Removes least recently used files (whole photos and partial entries alike) until the cache fits
    /// `maxBytes`. Open files and downloads in flight
    /// are never removed, so the cache exceeds the bound by at most those.
    private func evictLocked() {
        guard totalBytes > maxBytes else { return }
        let candidates = entries.filter { openCounts[$0.key] == nil }.sorted { $0.value.lastUse < $1.value.lastUse }
        for (key, entry) in candidates {
            guard totalBytes > maxBytes else { break }
            if unlink(path(of: key, entry)) == 0 || errno == ENOENT {
                entries[key] = nil
                totalBytes = max(0, totalBytes.saturatingAdd(-entry.size))
                statistics.evictions = statistics.evictions.saturatingAdd(1)
            }
        }
    }
}
