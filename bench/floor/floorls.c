/* The least a FUSE file system can do for `ls -lR`: 89 directories of 1,124 empty-named files each
 * (~100,000, photofs's bench tree's shape; -DDIRS=3192 -DFILES=31 makes /events' shape), answered from nothing
 * (names and attributes computed), with readdirplus and one-hour timeouts as photofs gives. Measures the
 * kernel's own cost of a first walk. FLOOR_CACHE_DIR=1 lets the kernel keep listings as photofs's opendir does
 * (cache_readdir, keep_cache); FLOOR_BUSY_POLL_US with -s reads requests as photofs does (polling.h). */
/* 3.12, as photofs: below it fuse_session_loop_mt reads fuse_loop_cfg_create's config as the old struct and
   runs with no idle thread (a thread started and ended per request); see floorfs.c. */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include "polling.h"
#ifndef DIRS
#define DIRS 89
#endif
#ifndef FILES
#define FILES 1124
#endif
/* Above every directory's number. */
#define FILE_BASE 1000000
static void fill(fuse_ino_t ino, struct stat *st) {
    memset(st, 0, sizeof *st); st->st_ino = ino; st->st_mtime = 1700000000;
    if (ino == 1 || ino <= 1 + DIRS) { st->st_mode = S_IFDIR | 0755; st->st_nlink = 2; }
    else { st->st_mode = S_IFREG | 0444; st->st_nlink = 1; st->st_size = 100000 + ino; }
}
static fuse_ino_t file_ino(int dir, int file) { return FILE_BASE + (fuse_ino_t)dir * FILES + file; }
static void name_of(fuse_ino_t ino, char *buf) {
    if (ino <= 1 + DIRS) sprintf(buf, "2019-%03lu folder", (unsigned long)ino - 2);
    else sprintf(buf, "2019-01-01 10.%06lu Photo %lu.jpg", (unsigned long)(ino - FILE_BASE) % FILES, (unsigned long)ino % 5000);
}
static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)fi; struct stat st; fill(ino, &st); fuse_reply_attr(req, &st, 3600);
}
static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *n) {
    char buf[128];
    if (parent == 1) { for (int d = 0; d < DIRS; d++) { name_of(2 + d, buf); if (!strcmp(buf, n)) goto found_dir; continue;
        found_dir: { struct fuse_entry_param e; memset(&e, 0, sizeof e); e.ino = 2 + d; e.attr_timeout = e.entry_timeout = 3600; fill(e.ino, &e.attr); fuse_reply_entry(req, &e); return; } } }
    else { int d = parent - 2; for (int f = 0; f < FILES; f++) { fuse_ino_t ino = file_ino(d, f); name_of(ino, buf); if (!strcmp(buf, n)) {
        struct fuse_entry_param e; memset(&e, 0, sizeof e); e.ino = ino; e.attr_timeout = e.entry_timeout = 3600; fill(ino, &e.attr); fuse_reply_entry(req, &e); return; } } }
    fuse_reply_err(req, ENOENT);
}
static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)fi; char *buf = malloc(size); size_t used = 0; char name[128];
    int count = ino == 1 ? DIRS : FILES;
    for (off_t i = off; i < count; i++) {
        fuse_ino_t child = ino == 1 ? (fuse_ino_t)(2 + i) : file_ino(ino - 2, i);
        struct fuse_entry_param e; memset(&e, 0, sizeof e); e.ino = child; e.attr_timeout = e.entry_timeout = 3600; fill(child, &e.attr);
        name_of(child, name);
        size_t len = fuse_add_direntry_plus(req, buf + used, size - used, name, &e, i + 1);
        if (len > size - used) break;
        used += len;
    }
    fuse_reply_buf(req, buf, used); free(buf);
}
static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)ino; if (getenv("FLOOR_CACHE_DIR")) { fi->cache_readdir = 1; fi->keep_cache = 1; } fuse_reply_open(req, fi);
}
static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { (void)ino; (void)fi; fuse_reply_err(req, 0); }
static void ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *n, size_t s) { (void)ino; (void)n; (void)s; fuse_reply_err(req, EOPNOTSUPP); }
static void ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t s) { (void)ino; (void)s; fuse_reply_err(req, EOPNOTSUPP); }
static const struct fuse_lowlevel_ops ops = { .lookup = ll_lookup, .getattr = ll_getattr, .readdirplus = ll_readdirplus,
    .opendir = ll_opendir, .releasedir = ll_releasedir, .getxattr = ll_getxattr, .listxattr = ll_listxattr };
int main(int argc, char *argv[]) { return run_floor(argc, argv, &ops, sizeof ops); }
