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
        case noSpace
        case localIO(String)
    }
    public var kind: Kind
    public var photoID: String
    public var url: String
    public init(kind: Kind, photoID: String, url: String) {
        self.kind = kind; self.photoID = photoID; self.url = url
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
        case .noSpace: what = "no space left in the cache directory"
        case .localIO(let message): what = "cache I/O failed: \(message)"
        }
        return "photo \(photoID): \(what) (\(url))"
    }
}

/// An open photo's bytes: the finished cache file, or a download still arriving (reads wait for their bytes).
public final class ContentHandle: @unchecked Sendable {
    public let fd: Int32
    public let key: String
    public let size: Int64
    let download: Download?

    init(fd: Int32, key: String, size: Int64, download: Download?) {
        self.fd = fd; self.key = key; self.size = size; self.download = download
    }

    /// Calls `resume` when `read(into:at:)` of `count` bytes at `offset` will not wait: at once for a cached
    /// photo, else when the download has stored them (or failed: then with the error).
    public func whenReadable(count: Int, at offset: Int64, _ resume: @escaping (ContentError?) -> Void) {
        guard let download else { return resume(nil) }
        download.whenBytesAvailable(upTo: offset + Int64(max(0, count)), resume)
    }

    /// Reads up to `buffer.count` bytes at `offset`: fewer only at the end of the photo. Bytes not downloaded
    /// yet are waited for; a download that fails before they arrive throws.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let wanted = Int(max(0, min(Int64(buffer.count), size - offset)))
        guard wanted > 0 else { return 0 }
        try download?.waitForBytes(upTo: offset + Int64(wanted))
        var total = 0
        while total < wanted {
            let n = pread(fd, buffer.baseAddress! + total, wanted - total, off_t(offset) + off_t(total))
            if n < 0 {
                if errno == EINTR { continue }
                throw ContentError(kind: .localIO("read: \(String(cString: strerror(errno)))"), photoID: key, url: "")
            }
            if n == 0 { break }
            total += n
        }
        return total
    }
}

/// Counters for `photofs cache stats`.
public struct CacheStatistics: Codable, Sendable, Equatable {
    public var hits = 0
    public var misses = 0
    public var downloadedBytes: Int64 = 0
    public var evictions = 0
    public init() {}
}

/// The disk cache of original photo bytes, bounded with least-recently-used eviction.
///
/// Layout: `originals/<key>` complete photos (the key changes when the photo does), `tmp/` downloads under
/// way, `statistics.json`, `limit` (the bound last used). The files themselves are the index: a file's
/// mtime is its last use, so the LRU order and the bound survive restarts with no separate database.
public final class OriginalCache: @unchecked Sendable {
    public let directory: URL
    public let maxBytes: Int64
    let engine: DownloadEngine
    private let logger: Logger
    // Plain paths: URL.appendingPathComponent on a file URL stats the disk to decide on a trailing slash,
    // a system call per open for nothing.
    private let objectsPath: String
    private let temporaryPath: String
    private var objects: URL { URL(fileURLWithPath: objectsPath, isDirectory: true) }
    private var temporary: URL { URL(fileURLWithPath: temporaryPath, isDirectory: true) }

    private let lock = NSLock()
    private var entries: [String: (size: Int64, lastUse: Date)] = [:]
    private var totalBytes: Int64 = 0
    private var openCounts: [String: Int] = [:]
    private var statistics = CacheStatistics()
    private var statisticsDirty = false

    /// 2 GiB: a few hundred originals of today's cameras, small beside a disk, large beside a typical
    /// browsing session.
    public static let defaultMaxBytes: Int64 = 2 << 30

