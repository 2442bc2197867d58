// The FUSE adapter: registers libfuse low-level callbacks, turns each request into a PhotoFilesystem call and
// its result into a reply. The only code that touches fuse_req_t.
import CFuse
import CFuseSessionIO
import Foundation
import Logging
import PhotoFS
import PhotoTree

public struct FuseMountError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

public final class FuseSession: @unchecked Sendable {
    let filesystem: PhotoFilesystem
    let logger: Logger
    private var session: OpaquePointer?
    private let notifyLock = NSLock()
    private var notifying = true
    private var arguments: [UnsafeMutablePointer<CChar>?] = []
    public let mountpoint: String
    /// Reads that a download's thread will answer: settled before unmount, so none replies through a
    /// session that is gone.
    let deferredReads = DeferredReplies<fuse_req_t?>()
    /// Which local photos the kernel reads from their files itself (FUSE passthrough), under its lock; the
    /// registration (an ioctl) is made under it too, so two opens of one inode cannot register two backings.
    private let passThroughLock = NSLock()
    /// Which failed requests are logged (`RepeatedFailures`), under `failuresLock` (a leaf).
    private var failures = RepeatedFailures()
    private let failuresLock = NSLock()
    private var passThrough = PassThroughPolicy()
    /// Whether a timer is armed for the oldest idle backing's expiry (under `passThroughLock`).
    private var idleExpiryArmed = false
    /// The session's userdata: this session (what each request's handler finds it by) and what its I/O learns
    /// at init (passthrough_io.c), and who reads its requests (request_readers.c). Allocated here, freed after the
    /// session.
    private let userdata = UnsafeMutablePointer<photofs_session_userdata>.allocate(capacity: 1)

    /// `options` are extra `-o` mount options (allow_other, ...). Every write is refused (EROFS).
    public init(filesystem: PhotoFilesystem, mountpoint: String, fsName: String, options: [String], logger: Logger) {
        self.filesystem = filesystem
        self.mountpoint = mountpoint
        self.logger = logger
        // fsname shows in `mount` and `df`; commas would end the option, so they go.
        let name = fsName.replacingOccurrences(of: ",", with: "_")
        // default_permissions is always set: the kernel checks every access against the modes we give
        // (private photos 0400, see Listing.swift), so an allow_other mount cannot show them to others. It
        // also means the kernel never sends FUSE_ACCESS (it answers access(2) itself), so there is no access
        // handler. Writes are refused with EROFS by each mutating call; the kernel's mount is not `ro` unless
        // a user asks for it (`-o ro`, an fstab line): on a read-only mount the kernel answers rmdir with EROFS
        // itself, and `rmdir /search/<query>` forgets a search. The cost of `rw`: statvfs(2) does not say
        // ST_RDONLY (the kernel takes f_flag from the mount's flags; FUSE's statfs reply has no field for it),
        // so a program running as root that asks access(W_OK) is told yes and then gets EROFS.
        var all = ["default_permissions", "fsname=\(name)", "subtype=photofs"]
        all += options.flatMap { $0.split(separator: ",").map(String.init) }
            .filter { $0 != "rw" && !$0.isEmpty }
        arguments = ["photofs", "-o", all.joined(separator: ",")].map { (argument: String) in strdup(argument) }
        // Here, not in mount(): deinit reads it whether or not the session was mounted.
        userdata.initialize(to: photofs_session_userdata(owner: Unmanaged.passUnretained(self).toOpaque(), init_unique: 0,
                                                         kernel_offers_passthrough: 0, readers: nil))
    }

    deinit {
        if let session { fuse_session_destroy(session) }
        photofs_request_readers_destroy(userdata.pointee.readers)
        userdata.deallocate()
        for argument in arguments { free(argument) }
    }

