#!/usr/bin/env bash
# make bench, WAN profile: what a person feels over a real network (bench/wanproxy.py adds a round trip per
# request and per connection set-up, and caps each connection's bandwidth), photofs against rclone mount and
# curl; writes docs/benchmarks-wan.md. Everything it starts, it stops (common.sh's trap).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${PHOTOFS_BIN:-$ROOT/.build/release/photofs}  # another build to compare (bench/wan-notes.md: before and after)
WORK=${BENCH_WORK:-$ROOT/bench-work-wan}
NGINX_PORT=18281
ORIGIN_PORT=18282
WAN_IMAGES_PORT=18283   # the WAN in front of nginx: every photo's bytes and HEAD cross it
VIEW_ORIGIN_PORT=18284  # the Flickr-format origin of the 300-photo library the mount shows
IMPORT_ORIGIN_PORT=18285 # the origin of the 10,000-photo import
WAN_API_PORT=18286      # the WAN in front of that origin's API
PROXY_PORT=18287        # a caching nginx on the users' side of the WAN, shared by two mounts
CAMERA_ORIGIN_PORT=18288 # the origin of the 32 camera-sized originals the scans read
RTT_MS=${WAN_RTT_MS:-40}
MBIT=${WAN_MBIT:-100}
IMPORT_COUNT=${WAN_IMPORT_COUNT:-10000}  # at least 300 (the mount's photos are the first 300 names)
PACKAGES="rclone python3 imagemagick"
source bench/common.sh
mkdir -p "$WORK"/{mnt,rclone,rclone-cache,photofs-cache,set-view,set-import,set-camera}
# Pillow for the size scan (row 8), from PyPI when Python does not have it.
python3 -c "import PIL" 2>/dev/null || python3 -m pip install --quiet pillow

# The photo set under many names: 300 for the mount (6 year folders of 50: DemoLibrary.external spreads
# photos over 6 years by index), IMPORT_COUNT for the import. Symbolic links: nginx serves them as files.
python3 - "$WORK" "$IMPORT_COUNT" <<'PY'
import os, sys
work, count = sys.argv[1], int(sys.argv[2])
originals = sorted(os.listdir(f"{work}/www"))
for i in range(count):
    original = originals[i % len(originals)]
    name = f"p{i:05d}-{original}"
    os.symlink(original, f"{work}/www/{name}")
    os.symlink(f"../www/{name}", f"{work}/set-import/{name}")
    if i < 300:
        os.symlink(f"../www/{name}", f"{work}/set-view/{name}")
PY
# rclone's :http: backend sends a HEAD for every name of a listing (for sizes): it is given the 300 only.
ln -s ../set-view "$WORK/www/view"

# Camera-sized originals for the scans (rows 7 and 8): the wallpapers are 0.1–16 MB, mostly about 1 MB, while
# phones and cameras write 6–14 MB. 8 of them made 6000×4000 (24 MP), metadata stripped (one wallpaper carries
# 7 MB of XMP, which no camera writes), sensor-like noise for a camera's sizes; each under 4 names, 32 photos.
# Made after the names above, so that none of them is among the mount's 300.
mkdir -p "$WORK/www/camera"
i=0
for source in $(ls -S "$WORK/www" | grep -v "^p[0-9]" | grep -i '\.jpe\?g$' | head -8); do
  convert "$WORK/www/$source" -strip -resize 6000x4000^ -gravity center -extent 6000x4000 \
    -attenuate "$(echo "0.2 + 0.03 * $i" | bc -l)" +noise Gaussian -quality 92 "$WORK/www/camera/cam$i.jpg"
  i=$((i + 1))
done
for n in $(seq 0 31); do
  name="c$(printf %02d "$n")-cam$((n % 8)).jpg"
  ln -s "camera/cam$((n % 8)).jpg" "$WORK/www/$name"
  ln -s "../www/$name" "$WORK/set-camera/$name"
done

