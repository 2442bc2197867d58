// A verified prefix of a photo kept in the cache (`partial/<key>`): the bytes that arrived before every reader
// left, and a footer saying which version they are of, so a later open resumes with a Range request.
import Foundation

/// The on-disk form of a partial entry: the prefix's bytes from offset 0 (so a resumed download keeps writing
/// the same file at the same offsets), then a footer:
///
///     etag bytes (0–256) | prefix length u64 | photo size u64 | prefix checksum u64 | etag length u16
///     | footer checksum u64 | "PFSPART1"
///
/// little-endian. Everything in it is read back from a directory anyone with the user's rights can edit, so
/// `decode` trusts nothing: the magic, the footer's own checksum, lengths that add up to the file's size, a
/// prefix shorter than the photo, an ETag without control characters; the caller then checks the photo's
/// size and ETag against the catalog and the prefix against its checksum before serving a byte of it.
public struct PartialEntry: Equatable, Sendable {
    /// Bytes of the photo from offset 0.
    public var prefixLength: Int64
    /// The photo's whole size when the prefix was stored (the catalog's size: the cache key holds it too).
    public var photoSize: Int64
    /// The ETag of the answer the prefix came from (nil: it had none).
    public var etag: String?
    /// `PartialEntry.checksum` of the prefix.
    public var prefixChecksum: UInt64

    public init(prefixLength: Int64, photoSize: Int64, etag: String?, prefixChecksum: UInt64) {
        self.prefixLength = prefixLength; self.photoSize = photoSize; self.etag = etag
        self.prefixChecksum = prefixChecksum
    }

    static let magic = Array("PFSPART1".utf8)
    /// The footer without its ETag: three u64, a u16, the footer checksum and the magic.
    static let fixedLength = 8 + 8 + 8 + 2 + 8 + 8
    /// The longest footer: an ETag is cut to 256 bytes (`DownloadLifecycle.maxETagLength`).
    static let maxFooterLength = fixedLength + DownloadLifecycle.maxETagLength

    /// The footer's bytes (written right after the prefix).
    public func footer() -> Data {
        let tag = Array((etag.flatMap(DownloadLifecycle.normalizedETag) ?? "").utf8)
        var bytes = tag
        PartialEntry.append(UInt64(bitPattern: prefixLength), to: &bytes)
        PartialEntry.append(UInt64(bitPattern: photoSize), to: &bytes)
        PartialEntry.append(prefixChecksum, to: &bytes)
        bytes += [UInt8(tag.count & 0xff), UInt8(tag.count >> 8)]
        let check = bytes.withUnsafeBytes { PartialEntry.checksum($0) }
        PartialEntry.append(check, to: &bytes)
        return Data(bytes + PartialEntry.magic)
    }

    /// The entry a file of `fileSize` bytes ending with `tail` describes, or nil when anything does not add up.
    /// `tail` is the file's last bytes (at most `maxFooterLength` of them are looked at).
    public static func decode(tail: Data, fileSize: Int64) -> PartialEntry? {
        let bytes = [UInt8](tail.suffix(maxFooterLength))
        guard bytes.count >= fixedLength, Array(bytes.suffix(8)) == magic else { return nil }
        let fixed = bytes.count - fixedLength
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        let tagLength = Int(bytes[fixed + 24]) | Int(bytes[fixed + 25]) << 8
        guard tagLength <= DownloadLifecycle.maxETagLength, tagLength <= fixed else { return nil }
        let start = fixed - tagLength
        let check = bytes[start..<(fixed + 26)].withUnsafeBytes { checksum($0) }
        guard check == u64(fixed + 26),
              let prefixLength = Int64(exactly: u64(fixed)), let photoSize = Int64(exactly: u64(fixed + 8)),
              prefixLength > 0, prefixLength < photoSize else { return nil }
        // The file is exactly the prefix and this footer: nothing missing (a crash before the data reached
        // the disk), nothing appended.
        let (total, overflow) = prefixLength.addingReportingOverflow(Int64(tagLength + fixedLength))
        guard !overflow, total == fileSize else { return nil }
        var etag: String?
        if tagLength > 0 {
            guard let text = String(bytes: bytes[start..<fixed], encoding: .utf8),
                  DownloadLifecycle.normalizedETag(text) == text else { return nil }
            etag = text
        }
        return PartialEntry(prefixLength: prefixLength, photoSize: photoSize, etag: etag, prefixChecksum: u64(fixed + 16))
    }

