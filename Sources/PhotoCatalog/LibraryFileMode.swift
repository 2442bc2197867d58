// A library that holds private photos is readable by its owner only.
import Foundation

extension Catalog {
    /// Takes group and other permissions off the library file and its `-wal` and `-shm`. A private photo's
    /// row holds its static URL (which Flickr serves to whoever has it), its title, description and tags:
    /// with the usual umask 022 the file would be world-readable, and any local user could read the URL and
    /// fetch the photo past the mount's 0400. Returns the files whose mode changed (empty when already private).
    @discardableResult
    public func restrictToOwner() -> [String] {
        var changed: [String] = []
        // A library reached through a symlink: SQLite keeps -wal and -shm beside the real file.
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let real = realpath(path, &resolved) != nil ? String(cString: resolved) : path
        for file in [real, real + "-wal", real + "-shm"] {
            var info = stat()
            guard lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0 else { continue }
            if chmod(file, info.st_mode & 0o700) == 0 { changed.append(file) }
        }
        return changed
    }
}
