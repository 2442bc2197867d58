#!/usr/bin/env python3
"""Warm re-read for `make bench`, both sides in one process (a process per file would hide the difference
under fork and exec): photos read whole through the mount against the same bytes read from the cache files
directly — with raw os.read, with Python's buffered open() (what Pillow uses) and with glibc stdio — and the
two halves of the raw time apart: open + close alone, and reads on descriptors already open.

Usage: warmread.py [--rounds 5] LIBRARY CACHE_DIR DIRECTORY   (every photo under DIRECTORY of the mount
whose original is in the cache, paired with that cache file)
Prints: key=value lines, times in microseconds per photo (the best round of each, as `perf stat -r` would
report a warm path: the slower rounds are other processes of the machine).
"""
import argparse
import ctypes
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


def read_buffered(paths):
    """What Pillow and photo scripts do: Python's buffered open() (its buffer sized by st_blksize)."""
    start = time.perf_counter()
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass
    return (time.perf_counter() - start) / len(paths)


LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.fopen.restype = ctypes.c_void_p
LIBC.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
LIBC.fread.restype = ctypes.c_size_t
LIBC.fread.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
LIBC.fclose.argtypes = [ctypes.c_void_p]


def read_stdio(paths):
    """glibc stdio: fopen + fread of 64 KiB until EOF + fclose (the FILE buffer is sized by st_blksize)."""
    buffer = ctypes.create_string_buffer(64 << 10)
    encoded = [os.fsencode(path) for path in paths]
    start = time.perf_counter()
    for path in encoded:
        stream = LIBC.fopen(path, b"rb")
        if not stream:
            raise OSError(ctypes.get_errno(), "fopen", path)
        try:
            while LIBC.fread(buffer, 1, 64 << 10, stream) > 0:
                pass
        finally:
            LIBC.fclose(stream)
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
    for name, measure in [("read", read_all), ("buffered", read_buffered), ("stdio", read_stdio),
                          ("open_close", open_close), ("pread", pread_open)]:
        for side, paths in [("mount", mount), ("direct", direct)]:
            results[f"{name}_{side}"] = min(measure(paths) for _ in range(args.rounds)) * 1e6
    print(f"files={len(mount)}")
    for key, value in results.items():
        print(f"{key}_us={value:.1f}")


if __name__ == "__main__":
    main()