    /// FNV-1a (64 bit) over 8-byte little-endian words, then the remaining bytes one by one: against torn and
    /// zeroed writes, not against someone who can write the cache directory (they could plant a whole photo
    /// there too). Word-wise because a prefix can be megabytes and is checked at every resume: 8× fewer
    /// multiplications than byte-wise FNV.
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing hash: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var hash = hash
        let words = bytes.count / 8
        for index in 0..<words {
            hash = (hash ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))) &* 0x100_0000_01b3
        }
        for byte in bytes[(words * 8)...] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

extension PartialEntry {
    /// 1 MiB: the chunk a prefix is read back in to be checksummed.
    static let checksumChunk = 1 << 20

    /// The checksum of the first `length` bytes of `fd`, or nil if they cannot all be read (chunked, so a
    /// prefix of any size needs 1 MiB of memory, and it is read back 8 bytes at a time; see `checksum`). The
    /// chunk is a multiple of 8, so the words are the same however the prefix was split.
    static func checksum(fd: Int32, length: Int64) -> UInt64? {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var buffer = [UInt8](repeating: 0, count: checksumChunk)
        var offset: Int64 = 0
        while offset < length {
            let want = Int(min(Int64(checksumChunk), length - offset))
            let got = buffer.withUnsafeMutableBytes { raw -> Int in
                var done = 0
                while done < want {
                    let n = pread(fd, raw.baseAddress! + done, want - done, off_t(offset) + off_t(done))
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    done += n
                }
                return done
            }
            guard got == want else { return nil }
            hash = buffer.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[0..<want]), continuing: hash) }
            offset += Int64(want)
        }
        return hash
    }

    /// Turns a download's file (`[0, received)` valid) into a partial entry in place: cuts anything past the
    /// prefix (an answer restarted from 0 may have left longer bytes), appends the footer. Returns the file's
    /// new size, or nil if it could not be written (the caller then throws the file away).
    static func seal(_ file: OpenFile, received: Int64, photoSize: Int64, etag: String?) -> Int64? {
        var info = stat()
        // A file shorter than what was stored in it lost bytes (truncated under us): nothing to keep.
        guard received > 0, received < photoSize, fstat(file.fd, &info) == 0, Int64(info.st_size) >= received,
              ftruncate(file.fd, off_t(received)) == 0,
              let sum = checksum(fd: file.fd, length: received) else { return nil }
        let footer = PartialEntry(prefixLength: received, photoSize: photoSize, etag: etag, prefixChecksum: sum).footer()
        let failed = footer.withUnsafeBytes { file.write($0, at: received) }
        return failed == nil ? received + Int64(footer.count) : nil
    }

    /// Opens a partial entry's file for a resumed download and checks it: a regular file with one link (never a
    /// symlink, nor a hard link to someone's file, which a resume would truncate and write), a valid footer,
    /// the photo's size, an ETag of the catalog's version when the catalog has one, a prefix matching its
    /// checksum. The footer is cut off, leaving exactly the prefix. Nil (and the file left to the caller to
    /// remove) for anything else.
    static func open(path: String, photoSize: Int64, catalogETag: String?) -> (file: OpenFile, entry: PartialEntry)? {
        let fd = Glibc.open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        let file = OpenFile(fd: fd)
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else { return nil }
        let size = Int64(info.st_size)
        let tailLength = Int(min(size, Int64(maxFooterLength)))
        guard tailLength >= fixedLength else { return nil }
        var tail = Data(count: tailLength)
        let read = tail.withUnsafeMutableBytes { raw in
            (try? file.read(into: raw.baseAddress!, count: tailLength, at: size - Int64(tailLength))) ?? -1
        }
        guard read == tailLength, let entry = decode(tail: tail, fileSize: size), entry.photoSize == photoSize else { return nil }
        if let catalogETag = DownloadLifecycle.normalizedETag(catalogETag) {
            guard let etag = entry.etag, DownloadLifecycle.weaklyMatch(etag, catalogETag) else { return nil }
        }
        guard checksum(fd: fd, length: entry.prefixLength) == entry.prefixChecksum,
              ftruncate(fd, off_t(entry.prefixLength)) == 0 else { return nil }
        return (file, entry)
    }
}
