// One photo's download as its readers see it: the bytes stored so far (a file in the cache, or memory when the
// cache cannot take them), readers waiting for more, and the lifecycle that says which bytes are valid.
import Foundation
import Logging
import PhotoCatalog

/// Where a new download keeps its bytes; the cache decides (see `OriginalCache.makeStorage`).
enum DownloadStorage {
    /// A temporary file in the cache, renamed into place when complete.
    case file(OpenFile, temporaryPath: String)
    /// Memory only, not cached: the cache cannot take it (the reason is logged by the cache).
    case memory(reason: ContentError.Kind)
}

/// A verified prefix taken from the cache's partial entries (`PartialEntry`) for a download to continue: its
/// file, now a temporary file holding exactly the prefix, and the version it is of.
struct RestoredPrefix {
    let file: OpenFile
    let temporaryPath: String
    let received: Int64
    let etag: String?
}

/// What an opener of a download wants of it.
enum DownloadWant {
    /// An open handle reads through it: bytes come as its reads ask for them (`DownloadDemand`).
    case reader
    /// The whole photo, whoever reads it: a prefetch, a render, a desktop thumbnail, `fetch`.
    case whole
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
    var priority: DownloadPriority
    /// The thumbnailer process whose open queued it (its downloads are limited, see `DownloadEngine`); nil
    /// for everyone else, and once a user open joins it.
    var requester: String?
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
    /// Who wants which bytes, and so what the engine asks the origin for next.
    private var demand: DownloadDemand
    /// Where the download is in the engine (guarded by `condition`).
    enum Schedule: Equatable {
        /// In the engine's queue, or about to be put there.
        case queued
        /// On a transfer thread.
        case running
        /// Kept for its open readers with nothing to ask for: a read past the stored bytes queues it again.
        case idle
        /// Ended with its bytes kept as a partial entry (or dropped): nothing more happens to it.
        case parked
    }
    private(set) var schedule: Schedule = .queued
    /// The end (exclusive) of the bytes the running request asked for.
    private var requestEnd: Int64 = 0
    /// Bytes stored from the network (for the cache's statistics).
    private var fetched: Int64 = 0
    /// Whether `attach` gave the download its storage (a restored prefix comes with its file).
    private var storageAttached = false
    /// Queues the download again when demand comes back while it is idle (set by the engine; called outside
    /// the lock).
    var wake: ((Download) -> Void)?

    /// 1 GiB: a photo kept in memory while the cache cannot take it. Flickr's originals stop at 200 MB, so
    /// a bigger catalog size is not a photo we should hold in RAM; it fails as "no space" instead.
    static let memoryLimit: Int64 = 1 << 30

    /// A new download; with `restored`, continuing from a verified prefix (no request until a read needs
    /// more than it holds).
    init(key: String, source: ContentSource, finalPath: String, priority: DownloadPriority, requester: String? = nil,
         restored: RestoredPrefix? = nil, tuning: DownloadDemand.Tuning = DownloadDemand.Tuning()) {
        self.key = key
        self.source = source
        self.finalPath = finalPath
        self.priority = priority
        self.requester = requester
        demand = DownloadDemand(size: source.expectedSize, tuning: tuning)
        if let restored {
            lifecycle = DownloadLifecycle(expectedSize: source.expectedSize, expectedType: source.contentType,
                                          expectedETag: source.etag, resumingAt: restored.received,
                                          answerETag: restored.etag)
            file = restored.file
            temporaryPath = restored.temporaryPath
            storageAttached = true
        } else {
            lifecycle = DownloadLifecycle(expectedSize: source.expectedSize, expectedType: source.contentType,
                                          expectedETag: source.etag)
        }
    }

    /// Waits until the origin's answer is verified (status, type, size) — or was, for a restored prefix —
    /// or the download failed (throws).
    public func waitUntilVerified() throws {
        condition.lock()
        defer { condition.unlock() }
        while !ended {
            // Refused as an answer began: wait for finish() to record the error it reports.
            if case .failed = lifecycle.phase { condition.wait(); continue }
            if lifecycle.isVerified { break }
            condition.wait()
        }
        if let error { throw error }
    }

    /// Waits until bytes up to `end` (exclusive, capped at the photo's size) are stored, or throws if the
    /// download failed before they arrived. Asks for them if nothing is coming.
    public func waitForBytes(upTo end: Int64) throws {
        let end = min(end, source.expectedSize)
        condition.lock()
        demand.read(upTo: end)
        let wakeNow = takeWakeLocked()
        condition.unlock()
        if wakeNow { wake?(self) }
        condition.lock()
        defer { condition.unlock() }
        while lifecycle.received < end {
            if let error { throw error }
            if lifecycle.phase == .complete || ended { return }
            condition.wait()
        }
    }

    /// Calls `resume` once the bytes up to `end` are stored (with nil) or the download failed before they
    /// arrived (with the error): at once, on this thread, if that is already so; otherwise later, on the
    /// transfer thread. Nothing blocks meanwhile. Bytes not stored are asked for (the read is demand).
    public func whenBytesAvailable(upTo end: Int64, _ resume: @escaping (ContentError?) -> Void) {
        let end = min(end, source.expectedSize)
        condition.lock()
        demand.read(upTo: end)
        if lifecycle.received >= end || lifecycle.phase == .complete || ended {
            let failure = lifecycle.received >= end ? nil : error ?? (ended ? stoppedError : nil)
            condition.unlock()
            resume(failure)
            return
        }
        byteWaiters.append((end, resume))
        let wakeNow = takeWakeLocked()
        condition.unlock()
        if wakeNow { wake?(self) }
    }

