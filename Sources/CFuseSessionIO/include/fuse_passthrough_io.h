/* FUSE passthrough for libfuse 3.14 (passthrough_io.c): session I/O, backing files, an open reply through one. */
#ifndef PHOTOFS_FUSE_PASSTHROUGH_IO_H
#define PHOTOFS_FUSE_PASSTHROUGH_IO_H
#include <stdint.h>

struct fuse_session;
struct fuse_req;
struct photofs_request_readers;

/* A session's userdata (what fuse_req_userdata returns): its owner, and what its I/O learns from the init
   request to change the init reply. One per session, so nothing of a session lives in process-wide state. */
struct photofs_session_userdata {
    void *owner;
    uint64_t init_unique;
    int kernel_offers_passthrough;
    /* Who reads the session's requests (request_readers.c); NULL: every idle thread of libfuse's loop. */
    struct photofs_request_readers *readers;
};

/* Routes the mounted session's I/O through passthrough_io.c; call after fuse_session_mount, before the loop.
   The session's userdata must be a struct photofs_session_userdata. 0, or -errno. */
int photofs_session_passthrough_io(struct fuse_session *se);
/* Registers `fd` as a backing file: its id (> 0), or -errno (EPERM without CAP_SYS_ADMIN or when the kernel
   did not take passthrough at init). */
int32_t photofs_backing_open(struct fuse_session *se, int fd);
void photofs_backing_close(struct fuse_session *se, int32_t id);
/* fuse_reply_open (fi: its struct fuse_file_info) with the file served by the kernel from backing `backing_id`. */
int photofs_reply_open_passthrough(struct fuse_req *req, const void *fi, int32_t backing_id);

#endif
