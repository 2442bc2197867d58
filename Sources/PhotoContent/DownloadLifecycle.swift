// The life of one photo download as a pure state machine: what each network event means for the bytes
// stored so far, with no I/O, so every path (resume, restart, wrong size or type) is unit-tested.
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
    public private(set) var phase: Phase = .waiting
    /// Bytes stored contiguously from offset 0: readers may be served anything below this.
    public private(set) var received: Int64 = 0
    /// Where the current response's bytes go (a resumed response starts at `received`).
    private var writeOffset: Int64 = 0

    public init(expectedSize: Int64, expectedType: String) {
        self.expectedSize = expectedSize
        self.expectedType = ImageContentType.normalized(expectedType)
    }

    /// The Range header for the next attempt: resume where the stored bytes end.
    public var rangeHeader: String? { received > 0 ? "Range: bytes=\(received)-" : nil }

    public var isFinished: Bool {
        switch phase {
        case .complete, .failed: return true
        case .waiting, .receiving: return false
        }
    }

    /// A 2xx response began. Returns the file offset its body is written at, or why it must be refused.
    /// - 206 must continue exactly where the stored bytes end, with the catalog's total size.
    /// - 200 is the whole photo again: stored bytes are overwritten from 0 (same bytes, if the origin did not
    ///   change the photo; if it did, its size or type no longer match and this refuses it).
    public mutating func responseBegan(status: Int, contentType: String?, contentLength: Int64?,
                                       contentRange: String?) -> Result<Int64, ContentError.Kind> {
        let type = ImageContentType.normalized(contentType ?? "")
        guard type == expectedType else { return refuse(.wrongContentType(contentType ?? "none")) }
        if status == 206 {
            guard let range = DownloadLifecycle.parseContentRange(contentRange), range.start == received,
                  range.total == expectedSize else {
                return refuse(.sizeMismatch(expected: expectedSize, received: DownloadLifecycle.parseContentRange(contentRange)?.total ?? -1))
            }
            writeOffset = received
        } else {
            if let contentLength, contentLength != expectedSize {
                return refuse(.sizeMismatch(expected: expectedSize, received: contentLength))
            }
            writeOffset = 0
            received = 0
        }
        phase = .receiving
        return .success(writeOffset)
    }

    /// `count` more body bytes were stored at the write offset. Refuses bytes past the expected size.
    public mutating func stored(_ count: Int) -> Result<Void, ContentError.Kind> {
        // Checked arithmetic: the expected size comes from the catalog and may be near Int64.max.
        let (end, overflow) = writeOffset.addingReportingOverflow(Int64(count))
        guard !overflow, end <= expectedSize else {
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

    /// "bytes 100-199/1000" → (100, 1000)
    static func parseContentRange(_ header: String?) -> (start: Int64, total: Int64)? {
        guard let header, header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst(6).split(separator: "/")
        guard parts.count == 2, let total = Int64(parts[1]),
              let start = parts[0].split(separator: "-").first.flatMap({ Int64($0) }) else { return nil }
        return (start, total)
    }
}
