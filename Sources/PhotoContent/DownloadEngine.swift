// Downloads of originals into the cache: a fixed pool of transfer threads, one shared download per photo
// (single flight), user opens before prefetch, resumable retries, and readers that stream while bytes arrive.
import Foundation
import Logging
import PhotoCatalog

public enum DownloadPriority: Int, Sendable, Comparable {
    /// A thumbnailer or file manager opened the photo (its desktop thumbnail was not ready in time, or it
    /// ignores the thumbnail cache): served, but behind everything a person is waiting for or about to open.
    case thumbnailer = -1
    /// Warming photos a user is likely to open next.
    case prefetch = 0
    /// A user is waiting in open() or read().
    case user = 1
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Where a new download keeps its bytes; the cache decides (see `OriginalCache.makeStorage`).
enum DownloadStorage {
    /// A temporary file in the cache, renamed into place when complete.
    case file(OpenFile, temporaryPath: String)
    /// Memory only, not cached: the cache cannot take it (the reason is logged by the cache).
    case memory(reason: ContentError.Kind)
}

/// A descriptor closed when its last user lets go, so a reader in the middle of a `pread` keeps it valid
/// even after its download moved to memory.
final class OpenFile: @unchecked Sendable {
    let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    /// `count` bytes at `offset` into `buffer`: fewer only at the end of the file.
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws -> Int {
        var total = 0
        while total < count {
            let n = pread(fd, buffer + total, count - total, off_t(offset) + off_t(total))
            if n < 0 {
                if errno == EINTR { continue }
                throw ContentError.Kind.localIO("read: \(CacheDirectory.errnoText())")
            }
            if n == 0 { break }
            total += n
        }
        return total
    }

    /// Writes all of `bytes` at `offset`; returns errno on failure.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Int32? {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return EIO }
            done += n
        }
        return nil
    }
}

/// One photo's download, shared by every reader of it while it runs, and by the handles opened on it after:
/// they read through it, from its file or, when the cache could not take the photo, from memory.
public final class Download: @unchecked Sendable {
    public let key: String
    public let source: ContentSource
    let finalPath: String
    fileprivate(set) var priority: DownloadPriority
    /// The thumbnailer process whose open queued it (its downloads are limited, see `DownloadEngine`); nil
    /// for everyone else, and once a user open joins it.
    fileprivate(set) var requester: String?
    private let condition = NSCondition()
    private var lifecycle: DownloadLifecycle
    private var error: ContentError?
    /// Set by `finish`: the file is renamed into place (or kept only open, or in memory), or `error` is set
    /// and the temporary file is gone.
    private var ended = false
    /// The bytes on disk (nil: in `memory`, or no storage yet). Only the transfer thread replaces it.
    private var file: OpenFile?
    private var temporaryPath: String?
    /// The bytes when not on disk: `[0, lifecycle.received)` are valid.
    private var memory = Data()
    /// Why the bytes are not (or will not be) in the cache; nil while they may still be.
    private var notCachedBecause: ContentError.Kind?
    public var uncachedReason: ContentError.Kind? { condition.lock(); defer { condition.unlock() }; return notCachedBecause }
    /// Readers waiting for bytes without holding a thread: resumed when their bytes are stored or the
    /// download failed (deferred FUSE replies).
    private var byteWaiters: [(end: Int64, resume: (ContentError?) -> Void)] = []
    /// When it was queued, on the monotonic clock (for the "downloaded" log line's seconds).
    let started = DispatchTime.now()

    /// 1 GiB: a photo kept in memory while the cache cannot take it. Flickr's originals stop at 200 MB, so
    /// a bigger catalog size is not a photo we should hold in RAM; it fails as "no space" instead.
    static let memoryLimit: Int64 = 1 << 30

