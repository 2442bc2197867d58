// Downloads of originals into the cache: a fixed pool of transfer threads, one shared download per photo
// (single flight), user opens before prefetch, resumable retries, and readers that stream while bytes arrive.
import Foundation
import Logging
import PhotoCatalog

public enum DownloadPriority: Int, Sendable, Comparable {
    /// Warming photos a user is likely to open next.
    case prefetch = 0
    /// A user is waiting in open() or read().
    case user = 1
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// One photo's download, shared by every reader of it while it runs.
public final class Download: @unchecked Sendable {
    public let key: String
    public let source: ContentSource
    let temporaryPath: String
    let finalPath: String
    fileprivate(set) var priority: DownloadPriority
    private let condition = NSCondition()
    private var lifecycle: DownloadLifecycle
    private var error: ContentError?
    /// Set by `finish`: the file is renamed into place, or `error` is set and the temporary file is gone.
    private var ended = false
    /// Readers waiting for bytes without holding a thread: resumed when their bytes are stored or the
    /// download failed (deferred FUSE replies).
    private var byteWaiters: [(end: Int64, resume: (ContentError?) -> Void)] = []
    let started = Date()

    init(key: String, source: ContentSource, temporaryPath: String, finalPath: String, priority: DownloadPriority) {
        self.key = key
        self.source = source
        self.temporaryPath = temporaryPath
        self.finalPath = finalPath
        self.priority = priority
        lifecycle = DownloadLifecycle(expectedSize: source.expectedSize, expectedType: source.contentType)
    }

    /// Waits until the origin's answer is verified (status, type, size) or the download failed, then opens the
    /// bytes for reading: the finished cache file, or the temporary file still being written.
    public func openForReading() throws -> Int32 {
        condition.lock()
        defer { condition.unlock() }
        while case .waiting = lifecycle.phase, !ended { condition.wait() }
        if case .failed = lifecycle.phase {
            // Refused as the answer began: wait for finish() to record the error it reports.
            while !ended { condition.wait() }
        }
        if let error { throw error }
        // Under the lock: the rename to finalPath happens under it too, in finish(). Until finish ran, the
        // bytes are at temporaryPath even when the lifecycle already says complete.
        let path = ended ? finalPath : temporaryPath
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ContentError(kind: .localIO("open \(path): \(String(cString: strerror(errno)))"),
                               photoID: source.photoID, url: source.url)
        }
        return fd
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

    /// Waits for the end, successful or not.
    public func waitUntilFinished() throws -> String {
        condition.lock()
        defer { condition.unlock() }
        while !ended { condition.wait() }
        if let error { throw error }
        return finalPath
    }

    public var isComplete: Bool { condition.lock(); defer { condition.unlock() }; return lifecycle.phase == .complete }
    public var receivedBytes: Int64 { condition.lock(); defer { condition.unlock() }; return lifecycle.received }

    // MARK: Engine side

    fileprivate func update<T>(_ body: (inout DownloadLifecycle) -> T) -> T {
        condition.lock()
        let result = body(&lifecycle)
        let ready = takeReadyWaitersLocked()
        condition.broadcast()
        condition.unlock()
        for (resume, failure) in ready { resume(failure) }
        return result
    }

    fileprivate func finish(_ result: Result<Void, ContentError>) {
        condition.lock()
        defer {
            ended = true
            let ready = takeReadyWaitersLocked()
            condition.broadcast()
            condition.unlock()
            for (resume, failure) in ready { resume(failure) }
        }
        switch result {
        case .success:
            if rename(temporaryPath, finalPath) != 0 {
                let kind = ContentError.Kind.localIO("rename: \(String(cString: strerror(errno)))")
                error = ContentError(kind: kind, photoID: source.photoID, url: source.url)
                lifecycle.attemptFailed(kind, final: true)
                unlink(temporaryPath)
            }
        case .failure(let failure):
            error = failure
            lifecycle.attemptFailed(failure.kind, final: true)
            // Readers that opened the temporary file keep their descriptor; the name goes now so nothing
            // half-written is ever found again.
            unlink(temporaryPath)
        }
    }

    fileprivate var sinkState: (phase: DownloadLifecycle.Phase, received: Int64) {
        condition.lock(); defer { condition.unlock() }
        return (lifecycle.phase, lifecycle.received)
    }
}

/// Writes one response's body into the download's temporary file at the offset the lifecycle gives.
private final class DownloadSink: HTTPBodySink {
    let download: Download
    let fd: Int32
    var offset: Int64 = 0
    var failure: String?
    var refusal: ContentError.Kind?
    var outOfSpace = false

    init(download: Download, fd: Int32) { self.download = download; self.fd = fd }

