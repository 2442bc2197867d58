/* FUSE passthrough for libfuse 3.14: the session I/O that adds it to the init and open replies. */
/* FUSE passthrough (kernel 6.9+): an open file answered with a backing file, whose reads and mmaps the kernel
   then serves from that file itself (its page cache, its read-ahead), never asking the daemon. libfuse 3.14
   knows nothing of it: it builds the init reply from a 32-bit `want` and its open reply has no backing id. So
   the session's I/O goes through the three functions below (fuse_session_custom_io, libfuse 3.14's own seam),
   which change two replies on their way to the kernel: the init reply gains FUSE_PASSTHROUGH and a stack
   depth of 1 when the kernel offered it, and an open reply sent by photofs_reply_open_passthrough gains
   FOPEN_PASSTHROUGH and its backing id. Everything else is passed to read(2), writev(2) and splice(2) as is;
   requests are read by one thread at a time (request_readers.c).
   Constants and layouts from the kernel's include/uapi/linux/fuse.h (7.40), which Debian 12's headers predate. */
#define _GNU_SOURCE /* splice(2) */
#define FUSE_USE_VERSION 312
#include <fuse3/fuse_lowlevel.h>
#include "fuse_passthrough_io.h"
#include "request_readers.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

#define PHOTOFS_FUSE_OPCODE_INIT 26
#define PHOTOFS_FUSE_INIT_EXT (1u << 30)
#define PHOTOFS_FUSE_PASSTHROUGH_FLAGS2 (1u << (37 - 32))
#define PHOTOFS_FOPEN_PASSTHROUGH (1u << 7)
/* FOPEN_DIRECT_IO | FOPEN_NOFLUSH | FOPEN_PARALLEL_DIRECT_WRITES | FOPEN_PASSTHROUGH */
#define PHOTOFS_FOPEN_PASSTHROUGH_MASK ((1u << 0) | (1u << 5) | (1u << 6) | (1u << 7))
struct photofs_fuse_backing_map { int32_t fd; uint32_t flags; uint64_t padding; };
#define PHOTOFS_FUSE_DEV_IOC_BACKING_OPEN _IOW(229, 1, struct photofs_fuse_backing_map)
#define PHOTOFS_FUSE_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

/* The backing id the open reply being written on this thread carries (0: none): a parameter from
   photofs_reply_open_passthrough to the writev libfuse's fuse_reply_open makes on the same thread, which
   libfuse's API has no other way to pass. */
static __thread int32_t photofs_open_backing_id;

/* userdata: the session's struct photofs_session_userdata. The init request's id and whether the kernel
   offered passthrough are set by the reading thread before the same request's handler writes its reply. */
static ssize_t photofs_io_read(int fd, void *buf, size_t len, void *userdata) {
    struct photofs_session_userdata *session = userdata;
    ssize_t res = session->readers != NULL ? photofs_request_readers_read(session->readers, fd, buf, len)
                                           : read(fd, buf, len);
    /* in header: len, opcode, unique, nodeid, uid, gid, pid, extlen+padding (40 bytes); fuse_init_in after. */
    if (res >= 40 + 20) {
        uint32_t opcode;
        memcpy(&opcode, (char *)buf + 4, 4);
        if (opcode == PHOTOFS_FUSE_OPCODE_INIT) {
            uint32_t flags, flags2;
            memcpy(&session->init_unique, (char *)buf + 8, 8);
            memcpy(&flags, (char *)buf + 40 + 12, 4);
            memcpy(&flags2, (char *)buf + 40 + 16, 4);
            session->kernel_offers_passthrough = (flags & PHOTOFS_FUSE_INIT_EXT) && (flags2 & PHOTOFS_FUSE_PASSTHROUGH_FLAGS2);
        }
    }
    return res;
}