    init(key: String, source: ContentSource, finalPath: String, priority: DownloadPriority, requester: String? = nil) {
        self.key = key
        self.source = source
        self.finalPath = finalPath
        self.priority = priority
        self.requester = requester
        lifecycle = DownloadLifecycle(expectedSize: source.expectedSize, expectedType: source.contentType,
                                      expectedETag: source.etag)
    }

    /// Waits until the origin's answer is verified (status, type, size) or the download failed (throws).
    public func waitUntilVerified() throws {
        condition.lock()
        defer { condition.unlock() }
        while case .waiting = lifecycle.phase, !ended { condition.wait() }
        if case .failed = lifecycle.phase {
            // Refused as the answer began: wait for finish() to record the error it reports.
            while !ended { condition.wait() }
        }
        if let error { throw error }
    }

    /// Waits until bytes up to `end` (exclusive, capped at the photo's size) are stored, or throws if the
    /// download failed before they arrived.
    public func waitForBytes(upTo end: Int64) throws {
        let end = min(end, source.expectedSize)
        condition.lock()
        defer { condition.unlock() }
        while lifecycle.received < end {
            if let error { throw error }
            if lifecycle.phase == .complete { return }
            condition.wait()
        }
    }

    /// Calls `resume` once the bytes up to `end` are stored (with nil) or the download failed before they
    /// arrived (with the error): at once, on this thread, if that is already so; otherwise later, on the
    /// transfer thread. Nothing blocks meanwhile.
    public func whenBytesAvailable(upTo end: Int64, _ resume: @escaping (ContentError?) -> Void) {
        let end = min(end, source.expectedSize)
        condition.lock()
        if lifecycle.received >= end || lifecycle.phase == .complete || ended {
            let failure = lifecycle.received >= end ? nil : error
            condition.unlock()
            resume(failure)
            return
        }
        byteWaiters.append((end, resume))
        condition.unlock()
    }