wan() { # listen-port target-port
  python3 bench/wanproxy.py "$1" "127.0.0.1:$2" --rtt-ms "$RTT_MS" --mbit "$MBIT" --stats "$WORK/wan-$1.stats" \
    > "$WORK/wan-$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && break; sleep 0.1; done
}
origin() { # port photos-dir
  "$BIN" origin --port "$1" --photos-dir "$2" --image-base-url "http://127.0.0.1:$WAN_IMAGES_PORT/" > "$WORK/origin-$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/services/rest/" && break; sleep 0.1; done
}
wan "$WAN_IMAGES_PORT" "$NGINX_PORT"
origin "$VIEW_ORIGIN_PORT" "$WORK/set-view"
origin "$IMPORT_ORIGIN_PORT" "$WORK/set-import"
origin "$CAMERA_ORIGIN_PORT" "$WORK/set-camera"
wan "$WAN_API_PORT" "$IMPORT_ORIGIN_PORT"
"$BIN" import flickr "$WORK/view.sqlite" --endpoint "http://127.0.0.1:$VIEW_ORIGIN_PORT/services/rest/" --api-key demo \
  --per-page 500 --api-rate 100/3600 > "$WORK/import-view.log" 2>&1
"$BIN" import flickr "$WORK/camera.sqlite" --endpoint "http://127.0.0.1:$CAMERA_ORIGIN_PORT/services/rest/" --api-key demo \
  > "$WORK/import-camera.log" 2>&1

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
p95() { sort -n | awk '{a[NR]=$1} END {i = int(NR * 0.95 + 0.999); if (i > NR) i = NR; print a[i]}'; }
fmt() { printf '%.3f' "$1"; }
ms() { printf '%.0f' "$(echo "$1 * 1000" | bc -l)"; }
url_of() { # file on the photofs mount → its photo's URL
  local inode seq
  inode=$(stat -c %i "$1")
  seq=$((inode - (1 << 56)))
  sqlite3 "$WORK/view.sqlite" "SELECT original_url FROM photo WHERE seq = $seq"
}

"$BIN" mount "$WORK/view.sqlite" "$WORK/mnt" --cache-dir "$WORK/photofs-cache" \
  --prefetch "${WAN_PREFETCH:-3}"
mounts+=("$WORK/mnt")
rclone mount :http: "$WORK/rclone" --http-url "http://127.0.0.1:$WAN_IMAGES_PORT/view/" --read-only \
  --vfs-cache-mode full --cache-dir "$WORK/rclone-cache" --daemon 2> "$WORK/rclone.log"
mounts+=("$WORK/rclone")
for _ in $(seq 100); do mountpoint -q "$WORK/rclone" && break; sleep 0.1; done
ls -l "$WORK/rclone" > /dev/null # rclone reads nginx's index (and HEADs each name) once, before anything is timed

years=($(ls "$WORK/mnt/moments"))
folder_files() { find "$WORK/mnt/moments/$1" -type f | sort; }
urls_of() { while IFS= read -r f; do url_of "$f"; done; }
rclone_files() { sed "s|^http://127.0.0.1:$WAN_IMAGES_PORT/|$WORK/rclone/|"; }

# 1. An image viewer stepping through a 50-photo folder (open, read all, 0.3 s look, next).
view_files=$(folder_files "${years[0]}")
view_urls=$(urls_of <<< "$view_files")
[ "$(wc -l <<< "$view_files")" -ge 50 ] || { echo "the viewer's folder has fewer than 50 photos"; exit 1; }
pfs_view=$(tr '\n' '\0' <<< "$view_files" | xargs -0 python3 bench/viewer.py --look 0.3)
rclone_view=$(rclone_files <<< "$view_urls" | tr '\n' '\0' | xargs -0 python3 bench/viewer.py --look 0.3)
# curl's per-photo time: each photo alone, as a program that fetches it would (a new connection each).
curl_each=$(while IFS= read -r u; do curl -s -o /dev/null -w '%{time_total}\n' "$u"; done <<< "$view_urls")

# 2. A cold `cat` of the next folder in order, against one curl fetching the same photos one after another
#    (keeping its connection: the fairest sequential reference).
cat_files=$(folder_files "${years[1]}")
cat_urls=$(urls_of <<< "$cat_files")
t0=$(now); tr '\n' '\0' <<< "$cat_files" | xargs -0 cat > /dev/null; t1=$(now)
pfs_cat=$(elapsed "$t0" "$t1")
t0=$(now); curl -s $(for u in $cat_urls; do printf -- '-o /dev/null %s ' "$u"; done); t1=$(now)
curl_cat=$(elapsed "$t0" "$t1")
t0=$(now); rclone_files <<< "$cat_urls" | tr '\n' '\0' | xargs -0 cat > /dev/null; t1=$(now)
rclone_cat=$(elapsed "$t0" "$t1")

