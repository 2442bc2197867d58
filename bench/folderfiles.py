#!/usr/bin/env python3
"""Photo folders for `make bench` (bench/folders.sh): unique JPEG files made from a few real ones.

Usage: folderfiles.py copies BASE_DIR DEST COUNT   (COUNT copies of BASE_DIR's *.jpg in folders of 250)
       folderfiles.py small BASE_JPEG DEST COUNT   (COUNT copies of BASE_JPEG shrunk to 160 px, folders of 1,000)
Each copy gets a JPEG comment (COM segment) with its number after the file's APP segments, where EXIF stays
first: every file has other bytes in its first 128 KiB, so no two are duplicates (an import would hash
duplicates whole), and its EXIF date and GPS are the original's.
"""
import glob
import os
import subprocess
import sys


def with_comment(data, text):
    """The JPEG with a COM segment inserted after its APP0..APP15 segments."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG")
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF and 0xE0 <= data[pos + 1] <= 0xEF:
        pos += 2 + int.from_bytes(data[pos + 2:pos + 4], "big")
    payload = text.encode()
    return data[:pos] + b"\xff\xfe" + (len(payload) + 2).to_bytes(2, "big") + payload + data[pos:]


def write_copies(sources, dest, count, per_folder):
    for index in range(count):
        folder = os.path.join(dest, f"folder{index // per_folder:03d}")
        if index % per_folder == 0:
            os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"photo{index:06d}.jpg"), "wb") as out:
            out.write(with_comment(sources[index % len(sources)], f"photofs bench copy {index}"))


def main():
    mode, source, dest, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if mode == "copies":
        sources = [open(path, "rb").read() for path in sorted(glob.glob(os.path.join(source, "*.jpg")))]
        write_copies(sources, dest, count, 250)
    elif mode == "small":
        small = os.path.join(os.path.dirname(dest.rstrip("/")), "small.jpg")
        subprocess.run(["convert", source, "-resize", "160x160", small], check=True)
        write_copies([open(small, "rb").read()], dest, count, 1000)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
