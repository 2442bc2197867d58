// A file of secrets in the user's config directory: 0700 directory, 0600 file, no symlinks, atomic locked writes.
// One writer for every source's accounts file (Flickr's tokens, Immich's keys).
import Foundation

/// Reads and replaces one file of secrets. Every read checks that the file is a regular file of this user
/// that nobody else may read (a wider one is refused, not repaired: its secrets may already have been read);
/// the directory is made 0700 (the parents photofs makes too, as XDG wants), and repaired to 0700 with a
/// notice. Writes hold an exclusive lock on the directory, write a 0600 temporary file, fsync it, rename it over
/// the old one and fsync the directory, so a crash leaves the old file or the new one, never half of one.
/// Every error is made by `makeError` (each store keeps its own error type) and names paths, never a secret.
public struct PrivateConfigFile: Sendable {
    public let directory: String
    public let name: String
    let maxSize: Int
    /// What to do about secrets that may have leaked ("revoke the API key in Immich ...").
    let revokeAdvice: String
    let notice: @Sendable (String) -> Void
    let makeError: @Sendable (String) -> Error

    public init(directory: String, name: String, maxSize: Int, revokeAdvice: String,
                notice: @escaping @Sendable (String) -> Void, makeError: @escaping @Sendable (String) -> Error) {
        self.directory = directory; self.name = name; self.maxSize = maxSize; self.revokeAdvice = revokeAdvice
        self.notice = notice; self.makeError = makeError
    }

    public var path: String { URL(fileURLWithPath: directory).appendingPathComponent(name).path }

    /// The bytes, nil when there is no file (or no directory).
    public func read() throws -> Data? {
        guard FileManager.default.fileExists(atPath: directory) else { return nil }
        try checkDirectory(create: false)
        return try readFile()
    }

    /// Replaces the file with what `change` makes of its bytes (nil in, no file; nil out, the file goes), under
    /// the directory's lock, so two logins at once cannot lose an account.
    public func update(_ change: (Data?) throws -> Data?) throws {
        try checkDirectory(create: true)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw makeError("cannot open \(directory): \(PrivateConfigFile.reason())") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw makeError("cannot lock \(directory): \(PrivateConfigFile.reason())") }
        }
        defer { flock(fd, LOCK_UN) }
        if let data = try change(try readFile()) {
            try write(data)
        } else {
            guard unlink(path) == 0 || errno == ENOENT else { throw makeError("cannot remove \(path): \(PrivateConfigFile.reason())") }
        }
        fsync(fd)
    }

    private func checkDirectory(create: Bool) throws {
        if create {
            var made: [String] = []
            var probe = URL(fileURLWithPath: directory)
            while !FileManager.default.fileExists(atPath: probe.path), probe.path != "/" {
                made.append(probe.path)
                probe.deleteLastPathComponent()
            }
            for path in made.reversed() where mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw makeError("cannot create \(path): \(PrivateConfigFile.reason())")
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0 else { throw makeError("cannot read \(directory): \(PrivateConfigFile.reason())") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw makeError("\(directory) is not a directory") }
        guard info.st_uid == geteuid() else {
            throw makeError("\(directory) belongs to user \(info.st_uid), not to you (\(geteuid())): not storing credentials there")
        }
        let mode = info.st_mode & 0o7777
        if mode & 0o077 != 0 {
            guard chmod(directory, 0o700) == 0 else {
                throw makeError("\(directory) is mode \(PrivateConfigFile.octal(mode)) and cannot be made 0700: \(PrivateConfigFile.reason())")
            }
            notice("\(directory) was mode \(PrivateConfigFile.octal(mode)); repaired to 0700 so that only you can enter it")
        }
    }

    private func readFile() throws -> Data? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw makeError("\(path) is a symbolic link: refusing to read credentials through it") }
            throw makeError("cannot read \(path): \(PrivateConfigFile.reason())")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw makeError("\(path) is not a regular file") }
        guard info.st_uid == geteuid() else { throw makeError("\(path) belongs to user \(info.st_uid), not to you (\(geteuid())): refusing its credentials") }
        let mode = info.st_mode & 0o7777
        guard mode & 0o077 == 0 else {
            throw makeError("\(path) is mode \(PrivateConfigFile.octal(mode)): other users may have read its secrets. If that is possible, "
                                   + "\(revokeAdvice), then run `chmod 600 \(path)` (or delete the file and sign in again)")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 { if errno == EINTR { continue }; throw makeError("cannot read \(path): \(PrivateConfigFile.reason())") }
            if n == 0 { break }
            data.append(contentsOf: buffer[0..<n])
            guard data.count <= maxSize else { throw makeError("\(path) is larger than \(maxSize) bytes: not an accounts file") }
        }
        return data
    }

    private func write(_ data: Data) throws {
        let temporary = URL(fileURLWithPath: directory).appendingPathComponent(".\(name).\(getpid()).\(UInt32.random(in: .min ... .max)).tmp").path
        // O_EXCL and O_NOFOLLOW: never write through a name someone else prepared.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw makeError("cannot create \(temporary): \(PrivateConfigFile.reason())") }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else { throw makeError("cannot chmod \(temporary): \(PrivateConfigFile.reason())") }
            try data.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(fd, base + offset, raw.count - offset)
                    if n < 0 { if errno == EINTR { continue }; throw makeError("cannot write \(temporary): \(PrivateConfigFile.reason())") }
                    offset += n
                }
            }
            guard fsync(fd) == 0 else { throw makeError("cannot write \(temporary): \(PrivateConfigFile.reason())") }
        }
        guard rename(temporary, path) == 0 else { throw makeError("cannot replace \(path): \(PrivateConfigFile.reason())") }
        renamed = true
    }

    static func reason() -> String { String(cString: strerror(errno)) }

    /// "0755": four octal digits, as chmod(1) and stat(1) write modes.
    public static func octal(_ mode: mode_t) -> String {
        let text = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