# 3. Time to first byte of uncached photos (10 of a folder not read yet, each from a process a user starts):
#    head -c 1 on the mounts, curl -r 0-0 on a new connection. Every fifth photo: opening one prefetches the
#    next 3, and a prefetched photo would measure the prefetch, not the first byte.
ttfb_files=$(folder_files "${years[2]}" | awk 'NR % 5 == 1' | sed -n 1,10p)
ttfb_urls=$(urls_of <<< "$ttfb_files")
pfs_ttfb=$(while IFS= read -r f; do t0=$(now); head -c 1 "$f" > /dev/null; t1=$(now); elapsed "$t0" "$t1"; done <<< "$ttfb_files")
rclone_ttfb=$(rclone_files <<< "$ttfb_urls" | while IFS= read -r f; do t0=$(now); head -c 1 "$f" > /dev/null; t1=$(now); elapsed "$t0" "$t1"; done)
curl_ttfb=$(while IFS= read -r u; do t0=$(now); curl -s -o /dev/null -r 0-0 "$u"; t1=$(now); elapsed "$t0" "$t1"; done <<< "$ttfb_urls")
pfs_rss=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$(pgrep -f -- "mount $WORK/view.sqlite" | head -1)/status")

# 4. Import of IMPORT_COUNT photos through the WAN (API and HEADs), against what its requests cost at the
#    concurrency it uses: the listing pages one after another, then the HEADs 8 at a time.
t0=$(now)
"$BIN" import flickr "$WORK/import.sqlite" --endpoint "http://127.0.0.1:$WAN_API_PORT/services/rest/" --api-key demo \
  --per-page 500 --api-rate 100/3600 > "$WORK/import-wan.log" 2>&1
t1=$(now)
pfs_import=$(elapsed "$t0" "$t1")
pages=$(( (IMPORT_COUNT + 499) / 500 ))
extras="description,date_upload,date_taken,owner_name,geo,original_format,media,url_sq,url_q,url_t,url_s,url_n,url_w,url_m,url_z,url_c,url_l,url_h,url_k,url_3k,url_4k,url_5k,url_6k,url_o"
t0=$(now)
for page in $(seq 1 "$pages"); do
  printf -- 'output = "/dev/null"\nurl = "http://127.0.0.1:%s/services/rest/?method=flickr.photos.getRecent&api_key=demo&format=json&nojsoncallback=1&per_page=500&page=%s&extras=%s"\n' \
    "$WAN_API_PORT" "$page" "$extras"
done | curl -s -K -
t1=$(now)
curl_pages=$(elapsed "$t0" "$t1")
t0=$(now)
sqlite3 "$WORK/import.sqlite" "SELECT original_url FROM photo" | sed 's/^/output = "\/dev\/null"\nurl = "/; s/$/"/' \
  | curl -s --no-progress-meter -I --parallel --parallel-max 8 -K - > /dev/null 2>&1
t1=$(now)
curl_heads=$(elapsed "$t0" "$t1")
imported=$(sqlite3 "$WORK/import.sqlite" "SELECT count(*) FROM photo WHERE byte_size IS NOT NULL")
curl_import=$(echo "$curl_pages + $curl_heads" | bc -l)

