// Whether one open handle reads its photo whole (a viewer, `cat`) or only looks at it (a header scan): the
// first warms the next photos of its folder, the second must not pull a library's bytes ahead of itself.
import Foundation
import PhotoContent

/// What one handle's reads have covered. A handle reads its photo whole once its reads reach
/// `min(size, threshold)` and at least half the bytes before that point were read (so one read near the end —
/// a trailer check — is not reading the photo whole).
///
/// Why reading and not opening: warming the next photos on every open made a header scan (open, read 64 KiB,
/// close: `exiftool -fast`, `file`, an import scan) download photos ahead of itself — 173 MB from the origin
/// for 2.1 MB read over 32 camera originals. A viewer reads each photo whole, so its next photos are still
/// warmed while the person looks at this one.
public struct WholeReading: Equatable, Sendable {
    public let size: Int64
    /// 2 MiB (`DownloadDemand.wholeReaderBytes`): the same line the download uses to ask for the rest of a
    /// photo. No header reader we measured reads past 1.25 MiB (Pillow through a 1 MiB buffer).
    public let threshold: Int64
    /// The end of the furthest read.
    public private(set) var furthest: Int64 = 0
    /// Bytes read, summed over reads (a byte read twice counts twice; a reader that loops over a header
    /// still never reaches `threshold` with `furthest`).
    public private(set) var bytesRead: Int64 = 0
    public private(set) var isWhole = false

    public init(size: Int64, threshold: Int64 = DownloadDemand.wholeReaderBytes) {
        self.size = max(0, size)
        self.threshold = max(1, threshold)
    }

    /// Records a read of `count` bytes at `offset` (as asked: what lies past the end is not counted). Returns
    /// true the one time the reads first make a whole reader.
    public mutating func read(offset: Int64, count: Int) -> Bool {
        guard offset >= 0, offset < size, count > 0 else { return false }
        let end = min(size, offset.addingReportingOverflow(Int64(count)).overflow ? size : offset + Int64(count))
        furthest = max(furthest, end)
        bytesRead = bytesRead.addingReportingOverflow(end - offset).overflow ? .max : bytesRead + (end - offset)
        guard !isWhole else { return false }
        let line = min(size, threshold)
        guard furthest >= line, bytesRead >= line / 2 else { return false }
        isWhole = true
        return true
    }
}
