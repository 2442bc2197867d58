#!/usr/bin/env python3
"""Local photos read through a photofs mount against the same files read directly, for `make bench`
(bench/folders.sh), both sides in one process (a process per file would measure fork and exec).

Usage: folderread.py DIRECTORY COUNT [warm-only|cold-only]   (the first COUNT photos under DIRECTORY of the
mount, each paired with its file through user.xdg.origin.url)
Prints key=value lines, times in microseconds per photo: warm (both sides read once before, then 5 rounds of
each in turns, the best of each side) and cold, twice: the page cache dropped before each side
(`drop_caches=1`, keys pagecache_*), then the dentries and inodes too (`drop_caches=3`, keys cold_*), each in
COLD_ROUNDS rounds with each side first in every other one, the best and the median of each side (needs root,
else the cold figures are left out). `warm-only` and `cold-only` measure one of them.
"""
import os
import statistics
import sys
import time
import urllib.parse

COLD_ROUNDS = 8


def read_all(paths):
    start = time.perf_counter()
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)
    return (time.perf_counter() - start) / len(paths) * 1e6


def drop_caches(what=3):
    """1: the page cache; 3: the page cache, dentries and inodes."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as control:
        control.write(f"{what}\n")


def photos_and_files(directory, count):
    """The first `count` photos under `directory` of a mount (in name order) and the file each is served from
    (its user.xdg.origin.url)."""
    mounted = []
    for folder, _, names in sorted(os.walk(directory)):
        mounted += [os.path.join(folder, name) for name in sorted(names)]
    mounted = mounted[:count]
    files = []
    for path in mounted:
        uri = os.getxattr(path, "user.xdg.origin.url").decode()
        files.append(urllib.parse.unquote(uri[len("file://"):]))
    return mounted, files


def main():
    mounted, files = photos_and_files(sys.argv[1], int(sys.argv[2]))
    sizes = [os.stat(path).st_size for path in files]
    print(f"files={len(files)}")
    print(f"mean_kib={sum(sizes) / len(sizes) / 1024:.0f}")
    mode = sys.argv[3] if len(sys.argv) > 3 else ""
    if mode != "cold-only":
        read_all(mounted), read_all(files)
        # In turns, so that whatever else the machine does in those seconds weighs on both sides alike.
        rounds = [(read_all(mounted), read_all(files)) for _ in range(5)]
        print(f"warm_mount_us={min(mount for mount, _ in rounds):.1f}")
        print(f"warm_direct_us={min(direct for _, direct in rounds):.1f}")
    if mode != "warm-only" and os.access("/proc/sys/vm/drop_caches", os.W_OK):
        # Each side first in every other round, and the best of each side as for warm reads: a round of either
        # side takes 1.4–1.6 ms a photo or, about one in three, 2.0–2.4 ms, whichever side it is (ten rounds of
        # each, in a row and in turns, 2026-11-28): with the median of three rounds, the mount always first
        # (until then), one run's ratio moved between 0.81× and 1.50× from run to run. Eight rounds (~15 s a kind).
        # The page cache alone first, as the issue words "cold", then the dentries and inodes too: with those
        # dropped, every open through the mount is a LOOKUP as well as an OPEN (the files read directly find
        # their own dentries and inodes kept by the mount's idle passthrough backings, PassThroughPolicy).
        for what, key in ((1, "pagecache"), (3, "cold")):
            cold_mount, cold_direct = [], []
            for round in range(COLD_ROUNDS):
                sides = [(cold_mount, mounted), (cold_direct, files)]
                for results, paths in (sides if round % 2 == 0 else reversed(sides)):
                    drop_caches(what)
                    results.append(read_all(paths))
            print(f"{key}_mount_us={min(cold_mount):.1f}")
            print(f"{key}_direct_us={min(cold_direct):.1f}")
            print(f"{key}_median_mount_us={statistics.median(cold_mount):.1f}")
            print(f"{key}_median_direct_us={statistics.median(cold_direct):.1f}")


if __name__ == "__main__":
    main()
