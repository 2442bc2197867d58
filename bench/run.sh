#!/usr/bin/env bash
# make bench: photofs against curl, the page cache and rclone mount on the same photos served by nginx on
# loopback; writes the table to docs/benchmarks.md. Everything it starts, it stops (trap below).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.build/release/photofs
WORK=${BENCH_WORK:-$ROOT/bench-work}
NGINX_PORT=18181
ORIGIN_PORT=18182
ORIGIN255_PORT=18183
PACKAGES="rclone libvips-tools"
source bench/common.sh
mkdir -p "$WORK"/{mnt,mnt100k,rclone,rclone-cache,photofs-cache,cache100k}
echo "photo set: $count files, $bytes bytes, largest $largest"

urls=$(cd "$WORK/www" && ls | sed "s|^|http://127.0.0.1:$NGINX_PORT/|")

mount_photofs() { # library mountpoint cache [extra]
  "$BIN" mount "$1" "$2" --cache-dir "$3" "${@:4}"
  mounts+=("$2")
}
daemon_pid() { pgrep -f -- "mount $1 $2 .*--ready-fd" | head -1; }
# A library written here with sqlite3 lacks what `photofs import` leaves in one: its photos in the search index
# (the triggers only queue them) and its events settled. The first writable open does both (100,000 photos:
# ~3 s of FTS5 indexing), which no user's first mount after an import pays: one mount that waits for its
# events, then unmount, before a mount is measured.
as_imported() { # library mountpoint cache
  "$BIN" mount "$1" "$2" --cache-dir "$3"
  ls "$2/events" > /dev/null
  unmount_and_wait "$2"
  rm -rf "$3"
}
peak_rss_mb() { awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }

# 1. Cold sequential read of every photo.
t0=$(now); curl -s $(for u in $urls; do printf -- '-o /dev/null %s ' "$u"; done); t1=$(now)
curl_seq=$(elapsed "$t0" "$t1")
# The floor under a cold read through a caching mount: the bytes must reach a file on disk (as curl writes
# them into one, on the disk the cache is on) and then be read back through FUSE (the warm re-read below).
mkdir -p "$WORK/curl-disk"
t0=$(now); (cd "$WORK/curl-disk" && curl -s $(for u in $urls; do printf -- '-O %s ' "$u"; done)); t1=$(now)
curl_disk=$(elapsed "$t0" "$t1")
rm -rf "$WORK/curl-disk"

mount_photofs "$WORK/library.sqlite" "$WORK/mnt" "$WORK/photofs-cache" --prefetch 0
PFS_PID=$(daemon_pid "$WORK/library.sqlite" "$WORK/mnt")
files=$(find "$WORK/mnt/regions" -type f | sort)
# One cat process for every file, for every contender (per-file processes would measure fork+exec).
readall() { tr '\n' '\0' | xargs -0 cat > /dev/null; }
t0=$(now); readall <<< "$files"; t1=$(now)
pfs_seq=$(elapsed "$t0" "$t1")

rclone mount :http: "$WORK/rclone" --http-url "http://127.0.0.1:$NGINX_PORT/" --read-only \
  --vfs-cache-mode full --cache-dir "$WORK/rclone-cache" --daemon 2> "$WORK/rclone.log"
mounts+=("$WORK/rclone")
for _ in $(seq 100); do mountpoint -q "$WORK/rclone" && break; sleep 0.1; done
rfiles=$(find "$WORK/rclone" -type f | sort)
t0=$(now); readall <<< "$rfiles"; t1=$(now)
rclone_seq=$(elapsed "$t0" "$t1")

