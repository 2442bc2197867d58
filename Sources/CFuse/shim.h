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

#endif
