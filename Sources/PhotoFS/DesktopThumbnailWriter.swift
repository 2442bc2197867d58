// Writes freedesktop thumbnails for the photos of a listed directory into the mounting user's cache, so a
// file manager finds them at its first look and never reads (downloads) the originals to make its own.
import Foundation
import Logging
import PhotoCatalog
import PhotoContent
import PhotoTree

public struct DesktopThumbnailOptions: Sendable {
    /// The user's thumbnail cache (`$XDG_CACHE_HOME/thumbnails`).
    public var store: DesktopThumbnailStore
    /// The mount point as file managers name it (absolute, resolved, no trailing slash): URIs are made from it.
    public var mountpoint: String
    /// 128 and 256 px: what GLib 2.74, pcmanfm, Thunar and Dolphin ask for by default. x-large (512) would
    /// need the next Flickr rendition (`z`, 640 px, ~4× the bytes of `n`) for HiDPI screens only.
    public var sizes: [DesktopThumbnailSize] = [.normal, .large]
    /// How long a file manager's listing may wait for its photos' thumbnails, per photo still missing one
    /// (at most `maxWait`): every thumbnail missing when it replies is one the file manager makes itself from
    /// the original. Measured with the release build on this 2-core machine, loopback origin, folders of
    /// 33–34 photos: 3.7 ms a photo when its 320 px rendition is fetched first, 2.1 ms when its source is kept
    /// in the library. With pcmanfm opening cold 40-photo folders of the demo library, at 5 ms a photo 5–6 of
    /// 40 were still to write after 200 ms and pcmanfm opened 0–4 originals; 25 ms a photo (1 s for 40) is a
    /// slower first look at a folder rather than megabytes fetched. Only file managers' and thumbnailers'
    /// listings wait (`ThumbnailListers`).
    public var waitPerPhoto: TimeInterval = 0.025
    /// The most one listing waits. pcmanfm's first look at a 200-photo folder needed ~1.5 s of writing on a quiet
    /// 2-core machine (make bench) and over 2 s at load 6–9, when pcmanfm then drew 767 thumbnails itself from
    /// originals; 6 s (a 240-photo folder at 25 ms a photo) keeps every thumbnail ahead of pcmanfm's loader at
    /// three times the quiet cost. Larger folders get their first 240 photos' worth of wait, the rest follow.
    public var maxWait: TimeInterval = 6
    /// Listings wait out of a budget of `maxWait` seconds that refills at `waitRefillPerSecond`: a file
    /// manager opening a folder gets its whole wait, one walking a 100,000-photo tree waits at its first
    /// folders and then goes on at full speed while the rest are written behind it.
    public var waitRefillPerSecond: TimeInterval = 0.25
    /// Photos fetched and rendered at once. Rendering is ~2 ms of CPU a photo (measured), a fetch over a WAN
    /// some 40 ms of waiting (not measured yet: the WAN profile is issue 11's): 8 keep the 2 cores busy while
    /// 8 fetches are in flight (an estimated ~5 ms a photo, ~10 at 4), and the origin sees 8 keep-alive
    /// connections for sources of ~30 KB, half what downloads may use.
    public var parallelJobs = 8
    /// How many sources a mount fetches for thumbnails (renditions, or originals with no smaller rendition):
    /// at most 1,200 in any minute, the first 1,200 at once, then 20 a second. A file manager opening a folder
    /// of up to 1,200 photos gets every thumbnail at full speed (8 jobs fetch ~150 a second over a 40 ms
    /// link); a file manager walked through a 100,000-photo tree costs at most 1,200 requests (~40 MB of
    /// renditions) a minute, not the whole library in minutes. Sources kept in the library cost no fetch.
    /// nil: no ceiling (`photofs thumbnails`, which someone ran to write them all).
    public var fetchCeiling: APIRateLimit? = APIRateLimit(callsPerSecond: 20, burst: 1_200)

    public init(store: DesktopThumbnailStore, mountpoint: String) {
        self.store = store
        self.mountpoint = mountpoint.count > 1 && mountpoint.hasSuffix("/") ? String(mountpoint.dropLast()) : mountpoint
    }
}

