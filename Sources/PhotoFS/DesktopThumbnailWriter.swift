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
    /// How long a listing may wait for its photos' thumbnails, per photo still missing one, and at most.
    /// Measured with the release build on this 2-core machine, loopback origin, folders of 33–34 photos:
    /// 3.7 ms a photo when its 320 px rendition is fetched first (121–133 ms a folder), 2.1 ms when its source
    /// is kept in the library (53–85 ms), nothing once written. 5 ms a photo covers both with room for a
    /// loaded machine, so a first listing finishes its thumbnails before the reply (a file manager looks
    /// right after); 2 s caps what a huge folder can hold `ls` up. Over a WAN, where a fetched source may cost
    /// more (see `parallelJobs`), those left are written as they arrive.
    public var waitPerPhoto: TimeInterval = 0.005
    public var maxWait: TimeInterval = 2
    /// Photos fetched and rendered at once. Rendering is ~2 ms of CPU a photo (measured), a fetch over a WAN
    /// some 40 ms of waiting (not measured yet: the WAN profile is issue 11's): 8 keep the 2 cores busy while
    /// 8 fetches are in flight (an estimated ~5 ms a photo, ~10 at 4), and the origin sees 8 keep-alive
    /// connections for sources of ~30 KB, half what downloads may use.
    public var parallelJobs = 8

    public init(store: DesktopThumbnailStore, mountpoint: String) {
        self.store = store
        self.mountpoint = mountpoint.count > 1 && mountpoint.hasSuffix("/") ? String(mountpoint.dropLast()) : mountpoint
    }
}

/// One file of the mount whose thumbnails should exist: where it is, and what a valid thumbnail says of it.
public struct DesktopThumbnailTarget: Sendable, Equatable {
    public var path: String
    public var seq: Int64
    public var mtime: Int64
    /// The size `stat` shows (nil when not known yet: a sized mount's variant not rendered yet).
    public var size: Int64?
    public var mimeType: String?
    public init(path: String, seq: Int64, mtime: Int64, size: Int64?, mimeType: String?) {
        self.path = path; self.seq = seq; self.mtime = mtime; self.size = size; self.mimeType = mimeType
    }

    /// Every URI file managers name this file by: GLib's, and KDE's on Qt 6 and Qt 5 (one when they agree,
    /// which is unless the name holds `;`, `[` or `]`).
    var uris: [String] { DesktopThumbnailTarget.uris(of: path) }

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
    private let cache: OriginalCache
    private let http: HTTPClient
    private let logger: Logger
    private let pool: PriorityWorkPool<Void>
    private let lock = NSCondition()
    /// Stamps written (or found valid) in this mount's life, by URI: a listing seen again checks nothing.
    /// Emptied when it reaches `currentLimit` (the disk still says what is valid): 50,000 URIs is ~10 MB.
    private var current: [String: DesktopThumbnailStamp] = [:]
    private let currentLimit = 50_000
    /// Photos this mount wrote thumbnails for: a catalog change brings theirs up to date.
    private var writtenSeqs: Set<Int64> = []
    /// Targets waiting for their photo's job, by photo seq.
    private var waiting: [Int64: [DesktopThumbnailTarget]] = [:]
    /// Photos whose thumbnails cannot be made (no source, undecodable): not retried until the catalog changes.
    private var failed: Set<Int64> = []
    /// The last photos' PNGs (without Thumb:: chunks), for their other trees' names: 64 × ~70 KB.
    private var recentPNGs: [(seq: Int64, identity: String, pngs: [DesktopThumbnailSize: Data])] = []
    private var recorded: CoalescingWriter<String, String>!
    private var sources: CoalescingWriter<Int64, (data: Data, from: PhotoRecord)>!

    public init(options: DesktopThumbnailOptions, catalog: Catalog, cache: OriginalCache, http: HTTPClient, logger: Logger) {
        self.options = options
        self.catalog = catalog
        self.cache = cache
        self.http = http
        self.logger = logger
        pool = PriorityWorkPool(width: max(1, options.parallelJobs), name: "desktop-thumbnails")
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
        /// Until every one is written or failed (`photofs thumbnails`).
        case all
    }

