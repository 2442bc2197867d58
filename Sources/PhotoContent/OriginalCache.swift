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
    public enum Kind: Sendable, Equatable {
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

/// Writes a download into an open file, refusing more bytes than expected (a hostile or changed origin
/// cannot fill the disk) and reporting a full disk as such.
final class FileSink: HTTPBodySink {
    let fd: Int32
    let limit: Int64
    private(set) var written: Int64 = 0
    private(set) var failure: String?
    private(set) var outOfSpace = false
    init(fd: Int32, limit: Int64) { self.fd = fd; self.limit = limit }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if written + Int64(bytes.count) > limit {
            failure = "more bytes than the expected \(limit)"
            return false
        }
        var offset = 0
        while offset < bytes.count {
            let result = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                outOfSpace = errno == ENOSPC || errno == EDQUOT
                failure = String(cString: strerror(errno))
                return false
            }
            offset += result
        }
        written += Int64(bytes.count)
        return true
    }
}

public final class OriginalCache: @unchecked Sendable {
    public let directory: URL
    private let http: HTTPClient
    private let logger: Logger
    private var objects: URL { directory.appendingPathComponent("originals") }
    private var temporary: URL { directory.appendingPathComponent("tmp") }

    /// Downloads under way, by cache key: a second opener of the same photo waits for the first download
    /// instead of starting its own (single flight).
    private var inFlight: [String: InFlightDownload] = [:]
    private let lock = NSLock()

    private final class InFlightDownload {
        let done = NSCondition()
        var finished = false
        var result: Result<String, ContentError>?
    }

    /// Creates the cache directories (0700: cached photos may be private) and removes leftovers of
    /// downloads that a crash interrupted; they were never renamed into place, so nothing half-written is lost.
    public init(directory: URL, http: HTTPClient, logger: Logger) throws {
        self.directory = directory
        self.http = http
        self.logger = logger
        let fm = FileManager.default
        for dir in [directory, objects, temporary] {
            try fm.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            chmod(dir.path, 0o700)
        }
        for leftover in (try? fm.contentsOfDirectory(atPath: temporary.path)) ?? [] {
            try? fm.removeItem(at: temporary.appendingPathComponent(leftover))
        }
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
        let path = objects.appendingPathComponent(OriginalCache.key(for: source)).path
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if Int64(info.st_size) == source.expectedSize { return path }
        unlink(path)
        return nil
    }

    /// Returns the path of the photo's complete bytes, downloading them first if needed.
    public func fetch(_ source: ContentSource) throws -> String {
        if let path = cachedPath(for: source) { return path }
        let key = OriginalCache.key(for: source)
        lock.lock()
        if let running = inFlight[key] {
            lock.unlock()
            running.done.lock()
            while !running.finished { running.done.wait() }
            running.done.unlock()
            return try running.result!.get()
        }
        let download = InFlightDownload()
        inFlight[key] = download
        lock.unlock()

        let result: Result<String, ContentError>
        do { result = .success(try downloadWithRetries(source, key: key)) } catch let error as ContentError {
            result = .failure(error)
        } catch {
            result = .failure(ContentError(kind: .localIO("\(error)"), photoID: source.photoID, url: source.url))
        }
        lock.lock()
        inFlight[key] = nil
        lock.unlock()
        download.done.lock()
        download.result = result
        download.finished = true
        download.done.broadcast()
        download.done.unlock()
        return try result.get()
    }

    private func downloadWithRetries(_ source: ContentSource, key: String) throws -> String {
        do {
            return try http.withRetries(source.url) { try download(source, key: key) }
        } catch let error as HTTPError {
            throw contentError(error, source)
        }
    }

    private func contentError(_ error: HTTPError, _ source: ContentSource) -> ContentError {
        switch error.kind {
        case .status(let status):
            return ContentError(kind: .httpStatus(status), photoID: source.photoID, url: source.url)
        case .transport(let code, let message):
            // 18 = CURLE_PARTIAL_FILE: the connection closed before Content-Length bytes arrived.
            if code == 18 {
                return ContentError(kind: .truncated(expected: source.expectedSize, received: -1),
                                    photoID: source.photoID, url: source.url)
            }
            return ContentError(kind: .unreachable(message), photoID: source.photoID, url: source.url)
        case .sink(let message):
            if message.hasPrefix("more bytes") {
                return ContentError(kind: .sizeMismatch(expected: source.expectedSize, received: source.expectedSize + 1),
                                    photoID: source.photoID, url: source.url)
            }
            return ContentError(kind: .localIO(message), photoID: source.photoID, url: source.url)
        case .invalidURL:
            return ContentError(kind: .unreachable("not an http(s) URL"), photoID: source.photoID, url: source.url)
        }
    }

    /// One attempt: GET into a fresh temporary file, verify everything, rename into place.
    private func download(_ source: ContentSource, key: String) throws -> String {
        let tmpPath = temporary.appendingPathComponent("\(key).\(UInt32.random(in: 0...UInt32.max)).part").path
        let fd = open(tmpPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw ContentError(kind: code == ENOSPC ? .noSpace : .localIO(String(cString: strerror(code))),
                               photoID: source.photoID, url: source.url)
        }
        var keep = false
        defer {
            close(fd)
            if !keep { unlink(tmpPath) }
        }
        let sink = FileSink(fd: fd, limit: source.expectedSize)
        let started = Date()
        let response: HTTPResponse
        do {
            response = try http.download(source.url, into: sink)
        } catch let error as HTTPError {
            if sink.outOfSpace {
                throw ContentError(kind: .noSpace, photoID: source.photoID, url: source.url)
            }
            if case .sink = error.kind, sink.failure?.hasPrefix("more bytes") == false {
                throw ContentError(kind: .localIO(sink.failure ?? "write failed"), photoID: source.photoID, url: source.url)
            }
            throw error
        }
        let type = ImageContentType.normalized(response.contentType ?? "")
        guard type == ImageContentType.normalized(source.contentType) else {
            throw ContentError(kind: .wrongContentType(response.contentType ?? "none"), photoID: source.photoID, url: source.url)
        }
        guard sink.written == source.expectedSize else {
            throw ContentError(kind: .sizeMismatch(expected: source.expectedSize, received: sink.written),
                               photoID: source.photoID, url: source.url)
        }
        let finalPath = objects.appendingPathComponent(key).path
        guard rename(tmpPath, finalPath) == 0 else {
            throw ContentError(kind: .localIO("rename: \(String(cString: strerror(errno)))"), photoID: source.photoID, url: source.url)
        }
        keep = true
        logger.debug("downloaded", metadata: ["photo": "\(source.photoID)", "bytes": "\(sink.written)",
                                             "seconds": "\(String(format: "%.3f", Date().timeIntervalSince(started)))"])
        return finalPath
    }
}
