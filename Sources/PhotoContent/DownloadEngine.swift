// Downloads of originals into the cache: a fixed pool of transfer threads, one shared download per photo
// (single flight), user opens before prefetch, requests sized by what readers read, resumable retries.
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

/// Passes one response's body to the download at the offset the lifecycle gives.
private final class DownloadSink: HTTPBodySink {
    let download: Download
    let movedToMemory: (ContentError.Kind) -> Void
    var offset: Int64 = 0
    var failure: String?
    var refusal: ContentError.Kind?
    var storeFailure: ContentError.Kind?
    /// The transfer was stopped because nobody wants its bytes any more (not a failure).
    var stoppedByDemand = false

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
        if case .failure(let kind) = download.storedFromNetwork(bytes.count) {
            refusal = kind
            failure = "refused"
            return false
        }
        offset = offset.saturatingAdd(Int64(bytes.count))
        // Checked at every arrival, so a transfer nobody wants stops within a round trip of the last close.
        if download.shouldCut {
            stoppedByDemand = true
            failure = "stopped: nobody reads the photo any more"
            return false
        }
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
    /// Called on a transfer thread, under the engine's lock (so no opener joins it meanwhile), when a download
    /// ended with nobody wanting more: the cache keeps its prefix (`Download.takeParkedPrefix`) or drops it.
    var onPark: ((Download) -> Void)?
    /// How requests are sized (`DownloadDemand`).
    var demandTuning = DownloadDemand.Tuning()
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

    /// The download in flight for `key` (running, queued, or idle between its readers' requests), or a new
    /// one at `priority`, continuing `restored` when the cache had a prefix of it. A user asking for a queued
    /// prefetch moves it ahead. `want` says what this caller needs: `.reader` counts an open handle (pair it
    /// with `Download.closed`), `.whole` makes it complete whoever reads.
    func start(key: String, source: ContentSource, finalPath: String, priority: DownloadPriority,
               requester: String? = nil, want: DownloadWant, restored: RestoredPrefix? = nil) -> Download {
        lock.lock()
        let download: Download
        // The want is registered under the engine's lock: a download being parked (`park`, same lock) either
        // sees this opener or is gone from `inFlight` before it looks.
        let wakeNow: Bool
        if let running = inFlight[key] {
            download = running
            if priority > running.priority {
                running.priority = priority
                // Someone other than a thumbnailer needs it: no longer held to that process's limit (a
                // download already running stays counted for it until it ends).
                if requester == nil, queue.contains(where: { $0 === running }) { running.requester = nil }
                lock.broadcast()
            }
            // Another opener restored the same prefix first: this copy is not needed.
            if let restored { unlink(restored.temporaryPath) }
            wakeNow = download.add(want)
        } else {
            download = Download(key: key, source: source, finalPath: finalPath, priority: priority, requester: requester,
                                restored: restored, tuning: demandTuning)
            download.wake = { [weak self] in self?.enqueue($0) }
            _ = download.add(want)
            inFlight[key] = download
            queue.append(download)
            startWorkerLocked()
            lock.broadcast()
            wakeNow = false
        }
        lock.unlock()
        if wakeNow { enqueue(download) }
        return download
    }

    /// Queues an idle download again (its readers want more, or nobody is left and it is to be put away).
    private func enqueue(_ download: Download) {
        lock.lock()
        if inFlight[download.key] === download, !queue.contains(where: { $0 === download }) {
            queue.append(download)
            startWorkerLocked()
            lock.broadcast()
        }
        lock.unlock()
    }

