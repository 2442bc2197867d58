// SHA-256 of a photo file's first 128 KiB (with its size) and of all of it: how a folder import tells files apart.
import CCrypto
import Foundation

/// Hashes as rmlint and fdupes compare files: by size first, then a hash of the beginning, then the whole
/// file only when two files agree on both (a folder import reads the beginning anyway, for EXIF).
public enum ContentHash {
    /// A JPEG's EXIF block is at most 64 KiB and comes first; 128 KiB holds it with the JFIF and ICC segments
    /// before it, and is what a first import reads of every file.
    public static let prefixBytes = 128 * 1024

    /// The hash of the file's size (8 bytes, little endian) and its first `prefixBytes` (fewer when it is
    /// shorter: then it covers the whole file).
    public static func partial(size: Int64, prefix: [UInt8]) -> String {
        let checksum = Checksum()
        withUnsafeBytes(of: size.littleEndian) { checksum.update($0) }
        prefix.prefix(prefixBytes).withUnsafeBytes { checksum.update($0) }
        return checksum.hex
    }

    /// The hash of every byte of an open file, read in 1 MiB pieces; nil when a read fails.
    public static func full(fd: Int32) -> String? {
        let checksum = Checksum()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if count < 0 { if errno == EINTR { continue }; return nil }
            if count == 0 { return checksum.hex }
            buffer.withUnsafeBytes { checksum.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            offset += off_t(count)
        }
    }

    /// The hash of a file by path (full hashes of files not otherwise opened by this import). A link to a file
    /// is its target, as the walk and the reader take it: opened without following, a link to a photo of the
    /// folder was no duplicate of it but a second photo (a new-user trial's "Favourites" folder of links).
    /// O_NONBLOCK: a name replaced by a FIFO since the walk fails here instead of blocking the import.
    public static func full(path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return full(fd: fd)
    }

    /// SHA-256 through Debian's libcrypto (OpenSSL: SHA-NI where the CPU has it). GLib's GChecksum, used
    /// before, hashed 128 KiB in about 0.5 ms, as long as reading it from a warm page cache took several times
    /// over: the largest share of a warm first import's CPU. A context that cannot be made (out of memory)
    /// hashes to "": no file then matches another by hash, and nothing traps.
    private final class Checksum {
        private let context = EVP_MD_CTX_new()
        private var usable: Bool
        init() { usable = context != nil && EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 }
        deinit { EVP_MD_CTX_free(context) }
        func update(_ bytes: UnsafeRawBufferPointer) {
            guard usable, !bytes.isEmpty else { return }
            usable = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1
        }
        var hex: String {
            var digest = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            guard usable, EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else { return "" }
            usable = false
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
        }
    }
}
