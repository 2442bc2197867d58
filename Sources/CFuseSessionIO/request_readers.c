/* One FUSE request reader at a time, busy-polling between requests; a watchdog adds a reader when one is held. */
/* Why: libfuse's multithreaded loop keeps every idle thread asleep in read(2) on /dev/fuse, so each request
   wakes one, and the kernel pays that wake-up in the caller's system call (a close(2) that queues a RELEASE
   took 10.5 us against 2.5 us with a reader already awake). On a virtual machine that does not poll when idle
   (cpuidle-haltpoll with guest_halt_poll_ns=0, as this project's 2-core Firecracker machines run), waking a
   thread on an idle virtual CPU costs tens of microseconds, and a program reading photos sends its requests one
   after another: open, ioctl (Python's isatty), release, the next open. Measured on 255 cached photos read whole
   in one process (bench/warmread.py, 2026-11-27, three interleaved runs each): with libfuse's loop as it is,
   Python's buffered reads took 1.91-2.04x the cache files and raw reads 1.59-1.78x; with one reader that polls
   for the next request for up to 200 us, 1.17-1.33x and 1.15-1.26x (an open + ioctl 106 -> 58 us). Polling
   alone, with every idle thread still asleep in read(2), gained 0-10 % (a woken sleeper took the request).
   So: one thread at a time holds the reading slot; it polls /dev/fuse for up to the busy-poll window (200 us by
   default, KVM's own halt_poll_ns) and then sleeps in read(2); once it has a request it gives the slot up
   without waking anyone, handles the request and, most often, comes back for the next one itself. A handler
   that blocks (a download's first bytes, a listing being built) must not hold everyone else's requests: a
   watchdog thread that wakes every `promote_after` while requests come lets a waiting thread take the slot once
   it has been free that long (250 us: far above a cached handler's 5-20 us, far below any wait a person
   notices), and sleeps when nothing has changed for 100 ms. It looks every 2 ms, not every `promote_after`: a
   wake-up of its own every 250 us while requests flow was 4,000 a second on a 2-core machine that `ls` and the
   reader already keep busy (a first `ls -lR` of 3,192 event folders after mount: 941-999 ms against 983-1091 ms,
   four interleaved pairs, 2026-11-27), and a handler held that long is a download or a build, which 2 ms more
   do not change.
   The window adapts as KVM's halt polling does (photofs_next_poll_window): a request that came after the window
   but within five times it doubles the window, up to that; one that came later halves it, down to the window
   asked for. A program that reads each photo whole sends its next request (the release, then the next open)
   once its reads are done: 110-250 us for a 1.6 MB photo on this project's machines, so with 200 us the reader
   was often asleep and the release and the open each paid a wake-up. Measured with 400 local photos read whole
   by a program pausing 150 us after each (~280 us between requests; 2026-11-27, two runs each): open 24-37 us
   against 50 us, close 3.5 us against 12 us, 312-323 us a photo against 340-349 us, for 0.2 s more of the
   daemon's CPU over 2,400 photos (the gaps polled through); without the pause, nothing changes. A program that
   pauses longer (a viewer showing the photo) brings the window back down, one halving per pause.
   Polling needs a second CPU: on the requesting program's own CPU the poller, yielding or not, keeps it from
   running (EEVDF picks the poller again while the program's lag is negative). Both pinned to one CPU, 400
   local photos read whole took 486 us a photo with polling (an open 264 us) and 270 us without (an open
   25 us: a wake-up on the same CPU is cheap), so a mount that may use one CPU reads with libfuse's loop
   (photofs_usable_cpus). On two or more the scheduler keeps them apart: a trace of 2,400 opens found the
   program and the poller on one CPU for 0-123 of them.
   Except after a pause: a reader woken from read(2) by a request is put by the kernel beside the program that
   sent it, most often on its CPU (74 of 99 cold opens traced), and polling there keeps that program from
   running. A program reading photos whose pages are not cached sends a release, then an open, and then waits
   1.2-1.6 ms for the disk, longer than the default window's ceiling (1 ms), so the release always woke the
   reader, which polled on the program's CPU or, elsewhere, left the program's CPU to halt while it waited (its
   answers then woke it from halt: 35 us in a trace). Not polling, the reader and the program take turns on
   one CPU without a halt. 400 such photos read whole, 2026-11-28, page cache dropped (drop_caches=1), medians
   of 6 rounds in 2 pairs of mounts: an open 112-126 us polling against 56-60 us paused, a close 92-118 us
   against 21-24 us; dentries and inodes dropped too (drop_caches=3): an open 131-142 against 92-103 us, a
   close 74-77 against 24-26 us. So a request that came more than the window's ceiling after the reader began
   to read, which it slept for, pauses polling; a request found waiting when the reader comes back resumes it
   (its sender ran while this thread did), and so do 4 requests in a row that each came within the window: a
   program whose every request waits for its answer (stat, getxattr) would otherwise never leave the pause,
   and 4 is one more than a Python open after a pause sends (a lookup, an open, an isatty ioctl) before its
   disk read. photofs_next_poll_pause is the rule. A short sleep alone changes nothing: pausing after any sleep
   also stopped the polling that served programs reading cached photos with pauses of 150 us (an open 41-47
   us went to 62-67 us). The window itself keeps adapting while paused, from the same waits. */