/// One file of the mount whose thumbnails should exist: where it is, and what a valid thumbnail says of it.
public struct DesktopThumbnailTarget: Sendable, Equatable {
    public let path: String
    public var seq: Int64
    public var mtime: Int64
    /// The size `stat` shows (nil when not known yet: a sized mount's variant not rendered yet).
    public var size: Int64?
    public var mimeType: String?
    /// Whether the original may be downloaded when the photo has no smaller rendition: for file managers'
    /// listings and `photofs thumbnails` (they would read it anyway), not for `ls` or `du`.
    public var mayFetchOriginal: Bool
    public init(path: String, seq: Int64, mtime: Int64, size: Int64?, mimeType: String?, mayFetchOriginal: Bool = false) {
        self.path = path; self.seq = seq; self.mtime = mtime; self.size = size; self.mimeType = mimeType
        self.mayFetchOriginal = mayFetchOriginal
        uris = DesktopThumbnailTarget.uris(of: path)
    }

    /// Every URI file managers name this file by: GLib's, and KDE's on Qt 6 and Qt 5 (one when they agree,
    /// which is unless the name holds `;`, `[` or `]`).
    /// Made once: a listing's targets are checked in `isKnownCurrent`, `prepare` and the job, and each
    /// spelling escapes the whole path.
    let uris: [String]

    static func uris(of path: String) -> [String] {
        var uris = [FileURI.glib(path: path)]
        for uri in [FileURI.qt(path: path), FileURI.qt5(path: path)] where !uris.contains(uri) { uris.append(uri) }
        return uris
    }

    func stamp(uri: String) -> DesktopThumbnailStamp {
        DesktopThumbnailStamp(uri: uri, mtime: mtime, fileSize: size, mimeType: mimeType)
    }
}

public final class DesktopThumbnailWriter: @unchecked Sendable {
    public let options: DesktopThumbnailOptions
    private let catalog: Catalog
    /// Originals through the cache or, for a folder import's photos, straight from their files.
    private let originals: PhotoOriginals
    private let http: HTTPClient
    private let logger: Logger
    /// Its timed waits (a listing's deadline, an idle worker's 30 s) run on the monotonic clock.
    private let lock = MonotonicCondition()
    /// Stamps written (or found valid) in this mount's life, by URI: a listing seen again checks one `stat`.
    /// Emptied when it reaches `currentLimit` (the disk still says what is valid): 50,000 URIs is ~10 MB.
    private var current: [String: DesktopThumbnailStamp] = [:]
    private let currentLimit = 50_000
    /// Photos this mount wrote thumbnails for: a catalog change brings theirs up to date.
    private var writtenSeqs: Set<Int64> = []
    /// The path each listed directory had when its thumbnails were asked for: after a rename of an album,
    /// region or photographer, the new tree no longer knows the old one.
    private var directoryPaths: [Node: String] = [:]
    /// Targets waiting for their photo's turn, by photo seq (one per path).
    private var waiting: [Int64: [DesktopThumbnailTarget]] = [:]
    /// Photos to work on, next first: the folder listed last goes to the front (the one a person is looking
    /// at), background work to the back. `scheduled` holds those queued or being worked on. Kept next-last
    /// (workers take from the end): taking from the front of an array moves all the rest, and with 100,000
    /// photos queued by an `ls -lR` that was seconds of memmove.
    private var queue: [Int64] = []
    private var scheduled: Set<Int64> = []
    private var workers = 0
    private var stopped = false
    /// Photos whose thumbnails cannot be made (no source, undecodable): not retried until the catalog changes.
    /// A failed fetch is not among them: it is deferred (below).
    private var failed: Set<Int64> = []
    /// Photos not tried again before a time, by seq: one whose fetch failed (the origin unreachable: 60 s,
    /// doubling with each failure up to an hour), or one whose only source is an original a listing that
    /// is not a file manager's may not download (5 minutes: it may be cached by then). Without this every
    /// listing queued them all again: an `ls -lR` of 100,000 photos whose sources could not be fetched spent
    /// 8 of its 10 s on them. Emptied when the catalog changes.
    private var deferred: [Int64: Deferral] = [:]
    struct Deferral {
        var until: DispatchTime
        /// Only listings that may not download the original wait: a file manager's may try now.
        var unlessOriginalAllowed: Bool
        var failures: Int
    }
    /// Fetches left under `DesktopThumbnailOptions.fetchCeiling` (nil: no ceiling), on the monotonic clock.
    private var fetchBucket: TokenBucket?
    private let clock = SystemWaitClock()
    private var ceilingLogged = false
    /// Seconds of listing wait left (see `DesktopThumbnailOptions.waitRefillPerSecond`), as of `budgetAt`.
    private var waitBudget: TimeInterval
    private var budgetAt = DispatchTime.now()
    /// The last photos' PNGs (without Thumb:: chunks), for their other trees' names: 64 × ~70 KB.
    private var recentPNGs: [(seq: Int64, identity: String, pngs: [DesktopThumbnailSize: Data])] = []
    /// One decode per core at a time: a source may be a large cached original (a 40 MP PNG is 160 MB of
    /// pixels), and 8 of them at once would be too much for the daemon.
    private let renderSlots = DispatchSemaphore(value: max(1, ProcessInfo.processInfo.activeProcessorCount))
    private var recorded: CoalescingWriter<String, String>!
    private var sources: CoalescingWriter<Int64, (data: Data, from: PhotoRecord)>!