    /// Creates the session and mounts it; after this returns the mount is live (requests queue until `run`).
    public func mount() throws {
        var ops = fuse_lowlevel_ops()
        FuseSession.install(&ops)
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
        // Before the loop: libfuse decides at init what the session's I/O can do.
        let io = photofs_session_passthrough_io(session)
        if io != 0 {
            passThrough = PassThroughPolicy(isOn: false)
            logger.warning("local photos are read through the daemon (no passthrough I/O)", metadata: ["error": "\(io)"])
        } else if filesystem.options.busyPollMicroseconds > 0 && photofs_usable_cpus() == 1 {
            logger.info("requests are read by libfuse's loop, without busy-polling: this process may use one CPU, which polling would take from the programs waiting for answers")
        } else if filesystem.options.busyPollMicroseconds > 0 {
            // 250 µs before a second thread reads while the first handles a request: request_readers.c says why.
            userdata.pointee.readers = photofs_request_readers_create(Int64(filesystem.options.busyPollMicroseconds) * 1000, 250_000)
            if userdata.pointee.readers == nil { logger.warning("requests are read by every idle thread (no busy-polling reader)") }
        }
        filesystem.invalidate = { [weak self] invalidations in self?.notifyKernel(invalidations) }
    }

    /// `inode`'s registered backing, which an open may reuse if the photo and its file are still what it reads.
    func reusableBacking(inode: UInt64) -> PassThroughPolicy.Reusable? {
        passThroughLock.withLock { passThrough.reusable(inode: inode) }
    }

    /// How the kernel reads a handle: from the photo's file itself (the backing to reply with), through the
    /// daemon, or not at all (refused). Nil for a handle that opened nothing to reuse a backing that is gone now.
    func passThroughDecision(_ handle: OpenPhoto, inode: UInt64) -> PassThroughPolicy.Decision? {
        let now = DispatchTime.now().uptimeNanoseconds
        passThroughLock.lock()
        var decision: PassThroughPolicy.Decision?
        if handle.passThroughFile == nil, let file = handle.localFile {
            // Direct I/O would take the reads from the backing to this handle, which has no file to read: opened
            // as usual instead (nil), as when the backing is gone.
            decision = handle.pageCache.directIO ? nil
                : passThrough.reusing(inode: inode, identity: handle.identity, file: file, now: now).map { .backing($0) }
        } else if let descriptor = handle.passThroughFile, let session {
            decision = register(descriptor, of: handle, inode: inode, session: session, now: now)
        } else {
            decision = passThrough.openingWithoutFile(inode: inode, now: now)
        }
        let stale = passThrough.takeBackingsToClose()
        passThroughLock.unlock()
        closeBackings(stale)
        if case .backing? = decision, handle.passThroughFile == nil {
            logger.debug("idle passthrough backing reused", metadata: ["inode": "\(inode)", "op": "open"])
        }
        logger.trace("passthrough", metadata: [
            "inode": "\(inode)", "op": "open", "decision": "\(decision.map { "\($0)" } ?? "backing gone")",
            "reused": "\(handle.passThroughFile == nil && handle.localFile != nil)", "closed": "\(stale.count)",
        ])
        return decision
    }

    /// The decision for a handle with a file the kernel could read, registering the file when the policy says
    /// so. Under `passThroughLock`.
    private func register(_ descriptor: Int32, of handle: OpenPhoto, inode: UInt64, session: OpaquePointer,
                          now: UInt64) -> PassThroughPolicy.Decision {
        // The file's identity lets a later open reuse its backing once idle.
        let file = handle.localFile
        let decision = passThrough.opening(inode: inode, identity: handle.identity, file: file,
                                           bypassingPageCache: handle.pageCache.directIO, now: now)
        guard decision == .register else { return decision }
        let id = photofs_backing_open(session, descriptor)
        guard id > 0 else {
            // EPERM: not root (the kernel wants CAP_SYS_ADMIN), or a kernel that did not take passthrough at init;
            // ENOTTY: a kernel before 6.9. Anything else is this file's (ELOOP: a file on a stacked file system).
            let everywhere = id == -EPERM || id == -ENOTTY
            passThrough.registrationFailed(inode: inode, everywhere: everywhere)
            let error = String(cString: strerror(-id))
            if everywhere {
                logger.notice("local photos are read through the daemon: the kernel refused passthrough",
                              metadata: ["error": "\(error)"])
            } else {
                logger.debug("photo read through the daemon: the kernel refused its file as a backing file",
                             metadata: ["inode": "\(inode)", "error": "\(error)"])
            }
            return .daemon
        }
        passThrough.registered(inode: inode, identity: handle.identity, file: file, id: id)
        return .backing(id)
    }

