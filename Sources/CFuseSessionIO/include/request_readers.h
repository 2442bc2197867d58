/* One FUSE request reader at a time, busy-polling between requests (request_readers.c). */
#ifndef PHOTOFS_REQUEST_READERS_H
#define PHOTOFS_REQUEST_READERS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct photofs_request_readers;

/* Readers that poll /dev/fuse for up to `busy_poll_nanoseconds` (> 0; up to five times that while requests come
   just after it, photofs_next_poll_window) after each request before they sleep (but after a pause of the
   program that sends them: photofs_next_poll_pause),
   and let a second thread read once a request has been handled for `promote_after_nanoseconds` (looked at
   every 2 ms: a held handler holds the others up to that much longer). Starts the
   watchdog thread. NULL when out of memory or threads. */
struct photofs_request_readers *photofs_request_readers_create(int64_t busy_poll_nanoseconds,
                                                               int64_t promote_after_nanoseconds);
/* Stops the watchdog and frees; after the session's loop has ended (no thread reads any more). */
void photofs_request_readers_destroy(struct photofs_request_readers *readers);
/* The poll window after a request came `waited` ns after the reader began polling with `window`, as KVM's
   halt polling adapts: unchanged when it came within the window; doubled (at most `ceiling`) when it came
   after the window but within `ceiling`; halved (at least `asked`) when it came later still. */
int64_t photofs_next_poll_window(int64_t window, int64_t asked, int64_t ceiling, int64_t waited);
/* Whether reads poll: paused, and how many requests in a row came within the window since. */
struct photofs_poll_pause {
    int paused;
    int quick_requests;
};
/* Whether reads poll after a request that came `waited` ns after the reader began to read, and `slept` (1) or
   was waiting when it came back (0): paused after one it slept for that came after more than `ceiling` (the
   sender paused, and the kernel woke the reader on its CPU, where polling keeps it from running:
   request_readers.c); polling again after one that was waiting, or after the 4th in a row that came within
   `window` while paused; else as before (a request that came after the window resets the count). */
struct photofs_poll_pause photofs_next_poll_pause(struct photofs_poll_pause pause, int slept, int64_t waited,
                                                  int64_t window, int64_t ceiling);
/* The window a read polls for: none while polling is paused, else `window`. */
int64_t photofs_poll_window_for_read(int64_t window, struct photofs_poll_pause pause);
/* The window the last read of `readers` polled for, in nanoseconds (0: it did not poll). */
int64_t photofs_request_readers_last_poll_window(struct photofs_request_readers *readers);
/* How many CPUs the calling thread may run on (its affinity; 0 when it cannot say). With one, a polling reader
   only takes the CPU from the program waiting for its answer (request_readers.c), so the mount does not poll.
   A CPU quota (cgroup cpu.max) is not an affinity and is not seen here. */
int photofs_usable_cpus(void);
/* read(2) of the next request from `fd` by the session's one reader (waits for its turn). */
ssize_t photofs_request_readers_read(struct photofs_request_readers *readers, int fd, void *buf, size_t len);

#endif