    public init(options: DesktopThumbnailOptions, catalog: Catalog, cache: OriginalCache, http: HTTPClient, logger: Logger) {
        self.options = options
        self.catalog = catalog
        self.originals = PhotoOriginals(cache: cache)
        self.http = http
        self.logger = logger
        waitBudget = options.maxWait
        fetchBucket = options.fetchCeiling.map { TokenBucket(limit: $0, now: clock.now) }
        // One transaction per 0.2 s of writes, not one per photo (a transaction costs an fsync).
        recorded = CoalescingWriter(delay: 0.2) { batch in
            guard !catalog.isReadOnly else { return }
            do { try catalog.recordDesktopThumbnails(batch.map { (uri: $0.key, photoID: $0.value) }) } catch {
                logger.warning("could not record desktop thumbnails", metadata: ["count": "\(batch.count)", "error": "\(error)"])
            }
        }
        sources = CoalescingWriter(delay: 0.2) { batch in
            guard !catalog.isReadOnly else { return }
            do { try catalog.saveDesktopThumbnailSources(Array(batch.values)) } catch {
                logger.warning("could not keep thumbnail sources", metadata: ["count": "\(batch.count)", "error": "\(error)"])
            }
        }
    }

    /// How long `prepare` waits.
    public enum Wait: Sendable {
        /// Not at all: written in the background (a listing the kernel already had changed).
        case none
        /// Until the deadline at most (a listing's reply); the rest are written as their sources arrive.
        case until(DispatchTime)
        /// Until every one is written or given up (`photofs thumbnails`).
        case all
    }

    /// Makes sure every target gets valid thumbnails. Returns how many photos were still missing theirs
    /// when it stopped waiting.
    @discardableResult
    public func prepare(_ targets: [DesktopThumbnailTarget], wait: Wait) -> Int {
        var seqs: [Int64] = []
        lock.lock()
        guard !stopped else { lock.unlock(); return 0 }
        for target in targets where !isSettledLocked(target.seq, mayFetchOriginal: target.mayFetchOriginal) {
            guard target.uris.contains(where: { current[$0] != target.stamp(uri: $0) }) else { continue }
            var pending = waiting[target.seq] ?? []
            pending.removeAll { $0.path == target.path }
            pending.append(target)
            waiting[target.seq] = pending
            if seqs.last != target.seq { seqs.append(target.seq) }
        }
        if case .none = wait {
            let behind = seqs.filter { scheduled.insert($0).inserted }
            queue.insert(contentsOf: behind.reversed(), at: 0)
        } else {
            // This listing's photos go first, in its order (those being worked on already are left be). The
            // queue is searched as a set: `queue.contains` per photo was quadratic, 17,500 photos of a year
            // against the 100,000 its photographers' folders had queued.
            let inQueue = Set(queue)
            let front = seqs.filter { !scheduled.contains($0) || inQueue.contains($0) }
            let moved = Set(front)
            queue.removeAll { moved.contains($0) }
            queue.append(contentsOf: front.reversed())
            scheduled.formUnion(front)
        }
        startWorkersLocked()
        lock.broadcast()
        defer { lock.unlock() }
        let deadline: DispatchTime?
        switch wait {
        case .none: return seqs.count
        case .until(let time): deadline = time
        case .all: deadline = nil
        }
        // Workers wake every waiting listing after each photo: each wake-up looks past the photos done at the
        // front (they finish roughly in queue order) instead of counting all again (17,500 dictionary
        // lookups per wake-up kept a core busy while a year's listing waited).
        var remaining = seqs[...]
        while true {
            while let first = remaining.first, waiting[first] == nil { remaining = remaining.dropFirst() }
            guard !remaining.isEmpty, !stopped else { return remaining.filter { waiting[$0] != nil }.count }
            if let deadline {
                guard lock.wait(until: deadline) else { return remaining.filter { waiting[$0] != nil }.count }
            } else {
                lock.wait()
            }
        }
    }

