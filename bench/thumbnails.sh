#!/usr/bin/env bash
# make bench (third part): a file manager's first look at a folder of 200 real photographs, on photofs (desktop
# thumbnails made from Flickr-style 320 px renditions) and on `rclone mount` of the same originals over HTTP:
# pcmanfm under Xvfb, time until every photo has a thumbnail in the thumbnail cache, bytes the origin sent;
# and what a listing costs: by ls (no request, no file) and by a file manager (its thumbnails written first). Writes the section "Desktop thumbnails" of
# docs/benchmarks.md (after bench/run.sh has written the rest). Everything it starts, it stops (trap below).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${PHOTOFS_BIN:-$ROOT/.build/release/photofs}
WORK=${BENCH_WORK:-$ROOT/bench-work}-thumbnails
NGINX_PORT=18185
ORIGIN_PORT=18186
PHOTOS=200
ROUNDS=3
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
PACKAGES="nginx-light rclone curl sqlite3 bc libvips-tools xvfb pcmanfm xdotool imagemagick
          ukui-wallpapers gnome-backgrounds mate-backgrounds plasma-workspace-wallpapers"
missing=$(for p in $PACKAGES; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"; done)
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi
source bench/desktop.sh

ORIGIN_PID="" XVFB_PID="" PCMANFM_PID="" mounts=()
cleanup() {
  [ -n "$PCMANFM_PID" ] && stop_pid "$PCMANFM_PID"
  for m in "${mounts[@]}"; do fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || true; done
  [ -n "$ORIGIN_PID" ] && stop_pid "$ORIGIN_PID"
  [ -n "$XVFB_PID" ] && stop_pid "$XVFB_PID"
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
}
trap cleanup EXIT
for m in "$WORK"/mnt* "$WORK/rclone"; do fusermount3 -uz "$m" 2>/dev/null || true; done
[ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
rm -rf "$WORK"
mkdir -p "$WORK"/{www/originals,www/n,unique,rclone}

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }
fmt() { printf '%.2f' "$1"; }
ms() { printf '%.0f' "$(echo "$1 * 1000" | bc -l)"; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
mb() { printf '%.1f' "$(echo "$1 / 1000000" | bc -l)"; }

# The photo set: Debian's wallpaper photographs (JPEG and PNG, 0.1–16 MB), repeated under other names up to
# 200 files (hard links: the same bytes, but each a file of its own to every program here).
while IFS= read -r -d '' f; do
  cp "$f" "$WORK/unique/$(echo "${f#/usr/share/}" | tr '/ ' '__')"
done < <(find /usr/share/backgrounds /usr/share/wallpapers /usr/share/images -type f \
           \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) -size +100k -print0 2>/dev/null)
mapfile -t unique < <(ls "$WORK/unique")
for ((k = 0; k < PHOTOS; k++)); do
  name=${unique[k % ${#unique[@]}]}
  copy=$(( k / ${#unique[@]} ))
  ln "$WORK/unique/$name" "$WORK/www/originals/$([ $copy = 0 ] || echo "copy$copy-")$name"
done
# Flickr's `n` rendition of each: 320 px on the long side, JPEG.
for f in "$WORK"/www/originals/*; do
  base=$(basename "${f%.*}")
  vipsthumbnail "$f" --size 320x320 -o "$WORK/www/n/$base.jpg[Q=85,strip]"
done
original_bytes=$(du -cbl "$WORK"/www/originals/* | tail -1 | cut -f1)
rendition_bytes=$(du -cbl "$WORK"/www/n/* | tail -1 | cut -f1)
echo "photo set: $PHOTOS files (${#unique[@]} distinct), $original_bytes bytes; renditions $rendition_bytes bytes"

cat > "$WORK/nginx.conf" <<CONF
worker_processes 2;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
  log_format sent '\$request_method \$uri \$status \$body_bytes_sent';
  access_log $WORK/access.log sent;
  sendfile on;
  types { image/jpeg jpg jpeg; image/png png; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $WORK/www;
    autoindex on;
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK"
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/" && break; sleep 0.1; done

"$BIN" origin --port "$ORIGIN_PORT" --photos-dir "$WORK/www/originals" \
  --image-base-url "http://127.0.0.1:$NGINX_PORT/originals/" > "$WORK/origin.log" 2>&1 &
ORIGIN_PID=$!
for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/services/rest/" && break; sleep 0.1; done
"$BIN" import flickr "$WORK/library.sqlite" --endpoint "http://127.0.0.1:$ORIGIN_PORT/services/rest/" --api-key demo \
  > "$WORK/import.log" 2>&1
stop_pid "$ORIGIN_PID"; ORIGIN_PID=""
# The origin lists these files with dates over six years and no renditions: here every photo is taken in
# 2024 (one hour apart), so /moments/2024 is the 200-photo folder, and has its `n` rendition, as on Flickr.
{
  echo "BEGIN;"
  echo "UPDATE photo SET moment_year = 2024, moment_at = 1704067200 + seq * 3600,
          date_taken = strftime('%Y-%m-%d %H:%M:%S', 1704067200 + seq * 3600, 'unixepoch');"
  sqlite3 -separator ' ' "$WORK/library.sqlite" "SELECT seq, original_url FROM photo" | while read -r seq url; do
    base=${url##*/}; base=${base%.*}
    size=$(vipsheader -f width "$WORK/www/n/$base.jpg") height=$(vipsheader -f height "$WORK/www/n/$base.jpg")
    echo "INSERT OR REPLACE INTO rendition(photo_seq, label, url, width, height)
            VALUES ($seq, 'n', 'http://127.0.0.1:$NGINX_PORT/n/$base.jpg', $size, $height);"
  done
  echo "COMMIT;"
} | sqlite3 "$WORK/library.sqlite"
sqlite3 "$WORK/library.sqlite" "PRAGMA wal_checkpoint(TRUNCATE);" > /dev/null
cp "$WORK/library.sqlite" "$WORK/pristine.sqlite"
FOLDER=moments/2024

mount_photofs() { # name xdg-cache extra...: a fresh copy of the library at $WORK/mnt-name
  mkdir -p "$WORK/mnt-$1"
  cp "$WORK/pristine.sqlite" "$WORK/library-$1.sqlite"
  XDG_CACHE_HOME=$2 "$BIN" mount "$WORK/library-$1.sqlite" "$WORK/mnt-$1" --cache-dir "$WORK/cache-$1" "${@:3}"
  mounts+=("$WORK/mnt-$1")
}
thumbnails_in() { ls "$1/thumbnails/normal" 2>/dev/null | grep -c '\.png$' || true; }
sent_bytes() { awk '{sum += $4} END {print sum + 0}' "$WORK/access.log"; }
originals_sent() { awk '$1 == "GET" && $2 ~ /^\/originals\/./ {seen[$2] = 1} END {print length(seen)}' "$WORK/access.log"; }
loader_running() { grep -qx loader /proc/"$1"/task/*/comm 2>/dev/null; }

# One look: pcmanfm (thumbnail view, 128 px: thumbnails/normal) started at t = 0 on folder $2 with the home and
# thumbnail cache named $1 (fresh ones for a first look). Sets cached_s (until $PHOTOS thumbnails are in the
# cache; empty when $3 is "no"), drawn_s (until libfm's thumbnail thread — "loader", one for all of a folder's
# thumbnails, gone when none is left to do — has come and gone, and the window is still), bytes (what nginx
# sent meanwhile) and originals (how many distinct originals it sent).
look() {
  local home=$WORK/home-$1 xdg=$WORK/xdg-$1 t0 seen=0
  [ -d "$home" ] || make_pcmanfm_home "$home" 128
  mkdir -p "$xdg"
  : > "$WORK/access.log"
  cached_s=""
  t0=$(now)
  start_pcmanfm "$home" "$2" "$xdg"
  # Polled every 10 ms: drawing 200 thumbnails from the cache takes libfm's loader ~0.1 s.
  for _ in $(seq 120000); do
    if [ -z "$cached_s" ] && [ "$3" != no ] && [ "$(thumbnails_in "$xdg")" -ge "$PHOTOS" ]; then cached_s=$(elapsed "$t0" "$(now)"); fi
    if loader_running "$PCMANFM_PID"; then seen=1
    elif [ $seen = 1 ] && { [ -n "$cached_s" ] || [ "$3" = no ]; }; then break
    fi
    sleep 0.01
  done
  [ $seen = 1 ] || echo "$1: pcmanfm's thumbnail loader never ran" >&2
  wait_for_still_screen 300
  loader_running "$PCMANFM_PID" && echo "$1: pcmanfm's thumbnail loader ran again" >&2
  drawn_s=$(elapsed "$t0" "$(now)")
  bytes=$(sent_bytes) originals=$(originals_sent)
  DISPLAY=$XDISPLAY import -window root "$WORK/screen-$1.png"
  stop_pid "$PCMANFM_PID"; PCMANFM_PID=""
}

start_display

# 1. photofs: pcmanfm's listing is the folder's first (trace: the log names every photo opened, and by whom);
#    then pcmanfm is started again on it.
mount_photofs look "$WORK/xdg-photofs" --log-level trace
look photofs "$WORK/mnt-look/$FOLDER" yes
pfs_cached=$cached_s pfs_drawn=$drawn_s pfs_bytes=$bytes pfs_originals=$originals
look photofs "$WORK/mnt-look/$FOLDER" yes
pfs_drawn2=$drawn_s pfs_bytes2=$bytes
# field NAME of the daemon's first log line that says TEXT
logged() { awk -v text="$2" -v name="$3=" 'index($0, text) { for (i = 1; i <= NF; i++) if (index($i, name) == 1) {
             print substr($i, length(name) + 1); exit } }' "$1"; }
pfs_opened=$(awk '/open not counted as recent/ && match($0, /photo=[^ ]*/) { seen[substr($0, RSTART, RLENGTH)] = 1 }
                  END { print length(seen) }' "$WORK/cache-look/photofs.log")
pfs_pending=$(logged "$WORK/cache-look/photofs.log" "desktop thumbnails before listing" pending)
pfs_wait=$(logged "$WORK/cache-look/photofs.log" "desktop thumbnails before listing" ms)
fusermount3 -u "$WORK/mnt-look"

# 2. rclone mount of the same originals (full VFS cache, as run.sh): pcmanfm reads every photo to draw it, and
#    libfm 1.3.2 saves none of the thumbnails it makes (it refuses every path inside the thumbnail cache, and
#    the thumbnail's own path is one), so a second look reads them all again, from rclone's cache.
rclone mount :http: "$WORK/rclone" --http-url "http://127.0.0.1:$NGINX_PORT/originals/" --read-only \
  --vfs-cache-mode full --cache-dir "$WORK/rclone-cache" --daemon 2> "$WORK/rclone.log"
mounts+=("$WORK/rclone")
for _ in $(seq 100); do mountpoint -q "$WORK/rclone" && break; sleep 0.1; done
look rclone "$WORK/rclone" no
rc_cached=$(thumbnails_in "$WORK/xdg-rclone") rc_drawn=$drawn_s rc_bytes=$bytes rc_originals=$originals
look rclone "$WORK/rclone" no
rc_drawn2=$drawn_s rc_bytes2=$bytes
fusermount3 -u "$WORK/rclone"

# 3. The folder's listing (ls -l), median of $ROUNDS mounts each, with the default options: by ls itself (not a
#    file manager: it must cost no request and write no file), and by a file manager's listing, for which
#    ls stands in (-o thumbnail_listers=ls): first listing after the mount, then a second one; "kept": the
#    library already holds the renditions (a remount), the thumbnails either still valid or removed.
time_ls() { local t0; t0=$(now); ls -l "$1" > /dev/null; elapsed "$t0" "$(now)"; }
for ((r = 0; r < ROUNDS; r++)); do
  rm -rf "$WORK"/cache-ls* "$WORK"/xdg-ls*
  mount_photofs lsdefault "$WORK/xdg-lsdefault"
  : > "$WORK/access.log"
  time_ls "$WORK/mnt-lsdefault/$FOLDER" >> "$WORK/ls-cold"; time_ls "$WORK/mnt-lsdefault/$FOLDER" >> "$WORK/ls-warm"
  # What ls caused, in the listing and the 10 s after (a bench may wait; a test may not).
  sleep 10
  ls_requests=$(awk 'END {print NR}' "$WORK/access.log") ls_files=$( (find "$WORK/xdg-lsdefault" -type f 2>/dev/null || true) | wc -l)
  echo "$ls_requests $ls_files" >> "$WORK/ls-effects"
  fusermount3 -u "$WORK/mnt-lsdefault"
  mount_photofs lsfm "$WORK/xdg-lsfm" -o thumbnail_listers=ls
  time_ls "$WORK/mnt-lsfm/$FOLDER" >> "$WORK/fm-cold"; time_ls "$WORK/mnt-lsfm/$FOLDER" >> "$WORK/fm-warm"
  # Remount the same library (renditions kept in it by now) and thumbnail cache.
  for _ in $(seq 600); do [ "$(thumbnails_in "$WORK/xdg-lsfm")" -ge "$PHOTOS" ] && break; sleep 0.05; done
  fusermount3 -u "$WORK/mnt-lsfm"
  XDG_CACHE_HOME=$WORK/xdg-lsfm "$BIN" mount "$WORK/library-lsfm.sqlite" "$WORK/mnt-lsfm" --cache-dir "$WORK/cache-lsfm" \
    -o thumbnail_listers=ls
  time_ls "$WORK/mnt-lsfm/$FOLDER" >> "$WORK/kept-valid"
  fusermount3 -u "$WORK/mnt-lsfm"
  rm -rf "$WORK/xdg-lsfm/thumbnails"
  XDG_CACHE_HOME=$WORK/xdg-lsfm "$BIN" mount "$WORK/library-lsfm.sqlite" "$WORK/mnt-lsfm" --cache-dir "$WORK/cache-lsfm" \
    -o thumbnail_listers=ls
  time_ls "$WORK/mnt-lsfm/$FOLDER" >> "$WORK/kept-removed"
  fusermount3 -u "$WORK/mnt-lsfm"
done
m() { ms "$(median < "$WORK/$1")"; }
all() { local out="" v; while read -r v; do out+="${out:+/}$(ms "$v")"; done < "$WORK/$1"; echo "$out"; }

{
  echo "## Desktop thumbnails"
  echo
  echo "Produced by \`make bench\` (bench/thumbnails.sh) on $(date -u +%Y-%m-%d): $(nproc) cores,"
  echo "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(free -g | awk '/Mem:/ {print $2}') GiB,"
  echo "Linux $(uname -r), pcmanfm $(dpkg-query -W -f='${Version}' pcmanfm) (libfm $(dpkg-query -W -f='${Version}' libfm4)),"
  echo "$(rclone version 2>/dev/null | head -1), $(nginx -v 2>&1 | sed 's/.*: //')."
  echo
  echo "Photo set: $PHOTOS files in one folder ($FOLDER), the ${#unique[@]} wallpaper photographs above repeated"
  echo "under other names, $(mb "$original_bytes") MB of originals; their 320 px renditions (Flickr's \`n\`,"
  echo "vipsthumbnail, JPEG) $(mb "$rendition_bytes") MB. nginx serves both on 127.0.0.1 and logs the bytes it sends."
  echo "pcmanfm runs under Xvfb in thumbnail view (128 px, read from \`thumbnails/normal\`) with no size limit,"
  echo "in a fresh home and thumbnail cache, and is started on the folder (never listed before) at t = 0."
  echo
  echo "| pcmanfm opened on the 200-photo folder | photofs | rclone mount (full VFS cache) |"
  echo "|---|---|---|"
  echo "| first look: every photo's thumbnail in the thumbnail cache, s | $(fmt "$pfs_cached") | never ($rc_cached saved: libfm 1.3.2 saves none) |"
  echo "| first look: every thumbnail drawn (libfm's loader done, window still), s | $(fmt "$pfs_drawn") | $(fmt "$rc_drawn") |"
  echo "| first look: bytes the origin sent, MB | $(mb "$pfs_bytes") | $(mb "$rc_bytes") |"
  echo "| first look: originals the origin sent | $pfs_originals | $rc_originals |"
  echo "| second look (pcmanfm started again): every thumbnail drawn, s | $(fmt "$pfs_drawn2") | $(fmt "$rc_drawn2") |"
  echo "| second look: bytes the origin sent, MB | $(mb "$pfs_bytes2") | $(mb "$rc_bytes2") |"
  echo
  echo "photofs's listing of the folder for pcmanfm waited $(printf '%.0f' "${pfs_wait:-0}") ms and left ${pfs_pending:-?} of"
  echo "$PHOTOS photos' thumbnails still to write when it replied; pcmanfm opened $pfs_opened photos on photofs."
  echo
  echo "| \`ls -l\` of the 200-photo folder, ms (median of $ROUNDS mounts; all runs) | first after mount | again |"
  echo "|---|---|---|"
  echo "| by \`ls\`, default options | $(m ls-cold) ($(all ls-cold)) | $(m ls-warm) ($(all ls-warm)) |"
  echo "| by a file manager (ls standing in: \`-o thumbnail_listers=ls\`), renditions fetched now | $(m fm-cold) ($(all fm-cold)) | $(m fm-warm) ($(all fm-warm)) |"
  echo "| by a file manager, remount: renditions kept, thumbnails valid in the cache | $(m kept-valid) ($(all kept-valid)) | |"
  echo "| by a file manager, remount: renditions kept, thumbnail cache removed | $(m kept-removed) ($(all kept-removed)) | |"
  echo
  echo "\`ls -l\` with the default options, in the listing and the 10 s after, each mount: requests to the origin"
  echo "and files written in the thumbnail cache: $(awk '{printf "%s%s requests, %s files", (NR > 1 ? "; " : ""), $1, $2}' "$WORK/ls-effects")."
  echo
  cat bench/thumbnails-notes.md
} > "$WORK/section.md"
cat "$WORK/section.md"
# Replace this section (up to the next "## " heading) or add it at the end.
awk -v section="$WORK/section.md" '
  /^## Desktop thumbnails$/ { skipping = 1; while ((getline line < section) > 0) print line; done = 1; next }
  skipping && /^## / { skipping = 0 }
  !skipping { print }
  END { if (!done) { print ""; while ((getline line < section) > 0) print line } }
' "$ROOT/docs/benchmarks.md" > "$WORK/benchmarks.md"
cp "$WORK/benchmarks.md" "$ROOT/docs/benchmarks.md"
echo "written to docs/benchmarks.md"