#define _GNU_SOURCE
#include "request_readers.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The watchdog sleeps once nothing has changed hands for this long: an idle mount costs no wake-ups. */
#define PHOTOFS_WATCHDOG_PARK_AFTER_NANOSECONDS 100000000
/* The poll window grows up to this many times the one asked for (see above): 1 ms with the default 200 us. */
#define PHOTOFS_POLL_WINDOW_GROWTH 5
/* Requests in a row, each within the window, that end a pause of polling (see above). */
#define PHOTOFS_QUICK_REQUESTS_TO_RESUME 4
/* How often the watchdog looks while requests come (see above). */
#define PHOTOFS_WATCHDOG_NAP_NANOSECONDS 2000000

struct photofs_request_readers {
    pthread_mutex_t lock;
    /* Threads wait here for the reading slot. */
    pthread_cond_t turn;
    /* The watchdog sleeps here when nothing happens. */
    pthread_cond_t watchdog_wake;
    /* The window asked for, the window now (photofs_next_poll_window) and its ceiling. */
    int64_t busy_poll;
    int64_t poll_window;
    int64_t poll_window_max;
    /* Whether reads poll (see above; photofs_next_poll_pause), and the window the last read polled for. */
    struct photofs_poll_pause pause;
    int64_t last_window;
    int64_t promote_after;
    /* 1 while a thread holds the slot (polling, or asleep in read(2)). */
    int reading;
    /* Threads waiting for the slot. */
    int waiting;
    /* When the slot was last given up, and when it last changed hands (monotonic nanoseconds). */
    int64_t freed_at;
    int64_t changed_at;
    int watchdog_parked;
    int stopping;
    pthread_t watchdog;
};

static int64_t monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* Takes the lock. A sleeping watchdog is woken only when a thread is waiting, the one case it has work (after
   the unlock: the woken watchdog then does not wait for the lock the waker still holds). `waited`: how long
   after the slot was taken a request came (the poll window adapts to it, photofs_next_poll_window); negative
   when none did (cancelled). `slept`: whether no request was waiting when the reader went into read(2).
   Only the slot's holder changes the window, so it sees no other change here. */
static void give_up_slot(struct photofs_request_readers *readers, int64_t waited, int slept) {
    pthread_mutex_lock(&readers->lock);
    int64_t now = monotonic_nanoseconds();
    if (waited >= 0) {
        readers->pause = photofs_next_poll_pause(readers->pause, slept, waited, readers->poll_window,
                                                 readers->poll_window_max);
        readers->poll_window = photofs_next_poll_window(readers->poll_window, readers->busy_poll,
                                                        readers->poll_window_max, waited);
    }
    readers->reading = 0;
    readers->freed_at = now;
    readers->changed_at = now;
    int wake_watchdog = readers->watchdog_parked && readers->waiting > 0;
    pthread_mutex_unlock(&readers->lock);
    if (wake_watchdog) pthread_cond_signal(&readers->watchdog_wake);
}

/* Cancellation handlers: libfuse cancels its workers at unmount, in read(2), poll(2) or the wait for a turn. */
static void cancelled_while_waiting(void *argument) {
    struct photofs_request_readers *readers = argument;
    readers->waiting -= 1;
    pthread_mutex_unlock(&readers->lock);
}

static void cancelled_while_reading(void *argument) {
    give_up_slot(argument, -1, 0);
}

/* Returns 1 once /dev/fuse has a request (or an error, or the unmount's hang-up), 0 when the window (0: one look)
   ends without one. Gives way to any runnable thread on this CPU (a download, a render) on each turn: polling is
   worth a wake-up, no more. */
static int busy_poll(int fd, int64_t started, int64_t window) {
    int64_t deadline = started + window;
    struct pollfd request = { .fd = fd, .events = POLLIN };
    for (;;) {
        if (poll(&request, 1, 0) != 0) return 1;
        if (monotonic_nanoseconds() >= deadline) return 0;
        sched_yield();
    }
}

int photofs_usable_cpus(void) {
    cpu_set_t set;
    /* EINVAL: a machine with more CPUs than a cpu_set_t holds (1,024), which is not one CPU. */
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}

struct photofs_poll_pause photofs_next_poll_pause(struct photofs_poll_pause pause, int slept, int64_t waited,
                                                  int64_t window, int64_t ceiling) {
    struct photofs_poll_pause polling = { .paused = 0, .quick_requests = 0 };
    if (!slept) return polling;
    if (waited > ceiling) return (struct photofs_poll_pause){ .paused = 1, .quick_requests = 0 };
    if (!pause.paused) return polling;
    if (waited > window) return (struct photofs_poll_pause){ .paused = 1, .quick_requests = 0 };
    if (pause.quick_requests + 1 >= PHOTOFS_QUICK_REQUESTS_TO_RESUME) return polling;
    return (struct photofs_poll_pause){ .paused = 1, .quick_requests = pause.quick_requests + 1 };
}