    /// Registers what an opener wants (`.reader`: a handle, paired with `closed`); returns whether the download
    /// must be queued again (it was idle). For the engine, which queues it after letting go of its own lock.
    func add(_ want: DownloadWant) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        switch want {
        case .reader: demand.opened()
        case .whole: demand.wantWhole()
        }
        return takeWakeLocked()
    }

    /// A handle on the download closed: with none left and nothing wanting the whole photo, the transfer
    /// stops (`DownloadDemand.shouldCut`) and what arrived is kept as a partial entry.
    public func closed() { changeDemand { $0.closed() } }

    private func changeDemand(_ body: (inout DownloadDemand) -> Void) {
        condition.lock()
        body(&demand)
        let wakeNow = takeWakeLocked()
        condition.unlock()
        if wakeNow { wake?(self) }
    }

    /// Whether an idle download must go back to the engine (a request to make, or nobody left: park it);
    /// marks it queued. Called with the lock held; the caller wakes the engine after unlocking.
    private func takeWakeLocked() -> Bool {
        guard schedule == .idle, !ended else { return false }
        if case .idle = demand.next(received: lifecycle.received) { return false }
        schedule = .queued
        return true
    }

    /// The error a reader gets for bytes of a download that was put away before they came (never expected:
    /// a download parks only when no handle is open).
    private var stoppedError: ContentError {
        ContentError(kind: .truncated(expected: source.expectedSize, received: lifecycle.received),
                     photoID: source.photoID, url: source.url)
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
            if done { ready.append((waiter.resume, error ?? stoppedError)); return true }
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

    var hasStorage: Bool { condition.lock(); defer { condition.unlock() }; return storageAttached }

    func attach(_ storage: DownloadStorage) -> ContentError? {
        condition.lock()
        defer { condition.unlock() }
        storageAttached = true
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
    func store(_ bytes: UnsafeRawBufferPointer, at offset: Int64,
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

    func update<T>(_ body: (inout DownloadLifecycle) -> T) -> T {
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
    func fileIntoPlace() {
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
    func finish(_ result: Result<Void, ContentError>) {
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

    var sinkState: (phase: DownloadLifecycle.Phase, received: Int64) {
        condition.lock(); defer { condition.unlock() }
        return (lifecycle.phase, lifecycle.received)
    }

    /// `count` body bytes from the network were stored at the write offset (`DownloadLifecycle.stored`).
    func storedFromNetwork(_ count: Int) -> Result<Void, ContentError.Kind> {
        update { lifecycle in
            let result = lifecycle.stored(count)
            if case .success = result { fetched = fetched.saturatingAdd(Int64(count)) }
            return result
        }
    }

    /// Bytes stored from the network over the download's life.
    var fetchedBytes: Int64 { condition.lock(); defer { condition.unlock() }; return fetched }

    /// Whether the current answer delivered every byte it announced (a range request that ended there did
    /// its job; one that ended before was cut by the network).
    var answerDelivered: Bool { condition.lock(); defer { condition.unlock() }; return lifecycle.answerDelivered }

    // MARK: Demand (the engine's side)

    /// What the transfer thread does next (`DownloadDemand.next`): a request (recorded as running), nothing
    /// for now (the download becomes idle and leaves the thread), park or complete.
    func nextStep() -> DownloadDemand.Step {
        condition.lock()
        defer { condition.unlock() }
        let step = lifecycle.phase == .complete ? .complete : demand.next(received: lifecycle.received)
        switch step {
        case .request(_, let end):
            requestEnd = end
            schedule = .running
        case .idle:
            schedule = .idle
        case .park, .complete:
            break
        }
        return step
    }

    /// Whether the running request should stop now: nobody wants its bytes any more and much of it is left
    /// (`DownloadDemand.shouldCut`). An answer may run past what was asked (an origin that ignores Range
    /// sends the whole photo), so the answer's end counts too.
    var shouldCut: Bool {
        condition.lock()
        defer { condition.unlock() }
        return demand.shouldCut(received: lifecycle.received, requestEnd: max(requestEnd, lifecycle.answerEnd))
    }

    /// Asked by the engine, under its lock, before putting the download away: still `.park` (then the download
    /// is marked parked and no demand wakes it again), or what to do instead (someone opened it meanwhile).
    func confirmPark() -> DownloadDemand.Step {
        condition.lock()
        defer { condition.unlock() }
        let step = lifecycle.phase == .complete ? .complete : demand.next(received: lifecycle.received)
        switch step {
        case .park: schedule = .parked
        case .idle: schedule = .idle
        case .request, .complete: schedule = .queued
        }
        return step
    }

    /// The stored prefix of a parked download, handed to the cache to keep: its file (nil in memory), the
    /// temporary path (now the cache's to rename or remove), the bytes received and their version.
    func takeParkedPrefix() -> (file: OpenFile?, temporaryPath: String?, received: Int64, etag: String?) {
        condition.lock()
        defer { condition.unlock() }
        let path = temporaryPath
        temporaryPath = nil
        return (file, path, lifecycle.received, lifecycle.firstAnswerETag)
    }

    /// Ends a parked download. No handle is open (that is why it parked); a waiter that slipped in gets an
    /// error rather than waiting forever.
    func finishParked() {
        condition.lock()
        ended = true
        let ready = takeReadyWaitersLocked()
        condition.broadcast()
        condition.unlock()
        for (resume, failure) in ready { resume(failure) }
    }
}
