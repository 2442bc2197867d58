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
    let started = Date()

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

    func attach(_ storage: DownloadStorage) -> ContentError? {
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
}
