// What `photofs cache stats` shows, read from a cache directory whose files anyone may have edited.
import Foundation

/// A cache directory's photos, bytes, bound and counters, and the lines `photofs cache stats` prints for
/// them. Every number here comes from files a user or another program may have written (`statistics.json`
/// with `Int.max` counters, a `limit` of `-9223372036854775808`, sparse files claiming exabytes), so every
/// sum saturates, every file is read without following a symlink and with a size limit, and nothing
/// negative reaches a formatter.
public struct CacheReport: Equatable, Sendable {
    public var directory: String
    /// Files under names photofs writes in `originals/`.
    public var photos: Int
    /// Prefixes of photos whose readers stopped early (a header scan), in `partial/`: they count against the
    /// limit like whole photos.
    public var partials: Int
    public var partialBytes: Int64
    /// The sizes of both added, saturating at `Int64.max`.
    public var bytes: Int64
    /// The bound the last mount used, when `limit` holds a number of at least 0.
    public var limit: Int64?
    /// The counters of `statistics.json`, when it decodes (negative counters read as 0).
    public var statistics: CacheStatistics?

    public init(directory: String, photos: Int, partials: Int = 0, partialBytes: Int64 = 0, bytes: Int64, limit: Int64?,
                statistics: CacheStatistics?) {
        self.directory = directory
        self.photos = photos
        self.partials = partials
        self.partialBytes = partialBytes
        self.bytes = bytes
        self.limit = limit
        self.statistics = statistics
    }

    /// Reads `directory` as `OriginalCache` lays it out. Never blocks on a FIFO nor reads a device behind a
    /// planted symlink (`CacheDirectory.readSmallFile`).
    public static func read(directory: String) -> CacheReport {
        let (photos, wholeBytes) = usage(ofOriginals: directory + "/originals")
        let (partials, partialBytes) = usage(ofOriginals: directory + "/partial")
        // 64 bytes: the longest Int64 is 20 characters; anything longer is not a limit photofs wrote.
        let limit = CacheDirectory.readSmallFile(directory + "/limit", limit: 64)
            .flatMap { Int64(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
            .flatMap { $0 >= 0 ? $0 : nil }
        // 64 KiB: the limit OriginalCache reads the same file with.
        let statistics = CacheDirectory.readSmallFile(directory + "/statistics.json", limit: 64 << 10)
            .flatMap { try? JSONDecoder().decode(CacheStatistics.self, from: $0) }
        return CacheReport(directory: directory, photos: photos, partials: partials, partialBytes: partialBytes,
                           bytes: wholeBytes.saturatingAdd(partialBytes), limit: limit, statistics: statistics)
    }

    /// How many regular files under names photofs writes `path` holds (`originals/` or `partial/`), and their
    /// bytes (saturating).
    public static func usage(ofOriginals path: String) -> (count: Int, bytes: Int64) {
        var count = 0
        var bytes: Int64 = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where CacheDirectory.isEntryName(name) {
            var info = stat()
            guard lstat(path + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            count = count.saturatingAdd(1)
            bytes = bytes.saturatingAdd(max(0, Int64(info.st_size)))
        }
        return (count, bytes)
    }

    /// What `photofs cache stats` prints, one line each.
    public var lines: [String] {
        var lines = ["cache: \(directory)", "photos: \(photos)",
                     "partial: \(partials) (\(CacheReport.binary(partialBytes)))",
                     "bytes: \(bytes) (\(CacheReport.binary(bytes)))"]
        if let limit { lines.append("limit: \(limit) (\(CacheReport.binary(limit)))") }
        if let statistics {
            let rate = statistics.hitRate.map { String(format: "%.1f%%", $0) } ?? "n/a"
            lines.append("opens: \(statistics.opens), hit rate: \(rate), downloaded: \(statistics.downloadedBytes) bytes, "
                         + "evictions: \(statistics.evictions)")
        }
        return lines
    }

    /// "1.5 GiB"; a negative count (which no caller passes) shows as 0 rather than reaching the formatter.
    static func binary(_ bytes: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: max(0, bytes), countStyle: .binary)
    }
}

extension CacheStatistics {
    /// Opens counted, hits plus misses, saturating: both at `Int.max` in a hand-edited file must not trap.
    public var opens: Int { max(0, hits).saturatingAdd(max(0, misses)) }

    /// The percentage of opens served from the cache, 0 to 100; nil before any open. Computed in Double from
    /// the two counters (not from `opens`, which may have saturated), so it stays a true ratio.
    public var hitRate: Double? {
        let hits = Double(max(0, hits)), misses = Double(max(0, misses))
        guard hits + misses > 0 else { return nil }
        return 100 * hits / (hits + misses)
    }
}