int64_t photofs_poll_window_for_read(int64_t window, struct photofs_poll_pause pause) {
    return pause.paused ? 0 : window;
}

int64_t photofs_request_readers_last_poll_window(struct photofs_request_readers *readers) {
    pthread_mutex_lock(&readers->lock);
    int64_t window = readers->last_window;
    pthread_mutex_unlock(&readers->lock);
    return window;
}

int64_t photofs_next_poll_window(int64_t window, int64_t asked, int64_t ceiling, int64_t waited) {
    if (waited <= window) return window;
    if (waited > ceiling) return window / 2 > asked ? window / 2 : asked;
    return window < ceiling / 2 ? window * 2 : ceiling;
}

ssize_t photofs_request_readers_read(struct photofs_request_readers *readers, int fd, void *buf, size_t len) {
    pthread_mutex_lock(&readers->lock);
    readers->waiting += 1;
    pthread_cleanup_push(cancelled_while_waiting, readers);
    while (readers->reading) pthread_cond_wait(&readers->turn, &readers->lock);
    pthread_cleanup_pop(0);
    readers->waiting -= 1;
    readers->reading = 1;
    int64_t started = monotonic_nanoseconds();
    readers->changed_at = started;
    int64_t window = photofs_poll_window_for_read(readers->poll_window, readers->pause);
    readers->last_window = window;
    pthread_mutex_unlock(&readers->lock);

    ssize_t result;
    int error;
    int waiting_request;
    pthread_cleanup_push(cancelled_while_reading, readers);
    waiting_request = busy_poll(fd, started, window);
    result = read(fd, buf, len);
    error = errno;
    pthread_cleanup_pop(0);
    give_up_slot(readers, monotonic_nanoseconds() - started, !waiting_request);
    errno = error;
    return result;
}

static void *watch(void *argument) {
    struct photofs_request_readers *readers = argument;
    pthread_mutex_lock(&readers->lock);
    while (!readers->stopping) {
        int64_t now = monotonic_nanoseconds();
        if (!readers->reading && readers->waiting > 0) {
            if (now - readers->freed_at >= readers->promote_after) {
                /* The slot's last holder is busy with its request: a waiting thread reads the next. Counted
                   from now again, so the one woken has a full period to take the slot before another is. */
                pthread_cond_signal(&readers->turn);
                readers->freed_at = now;
            }
        } else if (now - readers->changed_at >= PHOTOFS_WATCHDOG_PARK_AFTER_NANOSECONDS) {
            readers->watchdog_parked = 1;
            pthread_cond_wait(&readers->watchdog_wake, &readers->lock);
            readers->watchdog_parked = 0;
            continue;
        }
        pthread_mutex_unlock(&readers->lock);
        struct timespec nap = { .tv_sec = 0, .tv_nsec = PHOTOFS_WATCHDOG_NAP_NANOSECONDS };
        nanosleep(&nap, NULL);
        pthread_mutex_lock(&readers->lock);
    }
    pthread_mutex_unlock(&readers->lock);
    return NULL;
}

struct photofs_request_readers *photofs_request_readers_create(int64_t busy_poll_nanoseconds,
                                                               int64_t promote_after_nanoseconds) {
    if (busy_poll_nanoseconds <= 0 || promote_after_nanoseconds <= 0 || promote_after_nanoseconds >= 1000000000) return NULL;
    struct photofs_request_readers *readers = calloc(1, sizeof *readers);
    if (readers == NULL) return NULL;
    pthread_mutex_init(&readers->lock, NULL);
    pthread_cond_init(&readers->turn, NULL);
    pthread_cond_init(&readers->watchdog_wake, NULL);
    readers->busy_poll = busy_poll_nanoseconds;
    readers->poll_window = busy_poll_nanoseconds;
    readers->poll_window_max = busy_poll_nanoseconds * PHOTOFS_POLL_WINDOW_GROWTH;
    readers->promote_after = promote_after_nanoseconds;
    readers->changed_at = monotonic_nanoseconds();
    /* The watchdog takes no signal: they are for the thread in the session's loop. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    int started = pthread_create(&readers->watchdog, NULL, watch, readers);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (started != 0) {
        pthread_cond_destroy(&readers->watchdog_wake);
        pthread_cond_destroy(&readers->turn);
        pthread_mutex_destroy(&readers->lock);
        free(readers);
        return NULL;
    }
    pthread_setname_np(readers->watchdog, "photofs-readers");
    return readers;
}

void photofs_request_readers_destroy(struct photofs_request_readers *readers) {
    if (readers == NULL) return;
    pthread_mutex_lock(&readers->lock);
    readers->stopping = 1;
    pthread_cond_signal(&readers->watchdog_wake);
    pthread_mutex_unlock(&readers->lock);
    pthread_join(readers->watchdog, NULL);
    pthread_cond_destroy(&readers->watchdog_wake);
    pthread_cond_destroy(&readers->turn);
    pthread_mutex_destroy(&readers->lock);
    free(readers);
}