    /// Reads up to `buffer.count` bytes at `offset`, waiting for bytes still to come: fewer only at the end
    /// of the photo. The same whether the bytes are in a file or in memory, and across the move between them.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard offset >= 0, offset < source.expectedSize, buffer.count > 0 else { return 0 }
        let wanted = Int(min(Int64(buffer.count), source.expectedSize - offset))
        try waitForBytes(upTo: offset + Int64(wanted))
        condition.lock()
        if let file {
            condition.unlock()
            do { return try file.read(into: buffer.baseAddress!, count: wanted, at: offset) } catch let kind as ContentError.Kind {
                throw ContentError(kind: kind, photoID: source.photoID, url: source.url)
            }
        }
        defer { condition.unlock() }
        let available = Int64(memory.count)
        guard offset < available else { return 0 }
        let count = Int(min(Int64(wanted), available - offset))
        let start = Int(offset)
        memory.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: start..<start + count)
        return count
    }

    /// The whole photo once the download ended (throws its error if it failed).
    func allBytes() throws -> Data {
        _ = try waitUntilEnded()
        guard source.expectedSize <= Download.memoryLimit else {
            throw ContentError(kind: .noSpace, photoID: source.photoID, url: source.url)
        }
        var data = Data(count: Int(max(0, source.expectedSize)))
        let count = try data.withUnsafeMutableBytes { try read(into: $0, at: 0) }
        guard Int64(count) == source.expectedSize else {
            throw ContentError(kind: .truncated(expected: source.expectedSize, received: Int64(count)),
                               photoID: source.photoID, url: source.url)
        }
        return data
    }

    /// The waiters whose bytes are there (or that will never come); called with the lock held.
    private func takeReadyWaitersLocked() -> [((ContentError?) -> Void, ContentError?)] {
        guard !byteWaiters.isEmpty else { return [] }
        let done = ended || lifecycle.phase == .complete
        var ready: [((ContentError?) -> Void, ContentError?)] = []
        byteWaiters.removeAll { waiter in
            if lifecycle.received >= waiter.end { ready.append((waiter.resume, nil)); return true }
            if done { ready.append((waiter.resume, error)); return true }
            return false
        }
        return ready
    }

    /// Waits for the end, successful or not; returns the cache path, or nil if the photo is not cached
    /// (`uncachedReason` says why).
    public func waitUntilEnded() throws -> String? {
        condition.lock()
        defer { condition.unlock() }
        while !ended { condition.wait() }
        if let error { throw error }
        return notCachedBecause == nil ? finalPath : nil
    }

    public var isComplete: Bool { condition.lock(); defer { condition.unlock() }; return lifecycle.phase == .complete }
    public var receivedBytes: Int64 { condition.lock(); defer { condition.unlock() }; return lifecycle.received }
    /// Whether the bytes are in memory rather than in a file.
    public var isInMemory: Bool { condition.lock(); defer { condition.unlock() }; return file == nil }

    // MARK: Engine side

    fileprivate func attach(_ storage: DownloadStorage) -> ContentError? {
        condition.lock()
        defer { condition.unlock() }
        switch storage {
        case .file(let file, let path):
            self.file = file
            temporaryPath = path
        case .memory(let reason):
            notCachedBecause = reason
            guard source.expectedSize <= Download.memoryLimit else {
                return ContentError(kind: .noSpace, photoID: source.photoID, url: source.url)
            }
            memory.reserveCapacity(Int(max(0, source.expectedSize)))
        }
        return nil
    }

    /// Stores body bytes at `offset` (the lifecycle's write offset). A full disk moves the download to
    /// memory first, keeping what was received. Returns why the bytes could not be stored, or nil.
    fileprivate func store(_ bytes: UnsafeRawBufferPointer, at offset: Int64,
                           movedToMemory: (ContentError.Kind) -> Void) -> ContentError.Kind? {
        condition.lock()
        let file = self.file
        condition.unlock()
        if let file {
            guard let code = file.write(bytes, at: offset) else { return nil }
            guard code == ENOSPC || code == EDQUOT || code == EFBIG else {
                return .localIO("write: \(CacheDirectory.errnoText(code))")
            }
            let reason = ContentError.Kind.noSpace
            if let failure = moveToMemory(from: file, reason: reason) { return failure }
            movedToMemory(reason)
        }
        condition.lock()
        defer { condition.unlock() }
        // Only ever at the end of the valid bytes or over them from 0 (a whole answer after a partial one).
        guard offset >= 0, offset <= Int64(memory.count) else { return .localIO("write past the stored bytes") }
        let end = offset + Int64(bytes.count)
        guard end <= Download.memoryLimit else { return .noSpace }
        let start = Int(offset)
        let overlap = min(memory.count - start, bytes.count)
        if overlap > 0 {
            memory.replaceSubrange(start..<start + overlap, with: UnsafeRawBufferPointer(rebasing: bytes[0..<overlap]))
        }
        if overlap < bytes.count { memory.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[overlap...])) }
        return nil
    }

    /// Reads the bytes received so far back from the file into memory and drops the temporary file, so the
    /// disk space goes back and nothing partial stays in the cache. Readers never see a gap: they read
    /// `[0, received)` from the file until the switch, from memory after it, and both hold the same bytes
    /// (only this thread writes).
    private func moveToMemory(from file: OpenFile, reason: ContentError.Kind) -> ContentError.Kind? {
        condition.lock()
        let received = lifecycle.received
        condition.unlock()
        guard source.expectedSize <= Download.memoryLimit, received <= Download.memoryLimit else { return .noSpace }
        var saved = Data(count: Int(received))
        if received > 0 { do {
            let count = try saved.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, count: Int(received), at: 0) }
            guard count == Int(received) else { return .localIO("the temporary file lost bytes") }
        } catch let kind as ContentError.Kind {
            return kind
        } catch {
            return .localIO("\(error)")
        } }
        saved.reserveCapacity(Int(max(0, source.expectedSize)))
        condition.lock()
        memory = saved
        self.file = nil
        notCachedBecause = reason
        if let temporaryPath { unlink(temporaryPath) }
        temporaryPath = nil
        condition.unlock()
        return nil
    }

    fileprivate func update<T>(_ body: (inout DownloadLifecycle) -> T) -> T {
        condition.lock()
        let result = body(&lifecycle)
        let ready = takeReadyWaitersLocked()
        condition.broadcast()
        condition.unlock()
        for (resume, failure) in ready { resume(failure) }
        return result
    }

    /// Renames a complete file into place. If that fails (the cache directory was removed meanwhile) the
    /// open file still serves its readers, and nothing is cached. The download has not ended yet: the
    /// engine lets the cache record the outcome first, so whoever waits for the end sees it recorded.
    fileprivate func fileIntoPlace() {
        condition.lock()
        defer { condition.unlock() }
        guard let temporaryPath else { return }
        if rename(temporaryPath, finalPath) != 0 {
            let code = errno
            notCachedBecause = code == ENOSPC || code == EDQUOT ? .noSpace : .localIO("rename: \(CacheDirectory.errnoText(code))")
            unlink(temporaryPath)
        }
        self.temporaryPath = nil
    }

    /// Ends the download: complete (after `fileIntoPlace`) or failed.
    fileprivate func finish(_ result: Result<Void, ContentError>) {
        condition.lock()
        if case .failure(let failure) = result {
            error = failure
            lifecycle.attemptFailed(failure.kind, final: true)
            // Readers keep what they read; the name goes now so nothing half-written is ever found again.
            if let temporaryPath { unlink(temporaryPath) }
            temporaryPath = nil
        }
        ended = true
        let ready = takeReadyWaitersLocked()
        condition.broadcast()
        condition.unlock()
        for (resume, failure) in ready { resume(failure) }
    }

    fileprivate var sinkState: (phase: DownloadLifecycle.Phase, received: Int64) {
        condition.lock(); defer { condition.unlock() }
        return (lifecycle.phase, lifecycle.received)
    }
}

