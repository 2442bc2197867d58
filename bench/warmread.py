#!/usr/bin/env python3
"""Warm re-read for `make bench`, both sides in one process (a process per file would hide the difference
under fork and exec): photos read whole through the mount against the same bytes read from the cache files
directly, and the two halves of that time apart: open + close alone, and reads on descriptors already open.

Usage: warmread.py [--rounds 5] LIBRARY CACHE_DIR DIRECTORY   (every photo under DIRECTORY of the mount
whose original is in the cache, paired with that cache file)
Prints: key=value lines, times in microseconds per photo (the best round of each, as `perf stat -r` would
report a warm path: the slower rounds are other processes of the machine).
"""
import argparse
import glob
import os
import sqlite3
import time


def read_all(paths):
    start = time.perf_counter()
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)
    return (time.perf_counter() - start) / len(paths)


def open_close(paths):
    start = time.perf_counter()
    for path in paths:
        os.close(os.open(path, os.O_RDONLY))
    return (time.perf_counter() - start) / len(paths)


def pread_open(paths):
    fds = [os.open(path, os.O_RDONLY) for path in paths]
    try:
        start = time.perf_counter()
        for fd in fds:
            offset = 0
            while True:
                chunk = os.pread(fd, 1 << 20, offset)
                if not chunk:
                    break
                offset += len(chunk)
        return (time.perf_counter() - start) / len(paths)
    finally:
        for fd in fds:
            os.close(fd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("library")
    parser.add_argument("cache")
    parser.add_argument("directory")
    args = parser.parse_args()
    catalog = sqlite3.connect(f"file:{args.library}?mode=ro", uri=True)
    mount, direct = [], []
    for folder, _, names in sorted(os.walk(args.directory)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            # A photo's inode is 1 << 56 | its catalog seq (PhotoTree's Node); its cache file starts with its id.
            seq = os.stat(path).st_ino - (1 << 56)
            row = catalog.execute("SELECT id FROM photo WHERE seq = ?", (seq,)).fetchone()
            cached = glob.glob(os.path.join(args.cache, "originals", glob.escape(str(row[0])) + "-*")) if row else []
            if len(cached) == 1:
                mount.append(path)
                direct.append(cached[0])
    results = {}
    for name, measure in [("read", read_all), ("open_close", open_close), ("pread", pread_open)]:
        for side, paths in [("mount", mount), ("direct", direct)]:
            results[f"{name}_{side}"] = min(measure(paths) for _ in range(args.rounds)) * 1e6
    print(f"files={len(mount)}")
    for key, value in results.items():
        print(f"{key}_us={value:.1f}")


if __name__ == "__main__":
    main()
