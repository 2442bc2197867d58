/* The least a FUSE file system can do to serve real files: the files of one folder (FLOOR_SOURCE_DIR) in its
 * root, each open answered with the file's descriptor and keep_cache (its reads spliced from the file, then
 * kept in the mount's page cache), one-hour timeouts. Measures what a warm read by Python, stdio or cat pays
 * through the kernel per file (the open's round trip, and the ioctl Python's open() sends) with no daemon work.
 * FLOOR_BUSY_POLL_US with -s reads requests as photofs does (polling.h). */
/* 3.12, as photofs: see floorfs.c. */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "polling.h"
#define MAX_FILES 100000
static const char *source;
static char *names[MAX_FILES];
static int count;
static void fill(fuse_ino_t ino, struct stat *st) {
    memset(st, 0, sizeof *st);
    if (ino == 1) { st->st_mode = S_IFDIR | 0755; st->st_nlink = 2; st->st_ino = 1; return; }
    char path[4096]; snprintf(path, sizeof path, "%s/%s", source, names[ino - 2]);
    stat(path, st); st->st_ino = ino; st->st_mode = S_IFREG | 0444; st->st_nlink = 1;
}
static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)fi; struct stat st; fill(ino, &st); fuse_reply_attr(req, &st, 3600);
}
static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *n) {
    if (parent == 1) for (int i = 0; i < count; i++) if (!strcmp(names[i], n)) {
        struct fuse_entry_param e; memset(&e, 0, sizeof e); e.ino = 2 + i; e.attr_timeout = e.entry_timeout = 3600;
        fill(e.ino, &e.attr); fuse_reply_entry(req, &e); return;
    }
    fuse_reply_err(req, ENOENT);
}
static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)ino; (void)fi; char *buf = calloc(1, size); size_t used = 0;
    for (off_t i = off; i < count; i++) {
        struct stat st; memset(&st, 0, sizeof st); st.st_ino = 2 + i; st.st_mode = S_IFREG;
        size_t want = fuse_add_direntry(req, buf + used, size - used, names[i], &st, i + 1);
        if (want > size - used) break;
        used += want;
    }
    fuse_reply_buf(req, buf, used); free(buf);
}
static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    char path[4096]; snprintf(path, sizeof path, "%s/%s", source, names[ino - 2]);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { fuse_reply_err(req, errno); return; }
    fi->fh = (uint64_t)fd; fi->keep_cache = 1; fi->noflush = 1;
    if (fuse_reply_open(req, fi) != 0) close(fd);
}
static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)ino; struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK; buf.buf[0].fd = (int)fi->fh; buf.buf[0].pos = off;
    fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}
static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)ino; close((int)fi->fh); fuse_reply_err(req, 0);
}
static const struct fuse_lowlevel_ops ops = { .lookup = ll_lookup, .getattr = ll_getattr, .readdir = ll_readdir,
    .open = ll_open, .read = ll_read, .release = ll_release };
static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
int main(int argc, char *argv[]) {
    source = getenv("FLOOR_SOURCE_DIR");
    DIR *dir = source ? opendir(source) : NULL;
    if (!dir) { fprintf(stderr, "set FLOOR_SOURCE_DIR to a folder of files\n"); return 1; }
    for (struct dirent *entry; (entry = readdir(dir)) && count < MAX_FILES;)
        if (entry->d_type == DT_REG) names[count++] = strdup(entry->d_name);
    closedir(dir);
    qsort(names, count, sizeof names[0], by_name);
    return run_floor(argc, argv, &ops, sizeof ops);
}
