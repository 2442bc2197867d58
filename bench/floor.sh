#!/usr/bin/env bash
# make bench: the floor under two loopback targets, measured with FUSE file systems in C that do nothing
# (bench/floor/*.c, libfuse 3.14's low-level API as photofs uses it): what one open + close of a file costs
# through the kernel and libfuse's loops, and what a first and second `ls -lR` of ~100,000 entries costs.
# Prints the figures; bench/notes.md quotes them.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${BENCH_WORK:-$PWD/bench-work-floor}
mkdir -p "$WORK"/{open,tree}
trap 'fusermount3 -uz "$WORK/open" 2>/dev/null || true; fusermount3 -uz "$WORK/tree" 2>/dev/null || true' EXIT
gcc -O2 -o "$WORK/floorfs" bench/floor/floorfs.c $(pkg-config --cflags --libs fuse3)
gcc -O2 -o "$WORK/floorls" bench/floor/floorls.c $(pkg-config --cflags --libs fuse3)
wait_mount() { for _ in $(seq 100); do mountpoint -q "$1" && return; sleep 0.05; done; echo "no mount at $1"; exit 1; }
open_close() { python3 -c '
import os, sys, time
path = sys.argv[1]
best = None
for _ in range(3):
    n = 20000
    t = time.perf_counter()
    for _ in range(n):
        os.close(os.open(path, os.O_RDONLY))
    per = (time.perf_counter() - t) / n * 1e6
    best = per if best is None else min(best, per)
print(f"{best:.1f}")' "$1"; }
for mode in multithreaded single-threaded busy-polling; do
  flag=$([ "$mode" != multithreaded ] && echo -s || true)
  poll=$([ "$mode" = busy-polling ] && echo 200 || echo 0)
  FLOOR_BUSY_POLL_US=$poll "$WORK/floorfs" "$WORK/open" -f $flag & wait_mount "$WORK/open"
  echo "open + close, libfuse $mode loop$([ "$poll" != 0 ] && echo " (one thread, polling 200 µs between requests)"): $(open_close "$WORK/open/photo.jpg") µs (best of 3 × 20,000)"
  fusermount3 -u "$WORK/open"; wait
done
"$WORK/floorls" "$WORK/tree" -f & wait_mount "$WORK/tree"
for pass in first second; do
  t0=$(date +%s.%N); ls -lR "$WORK/tree" > /dev/null; t1=$(date +%s.%N)
  echo "ls -lR of $(( 89 * 1124 )) entries in 89 directories, $pass: $(echo "$t1 - $t0" | bc -l | cut -c1-5) s"
done
fusermount3 -u "$WORK/tree"; wait