    /// Makes sure every target gets valid thumbnails. Returns how many photos were still missing theirs
    /// when it stopped waiting.
    @discardableResult
    public func prepare(_ targets: [DesktopThumbnailTarget], wait: Wait) -> Int {
        let deadline: DispatchTime?
        switch wait {
        case .none: deadline = .now()
        case .until(let time): deadline = time
        case .all: deadline = nil
        }
        var queued: [Int64] = []
        lock.lock()
        for target in targets where !failed.contains(target.seq) {
            let missing = target.uris.filter { uri in current[uri] != target.stamp(uri: uri) }
            guard !missing.isEmpty else { continue }
            // Submitted again even when queued: the pool moves a background job ahead for a waiting listing.
            if !queued.contains(target.seq) { queued.append(target.seq) }
            waiting[target.seq, default: []].append(target)
        }
        lock.unlock()
        for seq in queued {
            let priority: PriorityWorkPool<Void>.Priority
            if case .none = wait { priority = .background } else { priority = .user }
            pool.submit(key: String(seq), priority: priority) { [weak self] in self?.work(seq) }
        }
        let seqs = Set(targets.map(\.seq))
        lock.lock()
        defer { lock.unlock() }
        while true {
            let left = seqs.filter { waiting[$0] != nil }.count
            guard left > 0 else { return 0 }
            if let deadline {
                let now = DispatchTime.now()
                guard now < deadline else { return left }
                let seconds = Double(deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1e9
                _ = lock.wait(until: Date().addingTimeInterval(seconds))
            } else {
                lock.wait()
            }
        }
    }

    /// How long a listing of `count` photos without thumbnails waits: per photo, up to `maxWait`; not at all
    /// while earlier listings' work is still queued (an `ls -R` of a big mount would otherwise wait at every
    /// directory; its thumbnails are written in the background instead).
    public func listingWait(forMissing count: Int) -> Wait {
        lock.lock()
        let backlog = waiting.count
        lock.unlock()
        guard backlog < 400 else { return .none }
        return .until(.now() + min(options.maxWait, options.waitPerPhoto * Double(count)))
    }

    /// Whether this mount wrote thumbnails for the photo.
    public func hasWritten(_ seq: Int64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return writtenSeqs.contains(seq)
    }

    /// Whether a target needs writing as far as this mount knows (no disk access).
    public func isKnownCurrent(_ target: DesktopThumbnailTarget) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return failed.contains(target.seq) || target.uris.allSatisfy { current[$0] == target.stamp(uri: $0) }
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

    /// The URIs the library recorded thumbnails for, for these photos (deleted or replaced ones).
    public func recordedURIs(photoIDs: [String]) -> [String] {
        recorded.flush()
        return ((try? catalog.desktopThumbnailURIs(photoIDs: photoIDs)) ?? [:]).values.flatMap { $0 }
    }

    /// The catalog changed: photos that failed may have a source now, and PNGs may be of replaced photos.
    public func catalogChanged() {
        lock.lock()
        failed = []
        recentPNGs = []
        lock.unlock()
    }

    /// Writes pending records now and stops the worker threads (at unmount).
    public func stop() {
        pool.stop()
        recorded.stop()
        sources.stop()
    }

    /// Writes pending records now (tests flush, then assert).
    public func flush() {
        recorded.flush()
        sources.flush()
    }

    // MARK: One photo

    private func work(_ seq: Int64) {
        var made: (photoID: String, pngs: [DesktopThumbnailSize: Data])?
        while true {
            lock.lock()
            let targets = waiting[seq] ?? []
            lock.unlock()
            if targets.isEmpty { break }
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
            if !toWrite.isEmpty, made == nil {
                do {
                    made = try thumbnails(seq)
                } catch {
                    logger.warning("no desktop thumbnail", metadata: ["inode": "\(Node.photo(seq: seq).inode)",
                                                                      "op": "thumbnail", "error": "\(error)"])
                    lock.lock()
                    failed.insert(seq)
                    waiting[seq] = nil
                    lock.broadcast()
                    lock.unlock()
                    return
                }
            }
            if let made {
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
            if !written.isEmpty { writtenSeqs.insert(seq) }
            // Targets added while these were written stay for the next turn.
            let remaining = (waiting[seq] ?? []).dropFirst(targets.count)
            waiting[seq] = remaining.isEmpty ? nil : Array(remaining)
            lock.broadcast()
            lock.unlock()
        }
    }

    /// A photo's PNGs at every size: from memory, else rendered from its kept source, else from a source
    /// fetched now (and kept).
    private func thumbnails(_ seq: Int64) throws -> (photoID: String, pngs: [DesktopThumbnailSize: Data]) {
        guard let photo = try catalog.photo(seq: seq) else {
            throw FilesystemError(.notFound, "photo \(seq) is no longer in the catalog")
        }
        let identity = DesktopThumbnailWriter.identity(of: photo)
        lock.lock()
        let remembered = recentPNGs.first { $0.seq == seq && $0.identity == identity }?.pngs
        lock.unlock()
        if let remembered { return (photo.id, remembered) }
        let pending = sources.value(for: seq).flatMap { DesktopThumbnailWriter.identity(of: $0.from) == identity ? $0.data : nil }
        let source = try pending ?? catalog.desktopThumbnailSource(seq: seq) ?? fetchSource(photo)
        let pngs = try DesktopThumbnailRenderer.pngs(from: source, sizes: options.sizes)
        lock.lock()
        recentPNGs.removeAll { $0.seq == seq }
        recentPNGs.append((seq, identity, pngs))
        if recentPNGs.count > 64 { recentPNGs.removeFirst() }
        lock.unlock()
        return (photo.id, pngs)
    }

    /// What makes a photo's pixels what they are: a replaced original is another image.
    private static func identity(of photo: PhotoRecord) -> String {
        "\(photo.originalURL)|\(photo.etag ?? "")|\(photo.byteSize ?? -1)|\(photo.contentType ?? "")"
    }

    /// The photo's pixels at 256 px at most, from the smallest rendition that is big enough (the original
    /// only when it is cached already, or the photo has no rendition to use), kept in the library.
    private func fetchSource(_ photo: PhotoRecord) throws -> Data {
        let renditions = try catalog.renditions(seq: photo.seq)
        let original = PhotoFilesystem.contentSource(photo)
        let cached = original.flatMap { cache.cachedPath(for: $0) } != nil
        guard let choice = RenditionChoice.desktopThumbnailSource(
            edge: DesktopThumbnailSize.large.edge, among: renditions, originalURL: photo.originalURL, originalCached: cached)
        else { throw FilesystemError(.notFound, "photo \(photo.id) has no image to make a thumbnail from") }
        let bytes: Data, type: String
        switch choice {
        case .original:
            guard let original else { throw FilesystemError(.notFound, "photo \(photo.id) is not available") }
            bytes = try cache.fetchBytes(original)
            type = original.contentType
        case .rendition(let rendition):
            // 16 MB: a rendition chosen for a 256 px thumbnail is tens of KB; more is an origin gone wrong.
            let response = try http.get(rendition.url, limit: 16 << 20)
            guard response.status == 200 else {
                throw ContentError(kind: .httpStatus(response.status), photoID: photo.id, url: rendition.url)
            }
            if let length = response.contentLength, length != Int64(response.body.count) {
                throw ContentError(kind: .truncated(expected: length, received: Int64(response.body.count)),
                                   photoID: photo.id, url: rendition.url)
            }
            bytes = response.body
            type = ImageContentType.normalized(response.contentType ?? "image/jpeg")
        }
        // Kept at 256 px, JPEG quality 90: ~15 KB a photo (100,000 photos: 1.5 GB) where the `n` rendition
        // itself is 25–40 KB; its own EXIF orientation is applied, so what is kept is upright.
        let fitted = try VariantRenderer.render(bytes, contentType: type, spec: .fit(DesktopThumbnailSize.large.edge),
                                                outputType: "image/jpeg", options: RenderOptions(jpegQuality: 90))
        sources.submit((fitted.data, photo), for: photo.seq)
        return fitted.data
    }
}
