// How much of a photo its download asks the origin for next, from who wants its bytes: a reader's reads plus a
// short lookahead, the rest of the photo once a reader reads on past any header or something wants it whole,
// and nothing once nobody is left. Pure (no I/O, no clock), so every path is unit-tested.
import Foundation

/// The demand on one download. The download asks it what to do whenever a request ends (`next`), and while
/// a request runs whether to cut it short (`shouldCut`); opens, closes, reads and whole-photo wants update it.
///
/// Why requests follow reads: a header scan (`exiftool -fast`, `identify -ping`, an import scan) opens a photo,
/// reads its first 64 KiB and closes it. A download of the whole photo on every open made the origin send 83× what
/// such a scan read (32 camera originals: 2.1 MB read, 173 MB sent). So an open asks for the first
/// `firstRequest` bytes only; a reader that reads on gets requests that reach `lookahead` past its furthest
/// read, and once its reads reach `wholeReader` it is reading the photo whole (a viewer, `cat`) and the rest
/// comes in one request, cut short if every reader leaves before it ends.
public struct DownloadDemand: Equatable, Sendable {
    public struct Tuning: Equatable, Sendable {
        /// What an open asks for before any read: 256 KiB. A 64 KiB read(2) reaches the daemon as one 128 KiB
        /// read (the kernel's readahead window), and the same 64 KiB read 8 KiB at a time (exiftool, `identify
        /// -ping`) as reads of 16, 32, 64 and 128 KiB, up to 240 KiB: one request of 256 KiB answers either.
        /// Measured over the WAN profile (40 ms, 100 Mbit/s; bench/wan-notes.md), 32 camera originals read
        /// 8 KiB at a time: 128 KiB sent 0.48 MiB a photo (a second request for the readahead), 256 KiB
        /// 0.25 MiB, 512 KiB 0.50 MiB, all about 60 ms a photo; a whole-photo request cut short at close sent
        /// 0.96 MiB and took 102 ms (each cut closes the connection, so every open paid a new one).
        public var firstRequest: Int64 = 256 << 10
        /// How far past its furthest read a reader reading on is served ahead: 256 KiB, two of the kernel's
        /// reads. Python's buffered open reads st_blksize (1 MiB) at once, which reaches the daemon as 128 KiB
        /// reads one or two at a time (1.125 MiB in all with readahead): a lookahead of 256 KiB keeps what the
        /// origin sends for `PIL.Image.open(p).size` under 1.125 + 0.25 MiB (measured: 1.33 MiB a photo;
        /// 384 KiB measured 1.27 but may reach 1.5), where doubling windows (mountpoint-s3's growth: 256 K,
        /// 512 K, 1 M) would send 1.75 MiB.
        public var lookahead: Int64 = 256 << 10
        /// Reads reaching 2 MiB (or the end of a smaller photo) are a reader reading the photo whole: no header
        /// reader in our measurements reads past 1.25 MiB (Pillow with a 1 MiB buffer).
        public var wholeReader: Int64 = DownloadDemand.wholeReaderBytes
        /// A request nobody wants any more is cut short when more than this is left of it, else finished:
        /// 1 MiB, two round trips at 100 Mbit/s and 40 ms. Cutting closes the connection (the next request pays
        /// its set-up again, one round trip), and what is already in flight arrives anyway (100 Mbit/s × 40 ms
        /// = 500 KB), so cutting a shorter remainder saves little and costs a round trip.
        public var cutAbove: Int64 = 1 << 20
        public init() {}
    }

    /// 2 MiB: see `Tuning.wholeReader`; the filesystem's prefetch uses the same line ("reads photos whole").
    public static let wholeReaderBytes: Int64 = 2 << 20

    /// What the download does next.
    public enum Step: Equatable, Sendable {
        /// Every byte is stored.
        case complete
        /// Ask the origin for bytes `[from, to)`; `to` is the photo's size for "the rest".
        case request(from: Int64, to: Int64)
        /// Readers are open but none waits for bytes past what is stored: no request until one does.
        case idle
        /// Nobody wants more: the bytes stored so far are kept (a verified prefix) and the download ends.
        case park
    }

    public let size: Int64
    public let tuning: Tuning
    /// A prefetch, a render, a desktop thumbnail or a `fetch` wants the whole photo: it completes whatever
    /// readers do.
    public private(set) var keepsWhole = false
    /// Open handles reading through the download.
    public private(set) var readers = 0
    /// The end (exclusive) of the furthest byte a reader asked for, or an open expects to be asked for.
    public private(set) var readEnd: Int64 = 0

    public init(size: Int64, tuning: Tuning = Tuning()) {
        self.size = max(0, size)
        self.tuning = tuning
    }

    /// A handle opened: its first read is expected within `firstRequest`, so that much is asked for now
    /// (the open then waits one round trip for the answer's headers, and the first read finds bytes coming).
    public mutating func opened() {
        readers = readers.saturatingAdd(1)
        readEnd = max(readEnd, min(size, max(0, tuning.firstRequest)))
    }

    /// A handle closed.
    public mutating func closed() {
        readers = max(0, readers - 1)
    }

    /// Something wants the whole photo, whoever reads it.
    public mutating func wantWhole() {
        keepsWhole = true
    }

    /// A reader asked for the bytes up to `end` (exclusive).
    public mutating func read(upTo end: Int64) {
        readEnd = max(readEnd, min(size, max(0, end)))
    }

    /// Whether some reader reads the photo whole: its reads reached `wholeReader` or the end of the photo.
    public var readsWhole: Bool { readEnd >= min(size, max(0, tuning.wholeReader)) && readEnd > tuning.firstRequest }

    /// What to do once the bytes `[0, received)` are stored and no request runs.
    public func next(received: Int64) -> Step {
        guard received < size else { return .complete }
        if keepsWhole { return .request(from: received, to: size) }
        guard readers > 0 else { return .park }
        guard readEnd > received else { return .idle }
        if readsWhole { return .request(from: received, to: size) }
        // Within the open's first request nothing is known beyond it; past it, the reader is reading on.
        let end = readEnd > tuning.firstRequest ? readEnd.saturatingAdd(max(0, tuning.lookahead)) : readEnd
        // A remainder shorter than a lookahead is not worth another round trip later: it comes now.
        return .request(from: received, to: size - end < max(0, tuning.lookahead) ? size : end)
    }

    /// While a request for bytes up to `requestEnd` runs with `[0, received)` stored: whether to stop it now.
    /// Only when nobody wants its bytes any more and more than `cutAbove` of it is left (see `Tuning.cutAbove`).
    public func shouldCut(received: Int64, requestEnd: Int64) -> Bool {
        guard !keepsWhole, readers == 0 else { return false }
        return requestEnd.saturatingAdd(-received) > tuning.cutAbove
    }
}
