// The getxattr and listxattr callbacks: ask PhotoFilesystem, then reply with the length (a size-0 probe)
// or the bytes. setxattr and removexattr stay with the other writes (EROFS) in FuseSession.install.
import CFuse
import Foundation
import PhotoFS

extension FuseSession {
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
