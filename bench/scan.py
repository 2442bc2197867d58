#!/usr/bin/env python3
"""A library scan for `make bench`: what an import scan or `exiftool -fast` does to each photo (header: open, read
64 KiB in 8 KiB reads as exiftool and `identify -ping` do, close), or a Python script asking each photo its size
(pillow: `PIL.Image.open(p).size`).
Prints one line: photos, seconds, and the bytes the process read (from /proc/self/io, so Pillow's buffered reads
count as the kernel saw them).

Usage: scan.py header|pillow FILE...
"""
import os
import sys
import time


def bytes_read():
    with open("/proc/self/io") as io:
        return next(int(line.split()[1]) for line in io if line.startswith("rchar:"))


def main():
    mode, files = sys.argv[1], sys.argv[2:]
    if mode == "pillow":
        from PIL import Image
        Image.init()  # every format plugin imported now, so their files are not counted as photo bytes
    # Reading /proc/self/io is itself a read: its cost is measured and taken off.
    first = bytes_read()
    before = bytes_read()
    cost = before - first
    start = time.monotonic()
    for path in files:
        if mode == "header":
            fd = os.open(path, os.O_RDONLY)
            try:
                # 8 KiB at a time: the kernel's readahead then grows its reads (16, 32, 64, 128 KiB) past the
                # 64 KiB read, as it does for exiftool.
                for _ in range(8):
                    os.read(fd, 8 * 1024)
            finally:
                os.close(fd)
        else:
            with Image.open(path) as image:
                image.size
    elapsed = time.monotonic() - start
    read = bytes_read() - before - cost
    print(f"{len(files)} {elapsed:.3f} {max(0, read)}")


if __name__ == "__main__":
    main()