# 5. Two more mounts of the library behind a caching proxy on the users' side of the WAN (the set-up of
#    docs/caching-proxy.nginx.conf): the first's cold `cat` of a folder crosses the WAN and fills the proxy,
#    the second's is served by the proxy.
mkdir -p "$WORK"/{proxy-cache,proxy-temp,mnt-a,mnt-b,cache-a,cache-b}
cat > "$WORK/proxy.conf" <<CONF
worker_processes 1;
pid $WORK/proxy.pid;
error_log $WORK/proxy-error.log;
events { worker_connections 1024; }
http {
  log_format cache '\$request_method \$uri \$status \$upstream_cache_status';
  access_log $WORK/proxy-access.log cache;
  proxy_temp_path $WORK/proxy-temp;
  proxy_cache_path $WORK/proxy-cache keys_zone=photos:4m max_size=4g inactive=1h;
  server {
    listen 127.0.0.1:$PROXY_PORT;
    location / {
      proxy_pass http://\$http_host;
      proxy_cache photos;
      proxy_cache_key \$http_host\$uri\$is_args\$args;
      proxy_cache_valid 200 1h;
      proxy_cache_lock on;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
CONF
nginx -c "$WORK/proxy.conf" -p "$WORK"
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$PROXY_PORT") 2>/dev/null && break; sleep 0.1; done
for side in a b; do
  sqlite3 "$WORK/view.sqlite" ".backup $WORK/view-$side.sqlite"
  "$BIN" mount "$WORK/view-$side.sqlite" "$WORK/mnt-$side" --cache-dir "$WORK/cache-$side" \
    --proxy "http://127.0.0.1:$PROXY_PORT"
  mounts+=("$WORK/mnt-$side")
done
proxied_folder="moments/${years[3]}"
t0=$(now); find "$WORK/mnt-a/$proxied_folder" -type f -print0 | sort -z | xargs -0 cat > /dev/null; t1=$(now)
proxy_first=$(elapsed "$t0" "$t1")
proxy_misses_first=$(grep -c ' MISS$' "$WORK/proxy-access.log" || true)
t0=$(now); find "$WORK/mnt-b/$proxied_folder" -type f -print0 | sort -z | xargs -0 cat > /dev/null; t1=$(now)
proxy_second=$(elapsed "$t0" "$t1")
# Every request the proxy did not answer from its cache went to the origin (MISS, and any other status).
proxy_upstream=$(grep -vc ' HIT$' "$WORK/proxy-access.log" || true)
kill "$(cat "$WORK/proxy.pid")"

# 7–8. Library scans of the 32 camera-sized originals, each on a fresh mount and cache with default options: a
#    header scan (open, read 64 KiB 8 KiB at a time, close: an import scan, `exiftool -fast`, `identify -ping`)
#    and a Python script asking each photo its size (`PIL.Image.open(p).size`, whose buffered open reads
#    st_blksize at once). What the
#    origin sent is what entered the WAN towards the mount (bench/wanproxy.py --stats), counted until the link
#    is quiet, so downloads that outlive the scan are counted too. The floor: curl asking for the same bytes
#    (64 KiB, or what Pillow read) of the 32 photos one after another on one kept-alive connection, a round
#    trip and the bytes each.
link_sent() { cut -d' ' -f1 "$WORK/wan-$WAN_IMAGES_PORT.stats"; }
link_quiet() { # until nothing crossed the link for 1.5 s
  local last="" now
  while now=$(cat "$WORK/wan-$WAN_IMAGES_PORT.stats"); [ "$now" != "$last" ]; do last=$now; sleep 1.5; done
}
scan() { # header|pillow → $WORK/scan-$1.out: "photos seconds bytes-read bytes-sent"
  local mnt="$WORK/mnt-scan-$1" out sent files
  mkdir -p "$mnt"
  "$BIN" mount "$WORK/camera.sqlite" "$mnt" --cache-dir "$WORK/cache-scan-$1"
  mounts+=("$mnt")
  files=$(find "$mnt/moments" -type f | sort)
  link_quiet; sent=$(link_sent)
  out=$(tr '\n' '\0' <<< "$files" | xargs -0 python3 bench/scan.py "$1")
  link_quiet
  echo "$out $(( $(link_sent) - sent ))" > "$WORK/scan-$1.out"
  fusermount3 -u "$mnt"
}
camera_urls=$(sqlite3 "$WORK/camera.sqlite" "SELECT original_url FROM photo ORDER BY original_url")
camera_sizes=$(stat -L -c %s "$WORK"/set-camera/* | sort -n)  # du would count the 8 files once
camera_bytes=$(paste -sd+ <<< "$camera_sizes" | bc)
curl_ranges() { # bytes per photo → seconds for the 32
  local t0 t1
  t0=$(now); curl -s -r "0-$(($1 - 1))" $(for u in $camera_urls; do printf -- '-o /dev/null %s ' "$u"; done); t1=$(now)
  elapsed "$t0" "$t1"
}
scan header; read -r header_photos header_s header_read header_sent < "$WORK/scan-header.out"
scan pillow; read -r pillow_photos pillow_s pillow_read pillow_sent < "$WORK/scan-pillow.out"
header_floor=$(curl_ranges $((header_read / header_photos)))
pillow_floor=$(curl_ranges $((pillow_read / pillow_photos)))
per() { echo "$1 / $2" | bc -l; }
mib() { printf '%.2f' "$(echo "$1 / 1048576" | bc -l)"; }

pm=$(median <<< "$pfs_view"); pp=$(p95 <<< "$pfs_view")
rm_=$(median <<< "$rclone_view"); rp=$(p95 <<< "$rclone_view")
cm=$(median <<< "$curl_each")
ptm=$(median <<< "$pfs_ttfb"); rtm=$(median <<< "$rclone_ttfb"); ctm=$(median <<< "$curl_ttfb")
{
  echo "# photofs benchmarks: WAN profile"
  echo
  echo "Produced by \`make bench\` (bench/wan.sh) on $(date -u +%Y-%m-%d): $(nproc) cores, Linux $(uname -r),"
  echo "$(nginx -v 2>&1 | sed 's/.*: //'), $(rclone version 2>/dev/null | head -1), $(curl --version | head -1 | cut -d' ' -f1-2)."
  echo
  echo "Every request crosses bench/wanproxy.py: ${RTT_MS} ms round trip per connection set-up and per request,"
  echo "${MBIT} Mbit/s per connection. Photos: the loopback profile's $count photographs under 300 names (6 year"
  echo "folders of 50) for the mount; rclone: \`rclone mount :http:\` with \`--vfs-cache-mode full\` on the same URLs."
  echo "Times in seconds (ms where marked), one run each."
  echo
  echo "| # | what a person feels | photofs | rclone mount | curl | photofs / curl | target |"
  echo "|---|---|---|---|---|---|---|"
  echo "| 1 | viewer stepping through 50 photos (0.3 s look each): open to last byte, median | $(ms $pm) ms | $(ms $rm_) ms | one photo alone: $(ms $cm) ms | $(echo "scale=3; $pm / $cm" | bc -l) | ≤ 0.10 |"
  echo "| 1 | same, p95 | $(ms $pp) ms | $(ms $rp) ms | | | |"
  echo "| 2 | cold \`cat\` of a 50-photo folder in order | $(fmt $pfs_cat) | $(fmt $rclone_cat) | one after another: $(fmt $curl_cat) | $(ratio $pfs_cat $curl_cat) | ≤ 0.5 |"
  echo "| 3 | time to first byte, uncached photo (median of 10, process start included) | $(ms $ptm) ms | $(ms $rtm) ms | \`curl -r 0-0\`: $(ms $ctm) ms | $(ratio $ptm $ctm) | ≤ 1.0 |"
  echo "| 4 | import of $IMPORT_COUNT photos ($imported measured) | $(fmt $pfs_import) | | its requests: $pages pages in turn $(fmt $curl_pages) + HEADs 8 at once $(fmt $curl_heads) = $(fmt $curl_import) | $(ratio $pfs_import $curl_import) | ≤ 1.3 |"
  echo "| 5 | two mounts behind a caching proxy: cold \`cat\` of a 50-photo folder, first mount | $(fmt $proxy_first) | | | | |"
  echo "| 5 | same folder, second mount (requests the origin saw: first mount $proxy_misses_first, second $((proxy_upstream - proxy_misses_first))) | $(fmt $proxy_second) | | | | |"
  echo "| 6 | daemon peak RSS (VmHWM), MB | $pfs_rss | | | | |"
  echo "| 7 | header scan of $header_photos camera originals ($(mib "$(head -1 <<< "$camera_sizes")")–$(mib "$(tail -1 <<< "$camera_sizes")") MiB, $(mib $((camera_bytes / header_photos))) on average; open, read 64 KiB in 8 KiB reads, close): per photo | $(ms "$(per "$header_s" "$header_photos")") ms | | the same 64 KiB with \`curl -r\`, one connection: $(ms "$(per "$header_floor" "$header_photos")") ms | $(ratio "$header_s" "$header_floor") | ≤ 1.5 |"
  echo "| 7 | same, bytes the origin sent per photo (read: $(mib $((header_read / header_photos))) MiB) | $(mib $((header_sent / header_photos))) MiB | | | $(ratio "$header_sent" "$header_read") × read | ≤ read + 1 MiB |"
  echo "| 8 | Pillow size scan (\`PIL.Image.open(p).size\`) of the same $pillow_photos, fresh cache: per photo | $(ms "$(per "$pillow_s" "$pillow_photos")") ms | | what Pillow read with \`curl -r\`, one connection: $(ms "$(per "$pillow_floor" "$pillow_photos")") ms | $(ratio "$pillow_s" "$pillow_floor") | |"
  echo "| 8 | same, bytes the origin sent per photo (read: $(mib $((pillow_read / pillow_photos))) MiB) | $(mib $((pillow_sent / pillow_photos))) MiB | | | $(ratio "$pillow_sent" "$pillow_read") × read | ≤ 1.5 MiB |"
} > "$WORK/table.md"
cat "$WORK/table.md"
cat "$WORK/table.md" bench/wan-notes.md > docs/benchmarks-wan.md
echo "written to docs/benchmarks-wan.md"
