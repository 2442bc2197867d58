/* The least a FUSE file system can do per open + close: one file, open and release answered at once
 * (keep_cache, noflush), multithreaded like photofs. Measures the kernel round-trip floor on this machine. */
/* 3.12, as photofs (Sources/CFuse/shim.h): below it, fuse_session_loop_mt is fuse_session_loop_mt_32, which
   reads fuse_loop_cfg_create's config as the old struct (clone_fd, max_idle_threads) and so ran with no idle
   thread: every request started a thread and ended it (89-137 us per open + close, against 17-24 us now). */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include "polling.h"
static const char *name = "photo.jpg";
static void fill(fuse_ino_t ino, struct stat *st) {
    memset(st, 0, sizeof *st); st->st_ino = ino;
    if (ino == 1) { st->st_mode = S_IFDIR | 0755; st->st_nlink = 2; }
    else { st->st_mode = S_IFREG | 0444; st->st_nlink = 1; st->st_size = 4096; }
}
static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)fi; struct stat st; fill(ino, &st); fuse_reply_attr(req, &st, 3600);
}
static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *n) {
    if (parent != 1 || strcmp(n, name)) { fuse_reply_err(req, ENOENT); return; }
    struct fuse_entry_param e; memset(&e, 0, sizeof e); e.ino = 2; e.attr_timeout = 3600; e.entry_timeout = 3600;
    fill(2, &e.attr); fuse_reply_entry(req, &e);
}
static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)ino; fi->keep_cache = 1; fi->noflush = 1; fuse_reply_open(req, fi);
}
static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)ino; (void)fi; fuse_reply_err(req, 0);
}
static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)ino; (void)fi; static char buf[4096];
    if (off >= 4096) { fuse_reply_buf(req, NULL, 0); return; }
    fuse_reply_buf(req, buf, size < (size_t)(4096 - off) ? size : (size_t)(4096 - off));
}
static const struct fuse_lowlevel_ops ops = { .lookup = ll_lookup, .getattr = ll_getattr, .open = ll_open,
    .release = ll_release, .read = ll_read };
int main(int argc, char *argv[]) { return run_floor(argc, argv, &ops, sizeof ops); }
