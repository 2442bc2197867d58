// The life of one photo download as a pure state machine: what each network event means for the bytes
// stored so far, with no I/O, so every path (resume, restart, wrong size, type or version) is unit-tested.
import Foundation
import PhotoCatalog

public struct DownloadLifecycle: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        /// No response yet (queued, connecting, or between attempts).
        case waiting
        /// A verified response is arriving; `received` bytes from offset 0 are stored.
        case receiving
        case complete
        case failed(ContentError.Kind)
    }

    public let expectedSize: Int64
    public let expectedType: String
    /// The catalog's ETag for the photo (nil: the import saw none).
    public let expectedETag: String?
    public private(set) var phase: Phase = .waiting
    /// Bytes stored contiguously from offset 0: readers may be served anything below this.
    public private(set) var received: Int64 = 0
    /// Where the current response's bytes go (a resumed response starts at `received`).
    private var writeOffset: Int64 = 0
    /// The end (exclusive) of the current answer's bytes: the photo's size for a 200, the Content-Range's end
    /// for a 206. A request for a range ends without completing the photo, and that is not a truncation.
    public private(set) var answerEnd: Int64 = 0
    /// Whether an answer was accepted yet, and the ETag it carried (nil: none): every later answer must be
    /// the same version of the photo, because readers may already hold `[0, received)` of it.
    private var firstAnswerAccepted = false
    public private(set) var firstAnswerETag: String?

    public init(expectedSize: Int64, expectedType: String, expectedETag: String? = nil) {
        self.expectedSize = expectedSize
        self.expectedType = ImageContentType.normalized(expectedType)
        self.expectedETag = DownloadLifecycle.normalizedETag(expectedETag)
    }

    /// A download resumed from a verified prefix kept in the cache (`PartialEntry`): `received` bytes of the
    /// version `answerETag` (the first answer's, recorded with them) are stored, as if that answer had just
    /// ended. Every later answer must be that version, exactly as within one run.
    public init(expectedSize: Int64, expectedType: String, expectedETag: String? = nil, resumingAt received: Int64,
                answerETag: String?) {
        self.init(expectedSize: expectedSize, expectedType: expectedType, expectedETag: expectedETag)
        let kept = min(max(0, received), max(0, expectedSize))
        self.received = kept
        writeOffset = kept
        answerEnd = kept
        firstAnswerAccepted = kept > 0
        firstAnswerETag = kept > 0 ? DownloadLifecycle.normalizedETag(answerETag) : nil
    }

    /// Whether an answer was verified (or a verified prefix restored): an opener need not wait for another.
    public var isVerified: Bool { firstAnswerAccepted }

    /// Whether the current answer delivered every byte it announced.
    public var answerDelivered: Bool { received >= answerEnd }

    /// The Range header for the next attempt: resume where the stored bytes end.
    public var rangeHeader: String? { rangeHeader(to: expectedSize) }

    /// The Range header asking for `[received, end)`: nil for the whole photo from its first byte, "bytes=a-"
    /// for the rest (also for an end at or before the stored bytes: never a header that asks for nothing),
    /// "bytes=a-b" (b inclusive, RFC 9110 §14.1.2) for less.
    public func rangeHeader(to end: Int64) -> String? {
        if end >= expectedSize || end <= received { return received > 0 ? "Range: bytes=\(received)-" : nil }
        return "Range: bytes=\(received)-\(end - 1)"
    }

    /// The If-Range header sent with `rangeHeader`: the catalog's ETag, else the first answer's, so an origin
    /// whose bytes changed answers 200 (refused below) rather than a 206 of the new bytes. Only a strong tag:
    /// RFC 9110 §13.1.5 forbids a weak one there (an origin would never match it, so every resume would be a
    /// whole new answer); without one the 206's own ETag is still checked.
    public var ifRangeHeader: String? {
        guard rangeHeader != nil else { return nil }
        let strong = [expectedETag, firstAnswerETag].compactMap { $0 }.first { !$0.hasPrefix("W/") }
        return strong.map { "If-Range: \($0)" }
    }

    public var isFinished: Bool {
        switch phase {
        case .complete, .failed: return true
        case .waiting, .receiving: return false
        }
    }

    /// A 2xx response began. Returns the file offset its body is written at, or why it must be refused.
    /// - Its ETag, when it has one, must match the catalog's (weak comparison, RFC 9110 §8.8.3.2: the
    ///   question is "which version", and the size check below catches a same-tag different-length body).
    /// - A later answer must be the version of the first: readers may hold `[0, received)` of it already.
    ///   A 206 must carry the first answer's ETag if the first had one (without any ETag on either side
    ///   there is nothing to compare, and the size and Content-Range checks are all we have).
    /// - 206 must continue exactly where the stored bytes end, with the catalog's total size.
    /// - 200 is the whole photo again: stored bytes are overwritten from 0. Once bytes were stored (and so
    ///   may have been served), it must carry the first answer's ETag: a 200 is what an origin sends when
    ///   If-Range did not match, i.e. the photo changed, and rewriting from 0 would hand readers a mix.
    ///   Without ETags on both it fails too: the download cannot prove the bytes are the same.
    public mutating func responseBegan(status: Int, contentType: String?, contentLength: Int64?,
                                       contentRange: String?, etag: String? = nil) -> Result<Int64, ContentError.Kind> {
        let type = ImageContentType.normalized(contentType ?? "")
        guard type == expectedType else { return refuse(.wrongContentType(contentType ?? "none")) }
        let etag = DownloadLifecycle.normalizedETag(etag)
        if let expectedETag, let etag, !DownloadLifecycle.weaklyMatch(expectedETag, etag) {
            return refuse(.changedAtOrigin(expected: expectedETag, received: etag))
        }
        if firstAnswerAccepted {
            // Stored bytes are at stake when this answer continues them (206) or rewrites them (200).
            let storedBytesAtStake = status == 206 || received > 0
            let sameVersion: Bool
            if let first = firstAnswerETag, let etag {
                sameVersion = DownloadLifecycle.weaklyMatch(first, etag)
            } else if firstAnswerETag != nil {
                sameVersion = !storedBytesAtStake // untagged: unprovable, harmless only with nothing stored
            } else {
                // The first was untagged: a resume has only Content-Range to go by; a restart over stored
                // bytes cannot be proved the same version.
                sameVersion = status == 206 || received == 0
            }
            guard sameVersion else {
                return refuse(.changedAtOrigin(expected: firstAnswerETag ?? "none", received: etag ?? "none"))
            }
        }
        if status == 206 {
            // Any end the origin chose (it may send less than asked), but within the photo.
            guard let range = DownloadLifecycle.parseContentRange(contentRange), range.start == received,
                  range.total == expectedSize else {
                return refuse(.sizeMismatch(expected: expectedSize, received: DownloadLifecycle.parseContentRange(contentRange)?.total ?? -1))
            }
            writeOffset = received
            answerEnd = range.end + 1
        } else {
            if let contentLength, contentLength != expectedSize {
                return refuse(.sizeMismatch(expected: expectedSize, received: contentLength))
            }
            writeOffset = 0
            received = 0
            answerEnd = expectedSize
        }
        if !firstAnswerAccepted {
            firstAnswerAccepted = true
            firstAnswerETag = etag
        }
        phase = .receiving
        return .success(writeOffset)
    }

    /// `count` more body bytes were stored at the write offset. Refuses bytes past the expected size, or past
    /// the end of the range the answer announced (a 206 whose body outruns its Content-Range).
    public mutating func stored(_ count: Int) -> Result<Void, ContentError.Kind> {
        // Checked arithmetic: the expected size comes from the catalog and may be near Int64.max.
        let (end, overflow) = writeOffset.addingReportingOverflow(Int64(count))
        guard !overflow, end <= expectedSize, end <= answerEnd else {
            return refuse(.sizeMismatch(expected: expectedSize, received: overflow ? .max : end)).map { _ in }
        }
        writeOffset = end
        received = max(received, writeOffset)
        return .success(())
    }

    /// The transfer ended without a transport error. Complete only with every byte.
    public mutating func transferEnded() -> Phase {
        if case .failed = phase { return phase }
        phase = received == expectedSize ? .complete : .waiting
        return phase
    }

    /// An attempt failed; `final` ends the download, otherwise another attempt may resume it.
    public mutating func attemptFailed(_ kind: ContentError.Kind, final: Bool) {
        if case .failed = phase { return }
        phase = final ? .failed(kind) : .waiting
    }

    private mutating func refuse(_ kind: ContentError.Kind) -> Result<Int64, ContentError.Kind> {
        phase = .failed(kind)
        return .failure(kind)
    }

    /// 256 bytes: a real ETag is a quoted hash (Flickr's are 34); a longer one from a hostile origin is cut
    /// before it goes into errors and headers, and two cut tags still compare by their first 256 bytes.
    static let maxETagLength = 256

    /// Trimmed, at most `maxETagLength` bytes; nil for none, empty, or holding control characters (it goes
    /// back out in an If-Range header, where a line break would forge another header).
    static func normalizedETag(_ tag: String?) -> String? {
        guard let trimmed = tag?.trimmingCharacters(in: .whitespaces), !trimmed.isEmpty,
              !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else { return nil }
        return trimmed.utf8.count <= maxETagLength ? trimmed : String(decoding: trimmed.utf8.prefix(maxETagLength), as: UTF8.self)
    }

    /// RFC 9110 §8.8.3.2 weak comparison: the opaque tags are equal, either or both may be marked weak.
    public static func weaklyMatch(_ a: String, _ b: String) -> Bool {
        func opaque(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag) }
        return opaque(a) == opaque(b)
    }

    /// "bytes 100-199/1000" → (100, 199, 1000); nil unless 0 ≤ start ≤ end < total (the header comes from the
    /// network: an end past the photo, or before the start, is refused rather than trusted).
    static func parseContentRange(_ header: String?) -> (start: Int64, end: Int64, total: Int64)? {
        guard let header, header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let total = Int64(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]),
              start >= 0, start <= end, end < total else { return nil }
        return (start, end, total)
    }
}