    /// Creates the cache directories (0700: cached photos may be private), removes leftovers of downloads a
    /// crash interrupted (never renamed into place, so nothing is lost) and evicts down to `maxBytes`.
    public init(directory: URL, http: HTTPClient, maxBytes: Int64 = OriginalCache.defaultMaxBytes,
                maxTransfers: Int = 16, logger: Logger) throws {
        self.directory = directory
        self.maxBytes = maxBytes
        self.logger = logger
        objectsPath = directory.path + "/originals"
        temporaryPath = directory.path + "/tmp"
        engine = DownloadEngine(http: http, maxTransfers: maxTransfers, logger: logger)
        let fm = FileManager.default
        for dir in [directory, objects, temporary] {
            try fm.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            chmod(dir.path, 0o700)
        }
        for leftover in (try? fm.contentsOfDirectory(atPath: temporaryPath)) ?? [] {
            unlink(temporaryPath + "/" + leftover)
        }
        for name in (try? fm.contentsOfDirectory(atPath: objectsPath)) ?? [] {
            var info = stat()
            guard stat(objectsPath + "/" + name, &info) == 0 else { continue }
            entries[name] = (Int64(info.st_size), Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec)))
            totalBytes += Int64(info.st_size)
        }
        if let data = fm.contents(atPath: directory.appendingPathComponent("statistics.json").path),
           let saved = try? JSONDecoder().decode(CacheStatistics.self, from: data) {
            statistics = saved
        }
        try? String(maxBytes).write(to: directory.appendingPathComponent("limit"), atomically: true, encoding: .utf8)
        engine.onComplete = { [weak self] download in self?.added(download) }
        lock.lock()
        evictLocked()
        lock.unlock()
    }

    /// The cache file name for a source. It changes whenever the URL, size, type or ETag does, so a photo
    /// changed in the catalog is never served from bytes of its previous version.
    public static func key(for source: ContentSource) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 // FNV-1a, 64 bit: stable across runs, unlike Hasher
        for byte in "\(source.url)\u{0}\(source.expectedSize)\u{0}\(source.contentType)\u{0}\(source.etag ?? "")".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let safeID = String(source.photoID.unicodeScalars.map {
            CharacterSet.alphanumerics.contains($0) && $0.isASCII ? Character($0) : "_"
        }.prefix(64))
        return "\(safeID)-\(String(hash, radix: 16))"
    }

    /// Path of a complete cached copy, or nil. A file of the wrong size (a crash before its data reached the
    /// disk) does not count and is removed.
    public func cachedPath(for source: ContentSource) -> String? {
        let key = OriginalCache.key(for: source)
        let path = objectsPath + "/" + key
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if Int64(info.st_size) == source.expectedSize { return path }
        unlink(path)
        lock.lock()
        if let old = entries.removeValue(forKey: key) { totalBytes -= old.size }
        lock.unlock()
        return nil
    }

    /// Opens a photo for reading. A cached photo opens at once; otherwise its download starts (or is joined)
    /// at user priority and this returns as soon as the origin's answer is verified, so the first bytes can
    /// be read while the rest arrives.
    public func open(_ source: ContentSource) throws -> ContentHandle {
        let key = OriginalCache.key(for: source)
        if let path = cachedPath(for: source) {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                noteOpen(key, hit: true)
                return ContentHandle(fd: fd, key: key, size: source.expectedSize, download: nil)
            }
        }
        let download = startDownload(source, key: key, priority: .user)
        let fd = try download.openForReading()
        noteOpen(key, hit: false)
        return ContentHandle(fd: fd, key: key, size: source.expectedSize, download: download)
    }

    public func release(_ handle: ContentHandle) {
        close(handle.fd)
        lock.lock()
        if let count = openCounts[handle.key] { openCounts[handle.key] = count > 1 ? count - 1 : nil }
        evictLocked()
        lock.unlock()
    }

    /// Starts downloading a photo at low priority unless it is cached or already coming.
    public func prefetch(_ source: ContentSource) {
        let key = OriginalCache.key(for: source)
        guard !engine.isInFlight(key), cachedPath(for: source) == nil else { return }
        _ = startDownload(source, key: key, priority: .prefetch)
    }

    /// Downloads a photo completely (if needed) and returns its cache path.
    public func fetch(_ source: ContentSource) throws -> String {
        if let path = cachedPath(for: source) { return path }
        let key = OriginalCache.key(for: source)
        return try startDownload(source, key: key, priority: .user).waitUntilFinished()
    }

    /// Keeps bytes made here (a rendered variant) under `key`, written to a temporary file and renamed into
    /// place like a download, and counted against the same bound: variants and originals share one LRU.
    public func store(_ data: Data, key: String) throws {
        let partPath = temporaryPath + "/\(key).\(UInt32.random(in: 0...UInt32.max)).part"
        let failure = data.withUnsafeBytes { bytes -> Int32? in
            let fd = Glibc.open(partPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return errno }
            defer { close(fd) }
            var written = 0
            while written < bytes.count {
                let count = write(fd, bytes.baseAddress! + written, bytes.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return count < 0 ? errno : EIO }
                written += count
            }
            return nil
        }
        if let failure {
            unlink(partPath)
            throw ContentError(kind: failure == ENOSPC || failure == EDQUOT ? .noSpace : .localIO(String(cString: strerror(failure))),
                               photoID: key, url: "")
        }
        guard rename(partPath, objectsPath + "/" + key) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(partPath)
            throw ContentError(kind: .localIO(message), photoID: key, url: "")
        }
        lock.lock()
        if let old = entries[key] { totalBytes -= old.size }
        entries[key] = (Int64(data.count), Date())
        totalBytes += Int64(data.count)
        evictLocked()
        lock.unlock()
    }

    /// Bytes stored with `store`, or nil; a use that moves the file up the LRU order.
    public func storedData(key: String) -> Data? {
        guard let data = FileManager.default.contents(atPath: objectsPath + "/" + key) else { return nil }
        lock.lock()
        let known = entries[key] != nil
        lock.unlock()
        if known { noteUse(key) }
        return data
    }

    public var currentStatistics: CacheStatistics { lock.lock(); defer { lock.unlock() }; return statistics }
    public var currentBytes: Int64 { lock.lock(); defer { lock.unlock() }; return totalBytes }

    /// Writes the counters for `photofs cache stats` (at unmount, and after downloads).
    public func saveStatistics() {
        lock.lock()
        let snapshot = statistics
        statisticsDirty = false
        lock.unlock()
        if let data = try? JSONEncoder().encode(snapshot) {
            try? data.write(to: directory.appendingPathComponent("statistics.json"), options: .atomic)
        }
    }

    // MARK: Internals

    private func startDownload(_ source: ContentSource, key: String, priority: DownloadPriority) -> Download {
        let partPath = temporaryPath + "/\(key).\(UInt32.random(in: 0...UInt32.max)).part"
        return engine.start(key: key, source: source, temporaryPath: partPath,
                            finalPath: objectsPath + "/" + key, priority: priority)
    }

    private func noteOpen(_ key: String, hit: Bool) {
        lock.lock()
        openCounts[key, default: 0] += 1
        if hit { statistics.hits += 1 } else { statistics.misses += 1 }
        lock.unlock()
        noteUse(key)
    }

    private func noteUse(_ key: String) {
        lock.lock()
        let now = Date()
        var touch = false
        if let entry = entries[key] {
            // Record the use on disk too (mtime), at most once a minute per file: the LRU order must
            // survive a restart, but a rsync re-reading thousands of photos should not rewrite inodes.
            touch = now.timeIntervalSince(entry.lastUse) > 60
            entries[key] = (entry.size, now)
        }
        lock.unlock()
        if touch {
            let stamp = timespec(tv_sec: Int(now.timeIntervalSince1970), tv_nsec: 0)
            var times = [stamp, stamp]
            utimensat(AT_FDCWD, objectsPath + "/" + key, &times, 0)
        }
    }

    private func added(_ download: Download) {
        lock.lock()
        if entries[download.key] == nil { totalBytes += download.source.expectedSize }
        entries[download.key] = (download.source.expectedSize, Date())
        statistics.downloadedBytes += download.source.expectedSize
        statisticsDirty = true
        evictLocked()
        lock.unlock()
    }

    /// Removes least recently used files until the cache fits `maxBytes`. Open files and downloads in flight
    /// are never removed, so the cache exceeds the bound by at most those.
    private func evictLocked() {
        guard totalBytes > maxBytes else { return }
        let candidates = entries.filter { openCounts[$0.key] == nil }.sorted { $0.value.lastUse < $1.value.lastUse }
        for (key, entry) in candidates {
            guard totalBytes > maxBytes else { break }
            if unlink(objectsPath + "/" + key) == 0 || errno == ENOENT {
                entries[key] = nil
                totalBytes -= entry.size
                statistics.evictions += 1
            }
        }
    }
}
