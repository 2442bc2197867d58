// Which directory is photofs's cache and which files in it are photofs's: the CACHEDIR.TAG claim, the
// names photofs writes, and reading small files there without following a planted symlink.
import Foundation

/// Why a directory cannot be used as the cache.
public struct CacheDirectoryError: Error, CustomStringConvertible, Sendable, Equatable {
    public var path: String
    public var reason: String
    public init(path: String, reason: String) { self.path = path; self.reason = reason }
    public var description: String { "cache directory \(path): \(reason)" }
}

/// The cache directory's layout and what photofs may touch in it.
///
/// A directory is photofs's when it holds a `CACHEDIR.TAG` with the standard signature
/// (https://bford.info/cachedir/: backup tools skip it too). A missing or empty directory is claimed (tagged);
/// so is one holding nothing but what an earlier, untagged photofs left (`originals/`, `tmp/`,
/// `statistics.json`, `limit`, `photofs.log`). Anything else is someone's folder and is refused: photofs
/// would otherwise chmod it and, worse, evict files from it.
public enum CacheDirectory {
    public static let tagName = "CACHEDIR.TAG"
    public static let signature = "Signature: 8a477f597d28d172789f06886806bc55"
    static let tagContents = """
        \(signature)
        # This file is a cache directory tag created by photofs (cached photo originals and variants).
        # Everything here can be downloaded again. For information about cache directory tags, see
        #\thttps://bford.info/cachedir/

        """
    /// What an untagged photofs (before the tag existed) left in its cache directory.
    static let legacyNames: Set<String> = ["originals", "tmp", "statistics.json", "limit", "photofs.log"]

    /// Whether `name` is one photofs gives a cache entry in `originals/`: `OriginalCache.key(for:)`'s
    /// "<up to 64 of [A-Za-z0-9_]>-<1 to 16 lower-case hex digits>". Nothing else there is read, counted,
    /// evicted or removed.
    public static func isEntryName<S: StringProtocol>(_ name: S) -> Bool {
        let bytes = Array(name.utf8)
        guard let dash = bytes.lastIndex(of: UInt8(ascii: "-")), dash <= 64 else { return false }
        let hash = bytes[(dash + 1)...]
        guard (1...16).contains(hash.count), hash.allSatisfy(isLowerHex) else { return false }
        return bytes[..<dash].allSatisfy { isAlphanumericASCII($0) || $0 == UInt8(ascii: "_") }
    }

    /// Whether `name` is one of photofs's temporary files in `tmp/` ("….part"), removable at start.
    public static func isTemporaryName<S: StringProtocol>(_ name: S) -> Bool {
        name.utf8.count > 5 && name.hasSuffix(".part") && !name.contains("/")
    }

    /// Makes `path` photofs's cache directory or says why not: creates it (0700) if missing, tags it if empty
    /// or left by an earlier photofs, accepts it if tagged. Returns whether the directory was created.
    @discardableResult
    static func claim(_ path: String) throws -> Bool {
        var info = stat()
        var created = false
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw CacheDirectoryError(path: path, reason: "cannot be read (\(errnoText()))") }
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw CacheDirectoryError(path: path, reason: "cannot be created (\(error.localizedDescription))")
            }
            created = true
            guard lstat(path, &info) == 0 else { throw CacheDirectoryError(path: path, reason: "vanished as it was created") }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CacheDirectoryError(path: path, reason: "is not a directory")
        }
        if isTagged(path) { return created }
        try refuseForeign(path)
        // Ours from here on. A tag that cannot be written (a full disk) is written next time; until then the
        // directory still holds only what photofs makes, so it is still recognised.
        let fd = open(path + "/" + tagName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 {
            let complete = tagContents.utf8CString.withUnsafeBytes { bytes in
                bytes.count > 1 && write(fd, bytes.baseAddress!, bytes.count - 1) == bytes.count - 1
            }
            close(fd)
            if !complete { unlink(path + "/" + tagName) }
        }
        return created
    }

    /// Throws the error `OriginalCache.init` would give for `path`, creating and writing nothing: a missing
    /// directory, a tagged one, an empty one or an earlier photofs's are fine. For the CLI, to check
    /// `--cache-dir` before it puts anything (its log file) there.
    public static func checkUsable(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw CacheDirectoryError(path: path, reason: "cannot be read (\(errnoText()))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw CacheDirectoryError(path: path, reason: "is not a directory") }
        if isTagged(path) { return }
        try refuseForeign(path)
    }

    /// Refuses an untagged directory holding anything photofs did not make.
    private static func refuseForeign(_ path: String) throws {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
            throw CacheDirectoryError(path: path, reason: "cannot be listed (\(error.localizedDescription))")
        }
        let foreign = names.filter { !legacyNames.contains($0) }.sorted()
        guard foreign.isEmpty else {
            let shown = foreign.prefix(3).map { "\"\($0)\"" }.joined(separator: ", ") + (foreign.count > 3 ? ", …" : "")
            throw CacheDirectoryError(path: path, reason: """
                is not empty and is not a photofs cache (it holds \(shown) and no \(tagName)); photofs will \
                not put its files among yours or evict them. Use a new or empty directory (--cache-dir), or \
                delete this one if it really is an old photofs cache
                """)
        }
    }

    /// Whether the directory holds a regular CACHEDIR.TAG starting with the signature.
    static func isTagged(_ path: String) -> Bool {
        guard let data = readSmallFile(path + "/" + tagName, limit: 4096) else { return false }
        return data.starts(with: Data(signature.utf8))
    }

    /// A regular file's bytes (not a symlink's target, not a FIFO or device), or nil if it is missing, of
    /// another kind, or larger than `limit`.
    static func readSmallFile(_ path: String, limit: Int) -> Data? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size >= 0, info.st_size <= limit else {
            return nil
        }
        return readAll(fd: fd, count: Int(info.st_size))
    }

    /// Exactly `count` bytes from the start of `fd`, or nil (a short file or an I/O error).
    static func readAll(fd: Int32, count: Int) -> Data? {
        var data = Data(count: count)
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
        return complete ? data : nil
    }

    static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func isAlphanumericASCII(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}

/// Saturating arithmetic for counters and sizes read from the cache directory: an absurd value clamps
/// instead of trapping.
extension Int64 {
    func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}

extension Int {
    func saturatingAdd(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
