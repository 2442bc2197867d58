/* CFuse: libfuse3 low-level API for Swift, plus the few calls Swift cannot make itself (macros, bitfields). */
#ifndef PHOTOFS_CFUSE_SHIM_H
#define PHOTOFS_CFUSE_SHIM_H

/* 3.12: the first API level with fuse_loop_cfg_*; Debian 12 ships 3.14. */
#define FUSE_USE_VERSION 312
#include <stddef.h>
#include <fuse_lowlevel.h>

/* fuse_session_loop_mt is a macro that picks a versioned symbol. */
static inline int photofs_fuse_loop_mt(struct fuse_session *se, unsigned int max_idle_threads, unsigned int max_threads) {
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    if (config == NULL) return -1;
    fuse_loop_cfg_set_idle_threads(config, max_idle_threads);
    fuse_loop_cfg_set_max_threads(config, max_threads);
    int result = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    return result;
}

/* struct fuse_file_info flags are C bitfields. */
static inline void photofs_fi_set_open_flags(struct fuse_file_info *fi, int keep_cache, int direct_io, int noflush) {
    fi->keep_cache = keep_cache ? 1 : 0;
    fi->direct_io = direct_io ? 1 : 0;
    fi->noflush = noflush ? 1 : 0;
}
static inline void photofs_fi_set_dir_flags(struct fuse_file_info *fi, int cache_readdir, int keep_cache) {
    fi->cache_readdir = cache_readdir ? 1 : 0;
    fi->keep_cache = keep_cache ? 1 : 0;
}

/* Answers a read with `size` bytes of the open file `fd` at `offset`. With FUSE_CAP_SPLICE_WRITE libfuse
   splices them from the file's pages into /dev/fuse (the daemon never copies them); otherwise, or when the
   pipe cannot take them, it reads them into a buffer of its own. FUSE_BUFVEC_INIT is a macro Swift cannot call. */
static inline int photofs_reply_file(fuse_req_t req, int fd, off_t offset, size_t size) {
    struct fuse_bufvec buffer = FUSE_BUFVEC_INIT(size);
    buffer.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buffer.buf[0].fd = fd;
    buffer.buf[0].pos = offset;
    return fuse_reply_data(req, &buffer, FUSE_BUF_SPLICE_NONBLOCK);
}

#endif
