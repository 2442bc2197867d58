// A photo that is a local file (folder imports): read straight from the file with pread, no cache copy.
import Foundation

/// What a mount needs to serve a `file://` photo: its path from the URI, and a check at open that the file is
/// still the one imported (same size and mtime), since its size was promised to `stat` at import.
public enum LocalFileContent {
    /// The path of a `file:///…` URI (percent-escapes decoded); nil for any other URL or a path that is not
    /// absolute, holds NUL, or a `..` segment.
    public static func path(fromFileURI uri: String) -> String? {
        guard uri.hasPrefix("file:///") else { return nil }
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
        guard !bytes.contains(0) else { return nil }
        let path = String(decoding: bytes, as: UTF8.self)
        guard !path.split(separator: "/").contains("..") else { return nil }
        return path
    }

    /// The etag a folder import records: content (the partial hash), size and mtime. A rename keeps all three
    /// (so variants and thumbnails stay); any edit moves the mtime.
    public static func etag(partialHash: String, size: Int64, mtimeNanos: Int64) -> String {
        "\(partialHash.prefix(16))-\(size)-\(mtimeNanos)"
    }

    /// Opens the file behind a local photo for reading, refusing it when it is no longer the imported file:
    /// another size or mtime ("changed since import: run photofs import folder again"), or not there.
    static func open(_ source: ContentSource, path: String, modifiedNanos: Int64?) throws -> ContentHandle {
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ContentError(kind: .localIO("\(path): \(String(cString: strerror(errno))); run photofs import folder again"),
                               photoID: source.photoID, url: source.url)
        }
        let file = OpenFile(fd: fd)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ContentError(kind: .localIO("\(path): cannot be read"), photoID: source.photoID, url: source.url)
        }
        let mtime = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
        guard Int64(info.st_size) == source.expectedSize, modifiedNanos.map({ $0 == mtime }) ?? true else {
            throw ContentError(kind: .localIO("\(path) changed since import: run photofs import folder again"),
                               photoID: source.photoID, url: source.url)
        }
        return ContentHandle(cachedFile: file, key: OriginalCache.key(for: source), size: source.expectedSize,
                             photoID: source.photoID)
    }
}

extension OriginalCache {
    /// A local photo's handle: the file itself, checked (see `LocalFileContent.open`); nothing is cached.
    public func openLocalFile(_ source: ContentSource, path: String, modifiedNanos: Int64?) throws -> ContentHandle {
        try LocalFileContent.open(source, path: path, modifiedNanos: modifiedNanos)
    }
}
