// getxattr and listxattr as plain values: the size probe, ERANGE, ENODATA, and EOPNOTSUPP for every
// namespace but `user.`, which is answered without touching the catalog.
import Foundation
import PhotoCatalog
import PhotoTree

/// The answer to getxattr or listxattr.
public enum ExtendedAttributeReply: Equatable, Sendable {
    /// The caller asked with size 0 (a probe): the length of the value or list (`fuse_reply_xattr`).
    case size(Int)
    /// The value, or the NUL-separated names, which fit the caller's buffer (`fuse_reply_buf`).
    case data([UInt8])
}

extension PhotoFilesystem {
    /// getxattr of `name` on `inode` with a buffer of `size` bytes (0: the caller only asks the length).
    ///
    /// Any name outside `user.` fails with EOPNOTSUPP before anything else, without a catalog read: GNU
    /// `ls -l` asks every file for `security.selinux` and `system.posix_acl_access`, and the kernel caches no
    /// extended attribute, so each ask reaches the daemon. EOPNOTSUPP is what `ls` (gnulib) takes as
    /// "unsupported on this device" and stops asking. Measured with `ls -l` of a 100-photo directory
    /// (coreutils 9.1, kernel 6.18): EOPNOTSUPP, 2 getxattr reach the daemon and `ls` makes 2 xattr calls
    /// in all; ENODATA, 203 reach the daemon (2 a file, 3 for the directory) and `ls` took 11 ms instead of 4.
    /// A `user.` name a node can never carry (`user.baloo.rating`, which KDE asks of every file) is ENODATA,
    /// also without a catalog read.
    public func getExtendedAttribute(inode: UInt64, name: String, size: Int) throws -> ExtendedAttributeReply {
        guard name.utf8.starts(with: Self.userNamespace.utf8) else {
            throw FilesystemError(.notSupported, "only user.* extended attributes exist here")
        }
        guard let node = Node(inode: inode) else { throw FilesystemError(.notFound, "no inode \(inode)") }
        let possible = ExtendedAttributeBuilder.possibleNames(of: node)
        guard possible.contains(where: { $0.utf8.elementsEqual(name.utf8) }) else {
            throw FilesystemError(.noAttribute, "no attribute \(name) on inode \(inode)")
        }
        guard let value = try extendedAttributes(of: node).value(named: name) else {
            throw FilesystemError(.noAttribute, "no attribute \(name) on inode \(inode)")
        }
        return try Self.fit(value, into: size)
    }

    /// listxattr on `inode` with a buffer of `size` bytes (0: the caller only asks the length): the names the
    /// node carries, each followed by a NUL.
    public func listExtendedAttributes(inode: UInt64, size: Int) throws -> ExtendedAttributeReply {
        guard let node = Node(inode: inode) else { throw FilesystemError(.notFound, "no inode \(inode)") }
        if ExtendedAttributeBuilder.possibleNames(of: node).isEmpty { return try Self.fit([], into: size) }
        return try Self.fit(try extendedAttributes(of: node).listBytes, into: size)
    }

    static let userNamespace = "user."

    /// The getxattr/listxattr contract: a probe gets the length, a short buffer ERANGE, else the bytes.
    static func fit(_ bytes: [UInt8], into size: Int) throws -> ExtendedAttributeReply {
        if size == 0 { return .size(bytes.count) }
        guard size >= bytes.count else {
            throw FilesystemError(.bufferTooSmall, "\(bytes.count) bytes do not fit a buffer of \(size)")
        }
        return .data(bytes)
    }

    /// A node's attributes as the catalog has them now, kept until the catalog's photos change (like the
    /// listings: a value read before an import is never kept after it). Uncached, each getxattr through the
    /// kernel took 0.6–1 ms (three queries; debug build), so `rsync -aX` — a listxattr and up to 11 getxattr
    /// a photo — paid several ms a photo; from the cache one takes 20–60 µs, as a name answered without the
    /// catalog does.
    /// A photo that is not in the tree (gone, or a row the listings leave out) is ENOENT, as for getattr.
    func extendedAttributes(of node: Node) throws -> ExtendedAttributeList {
        try extendedAttributeLists.value(for: node) { try readExtendedAttributes(of: node) }
    }

    private func readExtendedAttributes(of node: Node) throws -> ExtendedAttributeList {
        switch node {
        case .photo(let seq):
            guard let photo = try photoRow(seq), photo.isAvailable,
                  let details = try catalogRead(logging: logger, { try catalog.photoDetails(seq: seq) }) else {
                throw FilesystemError(.notFound, "photo \(seq) is no longer in the catalog")
            }
            return ExtendedAttributeBuilder.photo(details)
        case .region(let id):
            guard let details = try catalogRead(logging: logger, { try catalog.regionDetails(id: id) }) else {
                throw FilesystemError(.notFound, "no region \(id)")
            }
            return ExtendedAttributeBuilder.region(details)
        case .album(let id):
            guard let description = try catalogRead(logging: logger, { try catalog.albumDescription(id: id) }) else {
                throw FilesystemError(.notFound, "no album \(id)")
            }
            return ExtendedAttributeBuilder.album(description: description)
        case .event(let key):
            return ExtendedAttributeBuilder.event(try events.event(key))
        case .root, .regions, .moments, .recent, .albums, .photographer, .year, .events, .search, .eventYear,
             .searchResults, .people, .favorites, .person:
            return .empty
        }
    }
}
