// A photo that is a local file (folder imports): read straight from the file with pread, no cache copy.
import Foundation

/// What a mount needs to serve a `file://` photo: its path from the URI, and a check at open that the file is
/// still the one imported (same size and mtime), since its size was promised to `stat` at import.
public enum LocalFileContent {
    /// The path of a `file:///…` URI (percent-escapes decoded); nil for any other URL or a path that is not
    /// absolute, holds NUL, or a `..` segment.
    public static func path(fromFileURI uri: String) -> String? {
        guard uri.hasPrefix("file:///") else { return nil }
        // Most URIs have no escape: the path is the rest, checked in place, over the string's own bytes (every
        // open of a local photo asks, twice: through the generic `UTF8View` the checks were ~1.4 µs each).
        var uri = uri
        let plain = uri.withUTF8 { bytes -> String?? in
            plainPath(bytes).map { $0.map { String(decoding: $0, as: UTF8.self) } }
        }
        if let plain { return plain }
        var bytes: [UInt8] = []
        let source = Array(uri.utf8.dropFirst(7))
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        while index < source.count {
            if source[index] == UInt8(ascii: "%") {
                guard index + 2 < source.count, let high = hex(source[index + 1]), let low = hex(source[index + 2]) else { return nil }
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        guard !bytes.contains(0), !hasParentSegment(bytes[...]) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The path of a `file:///…` URI's bytes when it has no escape, checked in place: nil when it has one (to
    /// decode), .some(nil) when the path holds NUL or a `..` segment.
    private static func plainPath(_ uri: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>?? {
        guard uri.starts(with: "file:///".utf8), !uri.contains(UInt8(ascii: "%")) else { return .none }
        let path = UnsafeBufferPointer(rebasing: uri[7...])
        guard !path.contains(0), !hasParentSegment(path) else { return .some(nil) }
        return .some(path)
    }

    /// Whether a path has a `..` segment.
    private static func hasParentSegment<Bytes: Collection>(_ path: Bytes) -> Bool where Bytes.Element == UInt8 {
        var segmentLength = 0
        var dots = 0
        for byte in path {
            if byte == UInt8(ascii: "/") {
                if segmentLength == 2 && dots == 2 { return true }
                segmentLength = 0
                dots = 0
            } else {
                segmentLength += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return segmentLength == 2 && dots == 2
    }

    /// The etag a folder import records: content (the partial hash), size and mtime. A rename keeps all three
    /// (so variants and thumbnails stay); any edit moves the mtime.
    public static func etag(partialHash: String, size: Int64, mtimeNanos: Int64) -> String {
        "\(partialHash.prefix(16))-\(size)-\(mtimeNanos)"
    }

    /// The mtime an etag made by `etag(partialHash:size:mtimeNanos:)` holds, given the size it was made with
    /// (the hash is hex, the mtime may be negative: "…-1234--5"); nil for any other etag.
    public static func modifiedNanos(fromETag etag: String?, size: Int64) -> Int64? {
        // Byte by byte (every open of a local photo asks): the `Character` search and `hasPrefix` of a
        // substring were ~1.3 µs of a 9 µs open (`perf`).
        guard var etag else { return nil }
        let sizePart = Array("\(size)-".utf8)
        return etag.withUTF8 { bytes -> Int64? in
            guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")) else { return nil }
            let rest = UnsafeBufferPointer(rebasing: bytes[(dash + 1)...])
            guard rest.starts(with: sizePart) else { return nil }
            return Int64(String(decoding: UnsafeBufferPointer(rebasing: rest[sizePart.count...]), as: UTF8.self))
        }
    }

    /// Opens the file behind a local photo for reading, refusing it when it is no longer the imported file:
    /// another size or mtime ("changed since import: run photofs import folder again"), or not there.
    /// The mtime is the one the import's etag holds (no check when the etag is not a folder import's).
    /// Also the file it opened as the check's `fstat` saw it.
    static func open(_ source: ContentSource, path: String) throws -> (file: OpenFile, identity: LocalFileIdentity) {
        // O_NONBLOCK: a name replaced by a FIFO must fail the check below, not hold a FUSE thread in open(2).
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw ContentError(kind: .localIO("\(path): \(String(cString: strerror(errno))); run photofs import folder again "
                                              + "(with --forget for a folder that is gone for good)"),
                               photoID: source.photoID, url: source.url)
        }
        let file = OpenFile(fd: fd)
        return (file, try check(file, source, path: path))
    }

    /// Whether a local photo's path still names `file`, unchanged: one `stat`, nothing opened (an idle
    /// passed-through backing of `file` is then reused, `PassThroughPolicy`). The caller has checked that the
    /// photo is the version the backing was registered for, whose file passed the import's size and mtime
    /// check then; `file` unchanged since, it still does. False for anything else, including a URI that is not
    /// a local file's.
    public static func stillNames(_ file: LocalFileIdentity, _ source: ContentSource) -> Bool {
        var info = stat()
        // The path read in place from the URI's own bytes when it has no escapes: checked plain, it is the URI's
        // C string from its 8th byte ("file://" before it) to its end (a `String` built for it, then handed to
        // `stat`, was a third of this check's 2.8 µs).
        var uri = source.url
        let plain = uri.withUTF8 { plainPath($0).map { $0 != nil } }
        let named = plain.map { valid in valid && uri.withCString { stat($0 + 7, &info) } == 0 }
            ?? path(fromFileURI: source.url).map { stat($0, &info) == 0 }
        guard named == true else { return false }
        return info.st_mode & S_IFMT == S_IFREG && LocalFileIdentity(info) == file
    }

    /// Whether the open file is still the imported version (size and mtime); the file as `fstat` saw it.
    @discardableResult
    static func check(_ file: OpenFile, _ source: ContentSource, path: String) throws -> LocalFileIdentity {
        var info = stat()
        guard fstat(file.fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw ContentError(kind: .localIO("\(path): cannot be read"), photoID: source.photoID, url: source.url)
        }
        let mtime = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
        let imported = modifiedNanos(fromETag: source.etag, size: source.expectedSize)
        guard Int64(info.st_size) == source.expectedSize, imported.map({ $0 == mtime }) ?? true else {
            throw ContentError(kind: .localIO("\(path) changed since import: run photofs import folder again"),
                               photoID: source.photoID, url: source.url)
        }
        return LocalFileIdentity(info)
    }
}

/// A file as `stat` sees it: which file (device and inode) and which version (size and mtime). Two paths, or
/// one path at two times, name the same unchanged file when these are equal.
public struct LocalFileIdentity: Equatable, Sendable {
    public let device: UInt64
    public let inode: UInt64
    public let size: Int64
    public let modifiedNanos: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modifiedNanos: Int64) {
        self.device = device; self.inode = inode; self.size = size; self.modifiedNanos = modifiedNanos
    }

    init(_ info: stat) {
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                  modifiedNanos: Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec))
    }
}

/// Local photos as an `OriginalAccess`: every call opens the file and checks it is the imported version; no
/// byte is copied into the cache and no request is made.
public final class LocalFileOriginals: OriginalAccess, @unchecked Sendable {
    public init() {}

    private func path(_ source: ContentSource) throws -> String {
        guard let path = LocalFileContent.path(fromFileURI: source.url) else {
            throw ContentError(kind: .localIO("not a local file URI"), photoID: source.photoID, url: source.url)
        }
        return path
    }

    public func open(_ source: ContentSource, thumbnailer: String?) throws -> ContentHandle {
        let opened = try LocalFileContent.open(source, path: try path(source))
        return ContentHandle(cachedFile: opened.file, key: OriginalCache.key(for: source), size: source.expectedSize,
                             photoID: source.photoID, localFile: opened.identity)
    }

    public func release(_ handle: ContentHandle) {}

    /// The file itself, once checked. The renderer reads it later (after admission): a file edited in between
    /// is caught there, since `bytes` checks again.
    public func wholeFile(_ source: ContentSource) throws -> String {
        let path = try path(source)
        _ = try LocalFileContent.open(source, path: path)
        return path
    }

    /// The whole file, checked before and after the read: an edit while it is read (the mtime moves) is refused
    /// rather than decoded half old, half new.
    public func bytes(_ source: ContentSource, priority: DownloadPriority) throws -> Data {
        let path = try path(source)
        let file = try LocalFileContent.open(source, path: path).file
        guard source.expectedSize <= Download.memoryLimit,
              let data = CacheDirectory.readAll(fd: file.fd, count: Int(source.expectedSize)) else {
            throw ContentError(kind: .localIO("\(path): cannot be read whole"), photoID: source.photoID, url: source.url)
        }
        try LocalFileContent.check(file, source, path: path)
        return data
    }

    public func isAtHand(_ source: ContentSource) -> Bool { true }
    public func prefetch(_ source: ContentSource) {}
}
