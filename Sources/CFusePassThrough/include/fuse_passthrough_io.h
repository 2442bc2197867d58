/* FUSE passthrough for libfuse 3.14 (passthrough_io.c): session I/O, backing files, an open reply through one. */
#ifndef PHOTOFS_FUSE_PASSTHROUGH_IO_H
#define PHOTOFS_FUSE_PASSTHROUGH_IO_H
#include <stdint.h>

struct fuse_session;
struct fuse_req;

/* Routes the mounted session's I/O through passthrough_io.c; call after fuse_session_mount, before the loop.
   0, or -errno. */
int photofs_session_passthrough_io(struct fuse_session *se);
/* Registers `fd` as a backing file: its id (> 0), or -errno (EPERM without CAP_SYS_ADMIN or when the kernel
   did not take passthrough at init). */
int32_t photofs_backing_open(struct fuse_session *se, int fd);
void photofs_backing_close(struct fuse_session *se, int32_t id);
/* fuse_reply_open (fi: its struct fuse_file_info) with the file served by the kernel from backing `backing_id`. */
int photofs_reply_open_passthrough(struct fuse_req *req, const void *fi, int32_t backing_id);

#endif
