// The user's freedesktop thumbnail cache ($XDG_CACHE_HOME/thumbnails): where a URI's thumbnail lives, writing
// one atomically with its Thumb:: stamp, judging one the way GLib does, and removing a URI's thumbnails.
import CCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

public struct DesktopThumbnailError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// What a thumbnail is valid for: the file's URI (see `FileURI`), its mtime in seconds and, when known, its size
/// in bytes and MIME type.
public struct DesktopThumbnailStamp: Sendable, Equatable {
    public var uri: String
    public var mtime: Int64
    public var fileSize: Int64?
    public var mimeType: String?

    public init(uri: String, mtime: Int64, fileSize: Int64?, mimeType: String?) {
        self.uri = uri; self.mtime = mtime; self.fileSize = fileSize; self.mimeType = mimeType
    }

    /// Thumb::MTime as GLib 2.74 compares it: `(guint64) stx_mtime.tv_sec` in decimal (gio/thumbnail-verify.c),
    /// so a time before 1970 is its two's-complement value ("-1" would never match GLib; KIO, which parses
    /// with toLongLong, matches neither form before 1970).
    var mtimeText: String { String(UInt64(bitPattern: mtime)) }

    /// The size GLib compares Thumb::Size with (st_size, never negative); a negative one counts as unknown.
    var knownSize: UInt64? {
        guard let fileSize, fileSize >= 0 else { return nil }
        return UInt64(fileSize)
    }

    /// The PNG text entries a thumbnail carries: the two the standard requires, then the optional ones.
    var textEntries: [(key: String, value: String)] {
        var entries: [(key: String, value: String)] = [("Thumb::URI", uri), ("Thumb::MTime", mtimeText)]
        if let knownSize { entries.append(("Thumb::Size", String(knownSize))) }
        // A MIME type with a NUL cannot be a PNG text value; the thumbnail is valid without it.
        if let mimeType, !mimeType.isEmpty, !mimeType.unicodeScalars.contains("\0") {
            entries.append(("Thumb::Mimetype", mimeType))
        }
        entries.append(("Software", "photofs"))
        return entries
    }
}

/// One user's thumbnail directory. Every operation opens the size directories relative to the root with
/// O_NOFOLLOW, so a symlink planted at `thumbnails/large` (or at a thumbnail's name) is never written through;
/// the root itself (often under a ~/.cache that is a symlink on purpose) is followed.
public struct DesktopThumbnailStore: Sendable {
    /// The ".../thumbnails" directory.
    public let root: URL

    public init(root: URL) { self.root = root }