/// Passes one response's body to the download at the offset the lifecycle gives.
private final class DownloadSink: HTTPBodySink {
    let download: Download
    let movedToMemory: (ContentError.Kind) -> Void
    var offset: Int64 = 0
    var failure: String?
    var refusal: ContentError.Kind?
    var storeFailure: ContentError.Kind?

    init(download: Download, movedToMemory: @escaping (ContentError.Kind) -> Void) {
        self.download = download
        self.movedToMemory = movedToMemory
    }

    func begin(status: Int, headers: [String: String]) -> Bool {
        let result = download.update {
            $0.responseBegan(status: status, contentType: headers["content-type"],
                             contentLength: headers["content-length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) },
                             contentRange: headers["content-range"], etag: headers["etag"])
        }
        switch result {
        case .success(let start):
            offset = start
            return true
        case .failure(let kind):
            refusal = kind
            failure = "refused"
            return false
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let problem = download.store(bytes, at: offset, movedToMemory: movedToMemory) {
            storeFailure = problem
            failure = "\(problem)"
            return false
        }
        if case .failure(let kind) = download.update({ $0.stored(bytes.count) }) {
            refusal = kind
            failure = "refused"
            return false
        }
        offset = offset.saturatingAdd(Int64(bytes.count))
        return true
    }
}

public final class DownloadEngine: @unchecked Sendable {
    private let http: HTTPClient
    private let logger: Logger
    /// Monotonic: an idle worker's 30 s must not become an hour (or nothing) when the wall clock steps.
    private let lock = MonotonicCondition()
    private var inFlight: [String: Download] = [:]
    private var queue: [Download] = []
    private var workers = 0
    private let maxTransfers: Int
    /// Downloads running per requester (a thumbnailer process), and the most each may have at once: a file
    /// manager opening a folder of 1,000 photos gets 2 transfers, not 1,000 (nor all 16 of the mount's).
    private var runningByRequester: [String: Int] = [:]
    let perRequesterLimit = 2
    /// Called on a transfer thread when a download completed: its file is in place, or `uncachedReason`
    /// says why not.
    var onComplete: ((Download) -> Void)?
    /// Where a new download keeps its bytes, asked on its transfer thread as it starts; without it, memory.
    var makeStorage: ((Download) -> DownloadStorage)?
    /// Called on a transfer thread when the disk filled under a download and it moved to memory.
    var onMovedToMemory: ((Download, ContentError.Kind) -> Void)?
    /// Called on the transfer thread between "all bytes stored" and "renamed into place": tests hold a
    /// download in that instant to open it there.
    var beforeFinish: ((Download) -> Void)?

    /// `maxTransfers` downloads run at once (each on its own thread with a keep-alive connection); 16 keeps
    /// a 16-reader workload from queueing while staying far below what an origin would call abuse.
    public init(http: HTTPClient, maxTransfers: Int = 16, logger: Logger) {
        self.http = http
        self.maxTransfers = max(1, maxTransfers)
        self.logger = logger
    }

    /// The running download for `key`, or a new one queued at `priority`. A user asking for a queued
    /// prefetch moves it ahead.
    func start(key: String, source: ContentSource, finalPath: String, priority: DownloadPriority,
               requester: String? = nil) -> Download {
        lock.lock()
        defer { lock.unlock() }
        if let running = inFlight[key] {
            if priority > running.priority {
                running.priority = priority
                // Someone other than a thumbnailer needs it: no longer held to that process's limit (a
                // download already running stays counted for it until it ends).
                if requester == nil, queue.contains(where: { $0 === running }) { running.requester = nil }
                lock.broadcast()
            }
            return running
        }
        let download = Download(key: key, source: source, finalPath: finalPath, priority: priority, requester: requester)
        inFlight[key] = download
        queue.append(download)
        if workers < maxTransfers {
            workers += 1
            let thread = Thread { [weak self] in self?.work() }
            thread.name = "download"
            thread.start()
        }
        lock.broadcast()
        return download
    }

    func isInFlight(_ key: String) -> Bool { lock.lock(); defer { lock.unlock() }; return inFlight[key] != nil }

    var pendingCount: Int { lock.lock(); defer { lock.unlock() }; return inFlight.count }

    private func work() {
        while true {
            lock.lock()
            // Idle workers exit after 30 s so an idle mount holds no threads or connections.
            var next = nextIndexLocked()
            while next == nil {
                if !lock.wait(until: .now() + 30) && queue.isEmpty {
                    workers -= 1
                    lock.unlock()
                    return
                }
                next = nextIndexLocked()
            }
            let download = queue.remove(at: next!)
            let requester = download.requester
            if let requester { runningByRequester[requester, default: 0] += 1 }
            lock.unlock()

            let result = run(download)
            if let requester {
                lock.lock()
                let left = (runningByRequester[requester] ?? 1) - 1
                runningByRequester[requester] = left > 0 ? left : nil
                lock.broadcast()
                lock.unlock()
            }
            beforeFinish?(download)
            // A finished photo is in place and recorded by the cache before the download is forgotten, so no
            // opener starts it again and a fetch that returns finds it counted; a failed one is forgotten
            // first, so the next opener starts afresh instead of joining the failure. Either is logged before
            // its waiters wake, so a caller that saw the end finds the line.
            switch result {
            case .success:
                download.fileIntoPlace()
                onComplete?(download)
                logger.debug("downloaded", metadata: [
                    "photo": "\(download.source.photoID)", "bytes": "\(download.source.expectedSize)",
                    "cached": "\(download.uncachedReason == nil)",
                    "seconds": "\(String(format: "%.3f", Double(DispatchTime.now().uptimeNanoseconds - download.started.uptimeNanoseconds) / 1e9))",
                ])
                download.finish(result)
                forget(download)
            case .failure(let error):
                logger.error("download failed", metadata: ["photo": "\(download.source.photoID)",
                                                           "url": "\(URLRedaction.redacted(download.source.url))",
                                                           "error": "\(error)"])
                forget(download)
                download.finish(result)
            }
        }
    }

    /// The queued download to run next: highest priority first, first come first served among equals,
    /// skipping those whose requester already runs `perRequesterLimit`. Nil when none may run now.
    private func nextIndexLocked() -> Int? {
        queue.indices.filter { index in
            guard let requester = queue[index].requester else { return true }
            return runningByRequester[requester, default: 0] < perRequesterLimit
        }.max { (queue[$0].priority, -$0) < (queue[$1].priority, -$1) }
    }

    private func forget(_ download: Download) {
        lock.lock()
        inFlight[download.key] = nil
        lock.unlock()
    }

    /// All attempts of one download. Transport errors, 5xx and 429 are retried with backoff, resuming from
    /// the bytes already stored; 4xx other than 429, and refusals (size, type), are final.
    private func run(_ download: Download) -> Result<Void, ContentError> {
        let source = download.source
        func failure(_ kind: ContentError.Kind) -> ContentError { ContentError(kind: kind, photoID: source.photoID, url: source.url) }
        let storage = makeStorage?(download) ?? .memory(reason: .localIO("no cache directory"))
        if let refused = download.attach(storage) { return .failure(refused) }
        let movedToMemory: (ContentError.Kind) -> Void = { [weak self] reason in self?.onMovedToMemory?(download, reason) }
        let attempts = max(1, http.configuration.attempts)
        for attempt in 1...attempts {
            let sink = DownloadSink(download: download, movedToMemory: movedToMemory)
            var headers: [String] = []
            let resume = download.update { ($0.rangeHeader, $0.ifRangeHeader) }
            if let range = resume.0 {
                headers.append(range)
                if let ifRange = resume.1 { headers.append(ifRange) }
            }
            var retryAfter: TimeInterval?
            let kind: ContentError.Kind
            do {
                _ = try http.download(source.url, headers: headers, into: sink)
                if download.update({ $0.transferEnded() }) == .complete { return .success(()) }
                kind = .truncated(expected: source.expectedSize, received: download.sinkState.received)
            } catch let error as HTTPError {
                if let refusal = sink.refusal { return .failure(failure(refusal)) }
                if let storeFailure = sink.storeFailure { return .failure(failure(storeFailure)) }
                switch error.kind {
                case .status(let status):
                    guard error.isRetryable else { return .failure(failure(.httpStatus(status))) }
                    kind = .httpStatus(status)
                    retryAfter = error.retryAfter
                case .transport(let code, let message):
                    // 18 = CURLE_PARTIAL_FILE: the body ended before its Content-Length.
                    kind = code == 18 ? .truncated(expected: source.expectedSize, received: download.sinkState.received)
                                      : .unreachable(message)
                    guard error.isRetryable else { return .failure(failure(kind)) }
                case .sink(let message):
                    return .failure(failure(.localIO(message)))
                case .invalidURL:
                    return .failure(failure(.unreachable("not an http(s) URL")))
                }
            } catch {
                return .failure(failure(.localIO("\(error)")))
            }
            if attempt == attempts { return .failure(failure(kind)) }
            download.update { $0.attemptFailed(kind, final: false) }
            let wait = http.configuration.retryDelay(attempt: attempt, retryAfter: retryAfter)
            logger.info("retrying download", metadata: ["photo": "\(source.photoID)", "attempt": "\(attempt + 1)",
                                                       "error": "\(failure(kind))", "wait_s": "\(wait)"])
            Thread.sleep(forTimeInterval: wait)
        }
        return .failure(failure(.unreachable("no attempt made")))
    }
}