    /// A handle of `inode` that could have been passed through is gone (released, or its open never reached
    /// the kernel). Its backing stays registered, idle, for the next open (`PassThroughPolicy`).
    func passThroughClosed(_ handle: OpenPhoto, inode: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        passThroughLock.lock()
        passThrough.closed(inode: inode, passedThrough: handle.isPassedThrough, now: now)
        let stale = passThrough.takeBackingsToClose()
        armIdleExpiry()
        passThroughLock.unlock()
        closeBackings(stale)
    }

    /// Arms a one-shot timer for the oldest idle backing's expiry, if none is armed: a mount left alone lets go
    /// of its files 10 s after their last release, and one with nothing idle has no timer. Under `passThroughLock`.
    private func armIdleExpiry() {
        guard !idleExpiryArmed, let due = passThrough.idleExpiry else { return }
        idleExpiryArmed = true
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due &+ 1_000_000)) {
            [weak self] in self?.closeExpiredBackings()
        }
    }

    private func closeExpiredBackings() {
        let now = DispatchTime.now().uptimeNanoseconds
        passThroughLock.lock()
        idleExpiryArmed = false
        passThrough.closeExpired(now: now)
        let stale = passThrough.takeBackingsToClose()
        armIdleExpiry()
        passThroughLock.unlock()
        closeBackings(stale)
        if !stale.isEmpty { logger.debug("idle passthrough backings closed", metadata: ["count": "\(stale.count)"]) }
    }

    private func closeBackings(_ ids: [Int32]) {
        guard let session else { return }
        for id in ids { photofs_backing_close(session, id) }
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
        notifyLock.lock()
        notifying = false
        notifyLock.unlock()
        filesystem.invalidate = nil
        // libfuse joined its workers, so no read begins now; those still waiting for bytes get EIO, and
        // replies under way on download threads finish before the session is unmounted (and later destroyed).
        let settled = deferredReads.finish { req in fuse_reply_err(req, EIO) }
        if settled > 0 { logger.info("reads still downloading at unmount answered EIO", metadata: ["count": "\(settled)"]) }
        fuse_remove_signal_handlers(session)
        fuse_session_unmount(session)
        logger.info("unmounted", metadata: ["mountpoint": "\(mountpoint)", "loop_result": "\(result)"])
        // A positive result is the signal that ended the loop: a requested, clean stop.
        return result < 0 ? 1 : 0
    }

    /// Drops what the kernel cached for changed names and nodes. Called from the catalog watcher, never from
    /// a request handler (a notify from inside one can deadlock on the directory lock the request holds).
    /// Under `notifyLock`, so `run` can stop notifications before the session is unmounted and destroyed.
    func notifyKernel(_ invalidations: [KernelInvalidation]) {
        notifyLock.lock()
        defer { notifyLock.unlock() }
        guard notifying, let session else { return }
        for invalidation in invalidations {
            switch invalidation {
            case .entry(let parent, let name):
                // ENOENT only means the kernel had nothing cached for it.
                _ = fuse_lowlevel_notify_inval_entry(session, parent, name, name.utf8.count)
            case .inode(let inode):
                // Files: attributes only (offset -1). Their pages are never dropped by notification: that
                // would wait for the page locks of a reader whose bytes are still downloading; which version
                // of a photo's bytes the page cache may hold is decided at open (PageCachePolicy).
                // Directories: their pages hold the cached listing, which must go.
                let isDirectory = Node(inode: inode)?.isDirectory ?? false
                _ = fuse_lowlevel_notify_inval_inode(session, inode, isDirectory ? 0 : -1, 0)
            }
        }
        logger.debug("kernel caches invalidated", metadata: ["count": "\(invalidations.count)"])
    }

    // MARK: - Request handlers (called on libfuse's worker threads)

    /// A name as the kernel sent it, bytes and all (it need not be UTF-8).
    static func bytes(_ name: UnsafePointer<CChar>?) -> [UInt8] {
        guard let name else { return [] }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name)))
    }

    static func instance(_ req: fuse_req_t?) -> FuseSession {
        let userdata = fuse_req_userdata(req)!.assumingMemoryBound(to: photofs_session_userdata.self)
        return Unmanaged<FuseSession>.fromOpaque(userdata.pointee.owner).takeUnretainedValue()
    }

    func fill(_ attributes: NodeAttributes) -> stat {
        var st = stat()
        let size = max(0, attributes.size)
        st.st_ino = UInt(attributes.inode)
        st.st_mode = (attributes.isDirectory ? S_IFDIR : S_IFREG) | attributes.permissions
        st.st_nlink = UInt(attributes.linkCount)
        st.st_uid = filesystem.options.uid
        st.st_gid = filesystem.options.gid
        st.st_size = Int(size)
        st.st_blksize = StatFigures.preferredIOSize
        st.st_blocks = Int(StatFigures.blocks(forSize: size))
        let time = timespec(tv_sec: Int(attributes.mtime), tv_nsec: 0)
        st.st_mtim = time
        st.st_atim = time
        st.st_ctim = time
        return st
    }

    func entry(_ attributes: NodeAttributes, entryTimeout: Double, attributeTimeout: Double) -> fuse_entry_param {
        var param = fuse_entry_param()
        param.ino = attributes.inode
        param.generation = 1
        param.attr = fill(attributes)
        param.attr_timeout = attributeTimeout
        param.entry_timeout = entryTimeout
        return param
    }

    func fail(_ req: fuse_req_t?, _ error: Error, op: String, inode: UInt64) {
        let code = errnoValue(for: error)
        if code == ENOENT {
            logger.trace("not found", metadata: ["op": "\(op)", "inode": "\(inode)"])
        } else {
            let now = DispatchTime.now().uptimeNanoseconds
            let verdict = failuresLock.withLock { failures.failed("\(op) \(inode) \(code)", now: now) }
            if case .log(let leftOut) = verdict {
                var metadata: Logger.Metadata = ["op": "\(op)", "inode": "\(inode)", "error": "\(error)"]
                if leftOut > 0 { metadata["repeats"] = "\(leftOut) more in the last minute, not logged" }
                logger.warning("request failed", metadata: metadata)
            }
        }
        fuse_reply_err(req, code)
    }

    /// The process behind a request (for /recent: backups and file managers do not count).
    func opener(_ req: fuse_req_t?) -> OpenerIdentity? {
        guard let context = fuse_req_ctx(req) else { return nil }
        return filesystem.opener(thread: context.pointee.pid)
    }

    static func install(_ ops: inout fuse_lowlevel_ops) {
        ops.`init` = { userdata, conn in
            guard let conn else { return }
            for capability in KernelCapability.wanted {
                let flag: UInt32
                switch capability {
                case .parallelDirectoryOperations: flag = UInt32(FUSE_CAP_PARALLEL_DIROPS)
                case .readdirplus: flag = UInt32(FUSE_CAP_READDIRPLUS)
                case .spliceReplies: flag = UInt32(FUSE_CAP_SPLICE_WRITE)
                }
                if conn.pointee.capable & flag != 0 { conn.pointee.want |= flag }
            }
        }
        ops.lookup = { req, parent, name in
            let fs = FuseSession.instance(req)
            do {
                switch try fs.filesystem.lookup(parent: parent, nameBytes: FuseSession.bytes(name)) {
                case .entry(let attributes, let entryTimeout, let attributeTimeout):
                    var param = fs.entry(attributes, entryTimeout: entryTimeout, attributeTimeout: attributeTimeout)
                    fuse_reply_entry(req, &param)
                case .negative(let timeout):
                    // Node id 0: the kernel remembers "not there" for `timeout` seconds.
                    var param = fuse_entry_param()
                    param.entry_timeout = timeout
                    fuse_reply_entry(req, &param)
                }
            } catch {
                fs.fail(req, error, op: "lookup", inode: parent)
            }
        }
        // Inode numbers are computed from catalog ids, so the kernel's lookup counts need no bookkeeping.
        ops.forget = { req, _, _ in fuse_reply_none(req) }
        ops.forget_multi = { req, _, _ in fuse_reply_none(req) }
        ops.getattr = { req, ino, fi in
            let fs = FuseSession.instance(req)
            let handle = fi.flatMap { UnsafeRawPointer(bitPattern: UInt($0.pointee.fh)) }
                .map { Unmanaged<OpenPhoto>.fromOpaque($0).takeUnretainedValue() }
            do {
                let reply = try fs.filesystem.getattr(ino, handle: handle)
                var st = fs.fill(reply.attributes)
                fuse_reply_attr(req, &st, reply.timeout)
            } catch {
                fs.fail(req, error, op: "getattr", inode: ino)
            }
        }
        ops.open = { req, ino, fi in
            let fs = FuseSession.instance(req)
            guard let fi else { fuse_reply_err(req, EINVAL); return }
            do {
                let writing = fi.pointee.flags & O_ACCMODE != O_RDONLY, truncating = fi.pointee.flags & O_TRUNC != 0
                let opener = fs.opener(req)
                var reply = try fs.filesystem.open(inode: ino, forWriting: writing, truncating: truncating, opener: opener,
                                                   reusing: fs.reusableBacking(inode: ino))
                var decision = fs.passThroughDecision(reply.handle, inode: ino)
                if decision == nil {
                    // The idle backing went between the check and now (another thread's open of a new version,
                    // or its age), or the handle would read with direct I/O: opened as usual. The discarded
                    // handle's open and release ran their bookkeeping (page-cache counts, prefetch position);
                    // both are balanced by the release.
                    fs.filesystem.release(reply.handle)
                    reply = try fs.filesystem.open(inode: ino, forWriting: writing, truncating: truncating, opener: opener)
                    decision = fs.passThroughDecision(reply.handle, inode: ino)
                }
                let handle = reply.handle
                let flags = reply.flags
                photofs_fi_set_open_flags(fi, flags.keepCache ? 1 : 0, flags.directIO ? 1 : 0, flags.noFlush ? 1 : 0)
                let sent: Int32
                switch decision ?? .daemon {
                case .backing(let id):
                    handle.isPassedThrough = true
                    fi.pointee.fh = UInt64(UInt(bitPattern: Unmanaged.passRetained(handle).toOpaque()))
                    sent = photofs_reply_open_passthrough(req, fi, id)
                case .daemon, .register:
                    fi.pointee.fh = UInt64(UInt(bitPattern: Unmanaged.passRetained(handle).toOpaque()))
                    sent = fuse_reply_open(req, fi)
                case .refuse:
                    fs.filesystem.release(handle)
                    fs.logger.warning("photo refused: another version of it is open, read by the kernel from its file (an import since); close that and open again",
                                      metadata: ["photo": "\(handle.photoID)", "inode": "\(ino)", "op": "open"])
                    fuse_reply_err(req, EBUSY)
                    return
                }
                if sent != 0 {
                    // The opener was interrupted; no release will come for this handle.
                    fs.passThroughClosed(handle, inode: ino)
                    fs.filesystem.release(handle)
                    Unmanaged<OpenPhoto>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh))!).release()
                } else {
                    fs.filesystem.opened(handle)
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
            // thread replies when they arrive (the kernel keeps the file, so the handle outlives the wait),
            // unless the session ended first and `run` answered it.
            guard let ticket = fs.deferredReads.begin(req) else { fuse_reply_err(req, EIO); return }
            fs.filesystem.whenReadable(handle, count: size, at: Int64(offset)) { error in
                fs.deferredReads.answer(ticket) { req in
                    if let error {
                        fs.fail(req, error, op: "read", inode: ino)
                        return
                    }
                    if case .fileRange(let descriptor, let start, let count) = fs.filesystem.readReply(handle, count: size, at: Int64(offset)) {
                        // libfuse answers an error itself when the file cannot be read.
                        _ = photofs_reply_file(req, descriptor, off_t(start), count)
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
        }
        ops.release = { req, ino, fi in
            let fs = FuseSession.instance(req)
            if let fi, let pointer = UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh)) {
                let handle = Unmanaged<OpenPhoto>.fromOpaque(pointer).takeRetainedValue()
                fs.passThroughClosed(handle, inode: ino)
                fs.filesystem.release(handle)
            }
            fuse_reply_err(req, 0)
        }
        ops.flush = { req, _, _ in fuse_reply_err(req, 0) }
        installExtendedAttributes(&ops)
        ops.opendir = { req, ino, fi in
            let fs = FuseSession.instance(req)
            guard let fi else { fuse_reply_err(req, EINVAL); return }
            do {
                let directory = try fs.filesystem.openDirectory(ino, lister: fs.opener(req))
                fi.pointee.fh = UInt64(UInt(bitPattern: Unmanaged.passRetained(directory).toOpaque()))
                photofs_fi_set_dir_flags(fi, directory.flags.cacheListing ? 1 : 0, directory.flags.keepCache ? 1 : 0)
                if fuse_reply_open(req, fi) != 0 {
                    Unmanaged<OpenDirectory>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh))!).release()
                }
            } catch {
                fs.fail(req, error, op: "opendir", inode: ino)
            }
        }
        ops.readdir = { req, ino, size, offset, fi in FuseSession.instance(req).readDirectory(req, ino, size, offset, fi, plus: false) }
        ops.readdirplus = { req, ino, size, offset, fi in FuseSession.instance(req).readDirectory(req, ino, size, offset, fi, plus: true) }
        ops.releasedir = { req, _, fi in
            if let fi, let pointer = UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh)) {
                Unmanaged<OpenDirectory>.fromOpaque(pointer).release()
            }
            fuse_reply_err(req, 0)
        }
        ops.statfs = { req, _ in
            let usage = FuseSession.instance(req).filesystem.usage()
            var info = statvfs()
            info.f_bsize = UInt(usage.blockSize)
            info.f_frsize = UInt(usage.blockSize)
            info.f_blocks = UInt(usage.blocks)
            info.f_files = UInt(usage.files)
            info.f_namemax = UInt(usage.nameMax)
            fuse_reply_statfs(req, &info)
        }
        // Every call that would change the tree: the file system is read-only.
        ops.setattr = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.mknod = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.mkdir = { req, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.unlink = { req, _, _ in fuse_reply_err(req, EROFS) }
        ops.rmdir = { req, parent, name in
            let fs = FuseSession.instance(req)
            do {
                try fs.filesystem.removeDirectory(parent: parent, nameBytes: FuseSession.bytes(name))
                fuse_reply_err(req, 0)
            } catch {
                fs.fail(req, error, op: "rmdir", inode: parent)
            }
        }
        ops.symlink = { req, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.rename = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.link = { req, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.write = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.create = { req, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.setxattr = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
        ops.removexattr = { req, _, _ in fuse_reply_err(req, EROFS) }
        ops.fallocate = { req, _, _, _, _, _ in fuse_reply_err(req, EROFS) }
    }

    /// Packs readdir(plus) entries from the filesystem, from the kernel's offset on, until the buffer is full.
    func readDirectory(_ req: fuse_req_t?, _ ino: UInt64, _ size: Int, _ offset: off_t,
                       _ fi: UnsafeMutablePointer<fuse_file_info>?, plus: Bool) {
        guard let fi, let pointer = UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh)) else {
            fuse_reply_err(req, EBADF)
            return
        }
        let directory = Unmanaged<OpenDirectory>.fromOpaque(pointer).takeUnretainedValue()
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
        defer { buffer.deallocate() }
        var used = 0
        filesystem.directoryEntries(directory, from: Int64(offset), plus: plus) { item in
            // The name through withCString: passed as a `String` argument, each was copied into a new array
            // first (String.utf8CString and its array: about a quarter of a readdirplus's samples in `perf`).
            let needed = item.name.withCString { name -> Int in
                if plus {
                    var param = entry(item.attributes, entryTimeout: item.entryTimeout, attributeTimeout: item.attributeTimeout)
                    // Node id 0 in a readdirplus entry means "no attributes here", not "no such file".
                    if !item.attributesKnown { param.ino = 0 }
                    return fuse_add_direntry_plus(req, buffer + used, size - used, name, &param, off_t(item.nextOffset))
                }
                var st = fill(item.attributes)
                return fuse_add_direntry(req, buffer + used, size - used, name, &st, off_t(item.nextOffset))
            }
            guard needed <= size - used else { return false }
            used += needed
            return true
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
