// The FUSE adapter: registers libfuse low-level callbacks, turns each request into a PhotoFilesystem call and
// its result into a reply. The only code that touches fuse_req_t.
import CFuse
import Foundation
import Logging
import PhotoFS
import PhotoTree

public struct FuseMountError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// How long the kernel may cache answers. The catalog is local and changes only through imports, which the
/// filesystem notices within its poll interval (1 s) and then invalidates exactly what changed
/// (notify_inval_entry / notify_inval_inode), so the timeouts can be long: a warm `ls -lR` of 100,000 photos
/// then never reaches the daemon.
public struct FuseTimeouts: Sendable {
    public var entry: Double = 3600
    public var attributes: Double = 3600
    /// Names that do not exist (file managers probe for .directory, .hidden, Thumbs.db in every folder).
    /// Shorter than positive entries: a name can only appear through an import, which invalidates it, but
    /// an hour of "no such file" after a missed invalidation would be worse than a re-ask per minute.
    public var negativeEntry: Double = 60
    public init() {}
}

/// State of one open directory: the listing as it was at opendir, so offsets stay valid while it is read.
final class DirectoryHandle {
    let listing: DirectoryListing
    let parent: UInt64
    init(listing: DirectoryListing, parent: UInt64) { self.listing = listing; self.parent = parent }
}

public final class FuseSession: @unchecked Sendable {
    let filesystem: PhotoFilesystem
    let logger: Logger
    let timeouts: FuseTimeouts
    private var session: OpaquePointer?
    private var arguments: [UnsafeMutablePointer<CChar>?] = []
    public let mountpoint: String

    /// `options` are extra `-o` mount options (allow_other, ...). The mount is always read-only.
    public init(filesystem: PhotoFilesystem, mountpoint: String, fsName: String, options: [String],
                timeouts: FuseTimeouts = FuseTimeouts(), logger: Logger) {
        self.filesystem = filesystem
        self.mountpoint = mountpoint
        self.timeouts = timeouts
        self.logger = logger
        // fsname shows in `mount` and `df`; commas would end the option, so they go.
        let name = fsName.replacingOccurrences(of: ",", with: "_")
        var all = ["ro", "default_permissions", "fsname=\(name)", "subtype=photofs"]
        all += options.flatMap { $0.split(separator: ",").map(String.init) }.filter { $0 != "rw" && !$0.isEmpty }
        arguments = ["photofs", "-o", all.joined(separator: ",")].map { (argument: String) in strdup(argument) }
    }

    deinit {
        if let session { fuse_session_destroy(session) }
        for argument in arguments { free(argument) }
    }

    /// Creates the session and mounts it; after this returns the mount is live (requests queue until `run`).
    public func mount() throws {
        var ops = fuse_lowlevel_ops()
        FuseSession.install(&ops)
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        session = arguments.withUnsafeMutableBufferPointer { argv in
            var args = fuse_args(argc: Int32(argv.count), argv: argv.baseAddress, allocated: 0)
            return fuse_session_new(&args, &ops, MemoryLayout<fuse_lowlevel_ops>.size, userdata)
        }
        guard let session else { throw FuseMountError(message: "libfuse rejected the mount options") }
        guard fuse_session_mount(session, mountpoint) == 0 else {
            fuse_session_destroy(session)
            self.session = nil
            throw FuseMountError(message: "cannot mount on \(mountpoint) (is /dev/fuse there and fuse3 installed? see the log above)")
        }
        filesystem.invalidate = { [weak self] invalidations in self?.notifyKernel(invalidations) }
    }

    /// Serves requests until unmounted (`fusermount3 -u`) or SIGINT/SIGTERM/SIGHUP, then unmounts.
    /// Returns 0 for a clean end.
    public func run() -> Int32 {
        guard let session else { return 1 }
        // Signals are blocked in every thread (see SignalMask); the main thread takes them while it waits
        // in the loop, so libfuse's handler ends the loop from the right thread.
        // libfuse leaves a signal alone if it is ignored (nohup, `cmd &` in a script ignores SIGINT), but
        // SIGINT and SIGTERM are documented to unmount, so their default action is restored first.
        for signal in SignalMask.terminationSignals { Glibc.signal(signal, SIG_DFL) }
        fuse_set_signal_handlers(session)
        SignalMask.unblockTerminationSignals()
        // 10 idle threads: enough for a file manager's parallel stats while a download blocks a few.
        let result = photofs_fuse_loop_mt(session, 10, 64)
        SignalMask.blockTerminationSignals()
        fuse_remove_signal_handlers(session)
        fuse_session_unmount(session)
        logger.info("unmounted", metadata: ["mountpoint": "\(mountpoint)", "loop_result": "\(result)"])
        // A positive result is the signal that ended the loop: a requested, clean stop.
        return result < 0 ? 1 : 0
    }