    private func startWorkerLocked() {
        guard workers < maxTransfers else { return }
        workers += 1
        let thread = Thread { [weak self] in self?.work() }
        thread.name = "download"
        thread.start()
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

            let result = serve(download)
            if let requester {
                lock.lock()
                let left = (runningByRequester[requester] ?? 1) - 1
                runningByRequester[requester] = left > 0 ? left : nil
                lock.broadcast()
                lock.unlock()
            }
            // A finished photo is in place and recorded by the cache before the download is forgotten, so no
            // opener starts it again and a fetch that returns finds it counted; a failed one is forgotten
            // first, so the next opener starts afresh instead of joining the failure. Either is logged before
            // its waiters wake, so a caller that saw the end finds the line.
            switch result {
            case .idle:
                // Kept in flight for its readers; their next read past the stored bytes queues it again.
                continue
            case .park:
                park(download)
                continue
            case .success:
                beforeFinish?(download)
                download.fileIntoPlace()
                onComplete?(download)
                logger.debug("downloaded", metadata: [
                    "photo": "\(download.source.photoID)", "bytes": "\(download.source.expectedSize)",
                    "cached": "\(download.uncachedReason == nil)",
                    "seconds": "\(String(format: "%.3f", Double(DispatchTime.now().uptimeNanoseconds - download.started.uptimeNanoseconds) / 1e9))",
                ])
                download.finish(.success(()))
                forget(download)
            case .failure(let error):
                beforeFinish?(download)
                logger.error("download failed", metadata: ["photo": "\(download.source.photoID)",
                                                           "url": "\(URLRedaction.redacted(download.source.url))",
                                                           "error": "\(error)"])
                forget(download)
                download.finish(.failure(error))
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

    /// What serving a download came to.
    private enum Outcome {
        /// Every byte is stored.
        case success
        case failure(ContentError)
        /// Its readers want nothing more for now: it leaves the thread, kept in flight.
        case idle
        /// Nobody wants more: its prefix is to be kept and the download ended.
        case park
    }

    /// Serves one download on this thread: the requests its demand asks for, one after another on one
    /// kept-alive connection, until it is complete, idle or to be parked. Transport errors, 5xx and 429 are
    /// retried with backoff, resuming from the bytes already stored (up to `attempts` failed requests in a
    /// row; a request that delivers what it asked for resets the count); 4xx other than 429, and refusals
    /// (size, type, version), are final.
    private func serve(_ download: Download) -> Outcome {
        let source = download.source
        func failure(_ kind: ContentError.Kind) -> ContentError { ContentError(kind: kind, photoID: source.photoID, url: source.url) }
        let movedToMemory: (ContentError.Kind) -> Void = { [weak self] reason in self?.onMovedToMemory?(download, reason) }
        let attempts = max(1, http.configuration.attempts)
        var failures = 0
        while true {
            let step = download.nextStep()
            guard case .request(_, let end) = step else {
                switch step {
                case .complete: return .success
                case .idle: return .idle
                case .park, .request: return .park
                }
            }
            // Storage is made for the first request only, so a download opened and closed before its turn
            // makes no temporary file.
            if !download.hasStorage {
                let storage = makeStorage?(download) ?? .memory(reason: .localIO("no cache directory"))
                if let refused = download.attach(storage) { return .failure(refused) }
            }
            let sink = DownloadSink(download: download, movedToMemory: movedToMemory)
            var headers: [String] = []
            let range = download.update { ($0.rangeHeader(to: end), $0.ifRangeHeader) }
            if let header = range.0 {
                headers.append(header)
                if let ifRange = range.1 { headers.append(ifRange) }
            }
            var retryAfter: TimeInterval?
            let kind: ContentError.Kind
            do {
                _ = try http.download(source.url, headers: headers, into: sink)
                if download.update({ $0.transferEnded() }) == .complete { return .success }
                if download.answerDelivered {
                    failures = 0
                    continue
                }
                kind = .truncated(expected: source.expectedSize, received: download.sinkState.received)
            } catch let error as HTTPError {
                if sink.stoppedByDemand {
                    // Not a failure: the connection is gone with the transfer, the bytes stored stay.
                    download.update { _ = $0.transferEnded() }
                    logger.debug("download stopped: no reader left", metadata: [
                        "photo": "\(source.photoID)", "received": "\(download.sinkState.received)",
                        "bytes": "\(source.expectedSize)",
                    ])
                    continue
                }
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
            failures += 1
            if failures >= attempts { return .failure(failure(kind)) }
            download.update { $0.attemptFailed(kind, final: false) }
            let wait = http.configuration.retryDelay(attempt: failures, retryAfter: retryAfter)
            logger.info("retrying download", metadata: ["photo": "\(source.photoID)", "attempt": "\(failures + 1)",
                                                       "error": "\(failure(kind))", "wait_s": "\(wait)"])
            Thread.sleep(forTimeInterval: wait)
        }
    }

    /// Puts away a download nobody wants more of, under the engine's lock so that no opener joins it while its
    /// prefix is handed to the cache: an opener after this starts a new download, which finds the prefix.
    /// If someone opened it since it left the thread, it is served instead.
    private func park(_ download: Download) {
        lock.lock()
        switch download.confirmPark() {
        case .park:
            onPark?(download)
            inFlight[download.key] = nil
            lock.unlock()
            logger.debug("download parked", metadata: ["photo": "\(download.source.photoID)",
                                                       "received": "\(download.receivedBytes)",
                                                       "bytes": "\(download.source.expectedSize)"])
            download.finishParked()
        case .request, .complete:
            if !queue.contains(where: { $0 === download }) { queue.append(download) }
            lock.broadcast()
            lock.unlock()
        case .idle:
            lock.unlock()
        }
    }
}