static ssize_t photofs_io_writev(int fd, struct iovec *iov, int count, void *userdata) {
    const struct photofs_session_userdata *session = userdata;
    /* out header: len, error, unique (16 bytes); the reply's argument in iov[1]. */
    if (count == 2 && iov[0].iov_len == 16) {
        uint64_t unique;
        int32_t error;
        memcpy(&error, (char *)iov[0].iov_base + 4, 4);
        memcpy(&unique, (char *)iov[0].iov_base + 8, 8);
        if (error == 0 && photofs_open_backing_id > 0 && iov[1].iov_len == 16) {
            /* fuse_open_out: fh, open_flags, backing_id */
            char open_out[16];
            memcpy(open_out, iov[1].iov_base, 16);
            uint32_t open_flags;
            memcpy(&open_flags, open_out + 8, 4);
            /* The kernel refuses (EIO at open) any other flag beside passthrough: keep_cache above all. */
            open_flags = (open_flags & PHOTOFS_FOPEN_PASSTHROUGH_MASK) | PHOTOFS_FOPEN_PASSTHROUGH;
            memcpy(open_out + 8, &open_flags, 4);
            memcpy(open_out + 12, &photofs_open_backing_id, 4);
            struct iovec patched[2] = { iov[0], { open_out, 16 } };
            return writev(fd, patched, 2);
        }
        if (error == 0 && session->kernel_offers_passthrough && unique == session->init_unique && iov[1].iov_len >= 40) {
            /* fuse_init_out: ... flags at 12, flags2 at 32, max_stack_depth at 36 (libfuse 3.14's unused[0]). */
            char init_out[64];
            size_t size = iov[1].iov_len < sizeof init_out ? iov[1].iov_len : sizeof init_out;
            memcpy(init_out, iov[1].iov_base, size);
            uint32_t flags, flags2, depth = 1;
            memcpy(&flags, init_out + 12, 4);
            memcpy(&flags2, init_out + 32, 4);
            flags |= PHOTOFS_FUSE_INIT_EXT;
            flags2 |= PHOTOFS_FUSE_PASSTHROUGH_FLAGS2;
            memcpy(init_out + 12, &flags, 4);
            memcpy(init_out + 32, &flags2, 4);
            memcpy(init_out + 36, &depth, 4);
            struct iovec patched[2] = { iov[0], { init_out, size } };
            return writev(fd, patched, 2);
        }
    }
    return writev(fd, iov, count);
}

static ssize_t photofs_io_splice_send(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
                                             unsigned int flags, void *userdata) {
    (void)userdata;
    return splice(fdin, offin, fdout, offout, len, flags);
}

/* Routes the mounted session's I/O through the functions above; call after fuse_session_mount, before the
   loop (libfuse decides at init what the I/O can do). 0, or -errno. */
int photofs_session_passthrough_io(struct fuse_session *se) {
    struct fuse_custom_io io;
    memset(&io, 0, sizeof io);
    io.read = photofs_io_read;
    io.writev = photofs_io_writev;
    io.splice_send = photofs_io_splice_send;
    return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}

/* Registers `fd` as a backing file with the kernel: its id (> 0), or -errno (EPERM without CAP_SYS_ADMIN or
   when the kernel did not take passthrough at init). */
int32_t photofs_backing_open(struct fuse_session *se, int fd) {
    struct photofs_fuse_backing_map map;
    memset(&map, 0, sizeof map);
    map.fd = fd;
    int id = ioctl(fuse_session_fd(se), PHOTOFS_FUSE_DEV_IOC_BACKING_OPEN, &map);
    return id < 0 ? -errno : id;
}

void photofs_backing_close(struct fuse_session *se, int32_t id) {
    uint32_t value = (uint32_t)id;
    (void)ioctl(fuse_session_fd(se), PHOTOFS_FUSE_DEV_IOC_BACKING_CLOSE, &value);
}

/* fuse_reply_open with the open file served by the kernel from backing file `backing_id`. */
int photofs_reply_open_passthrough(struct fuse_req *req, const void *fi, int32_t backing_id) {
    photofs_open_backing_id = backing_id;
    int result = fuse_reply_open(req, (const struct fuse_file_info *)fi);
    photofs_open_backing_id = 0;
    return result;
}

