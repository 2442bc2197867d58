#!/usr/bin/env python3
"""An image viewer stepping through photos, for `make bench`: for each file in order, open it, read it all,
look at it for --look seconds, go to the next. Prints one line per file: seconds from open to last byte.

Usage: viewer.py [--look 0.3] FILE...
"""
import argparse
import os
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--look", type=float, default=0.3)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    for index, path in enumerate(args.files):
        if index:
            time.sleep(args.look)
        start = time.monotonic()
        fd = os.open(path, os.O_RDONLY)
        try:
            # 1 MiB reads, as eog and feh read through GIO/stdio in large blocks.
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)
        print(f"{time.monotonic() - start:.6f}", flush=True)


if __name__ == "__main__":
    main()