    /// `$XDG_CACHE_HOME/thumbnails` when XDG_CACHE_HOME is an absolute path, else `$HOME/.cache/thumbnails`
    /// (the XDG Base Directory spec: a relative XDG_CACHE_HOME is invalid and ignored — GLib 2.74 would use it
    /// relative to its working directory, which no file manager's user means); nil without either.
    public static func defaultRoot(environment: [String: String]) -> URL? {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return URL(fileURLWithPath: cache, isDirectory: true).appendingPathComponent("thumbnails", isDirectory: true)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent(".cache", isDirectory: true)
                .appendingPathComponent("thumbnails", isDirectory: true)
        }
        return nil
    }

    /// `<root>/<size dir>/<md5 hex of uri>.png`.
    public func fileURL(forURI uri: String, size: DesktopThumbnailSize) -> URL {
        root.appendingPathComponent(size.directoryName, isDirectory: true)
            .appendingPathComponent(Self.fileName(forURI: uri), isDirectory: false)
    }

    /// The standard's name for a URI's thumbnail: the lower-case hex MD5 of the URI's bytes, ".png". When
    /// libcrypto has no MD5 (an OpenSSL configuration without its default provider) it is `unavailableName`,
    /// which no program reads and `write` refuses.
    public static func fileName(forURI uri: String) -> String {
        md5FileName(forURI: uri) ?? unavailableName
    }

    static let unavailableName = "md5-unavailable.png"

    static func md5FileName(forURI uri: String) -> String? {
        let bytes = Array(uri.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // EVP_Digest answers 1 on success and writes the digest's length; MD5's is 16 bytes.
        guard EVP_Digest(bytes, bytes.count, &digest, &length, EVP_md5(), nil) == 1, length == 16 else { return nil }
        return digest.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined() + ".png"
    }

    /// Writes a PNG (bytes without Thumb:: chunks, as DesktopThumbnailRenderer makes them) with the stamp's
    /// tEXt chunks inserted after IHDR; a temporary file in the same directory, then rename, so no reader ever
    /// sees half a thumbnail. Directories are created 0700, the file is 0600 (the standard's modes); a
    /// symlink planted at the size directory is refused, one at the file's name is replaced, not followed.
    /// Not fsync'd: a thumbnail lost to a crash is written again at the next listing, and an fsync per file
    /// would cost more than rendering it.
    public func write(png: Data, stamp: DesktopThumbnailStamp, size: DesktopThumbnailSize) throws {
        // GLib reads Thumb::URI only from tEXt and compares bytes: a URI outside ASCII (not one FileURI makes)
        // would be stored as Latin-1 or iTXt and never match, so it is refused rather than written uselessly.
        guard !stamp.uri.isEmpty, stamp.uri.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw DesktopThumbnailError(message: "a thumbnail URI must be printable ASCII: \(stamp.uri.debugDescription)")
        }
        guard let name = Self.md5FileName(forURI: stamp.uri) else {
            throw DesktopThumbnailError(message: "libcrypto cannot compute MD5, which names thumbnails: check the OpenSSL configuration")
        }
        let bytes = try PNGTextChunks.inserting(stamp.textEntries, into: png)
        let directory = try openSizeDirectory(size, create: true)
        defer { close(directory) }
        let temporary = "photofs-thumbnail-\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).tmp"
        let fd = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create a temporary file in", size.directoryName) }
        var written = 0
        var failed: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    failed = errno
                    return
                }
                written += count
            }
        }
        // umask may have taken bits away from 0600; the standard wants exactly 0600.
        if failed == 0 && fchmod(fd, 0o600) != 0 { failed = errno }
        if close(fd) != 0 && failed == 0 { failed = errno }
        if failed == 0 && renameat(directory, temporary, directory, name) != 0 { failed = errno }
        if failed != 0 {
            unlinkat(directory, temporary, 0)
            throw DesktopThumbnailError(message: "cannot write thumbnail \(size.directoryName)/\(name): \(String(cString: strerror(failed)))")
        }
    }

    /// Whether a thumbnail for `stamp.uri` at `size` exists and is valid for it the way GLib 2.74 checks
    /// (gio/thumbnail-verify.c): a PNG whose tEXt Thumb::URI equals the URI and Thumb::MTime the mtime, and
    /// whose Thumb::Size, when present, equals the size. Two stricter rules, so that photofs rewrites rather
    /// than keeps: with the stamp's size unknown, a thumbnail carrying a Thumb::Size is not current (it may
    /// name another size); and the file must be whole, its chunks running to IEND (GLib stops reading once the
    /// keys matched, and would show a truncated image). Any file content is handled without trapping; a
    /// symlink, a non-regular file or one over 16 MiB is not current.
    public func isCurrent(_ stamp: DesktopThumbnailStamp, size: DesktopThumbnailSize) -> Bool {
        guard let bytes = readThumbnail(named: Self.fileName(forURI: stamp.uri), size: size) else { return false }
        return Self.glibAccepts(bytes, uri: Array(stamp.uri.utf8), mtime: Array(stamp.mtimeText.utf8),
                                size: stamp.knownSize.map { Array(String($0).utf8) })
            && PNGTextChunks.chunks(in: bytes).last.map { $0.type == "IEND" && $0.end == bytes.count } == true
    }

    /// Removes the thumbnails of a URI at every size, and any `fail/<program>/` entry for it. Missing files
    /// and directories are fine. A size directory that is a symlink is not followed; it is reported after
    /// everything else was removed.
    public func remove(uri: String) throws {
        let name = Self.fileName(forURI: uri)
        var firstError: DesktopThumbnailError?
        for size in DesktopThumbnailSize.allCases {
            do {
                guard let directory = try openExistingDirectory(size.directoryName) else { continue }
                defer { close(directory) }
                if unlinkat(directory, name, 0) != 0 && errno != ENOENT {
                    throw failure("cannot remove \(name) from", size.directoryName)
                }
            } catch let error as DesktopThumbnailError {
                firstError = firstError ?? error
            }
        }
        do {
            try removeFailEntries(named: name)
        } catch let error as DesktopThumbnailError {
            firstError = firstError ?? error
        }
        if let firstError { throw firstError }
    }

    /// Removes the thumbnails of `stamp.uri`, at any size, that are not current for `stamp`. GLib judges only
    /// the largest size present (xx-large first), so a stale larger thumbnail left by another program would
    /// hide the current ones photofs writes; call this after writing.
    public func removeOutdated(_ stamp: DesktopThumbnailStamp) throws {
        let name = Self.fileName(forURI: stamp.uri)
        for size in DesktopThumbnailSize.allCases where !isCurrent(stamp, size: size) {
            guard let directory = try openExistingDirectory(size.directoryName) else { continue }
            defer { close(directory) }
            if unlinkat(directory, name, 0) != 0 && errno != ENOENT {
                throw failure("cannot remove \(name) from", size.directoryName)
            }
        }
    }

    // MARK: - GLib's check

    /// gio/thumbnail-verify.c `check_thumbnail_validity`, byte for byte: walk the chunks (ignoring CRCs); in
    /// each tEXt chunk the key runs to the first NUL and the value is the rest; a Thumb::URI, Thumb::MTime or
    /// Thumb::Size that differs rejects the file at once; after both required keys matched, the first
    /// non-tEXt chunk ends the walk. `check_integer_match` accepts exactly the decimal digits of the expected
    /// number ("0" for zero; no sign, no leading zero), so the values compare as strings. `size` nil: the
    /// stricter rule above (any Thumb::Size rejects).
    static func glibAccepts(_ bytes: [UInt8], uri: [UInt8], mtime: [UInt8], size: [UInt8]?) -> Bool {
        guard bytes.count >= 8, Array(bytes[0..<8]) == PNGTextChunks.signature else { return false }
        let uriKey = Array("Thumb::URI".utf8), mtimeKey = Array("Thumb::MTime".utf8)
        let sizeKey = Array("Thumb::Size".utf8), textType = Array("tEXt".utf8)
        var matchedURI = false, matchedMTime = false
        var offset = 8
        while bytes.count - offset >= 12 {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
            offset += 4
            guard length <= bytes.count - offset - 8 else { break }
            let dataStart = offset + 4, dataEnd = offset + 4 + length
            if Array(bytes[offset..<dataStart]) == textType {
                let data = bytes[dataStart..<dataEnd]
                if let separator = data.firstIndex(of: 0) {
                    let key = Array(data[dataStart..<separator])
                    let value = Array(data[(separator + 1)...])
                    if key == uriKey {
                        guard value == uri else { return false }
                        matchedURI = true
                    } else if key == mtimeKey {
                        guard value == mtime else { return false }
                        matchedMTime = true
                    } else if key == sizeKey {
                        guard let size, value == size else { return false }
                    }
                }
            } else if matchedURI && matchedMTime {
                break
            }
            offset = dataEnd + 4
        }
        return matchedURI && matchedMTime
    }

    // MARK: - Files

    /// A thumbnail file's bytes, or nil when it is missing, not a regular file (a symlink is not followed)
    /// or larger than any thumbnail (16 MiB: an xx-large RGBA PNG stored uncompressed is 4 MiB).
    private func readThumbnail(named name: String, size: DesktopThumbnailSize) -> [UInt8]? {
        guard let directory = try? openExistingDirectory(size.directoryName) else { return nil }
        defer { close(directory) }
        let fd = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size >= 0,
              info.st_size <= 16 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + filled, buffer.count - filled, off_t(filled))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break } // shrank under us: judge what was read
            filled += count
        }
        return Array(bytes.prefix(filled))
    }

    /// The root, created 0700 (with any missing parents) when asked to, opened following symlinks.
    private func openRoot(create: Bool) throws -> Int32? {
        let path = root.path
        var fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 && errno == ENOENT {
            guard create else { return nil }
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw DesktopThumbnailError(message: "cannot create the thumbnail directory \(path): \(error.localizedDescription)")
            }
            fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard fd >= 0 else {
            throw DesktopThumbnailError(message: "cannot open the thumbnail directory \(path): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// `<root>/<size dir>` opened without following a symlink, created 0700 if missing; refused when it is
    /// not a directory or not the effective user's (files written there would be unreadable to its owner).
    private func openSizeDirectory(_ size: DesktopThumbnailSize, create: Bool) throws -> Int32 {
        guard let rootFD = try openRoot(create: create) else {
            throw DesktopThumbnailError(message: "the thumbnail directory \(root.path) does not exist")
        }
        defer { close(rootFD) }
        if mkdirat(rootFD, size.directoryName, 0o700) != 0 && errno != EEXIST {
            throw failure("cannot create", size.directoryName)
        }
        let fd = openat(rootFD, size.directoryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open", size.directoryName) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid() else {
            close(fd)
            throw DesktopThumbnailError(message: "\(root.path)/\(size.directoryName) belongs to another user")
        }
        return fd
    }

    /// `<root>/<name>` opened without following a symlink; nil when it (or the root) does not exist.
    private func openExistingDirectory(_ name: String) throws -> Int32? {
        guard let rootFD = try openRoot(create: false) else { return nil }
        defer { close(rootFD) }
        let fd = openat(rootFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw failure("cannot open", name)
        }
        return fd
    }

    /// Unlinks `fail/*/<name>`: each program keeps its failures in its own subdirectory
    /// (GLib looks in fail/gnome-thumbnail-factory; others use their own names).
    private func removeFailEntries(named name: String) throws {
        guard let fail = try openExistingDirectory("fail") else { return }
        // fdopendir takes ownership of its descriptor; `fail` stays ours for openat.
        let listingFD = dup(fail)
        guard listingFD >= 0, let listing = fdopendir(listingFD) else {
            let error = failure("cannot list", "fail")
            if listingFD >= 0 { close(listingFD) }
            close(fail)
            throw error
        }
        defer { closedir(listing); close(fail) }
        var programs: [String] = []
        while let entry = readdir(listing) {
            let program = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if program != "." && program != ".." { programs.append(program) }
        }
        for program in programs {
            let directory = openat(fail, program, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard directory >= 0 else { continue } // a file or a symlink: nothing of ours inside
            defer { close(directory) }
            if unlinkat(directory, name, 0) != 0 && errno != ENOENT {
                throw failure("cannot remove \(name) from", "fail/\(program)")
            }
        }
    }

    private func failure(_ what: String, _ directory: String) -> DesktopThumbnailError {
        DesktopThumbnailError(message: "\(what) \(root.path)/\(directory): \(String(cString: strerror(errno)))")
    }
}