    /// Drops what the kernel cached for changed names and nodes. Called from the catalog watcher, never from
    /// a request handler (a notify from inside one can deadlock on the directory lock the request holds).
    func notifyKernel(_ invalidations: [KernelInvalidation]) {
        guard let session else { return }
        for invalidation in invalidations {
            switch invalidation {
            case .entry(let parent, let name):
                // ENOENT only means the kernel had nothing cached for it.
                _ = fuse_lowlevel_notify_inval_entry(session, parent, name, name.utf8.count)
            case .inode(let inode):
                // Files: attributes only (offset -1). Dropping a file's pages would wait for the page lock a
                // reader holds while its bytes are still downloading, and a daemon killed during that wait
                // could never exit. A photo's bytes never change under one cache file anyway, and a changed
                // photo's new size/mtime makes the kernel drop them (auto_inval_data). Directories: their
                // pages hold the cached listing, which must go.
                let isDirectory = Node(inode: inode)?.isDirectory ?? false
                _ = fuse_lowlevel_notify_inval_inode(session, inode, isDirectory ? 0 : -1, 0)
            }
        }
        logger.debug("kernel caches invalidated", metadata: ["count": "\(invalidations.count)"])
    }

    // MARK: - Request handlers (called on libfuse's worker threads)

    static func instance(_ req: fuse_req_t?) -> FuseSession {
        Unmanaged<FuseSession>.fromOpaque(fuse_req_userdata(req)!).takeUnretainedValue()
    }

    func fill(_ attributes: NodeAttributes) -> stat {
        var st = stat()
        st.st_ino = UInt(attributes.inode)
        st.st_mode = (attributes.isDirectory ? S_IFDIR : S_IFREG) | attributes.permissions
        st.st_nlink = UInt(attributes.linkCount)
        st.st_uid = filesystem.options.uid
        st.st_gid = filesystem.options.gid
        st.st_size = Int(attributes.size)
        // 1 MiB: the unit cp and rsync size their reads by; photos are read whole.
        st.st_blksize = 1 << 20
        st.st_blocks = Int((attributes.size + 511) / 512)
        let time = timespec(tv_sec: Int(attributes.mtime), tv_nsec: 0)
        st.st_mtim = time
        st.st_atim = time
        st.st_ctim = time
        return st
    }

    func entry(_ attributes: NodeAttributes) -> fuse_entry_param {
        var param = fuse_entry_param()
        param.ino = attributes.inode
        param.generation = 1
        param.attr = fill(attributes)
        param.attr_timeout = timeouts.attributes
        param.entry_timeout = timeouts.entry
        return param
    }

    func fail(_ req: fuse_req_t?, _ error: Error, op: String, inode: UInt64) {
        let code = errnoValue(for: error)
        if code == ENOENT {
            logger.trace("not found", metadata: ["op": "\(op)", "inode": "\(inode)"])
        } else {
            logger.warning("request failed", metadata: ["op": "\(op)", "inode": "\(inode)", "error": "\(error)"])
        }
        fuse_reply_err(req, code)
    }

