// Reads what an import needs of one image file: its first 128 KiB (EXIF, size, partial hash), checked.
import Foundation
import PhotoContent

/// One image file read for import.
public struct FileReading: Sendable {
    public var file: WalkedFile
    public var partialHash: String
    public var exif: ExifFields
    public var headerSize: (width: Int, height: Int)?
}

public struct FileReadFailure: Error, CustomStringConvertible {
    public var description: String
    /// The file was read and what it holds is not an image photofs can take (empty, corrupt, truncated, another
    /// kind): it stays so until it changes. False when it could not be read, or changed meanwhile.
    public var isAboutContent = false
}

public enum PhotoFileReader {
    /// What this reader refuses, as a number: a file refused by another (`RefusedFolderFile.reader`) is read
    /// again. Raise it whenever the reader takes a file it refused before (a new kind, a new way to read one).
    public static let version = 1

    /// The end markers are looked for in this many last bytes; beyond, a full decode decides (see `read`).
    static let tailBytes = 4096

    /// Opens the file, reads its first `ContentHash.prefixBytes`, takes its kind from its first bytes (the
    /// reading's `file.kind`: a HEIC named `.jpg` is a HEIC), checks its end (JPEG's EOI, PNG's IEND), reads
    /// EXIF (libexif; libheif for HEIC; a PNG's eXIf chunk) and the pixel size, and checks that it did not
    /// change meanwhile. Throws a failure naming what is wrong: empty, no image its bytes say, truncated, without
    /// a primary image, changed while read, unreadable.
    public static func read(_ file: WalkedFile) throws -> FileReading {
        // O_NONBLOCK: a name replaced by a FIFO since the walk must not block the import (it then fails the
        // regular-file check below); reads of a regular file ignore it.
        let fd = open(file.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw FileReadFailure(description: "cannot be opened: \(FolderWalk.lastError(or: "unreadable"))") }
        defer { close(fd) }
        var before = stat()
        guard fstat(fd, &before) == 0 else { throw FileReadFailure(description: "cannot be read") }
        // Another file than the walk saw (a FIFO, a new file at the name) is not judged for its content.
        guard before.st_mode & S_IFMT == S_IFREG, UInt64(before.st_ino) == file.inode else {
            throw FileReadFailure(description: "changed during the import; the next import takes it")
        }
        guard before.st_size > 0 else { throw FileReadFailure(description: "empty file (0 bytes)", isAboutContent: true) }
        guard Int64(before.st_size) == file.size else {
            throw FileReadFailure(description: "changed during the import; the next import takes it")
        }
        let prefix = try readBytes(fd, at: 0, count: ContentHash.prefixBytes)
        // The kind its bytes say (one at most: the three signatures differ), whatever its name says: its content
        // type and served name follow them; bytes of no image kind are no image.
        guard let actual = ImageFileKind.fromBytes(prefix) else {
            throw FileReadFailure(description: "not a \(file.kind.rawValue.uppercased()) file (its first bytes say otherwise)",
                                  isAboutContent: true)
        }
        var file = file
        file.kind = actual
        let size = Int64(before.st_size)
        var exif = ExifFields()
        var headerSize: (width: Int, height: Int)?
        switch file.kind {
        case .jpeg:
            exif = ExifReader.fields(from: prefix)
            headerSize = ImageHeaderSize.jpeg(prefix)
            // Decoded to check, when the first bytes' segments hold no frame header (rare: an APP segment of more
            // than 128 KiB before it; or corrupt: a segment's length runs past the file's end, which a trial's
            // file ending in an end marker had, imported to fail every render) or when no end-of-image marker
            // ends the file: truncated, or data appended after the image (a phone's motion photo carries its
            // video there). Only a decode tells them apart; it is rare enough. The decoder stops at the image's
            // end, so the first `decodeCheckBytes` are enough: a 3 GiB file of a photo and zeros (a download never
            // finished) took two 1 GiB buffers.
            if try headerSize == nil || !endsWith(fd, size: size, marker: [0xFF, 0xD9]) {
                let whole = try readBytes(fd, at: 0, count: Int(min(size, Int64(decodeCheckBytes))))
                // Beyond the check's bytes a failed decode proves nothing (the image may go on): such a file is taken.
                do { _ = try ImageCodec.decodeJPEG(Data(whole), scaleDenominator: 8) } catch where size <= Int64(decodeCheckBytes) {
                    throw FileReadFailure(description: "a truncated or corrupt JPEG (\(error))", isAboutContent: true)
                } catch {}
            }
        case .png:
            headerSize = ImageHeaderSize.png(prefix)
            guard headerSize != nil else { throw FileReadFailure(description: "a corrupt PNG (no IHDR)", isAboutContent: true) }
            if let block = try PNGExif.block(prefix: prefix, size: size, read: { try readBytes(fd, at: $0, count: $1) }) {
                exif = ExifReader.fields(from: block)
            }
            guard try endsWith(fd, size: size, marker: Array("IEND".utf8)) else {
                throw FileReadFailure(description: "a truncated PNG (no IEND chunk at its end)", isAboutContent: true)
            }
        case .heic:
            do {
                // The file already opened and checked, not its name again: libheif opens what it is given.
                let reading = try HeifReader.read(path: "/proc/self/fd/\(fd)")
                exif = reading.exif
                headerSize = (reading.width, reading.height)
            } catch {
                throw FileReadFailure(description: "\(error)", isAboutContent: (error as? HeifReader.Failure)?.isAboutContent ?? false)
            }
        case .video, .raw, .other:
            throw FileReadFailure(description: "not an image", isAboutContent: true)
        }
        var after = stat()
        guard fstat(fd, &after) == 0, after.st_size == before.st_size, after.st_mtim.tv_sec == before.st_mtim.tv_sec,
              after.st_mtim.tv_nsec == before.st_mtim.tv_nsec else {
            throw FileReadFailure(description: "changed while it was read; the next import takes it")
        }
        return FileReading(file: file, partialHash: ContentHash.partial(size: size, prefix: prefix), exif: exif,
                           headerSize: headerSize)
    }

    /// The most of a JPEG without an end marker at its end that is decoded to tell a truncated file from one with
    /// data after the image: 64 MiB holds the largest camera JPEGs (a 100-megapixel frame at the best quality is
    /// ~60 MB); eight files read at once then hold at most 1 GiB.
    static let decodeCheckBytes = 64 << 20

    static func readBytes(_ fd: Int32, at offset: Int64, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(0, count))
        var done = 0
        while done < buffer.count {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(done)) }
            if n < 0 { if errno == EINTR { continue }; throw FileReadFailure(description: "read failed: \(FolderWalk.lastError(or: "I/O error"))") }
            if n == 0 { break }
            done += n
        }
        buffer.removeSubrange(done...)
        return buffer
    }

    /// Whether `marker` occurs in the file's last `tailBytes` (a few bytes of padding after it are common).
    static func endsWith(_ fd: Int32, size: Int64, marker: [UInt8]) throws -> Bool {
        let start = max(0, size - Int64(tailBytes))
        let tail = try readBytes(fd, at: start, count: Int(size - start))
        guard tail.count >= marker.count else { return false }
        for index in stride(from: tail.count - marker.count, through: 0, by: -1)
        where tail[index..<index + marker.count].elementsEqual(marker) {
            return true
        }
        return false
    }
}