# 2. Warm re-read.
t0=$(now); readall <<< "$files"; t1=$(now)
pfs_warm=$(elapsed "$t0" "$t1")
t0=$(now); ls -d "$WORK"/photofs-cache/originals/* | readall; t1=$(now)
direct_warm=$(elapsed "$t0" "$t1")
t0=$(now); readall <<< "$rfiles"; t1=$(now)
rclone_warm=$(elapsed "$t0" "$t1")
# 2b. The same in one process on both sides (bench/warmread.py), 255 photos (the set under 3 names each,
#     from a second origin: the mount's files and their cache files are paired by photo id), and the two
#     halves of a warm read apart: open + close alone, and reads on descriptors already open.
mkdir -p "$WORK"/{set255,mnt255,cache255}
for name in $(ls "$WORK/www"); do for copy in a b c; do ln -s "../www/$name" "$WORK/set255/$copy-$name"; ln -sf "$name" "$WORK/www/$copy-$name"; done; done
"$BIN" origin --port "$ORIGIN255_PORT" --photos-dir "$WORK/set255" --image-base-url "http://127.0.0.1:$NGINX_PORT/" \
  > "$WORK/origin255.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$ORIGIN255_PORT/services/rest/" && break; sleep 0.1; done
"$BIN" import flickr "$WORK/library255.sqlite" --endpoint "http://127.0.0.1:$ORIGIN255_PORT/services/rest/" --api-key demo \
  --per-page 500 --api-rate 100/3600 > "$WORK/import255.log" 2>&1
mount_photofs "$WORK/library255.sqlite" "$WORK/mnt255" "$WORK/cache255"
find "$WORK/mnt255/regions" -type f -print0 | xargs -0 cat > /dev/null
warm=$(python3 bench/warmread.py "$WORK/library255.sqlite" "$WORK/cache255" "$WORK/mnt255/regions")
warm_value() { sed -n "s/^$1=//p" <<< "$warm"; }
fusermount3 -u "$WORK/mnt255"

# 3. 16 readers in parallel, cold (a fresh cache and mount).
fusermount3 -u "$WORK/mnt"
rm -rf "$WORK/photofs-cache"
mount_photofs "$WORK/library.sqlite" "$WORK/mnt" "$WORK/photofs-cache" --prefetch 0
PFS_PID2=$(daemon_pid "$WORK/library.sqlite" "$WORK/mnt")
files=$(find "$WORK/mnt/regions" -type f | sort)
t0=$(now); echo "$urls" | xargs -P16 -n1 curl -s -o /dev/null; t1=$(now)
curl_par=$(elapsed "$t0" "$t1")
t0=$(now); echo "$files" | tr '\n' '\0' | xargs -0 -P16 -n1 cat > /dev/null; t1=$(now)
pfs_par=$(elapsed "$t0" "$t1")

# 4. Time to first byte of an uncached large photo, both as a process a user starts: head(1) on photofs
#    reads its first 16 KiB (the kernel's first readahead window), curl fetches the same 16 KiB.
big_url="http://127.0.0.1:$NGINX_PORT/$largest"
t0=$(now); curl -s -o /dev/null -r 0-16383 "$big_url"; t1=$(now)
curl_ttfb=$(elapsed "$t0" "$t1")
fusermount3 -u "$WORK/mnt"
rm -rf "$WORK/photofs-cache"
mount_photofs "$WORK/library.sqlite" "$WORK/mnt" "$WORK/photofs-cache" --prefetch 0
PFS_PID3=$(daemon_pid "$WORK/library.sqlite" "$WORK/mnt")
big_id=$(sqlite3 "$WORK/library.sqlite" "SELECT seq FROM photo WHERE original_url = '$big_url'")
big_file=$(find "$WORK/mnt/regions" -inum $(( (1 << 56) | big_id )) | head -1)
t0=$(now); head -c 1 "$big_file" > /dev/null; t1=$(now)
pfs_ttfb=$(elapsed "$t0" "$t1")
pfs_rss=$(peak_rss_mb "$PFS_PID3")

# 5. ls -lR of 100,000 photos vs the same tree of empty files on tmpfs.
cp "$WORK/library.sqlite" "$WORK/library100k.sqlite"
sqlite3 "$WORK/library100k.sqlite" <<SQL
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO photo(id, title, photographer_id, region_id, date_taken, moment_at, moment_year, uploaded_at,
                  original_url, byte_size, content_type)
SELECT 'bench' || i, 'Photo ' || (i % 5000),
       (SELECT min(id) FROM photographer) + i % (SELECT count(*) FROM photographer),
       (SELECT min(id) FROM region) + i % (SELECT count(*) FROM region),
       NULL, 1546300800 + i * 1800, 2019 + (i * 1800) / 31557600, NULL,
       'http://127.0.0.1:1/none/' || i || '.jpg', 100000 + i, 'image/jpeg'
FROM n;
UPDATE photo SET moment_year = CAST(strftime('%Y', moment_at, 'unixepoch') AS INTEGER);
UPDATE region SET photo_count = (SELECT count(*) FROM photo WHERE region_id = region.id),
                  photographer_count = (SELECT count(DISTINCT photographer_id) FROM photo WHERE region_id = region.id);
SQL
# With the default options (desktop thumbnails on: ls is not a file manager, so its listings write none).
XDG_CACHE_HOME="$WORK/xdg-cache100k" as_imported "$WORK/library100k.sqlite" "$WORK/mnt100k" "$WORK/cache100k"
XDG_CACHE_HOME="$WORK/xdg-cache100k" mount_photofs "$WORK/library100k.sqlite" "$WORK/mnt100k" "$WORK/cache100k"
PFS_PID100K=$(daemon_pid "$WORK/library100k.sqlite" "$WORK/mnt100k")
t0=$(now); ls -lR "$WORK/mnt100k" > /dev/null; t1=$(now)
pfs_ls_cold=$(elapsed "$t0" "$t1")
t0=$(now); ls -lR "$WORK/mnt100k" > /dev/null; t1=$(now)
pfs_ls_warm=$(elapsed "$t0" "$t1")
entries=$(find "$WORK/mnt100k" | wc -l)
rss100k=$(peak_rss_mb "$PFS_PID100K")
TMPFS=/dev/shm/photofs-bench-tree
# The same names as empty files on tmpfs, listed warm by ls -lR: seconds (the floor for a listing).
tmpfs_ls_of() {
  rm -rf "$TMPFS"
  (cd "$1" && find . -type d -print0 | (cd /dev/shm && mkdir -p photofs-bench-tree && cd photofs-bench-tree && xargs -0 mkdir -p))
  (cd "$1" && find . -type f -print0 | (cd "$TMPFS" && xargs -0 touch))
  ls -lR "$TMPFS" > /dev/null
  local t0 t1; t0=$(now); ls -lR "$TMPFS" > /dev/null; t1=$(now)
  rm -rf "$TMPFS"
  elapsed "$t0" "$t1"
}
tmpfs_ls=$(tmpfs_ls_of "$WORK/mnt100k")
fusermount3 -u "$WORK/mnt100k"

# 5b. Issue 18's acceptance: a fresh mount of 20,000 photos, each with a reachable 320 px rendition (as on
#     Flickr), default options, listed by ls -lR: image requests nginx saw in the listing and the 10 s after
#     (a bench may wait; tests may not), files written into the thumbnail cache, and the time against the same
#     tree on tmpfs.
mkdir -p "$WORK/www/n" "$WORK/mnt20k" "$WORK/cache20k"
for name in $(find "$WORK/www" -maxdepth 1 -type f -printf '%f\n'); do  # not 2b's symlinked copies
  vipsthumbnail "$WORK/www/$name" --size 320x320 -o "$WORK/www/n/$name.jpg[Q=85,strip]"
done
cp "$WORK/library.sqlite" "$WORK/library20k.sqlite"
sqlite3 "$WORK/library20k.sqlite" <<SQL
BEGIN;
CREATE TEMP TABLE source AS SELECT row_number() OVER (ORDER BY seq) - 1 AS k, * FROM photo;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO photo(id, title, photographer_id, region_id, date_taken, moment_at, moment_year, uploaded_at,
                  original_url, byte_size, content_type)
SELECT 'b20k' || i, 'Photo ' || i, s.photographer_id, s.region_id, NULL, 1546300800 + i * 3600, 2019, NULL,
       s.original_url, s.byte_size, s.content_type
FROM n JOIN source s ON s.k = i % (SELECT count(*) FROM source);
UPDATE photo SET moment_year = CAST(strftime('%Y', moment_at, 'unixepoch') AS INTEGER) WHERE id LIKE 'b20k%';
INSERT INTO rendition(photo_seq, label, url, width, height)
SELECT seq, 'n', 'http://127.0.0.1:$NGINX_PORT/n/' || substr(original_url, length('http://127.0.0.1:$NGINX_PORT/') + 1) || '.jpg',
       320, 213 FROM photo WHERE id LIKE 'b20k%';
UPDATE region SET photo_count = (SELECT count(*) FROM photo WHERE region_id = region.id),
                  photographer_count = (SELECT count(DISTINCT photographer_id) FROM photo WHERE region_id = region.id);
COMMIT;
SQL
XDG_CACHE_HOME="$WORK/xdg-cache20k" as_imported "$WORK/library20k.sqlite" "$WORK/mnt20k" "$WORK/cache20k"
XDG_CACHE_HOME="$WORK/xdg-cache20k" mount_photofs "$WORK/library20k.sqlite" "$WORK/mnt20k" "$WORK/cache20k"
: > "$WORK/nginx-access.log"
t0=$(now); ls -lR "$WORK/mnt20k" > /dev/null; t1=$(now)
pfs_ls20k=$(elapsed "$t0" "$t1")
sleep 10
ls20k_requests=$(awk 'END {print NR}' "$WORK/nginx-access.log")
ls20k_files=$( (find "$WORK/xdg-cache20k" -type f 2>/dev/null || true) | wc -l)
entries20k=$(find "$WORK/mnt20k" | wc -l)
tmpfs_ls20k=$(tmpfs_ls_of "$WORK/mnt20k")
fusermount3 -u "$WORK/mnt20k"

fmt() { printf '%.3f' "$1"; }
{
  echo "# photofs benchmarks"
  echo
  echo "Produced by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d): $(nproc) cores,"
  echo "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(free -g | awk '/Mem:/ {print $2}') GiB,"
  echo "Linux $(uname -r), $(nginx -v 2>&1 | sed 's/.*: //'), $(rclone version 2>/dev/null | head -1), $(curl --version | head -1 | cut -d' ' -f1-2)."
  echo
  echo "Photo set: $count real photographs from Debian's wallpaper packages, $bytes bytes, largest $largest"
  echo "($(stat -c %s "$WORK/www/$largest") bytes), served by nginx on 127.0.0.1; photofs imports them through its"
  echo "Flickr-format origin, whose answers point at nginx for the bytes. rclone: \`rclone mount :http:\`"
  echo "with \`--vfs-cache-mode full\`. Times in seconds, one run each."
  echo
  echo "| # | measurement | photofs | reference | ratio (photofs / reference) | target |"
  echo "|---|---|---|---|---|---|"
  echo "| 1 | cold sequential read of every photo | $(fmt $pfs_seq) | curl to /dev/null, one process: $(fmt $curl_seq) | $(ratio $pfs_seq $curl_seq) | ≤ 2.2 |"
  echo "| 1 | | | rclone mount: $(fmt $rclone_seq) | $(ratio $pfs_seq $rclone_seq) | < 1 |"
  echo "| 1 | | | floor: curl into files on disk $(fmt $curl_disk) + warm read through the mount $(fmt $pfs_warm) | $(ratio $pfs_seq $(echo "$curl_disk + $pfs_warm" | bc -l)) | |"
  echo "| 2 | warm re-read | $(fmt $pfs_warm) | cache files read directly: $(fmt $direct_warm) | $(ratio $pfs_warm $direct_warm) | ≤ 1.5 |"
  echo "| 2 | | | rclone mount warm: $(fmt $rclone_warm) | $(ratio $pfs_warm $rclone_warm) | < 1 |"
  echo "| 2b | warm re-read in one process, µs per photo ($(warm_value files) photos, best of 5) | $(warm_value read_mount_us) | cache files read directly: $(warm_value read_direct_us) | $(ratio $(warm_value read_mount_us) $(warm_value read_direct_us)) | ≤ 1.5 |"
  echo "| 2b | same with Python's buffered \`open(p, \"rb\").read(1 << 20)\`, µs per photo | $(warm_value buffered_mount_us) | cache files the same way: $(warm_value buffered_direct_us) | $(ratio $(warm_value buffered_mount_us) $(warm_value buffered_direct_us)) | ≤ 1.5 |"
  echo "| 2b | same with glibc stdio (\`fopen\` + \`fread\` of 64 KiB), µs per photo | $(warm_value stdio_mount_us) | cache files the same way: $(warm_value stdio_direct_us) | $(ratio $(warm_value stdio_mount_us) $(warm_value stdio_direct_us)) | ≤ 1.5 |"
  echo "| 2b | of which open + close, µs | $(warm_value open_close_mount_us) | ext4: $(warm_value open_close_direct_us) | | < 60 µs |"
  echo "| 2b | of which reads on open descriptors, µs | $(warm_value pread_mount_us) | ext4: $(warm_value pread_direct_us) | $(ratio $(warm_value pread_mount_us) $(warm_value pread_direct_us)) | |"
  echo "| 3 | 16 readers in parallel, cold | $(fmt $pfs_par) | 16 parallel curls: $(fmt $curl_par) | throughput $(ratio $curl_par $pfs_par) of curl's | ≥ 0.8 |"
  echo "| 4 | time to first byte (first 16 KiB, process start included), uncached $largest | $(fmt $pfs_ttfb) | curl -r 0-16383: $(fmt $curl_ttfb) | $(ratio $pfs_ttfb $curl_ttfb) | ≤ 1.5 |"
  echo "| 5 | \`ls -lR\`, $entries entries (100,000 photos), first | $(fmt $pfs_ls_cold) | tmpfs: $(fmt $tmpfs_ls) | $(ratio $pfs_ls_cold $tmpfs_ls) | ≤ 3 |"
  echo "| 5 | \`ls -lR\`, warm | $(fmt $pfs_ls_warm) | tmpfs: $(fmt $tmpfs_ls) | $(ratio $pfs_ls_warm $tmpfs_ls) | ≈ 1 |"
  echo "| 5b | \`ls -lR\` of a fresh mount, $entries20k entries (20,000 photos with reachable renditions), first | $(fmt $pfs_ls20k) | tmpfs: $(fmt $tmpfs_ls20k) | $(ratio $pfs_ls20k $tmpfs_ls20k) | ≤ 2 |"
  echo "| 5b | image requests and thumbnail files from that \`ls -lR\`, in it and the 10 s after | $ls20k_requests requests, $ls20k_files files | | | 0 and 0 |"
  echo "| 6 | daemon peak RSS (VmHWM), MB | content mount: $pfs_rss; 100k catalog: $rss100k | | | < 150 |"
} > "$WORK/table.md"
cat "$WORK/table.md"
cat "$WORK/table.md" "$ROOT/bench/notes.md" > "$ROOT/docs/benchmarks.md"
echo "written to docs/benchmarks.md"