    func begin(status: Int, headers: [String: String]) -> Bool {
        let result = download.update {
            $0.responseBegan(status: status, contentType: headers["content-type"],
                             contentLength: headers["content-length"].flatMap { Int64($0) },
                             contentRange: headers["content-range"])
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
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                outOfSpace = errno == ENOSPC || errno == EDQUOT
                failure = String(cString: strerror(errno))
                return false
            }
            done += n
        }
        if case .failure(let kind) = download.update({ $0.stored(bytes.count) }) {
            refusal = kind
            failure = "refused"
            return false
        }
        offset += Int64(bytes.count)
        return true
    }
}

public final class DownloadEngine: @unchecked Sendable {
    private let http: HTTPClient
    private let logger: Logger
    private let lock = NSCondition()
    private var inFlight: [String: Download] = [:]
    private var queue: [Download] = []
    private var workers = 0
    private let maxTransfers: Int
    /// Called on a transfer thread when a download completed and its file is in place.
    var onComplete: ((Download) -> Void)?
    /// Tests widen the instant between "all bytes stored" and "renamed into place" with this.
    var pauseBeforeFinish: TimeInterval = 0

    /// `maxTransfers` downloads run at once (each on its own thread with a keep-alive connection); 16 keeps
    /// a 16-reader workload from queueing while staying far below what an origin would call abuse.
    public init(http: HTTPClient, maxTransfers: Int = 16, logger: Logger) {
        self.http = http
        self.maxTransfers = max(1, maxTransfers)
        self.logger = logger
    }

    /// The running download for `key`, or a new one queued at `priority`. A user asking for a queued
    /// prefetch moves it ahead.
    func start(key: String, source: ContentSource, temporaryPath: String, finalPath: String,
               priority: DownloadPriority) -> Download {
        lock.lock()
        defer { lock.unlock() }
        if let running = inFlight[key] {
            if priority > running.priority { running.priority = priority; lock.broadcast() }
            return running
        }
        let download = Download(key: key, source: source, temporaryPath: temporaryPath, finalPath: finalPath,
                                priority: priority)
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
            while queue.isEmpty {
                if !lock.wait(until: Date().addingTimeInterval(30)) && queue.isEmpty {
                    workers -= 1
                    lock.unlock()
                    return
                }
            }
            // Highest priority first; among equals, first come first served.
            let index = queue.indices.max { (queue[$0].priority, -$0) < (queue[$1].priority, -$1) }!
            let download = queue.remove(at: index)
            lock.unlock()

            let result = run(download)
            if pauseBeforeFinish > 0 { Thread.sleep(forTimeInterval: pauseBeforeFinish) }
            // A finished photo is renamed into place before the download is forgotten, so no opener starts
            // it again; a failed one is forgotten first, so the next opener starts afresh instead of joining
            // the failure.
            if case .success = result { download.finish(result) }
            lock.lock()
            inFlight[download.key] = nil
            lock.unlock()
            if case .failure = result { download.finish(result) }
            switch result {
            case .success:
                logger.debug("downloaded", metadata: [
                    "photo": "\(download.source.photoID)", "bytes": "\(download.source.expectedSize)",
                    "seconds": "\(String(format: "%.3f", Date().timeIntervalSince(download.started)))",
                ])
                onComplete?(download)
            case .failure(let error):
                logger.error("download failed", metadata: ["photo": "\(download.source.photoID)",
                                                           "url": "\(download.source.url)", "error": "\(error)"])
            }
        }
    }

    /// All attempts of one download. Transport errors, 5xx and 429 are retried with backoff, resuming from
    /// the bytes already stored; 4xx other than 429, and refusals (size, type), are final.
    private func run(_ download: Download) -> Result<Void, ContentError> {
        let source = download.source
        func failure(_ kind: ContentError.Kind) -> ContentError { ContentError(kind: kind, photoID: source.photoID, url: source.url) }
        let fd = open(download.temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            return .failure(failure(errno == ENOSPC ? .noSpace : .localIO(String(cString: strerror(errno)))))
        }
        defer { close(fd) }
        let attempts = max(1, http.configuration.attempts)
        for attempt in 1...attempts {
            let sink = DownloadSink(download: download, fd: fd)
            var headers: [String] = []
            if let range = download.update({ $0.rangeHeader }) {
                headers.append(range)
                if let etag = source.etag { headers.append("If-Range: \(etag)") }
            }
            var retryAfter: TimeInterval?
            let kind: ContentError.Kind
            do {
                _ = try http.download(source.url, headers: headers, into: sink)
                if download.update({ $0.transferEnded() }) == .complete { return .success(()) }
                kind = .truncated(expected: source.expectedSize, received: download.sinkState.received)
            } catch let error as HTTPError {
                if let refusal = sink.refusal { return .failure(failure(refusal)) }
                if sink.outOfSpace { return .failure(failure(.noSpace)) }
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