    /// The command name of the process behind a request (for /recent: backup tools do not count).
    func processName(_ req: fuse_req_t?) -> String? {
        guard let context = fuse_req_ctx(req) else { return nil }
        guard let comm = try? String(contentsOfFile: "/proc/\(context.pointee.pid)/comm", encoding: .utf8) else { return nil }
        return comm.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func install(_ ops: inout fuse_lowlevel_ops) {
        ops.`init` = { userdata, conn in
            guard let conn else { return }
            // Lookups in different directories need not wait for each other.
            if conn.pointee.capable & UInt32(FUSE_CAP_PARALLEL_DIROPS) != 0 {
                conn.pointee.want |= UInt32(FUSE_CAP_PARALLEL_DIROPS)
            }
            // One readdirplus answers `ls -l` with names and attributes together (no lookup per file).
            if conn.pointee.capable & UInt32(FUSE_CAP_READDIRPLUS) != 0 {
                conn.pointee.want |= UInt32(FUSE_CAP_READDIRPLUS)
            }
        }
        ops.lookup = { req, parent, name in
            let fs = FuseSession.instance(req)
            let name = String(cString: name!)
            do {
                var param = fs.entry(try fs.filesystem.lookup(parent: parent, name: name))
                fuse_reply_entry(req, &param)
            } catch let error as FilesystemError where error.code == .notFound {
                // A negative entry (inode 0) lets the kernel remember "not there" for a while.
                var param = fuse_entry_param()
                param.entry_timeout = fs.timeouts.negativeEntry
                fuse_reply_entry(req, &param)
            } catch {
                fs.fail(req, error, op: "lookup", inode: parent)
            }
        }
        // Inode numbers are computed from catalog ids, so the kernel's lookup counts need no bookkeeping.
        ops.forget = { req, _, _ in fuse_reply_none(req) }
        ops.forget_multi = { req, _, _ in fuse_reply_none(req) }
        ops.getattr = { req, ino, fi in
            let fs = FuseSession.instance(req)
            if let fi, let pointer = UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh)), Node(inode: ino)?.isDirectory == false {
                // fstat, or the kernel checking before a read: the open handle's own attributes.
                var st = fs.fill(Unmanaged<OpenPhoto>.fromOpaque(pointer).takeUnretainedValue().attributes)
                fuse_reply_attr(req, &st, fs.timeouts.attributes)
                return
            }
            do {
                var st = fs.fill(try fs.filesystem.attributes(of: ino))
                fuse_reply_attr(req, &st, fs.timeouts.attributes)
            } catch {
                fs.fail(req, error, op: "getattr", inode: ino)
            }
        }
        ops.open = { req, ino, fi in
            let fs = FuseSession.instance(req)
            guard let fi else { fuse_reply_err(req, EINVAL); return }
            if fi.pointee.flags & O_ACCMODE != O_RDONLY || fi.pointee.flags & O_TRUNC != 0 {
                fuse_reply_err(req, EROFS)
                return
            }
            do {
                let handle = try fs.filesystem.open(inode: ino, processName: fs.processName(req))
                fi.pointee.fh = UInt64(UInt(bitPattern: Unmanaged.passRetained(handle).toOpaque()))
                // Cached bytes never change under one inode (a changed photo is a new cache file, and its
                // new size/mtime makes the kernel drop pages), so the page cache may keep them across opens.
                photofs_fi_set_open_flags(fi, 1, 1)
                if fuse_reply_open(req, fi) != 0 {
                    // The opener was interrupted; no release will come for this handle.
                    fs.filesystem.release(handle)
                    Unmanaged<OpenPhoto>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh))!).release()
                }
            } catch {
                fs.fail(req, error, op: "open", inode: ino)
            }
        }
        ops.read = { req, ino, size, offset, fi in
            let fs = FuseSession.instance(req)
            guard let fi, let pointer = UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh)) else {
                fuse_reply_err(req, EBADF)
                return
            }
            let handle = Unmanaged<OpenPhoto>.fromOpaque(pointer).takeUnretainedValue()
            // A deferred reply: if the bytes are still downloading, this handler returns and the download's
            // thread replies when they arrive (the kernel keeps the file, so the handle outlives the wait).
            fs.filesystem.whenReadable(handle, count: size, at: Int64(offset)) { error in
                if let error {
                    fs.fail(req, error, op: "read", inode: ino)
                    return
                }
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
                defer { buffer.deallocate() }
                do {
                    let count = try fs.filesystem.read(handle, into: buffer, at: Int64(offset))
                    fuse_reply_buf(req, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), count)
                } catch {
                    fs.fail(req, error, op: "read", inode: ino)
                }
            }
        }
        ops.release = { req, _, fi in
            let fs = FuseSession.instance(req)
            if let fi, let pointer = UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh)) {
                let handle = Unmanaged<OpenPhoto>.fromOpaque(pointer).takeRetainedValue()
                fs.filesystem.release(handle)
            }
            fuse_reply_err(req, 0)
        }
        ops.flush = { req, _, _ in fuse_reply_err(req, 0) }
        ops.opendir = { req, ino, fi in
            let fs = FuseSession.instance(req)
            guard let fi else { fuse_reply_err(req, EINVAL); return }
            do {
                let handle = DirectoryHandle(listing: try fs.filesystem.listing(of: ino), parent: fs.filesystem.parent(of: ino))
                fi.pointee.fh = UInt64(UInt(bitPattern: Unmanaged.passRetained(handle).toOpaque()))
                // The kernel may keep this listing until the catalog changes (we invalidate the directory then).
                photofs_fi_set_dir_flags(fi, 1, 1)
                if fuse_reply_open(req, fi) != 0 {
                    Unmanaged<DirectoryHandle>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh))!).release()
                }
            } catch {
                fs.fail(req, error, op: "opendir", inode: ino)
            }
        }
        ops.readdir = { req, ino, size, offset, fi in FuseSession.instance(req).readDirectory(req, ino, size, offset, fi, plus: false) }
        ops.readdirplus = { req, ino, size, offset, fi in FuseSession.instance(req).readDirectory(req, ino, size, offset, fi, plus: true) }
        ops.releasedir = { req, _, fi in
            if let fi, let pointer = UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh)) {
                Unmanaged<DirectoryHandle>.fromOpaque(pointer).release()
            }
            fuse_reply_err(req, 0)
        }
        ops.statfs = { req, _ in
            let fs = FuseSession.instance(req)
            let usage = fs.filesystem.usage()
            var info = statvfs()
            info.f_bsize = 4096
            info.f_frsize = 4096
            info.f_blocks = UInt((usage.bytes + 4095) / 4096)
            info.f_files = UInt(usage.files)
            info.f_namemax = 255
            info.f_flag = UInt(ST_RDONLY)
            fuse_reply_statfs(req, &info)
        }
        ops.access = { req, ino, mask in
            // Reached only without default_permissions; writing is never allowed.
            fuse_reply_err(req, mask & W_OK != 0 ? EROFS : 0)
        }
        // Every call that would change the tree: the file system is read-only.
        ops.setattr = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.mknod = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.mkdir = { req, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.unlink = { req, _, _ in fuse_reply_err(req, EROFS) }
        ops.rmdir = { req, _, _ in fuse_reply_err(req, EROFS) }
        ops.symlink = { req, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.rename = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.link = { req, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.write = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.create = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.setxattr = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.removexattr = { req, _, _ in fuse_reply_err(req, EROFS) }
        ops.fallocate = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
    }

    /// Fills one readdir(plus) reply from the listing captured at opendir. Offsets: 1 is ".", 2 is "..",
    /// 3... the entries; each entry carries the offset of the one after it, as the kernel expects.
    func readDirectory(_ req: fuse_req_t?, _ ino: UInt64, _ size: Int, _ offset: off_t,
                       _ fi: UnsafeMutablePointer<fuse_file_info>?, plus: Bool) {
        guard let fi, let pointer = UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh)) else {
            fuse_reply_err(req, EBADF)
            return
        }
        let handle = Unmanaged<DirectoryHandle>.fromOpaque(pointer).takeUnretainedValue()
        let listing = handle.listing
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
        defer { buffer.deallocate() }
        var used = 0
        var index = Int(offset)
        let total = listing.entries.count + 2
        while index < total {
            let name: String
            var attributes: NodeAttributes
            var attributesKnown = true
            if index == 0 {
                name = "."
                attributes = listing.attributes
            } else if index == 1 {
                name = ".."
                attributes = (try? filesystem.attributes(of: handle.parent)) ?? listing.attributes
            } else {
                let entry = listing.entries[index - 2]
                name = entry.name
                attributes = entry.attributes
                if plus {
                    // A variant not rendered yet has no size to give, and a catalog that cannot be read has no
                    // attributes: such entries go without (the kernel's lookup then gets the real answer).
                    if let known = try? filesystem.currentIfKnown(entry.attributes) {
                        attributes = known
                    } else {
                        attributesKnown = false
                    }
                } else {
                    attributes = (try? filesystem.current(entry.attributes)) ?? entry.attributes
                }
            }
            let needed: Int
            if plus {
                var param = entry(attributes)
                if !attributesKnown {
                    // Node id 0 in a readdirplus entry means "no attributes here", not "no such file" (the
                    // kernel's fuse_direntplus_link skips it); the name, inode number and type still list,
                    // and the kernel sends a lookup when someone stats the file.
                    param.ino = 0
                    param.attr_timeout = 0
                    param.entry_timeout = 0
                }
                needed = fuse_add_direntry_plus(req, buffer + used, size - used, name, &param, off_t(index + 1))
            } else {
                var st = fill(attributes)
                needed = fuse_add_direntry(req, buffer + used, size - used, name, &st, off_t(index + 1))
            }
            if needed > size - used { break }
            used += needed
            index += 1
        }
        fuse_reply_buf(req, buffer, used)
    }
}

/// Termination signals are blocked in every thread but the one waiting in the FUSE loop: libfuse's handler
/// must run on that thread to wake it (its worker threads block signals; ours — catalog watcher, HTTP
/// workers — would otherwise take the signal and the loop would never notice).
public enum SignalMask {
    static let terminationSignals = [SIGINT, SIGTERM, SIGHUP]

    /// Call first thing in a process that will mount, before any thread starts: threads inherit the mask.
    public static func blockTerminationSignals() { change(SIG_BLOCK) }
    static func unblockTerminationSignals() { change(SIG_UNBLOCK) }

    private static func change(_ how: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in terminationSignals { sigaddset(&set, signal) }
        pthread_sigmask(how, &set, nil)
    }
}
