// The getxattr and listxattr callbacks: ask PhotoFilesystem, then reply with the length (a size-0 probe)
// or the bytes. setxattr and removexattr stay with the other writes (EROFS) in FuseSession.install.
import CFuse
import Foundation
import PhotoFS

extension FuseSession {
    /// Registering getxattr at all is what lets the kernel ask: without it libfuse answers ENOSYS, and the
    /// kernel then answers every later attribute call of the mount itself (EOPNOTSUPP; ENODATA for ACLs), so
    /// no attribute could ever be read. That was photofs before extended attributes.
    ///
    /// FUSE_CAP_POSIX_ACL is not asked for. Measured with `ls -l` of a 100-photo directory: with it, and
    /// ENODATA ("no ACL") for `system.posix_acl_*`, the kernel fetches the ACL of every inode once to cache it
    /// (103 getxattr reached the daemon on the first `ls -l`, then 1 a run) and `ls` makes 103 xattr calls a
    /// run (ENODATA is not "unsupported" to it); with it and EOPNOTSUPP, nothing changes from without it.
    /// Without it, 2 reach the daemon on every run, first or not, and `ls` makes 2. photofs has no ACLs to
    /// report, and the capability would also have the kernel consult them on permission checks.
    static func installExtendedAttributes(_ ops: inout fuse_lowlevel_ops) {
        ops.getxattr = { req, ino, name, size in
            let fs = FuseSession.instance(req)
            guard let name else { fuse_reply_err(req, EINVAL); return }
            do {
                fs.replyExtendedAttribute(req, try fs.filesystem.getExtendedAttribute(inode: ino, name: String(cString: name),
                                                                                      size: size))
            } catch {
                fs.failExtendedAttribute(req, error, op: "getxattr", inode: ino)
            }
        }
        ops.listxattr = { req, ino, size in
            let fs = FuseSession.instance(req)
            do {
                fs.replyExtendedAttribute(req, try fs.filesystem.listExtendedAttributes(inode: ino, size: size))
            } catch {
                fs.failExtendedAttribute(req, error, op: "listxattr", inode: ino)
            }
        }
    }

    func replyExtendedAttribute(_ req: fuse_req_t?, _ reply: ExtendedAttributeReply) {
        switch reply {
        case .size(let count):
            fuse_reply_xattr(req, count)
        case .data(let bytes):
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { fuse_reply_buf(req, $0.baseAddress, $0.count) }
            }
        }
    }

    /// ENODATA, ERANGE and EOPNOTSUPP are ordinary answers (`ls -l` gets an EOPNOTSUPP per directory, a
    /// probe of an absent name ENODATA), so they are traced, not warned about.
    func failExtendedAttribute(_ req: fuse_req_t?, _ error: Error, op: String, inode: UInt64) {
        let code = errnoValue(for: error)
        guard [ENODATA, ERANGE, EOPNOTSUPP, ENOENT].contains(code) else { return fail(req, error, op: op, inode: inode) }
        logger.trace("extended attribute", metadata: ["op": "\(op)", "inode": "\(inode)", "errno": "\(code)"])
        fuse_reply_err(req, code)
    }
}
