#!/usr/bin/env python3
"""Warm reads of the same files through a mount and directly, with the clients people use: raw os.read, Python's
buffered open() (what Pillow and scripts use), glibc stdio, and coreutils cat (one process for all files), for
`make bench` (bench/folders.sh), each side read once first, then 5 rounds in turns, the best of each side.

Usage: clientreads.py photofs MOUNT_DIR COUNT   (the first COUNT photos under MOUNT_DIR, each paired with its
                                                 file through user.xdg.origin.url)
       clientreads.py flat MOUNT_DIR SOURCE_DIR  (a floor file system's files, paired by name with SOURCE_DIR's)
Prints key=value lines: <client>_mount_us and <client>_direct_us, microseconds per file.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from folderread import photos_and_files  # noqa: E402
from warmread import read_all, read_buffered, read_stdio  # noqa: E402


def cat(paths):
    start = time.perf_counter()
    subprocess.run(["cat", *paths], stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) / len(paths)


def pairs():
    if sys.argv[1] == "flat":
        names = sorted(os.listdir(sys.argv[3]))
        return [os.path.join(sys.argv[2], n) for n in names], [os.path.join(sys.argv[3], n) for n in names]
    return photos_and_files(sys.argv[2], int(sys.argv[3]))


def main():
    mounted, files = pairs()
    for name, reader in [("raw", read_all), ("python", read_buffered), ("stdio", read_stdio), ("cat", cat)]:
        reader(mounted), reader(files)
        rounds = [(reader(mounted), reader(files)) for _ in range(5)]
        print(f"{name}_mount_us={min(m for m, _ in rounds) * 1e6:.1f}")
        print(f"{name}_direct_us={min(d for _, d in rounds) * 1e6:.1f}")


main()
