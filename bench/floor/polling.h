/* The floor file systems' shared parts: their request reader (FLOOR_BUSY_POLL_US=N with -s polls /dev/fuse for up to N us after each request) and their main. */
/* As photofs's request reader does (Sources/CFuseSessionIO/request_readers.c): one thread polls before it
   sleeps in read(2), yielding to any runnable thread on its CPU on each turn. */
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
static long busy_poll_ns;
static long now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000L + t.tv_nsec; }
static ssize_t polling_read(int fd, void *buf, size_t len, void *userdata) {
    (void)userdata; long deadline = now_ns() + busy_poll_ns; struct pollfd p = { .fd = fd, .events = POLLIN };
    while (poll(&p, 1, 0) == 0 && now_ns() < deadline) sched_yield();
    return read(fd, buf, len);
}
static ssize_t plain_writev(int fd, struct iovec *iov, int count, void *userdata) { (void)userdata; return writev(fd, iov, count); }
/* Installs the polling reader when FLOOR_BUSY_POLL_US asks for one; 0 on success. */
static int use_polling_reader(struct fuse_session *se) {
    busy_poll_ns = getenv("FLOOR_BUSY_POLL_US") ? atol(getenv("FLOOR_BUSY_POLL_US")) * 1000 : 0;
    static const struct fuse_custom_io io = { .read = polling_read, .writev = plain_writev };
    return busy_poll_ns > 0 ? fuse_session_custom_io(se, &io, fuse_session_fd(se)) : 0;
}
/* Parses libfuse's command line, mounts, reads requests (polling when asked) until unmounted: every floor's main. */
static int run_floor(int argc, char *argv[], const struct fuse_lowlevel_ops *ops, size_t size) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts opts;
    if (fuse_parse_cmdline(&args, &opts) != 0) return 1;
    struct fuse_session *se = fuse_session_new(&args, ops, size, NULL);
    if (!se || fuse_session_mount(se, opts.mountpoint) != 0) return 1;
    if (use_polling_reader(se) != 0) return 1;
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    int rc = opts.singlethread ? fuse_session_loop(se) : fuse_session_loop_mt(se, config);
    fuse_session_unmount(se); fuse_session_destroy(se); return rc;
}