    /// How long a listing of `count` photos without thumbnails may wait: per photo, up to `maxWait`, out of
    /// what is left of the wait budget. Call `waited(_:)` with the time it took.
    public func listingWait(forMissing count: Int) -> Wait {
        lock.lock()
        defer { lock.unlock() }
        refillBudgetLocked()
        let seconds = min(options.maxWait, options.waitPerPhoto * Double(count), waitBudget)
        guard seconds > 0.001 else { return .none }
        return .until(.now() + seconds)
    }

    /// Takes what a listing waited from the budget.
    public func waited(_ seconds: TimeInterval) {
        lock.lock()
        refillBudgetLocked()
        waitBudget = max(0, waitBudget - seconds)
        lock.unlock()
    }

    private func refillBudgetLocked() {
        let now = DispatchTime.now()
        let elapsed = Double(now.uptimeNanoseconds - budgetAt.uptimeNanoseconds) / 1e9
        waitBudget = min(options.maxWait, waitBudget + elapsed * options.waitRefillPerSecond)
        budgetAt = now
    }

    /// Remembers the path a directory's thumbnails were asked for under (see `directoryPaths`).
    public func remember(directory node: Node, path: String) {
        lock.lock()
        directoryPaths[node] = path
        lock.unlock()
    }

    /// The path a directory's thumbnails were last asked for under.
    public func rememberedPath(of node: Node) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return directoryPaths[node]
    }

    /// Whether this mount wrote thumbnails for the photo.
    public func hasWritten(_ seq: Int64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return writtenSeqs.contains(seq)
    }

    /// Whether a target's thumbnails are known valid: written (or found valid) by this mount, and still on
    /// disk (one `stat`: a user's `rm` or a cache clean-up is noticed at the next listing).
    public func isKnownCurrent(_ target: DesktopThumbnailTarget) -> Bool {
        let uris = target.uris
        lock.lock()
        let known = uris.allSatisfy { current[$0] == target.stamp(uri: $0) }
        lock.unlock()
        guard known, let size = options.sizes.last else { return known }
        var info = stat()
        return uris.allSatisfy { stat(options.store.fileURL(forURI: $0, size: size).path, &info) == 0 }
    }

    /// Whether nothing is to be done for the photo now: its thumbnails cannot be made (until the catalog
    /// changes) or it waits out a deferral. Asked before a listing makes its targets (and their URIs).
    public func isSettled(_ seq: Int64, mayFetchOriginal: Bool) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return isSettledLocked(seq, mayFetchOriginal: mayFetchOriginal)
    }

    private func isSettledLocked(_ seq: Int64, mayFetchOriginal: Bool) -> Bool {
        if failed.contains(seq) { return true }
        guard let deferral = deferred[seq], DispatchTime.now() < deferral.until else { return false }
        return !(deferral.unlessOriginalAllowed && mayFetchOriginal)
    }

    private func deferLocked(_ seq: Int64, unlessOriginalAllowed: Bool) {
        let failures = (deferred[seq]?.failures ?? 0) + (unlessOriginalAllowed ? 0 : 1)
        let seconds = unlessOriginalAllowed ? 300 : min(3600, 60 * pow(2, Double(max(0, failures - 1))))
        deferred[seq] = Deferral(until: .now() + seconds, unlessOriginalAllowed: unlessOriginalAllowed, failures: failures)
    }

    /// Removes the thumbnails of paths the mount no longer shows (a photo renamed, deleted or moved).
    public func remove(paths: [String]) {
        remove(uris: paths.flatMap(DesktopThumbnailTarget.uris(of:)))
    }

    /// Removes thumbnails by URI, from the disk, this mount's memory and the library's record.
    public func remove(uris: [String]) {
        guard !uris.isEmpty else { return }
        lock.lock()
        for uri in uris { current[uri] = nil }
        lock.unlock()
        for uri in uris {
            do { try options.store.remove(uri: uri) } catch {
                logger.warning("could not remove a desktop thumbnail", metadata: ["uri": "\(uri)", "error": "\(error)"])
            }
        }
        if !catalog.isReadOnly { try? catalog.forgetDesktopThumbnails(uris: uris) }
    }

    /// Removes the thumbnails of photos removed or replaced after removal-log position `after` (written
    /// before that), and of photos no longer in the library.
    public func removeOutdated(removedAfter position: Int64) {
        recorded.flush()
        remove(uris: (try? catalog.outdatedDesktopThumbnailURIs(removedAfter: position)) ?? [])
    }

    /// The catalog changed: photos that failed may have a source now, and PNGs may be of replaced photos.
    public func catalogChanged() {
        lock.lock()
        failed = []
        deferred = [:]
        recentPNGs = []
        lock.unlock()
    }

    /// Stops the workers after the photo each is on, gives up what waits (so no `prepare` waits forever) and
    /// writes pending records (at unmount).
    public func stop() {
        lock.lock()
        stopped = true
        queue = []
        waiting = [:]
        lock.broadcast()
        while workers > 0 { lock.wait() }
        lock.unlock()
        recorded.stop()
        sources.stop()
    }

    /// Writes pending records now (tests flush, then assert).
    public func flush() {
        recorded.flush()
        sources.flush()
    }

    // MARK: Workers

    private func startWorkersLocked() {
        while workers < max(1, options.parallelJobs), workers < queue.count {
            workers += 1
            let thread = Thread { [weak self] in self?.workLoop() }
            thread.name = "desktop-thumbnails"
            thread.start()
        }
    }

    /// Takes photos from the front of the queue until it stays empty for 30 s (an idle mount keeps no
    /// threads) or the writer stops.
    private func workLoop() {
        lock.lock()
        while true {
            while queue.isEmpty && !stopped {
                if !lock.wait(until: .now() + 30) && queue.isEmpty { break }
            }
            guard !stopped, !queue.isEmpty else { break }
            let seq = queue.removeLast()
            lock.unlock()
            work(seq)
            lock.lock()
        }
        workers -= 1
        lock.broadcast()
        lock.unlock()
    }

    /// Writes every waiting target of one photo; `scheduled` lets go of it in the same critical section
    /// that finds nothing more waiting, so a target added meanwhile is never left without a worker.
    private func work(_ seq: Int64) {
        var made: (identity: String, photoID: String, pngs: [DesktopThumbnailSize: Data])?
        while true {
            lock.lock()
            guard let targets = waiting[seq], !targets.isEmpty, !stopped else {
                waiting[seq] = nil
                scheduled.remove(seq)
                lock.broadcast()
                lock.unlock()
                return
            }
            lock.unlock()
            var written: [(String, DesktopThumbnailStamp)] = []
            var toWrite: [(uri: String, stamp: DesktopThumbnailStamp)] = []
            for target in targets {
                for uri in target.uris {
                    let stamp = target.stamp(uri: uri)
                    // A remount, or a second mount of the same library: thumbnails still valid are kept.
                    if options.sizes.allSatisfy({ options.store.isCurrent(stamp, size: $0) }) {
                        written.append((uri, stamp))
                    } else {
                        toWrite.append((uri, stamp))
                    }
                }
            }
            var giveUp = false
            if !toWrite.isEmpty {
                do {
                    // Made again if the photo changed since the last turn (replaced while this ran).
                    made = try thumbnails(seq, reusing: made, mayFetchOriginal: targets.contains(where: \.mayFetchOriginal))
                } catch let error as ThumbnailUnavailable {
                    logger.debug("no desktop thumbnail yet", metadata: ["inode": "\(Node.photo(seq: seq).inode)",
                                                                         "op": "thumbnail", "reason": "\(error.reason)"])
                    lock.lock()
                    deferLocked(seq, unlessOriginalAllowed: true)
                    lock.unlock()
                    giveUp = true
                } catch {
                    // Undecodable or no image at all: not tried again until the catalog changes. A fetch that
                    // failed (network, origin) is a ContentError or HTTPError: tried again after a deferral.
                    let permanent = !(error is ContentError || error is HTTPError)
                    logger.warning("no desktop thumbnail", metadata: ["inode": "\(Node.photo(seq: seq).inode)",
                                                                      "op": "thumbnail", "error": "\(error)"])
                    lock.lock()
                    if permanent { failed.insert(seq) } else { deferLocked(seq, unlessOriginalAllowed: false) }
                    lock.unlock()
                    giveUp = true
                }
            }
            if let made, !giveUp {
                for (uri, stamp) in toWrite {
                    do {
                        for size in options.sizes {
                            if let png = made.pngs[size] { try options.store.write(png: png, stamp: stamp, size: size) }
                        }
                        // GLib judges only the largest thumbnail it finds: another program's stale x-large one
                        // would hide these.
                        try options.store.removeOutdated(stamp)
                        written.append((uri, stamp))
                        recorded.submit(made.photoID, for: uri)
                    } catch {
                        logger.warning("could not write a desktop thumbnail", metadata: [
                            "inode": "\(Node.photo(seq: seq).inode)", "op": "thumbnail", "error": "\(error)"])
                    }
                }
            }
            lock.lock()
            if current.count + written.count > currentLimit { current = [:] }
            for (uri, stamp) in written { current[uri] = stamp }
            if !written.isEmpty { writtenSeqs.insert(seq); deferred[seq] = nil }
            // Targets added while these were written stay for the next turn.
            let remaining = giveUp ? [] : (waiting[seq] ?? []).filter { !targets.contains($0) }
            waiting[seq] = remaining.isEmpty ? nil : remaining
            lock.unlock()
        }
    }

    /// Why a photo gets no thumbnail now, without that being a failure: its only source is an original this
    /// listing may not download.
    private struct ThumbnailUnavailable: Error { var reason: String }

    /// A photo's PNGs at every size: `reusing` if still of the photo's current version, else from memory,
    /// else rendered from its kept source, else from a source fetched now (and kept).
    private func thumbnails(_ seq: Int64, reusing previous: (identity: String, photoID: String, pngs: [DesktopThumbnailSize: Data])?,
                            mayFetchOriginal: Bool) throws -> (identity: String, photoID: String, pngs: [DesktopThumbnailSize: Data]) {
        guard let photo = try catalog.photo(seq: seq) else {
            throw FilesystemError(.notFound, "photo \(seq) is no longer in the catalog")
        }
        let identity = DesktopThumbnailWriter.identity(of: photo)
        if let previous, previous.identity == identity { return previous }
        lock.lock()
        let remembered = recentPNGs.first { $0.seq == seq && $0.identity == identity }?.pngs
        lock.unlock()
        if let remembered { return (identity, photo.id, remembered) }
        let pending = sources.value(for: seq).flatMap { DesktopThumbnailWriter.identity(of: $0.from) == identity ? $0.data : nil }
        let source = try pending ?? catalog.desktopThumbnailSource(seq: seq) ?? fetchSource(photo, mayFetchOriginal: mayFetchOriginal)
        renderSlots.wait()
        defer { renderSlots.signal() }
        let pngs = try DesktopThumbnailRenderer.pngs(from: source, sizes: options.sizes)
        lock.lock()
        recentPNGs.removeAll { $0.seq == seq }
        recentPNGs.append((seq, identity, pngs))
        if recentPNGs.count > 64 { recentPNGs.removeFirst() }
        lock.unlock()
        return (identity, photo.id, pngs)
    }

    /// Waits until `fetchCeiling` allows one more fetch (its permits go out in the order they were asked for);
    /// throws if the writer stops meanwhile, so unmount never waits out the ceiling.
    private func waitForFetchPermit(_ photo: PhotoRecord) throws {
        lock.lock()
        defer { lock.unlock() }
        guard fetchBucket != nil else { return }
        let wait = fetchBucket?.take(at: clock.now) ?? 0
        guard wait > 0 else { return }
        if !ceilingLogged {
            ceilingLogged = true
            logger.info("desktop thumbnails: fetch ceiling reached, the rest come at its rate", metadata: [
                "ceiling": "\(options.fetchCeiling?.description ?? "")", "op": "thumbnail", "photo": "\(photo.id)"])
        }
        let deadline = DispatchTime.now() + wait
        while !stopped {
            guard DispatchTime.now() < deadline else { return }
            lock.wait(until: deadline)
        }
        throw ThumbnailUnavailable(reason: "the mount is stopping")
    }

    /// What makes a photo's pixels what they are: a replaced original is another image.
    private static func identity(of photo: PhotoRecord) -> String {
        "\(photo.originalURL)|\(photo.etag ?? "")|\(photo.byteSize ?? -1)|\(photo.contentType ?? "")"
    }

    /// A cached original is used only up to this size: it is read whole into memory to be decoded.
    static let largestOriginalSource: Int64 = 64 << 20

    /// The photo's pixels at 256 px at most, from the smallest rendition that is big enough (the original
    /// only when it is cached already, or the photo has no rendition to use and `mayFetchOriginal`), kept
    /// in the library.
    private func fetchSource(_ photo: PhotoRecord, mayFetchOriginal: Bool) throws -> Data {
        let renditions = try catalog.renditions(seq: photo.seq)
        let original = PhotoFilesystem.contentSource(photo).flatMap {
            $0.expectedSize <= DesktopThumbnailWriter.largestOriginalSource ? $0 : nil
        }
        // A cached original or a local file: no request at all.
        let cached = original.map { originals.isAtHand($0) } ?? false
        guard let choice = RenditionChoice.desktopThumbnailSource(
            edge: DesktopThumbnailSize.large.edge, among: renditions, originalURL: photo.originalURL, originalCached: cached)
        else { throw FilesystemError(.notFound, "photo \(photo.id) has no image to make a thumbnail from") }
        if !(choice == .original && cached) { try waitForFetchPermit(photo) }
        let bytes: Data, type: String
        switch choice {
        case .original:
            guard let original else { throw FilesystemError(.notFound, "photo \(photo.id) has no original small enough to use") }
            guard cached || mayFetchOriginal else {
                throw ThumbnailUnavailable(reason: "no rendition, and only a file manager's listing downloads the original")
            }
            // Behind every other download: a person's opens and prefetches go first.
            bytes = try originals.bytes(original, priority: .thumbnailer)
            type = original.contentType
        case .rendition(let rendition):
            // 16 MB: a rendition chosen for a 256 px thumbnail is tens of KB; more is an origin gone wrong.
            let response = try http.get(rendition.url, limit: 16 << 20)
            if let length = response.contentLength, length != Int64(response.body.count) {
                throw ContentError(kind: .truncated(expected: length, received: Int64(response.body.count)),
                                   photoID: photo.id, url: rendition.url)
            }
            bytes = response.body
            type = ImageContentType.normalized(response.contentType ?? "image/jpeg")
        }
        // Kept at 256 px, JPEG quality 90: ~15 KB a photo (100,000 photos: 1.5 GB) where the `n` rendition
        // itself is 25–40 KB; its own EXIF orientation is applied, so what is kept is upright. A PNG is
        // decoded whole, so one over 40 MP (160 MB of pixels) is refused; a JPEG shrinks while it decodes.
        renderSlots.wait()
        defer { renderSlots.signal() }
        let fitted = try VariantRenderer.render(bytes, contentType: type, spec: .fit(DesktopThumbnailSize.large.edge),
                                                outputType: "image/jpeg",
                                                options: RenderOptions(jpegQuality: 90, maxPixels: type == "image/png" ? 40_000_000 : DesktopThumbnailRenderer.maxPixels))
        sources.submit((fitted.data, photo), for: photo.seq)
        return fitted.data
    }
}
