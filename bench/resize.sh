#!/usr/bin/env bash
# make bench (second part): photofs's resized variants against vipsthumbnail and ImageMagick on the same real
# photographs, originals already cached; quality as PSNR against vips. Writes docs/benchmarks-resize.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.build/release/photofs
WORK=${BENCH_WORK:-$ROOT/bench-work}-resize
NGINX_PORT=18183
ORIGIN_PORT=18184
CORES=$(nproc)
# ImageMagick's `convert` by full path: a stand-in of the same name may come first on PATH.
CONVERT=/usr/bin/convert
COMPARE=/usr/bin/compare
PACKAGES="libvips-tools imagemagick"
source bench/common.sh
mkdir -p "$WORK"/{cache,out}

megapixels=$(cd "$WORK/www" && for f in *; do echo "$(vipsheader -f width "$f") $(vipsheader -f height "$f")"; done \
  | awk '{mp = $1 * $2 / 1e6; total += mp; if (min == "" || mp < min) min = mp; if (mp > max) max = mp}
         END {printf "%.1f–%.1f MP each, %.0f MP in all", min, max, total}')
echo "photo set: $count files, $megapixels"

fmt() { printf '%.2f' "$1"; }

# Originals into the cache through an original-size mount (the benchmark is about resizing, not fetching).
mkdir -p "$WORK/mnt"
"$BIN" mount "$WORK/library.sqlite" "$WORK/mnt" --cache-dir "$WORK/cache" --prefetch 0
mounts+=("$WORK/mnt")
find "$WORK/mnt/regions" -type f -print0 | xargs -0 cat > /dev/null
# Before the library is copied below (a copy made while the daemon still wrote was torn once).
unmount_and_wait "$WORK/mnt"

# photofs: a fresh copy of the library (no variants known), a mount at the size, every file read by
# $CORES readers at once, as a file manager or `cp -r` with parallel workers would. `find` lists without
# sizes; each read's lookup renders its photo and queues the rest of the directory on the render pool.
# Sets $took (not a command substitution: the mount must be registered for cleanup in this shell).
run_photofs() { # size name
  cp "$WORK/library.sqlite" "$WORK/library-$2.sqlite"
  mkdir -p "$WORK/mnt-$2" "$WORK/out/photofs-$2"
  "$BIN" mount "$WORK/library-$2.sqlite" "$WORK/mnt-$2" --cache-dir "$WORK/cache" --prefetch 0 --size "$1" \
    --cache-size 20G
  mounts+=("$WORK/mnt-$2")
  local t0 t1
  t0=$(now)
  find "$WORK/mnt-$2/regions" -type f -print0 | xargs -0 -P "$CORES" -n 4 cat > /dev/null
  t1=$(now)
  took=$(elapsed "$t0" "$t1")
  peak_rss=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$(pgrep -f -- "mount $WORK/library-$2.sqlite .*--ready-fd" | head -1)/status")
  # Keep the outputs (already rendered, so untimed) under the original's base name for the PSNR pass.
  for seq_url in $(sqlite3 "$WORK/library.sqlite" "SELECT seq || '|' || original_url FROM photo"); do
    local seq=${seq_url%%|*} url=${seq_url#*|}
    local file
    file=$(find "$WORK/mnt-$2/regions" -inum $(( (1 << 56) | seq )) | head -1)
    cp "$file" "$WORK/out/photofs-$2/$(basename "${url%.*}").${file##*.}"
  done
  fusermount3 -u "$WORK/mnt-$2"
}

# vipsthumbnail: one invocation over every file (it runs its own thread pool), as the issue asks.
run_vips() { # vips-size name output-suffix
  mkdir -p "$WORK/out/vips-$2"
  local t0 t1
  t0=$(now)
  (cd "$WORK/www" && vipsthumbnail $1 -o "$WORK/out/vips-$2/%s.$3" *)
  t1=$(now)
  elapsed "$t0" "$t1"
}

# ImageMagick: one convert per file (its usual use; it threads inside with OpenMP).
run_magick() { # name output-extension convert-arguments...
  local name=$1 extension=$2
  shift 2
  mkdir -p "$WORK/out/magick-$name"
  local t0 t1
  t0=$(now)
  for f in "$WORK"/www/*; do
    local base
    base=$(basename "${f%.*}")
    "$CONVERT" "$f" "$@" "$WORK/out/magick-$name/$base.${extension:-${f##*.}}"
  done
  t1=$(now)
  elapsed "$t0" "$t1"
}

# PSNR of each photofs output against vips's output of the same geometry (PNG, lossless); when vips rounded
# an edge differently by a pixel, photofs's image is scaled to vips's geometry first.
psnr_table() { # name
  for ours in "$WORK/out/photofs-$1"/*; do
    local base reference geometry ours_geometry value
    base=$(basename "${ours%.*}")
    reference="$WORK/out/vips-$1-png/$base.png"
    geometry=$(vipsheader -f width "$reference")x$(vipsheader -f height "$reference")
    ours_geometry=$(vipsheader -f width "$ours")x$(vipsheader -f height "$ours")
    if [ "$geometry" != "$ours_geometry" ]; then
      "$CONVERT" "$ours" -resize "$geometry!" "$WORK/psnr-tmp.png"
      ours="$WORK/psnr-tmp.png"
    fi
    value=$("$COMPARE" -metric PSNR "$ours" "$reference" null: 2>&1 | grep -oE '^([0-9.]+|inf)' || true)
    echo "$base $ours_geometry $value"
  done
}

run_photofs square:256 square
square_pfs=$took
square_rss=$peak_rss
square_vips=$(run_vips "--size 256x256 --smartcrop centre" square png)
run_vips "--size 256x256 --smartcrop centre" square-png png > /dev/null
square_magick=$(run_magick square png -thumbnail '256x256^' -gravity center -extent 256x256)

run_photofs 1024 fit
fit_pfs=$took
fit_rss=$peak_rss
# vips writes JPEG at Q 85 for every photo (photofs keeps PNG as PNG, which costs it more); '>' never upscales.
fit_vips=$(run_vips "--size 1024x1024>" fit "jpg[Q=85]")
run_vips "--size 1024x1024>" fit-png png > /dev/null
fit_magick=$(run_magick fit "" -thumbnail '1024x1024>' -quality 85)

psnr_table square > "$WORK/psnr-square.txt"
psnr_table fit > "$WORK/psnr-fit.txt"
# The floor for JPEG variants: vips's own Q 85 JPEG against its lossless output (the encoding's share).
for jpeg in "$WORK/out/vips-fit"/*.jpg; do
  base=$(basename "${jpeg%.*}")
  [ -f "$WORK/out/photofs-fit/$base.jpg" ] || continue
  # compare prints the metric on stderr, followed there by any warning about the file's XMP: keep the number.
  echo "$base jpeg $("$COMPARE" -metric PSNR "$jpeg" "$WORK/out/vips-fit-png/$base.png" null: 2>&1 | grep -oE '^([0-9.]+|inf)' || true)"
done > "$WORK/psnr-vips-jpeg.txt"
summary() { # file: "min / median" over finite values, and how many were identical (inf)
  awk '{v = $3; if (v == "inf") inf++; else print v}' "$1" | sort -n \
    | awk -v inf="$(grep -c ' inf$' "$1" || true)" '{a[NR] = $1} END {
        printf "min %.1f dB, median %.1f dB", a[1], a[int((NR + 1) / 2)]; if (inf > 0) printf ", %d identical", inf }'
}
below_square=$(awk '$3 != "inf" && $3 + 0 < 30' "$WORK/psnr-square.txt" | wc -l)
below_fit=$(awk '$3 != "inf" && $3 + 0 < 30' "$WORK/psnr-fit.txt" | wc -l)
vips_below=$(awk '$3 != "inf" && $3 + 0 < 30' "$WORK/psnr-vips-jpeg.txt" | wc -l)

{
  echo "# photofs resize benchmarks"
  echo
  echo "Produced by \`make bench\` (bench/resize.sh) on $(date -u +%Y-%m-%d): $CORES cores,"
  echo "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); libvips $(vipsthumbnail --vips-version | cut -d' ' -f2),"
  echo "$("$CONVERT" -version | head -1 | cut -d' ' -f2-3), libjpeg-turbo $(dpkg-query -W -f='${Version}' libjpeg62-turbo), libpng $(dpkg-query -W -f='${Version}' libpng16-16)."
  echo
  echo "Photo set: $count real photographs from Debian's wallpaper packages ($megapixels), originals already in"
  echo "photofs's cache. photofs: a fresh mount at the size, every file read by $CORES parallel \`cat\`s (each"
  echo "lookup renders, and queues its directory on the render pool). vips: one \`vipsthumbnail\` over all files."
  echo "ImageMagick: one \`convert\` per file. Seconds, one run each."
  echo
  echo "| variant | photofs | vipsthumbnail | ImageMagick | photofs / vips (target ≤ 1.0) | ImageMagick / photofs (target ≥ 4) |"
  echo "|---|---|---|---|---|---|"
  echo "| \`square:256\` (vips \`--smartcrop centre\`, magick \`-thumbnail 256x256^ -extent\`) | $(fmt "$square_pfs") | $(fmt "$square_vips") | $(fmt "$square_magick") | $(ratio "$square_pfs" "$square_vips") | $(ratio "$square_magick" "$square_pfs") |"
  echo "| \`--size 1024\` (vips \`--size 1024x1024>\`, magick \`-thumbnail 1024x1024>\`) | $(fmt "$fit_pfs") | $(fmt "$fit_vips") | $(fmt "$fit_magick") | $(ratio "$fit_pfs" "$fit_vips") | $(ratio "$fit_magick" "$fit_pfs") |"
  echo
  echo "Daemon peak RSS (VmHWM) while rendering: square:256 $square_rss MB, 1024 $fit_rss MB (target < 150; renders"
  echo "start while their estimated memory fits 80 MiB, and the largest, a progressive 5120×2880 JPEG, makes libjpeg"
  echo "hold 88 MB of coefficients by itself)."
  echo
  echo "Quality, PSNR of photofs's output against vips's output of the same geometry (target ≥ 30 dB):"
  echo "- \`square:256\` (PNG, lossless): $(summary "$WORK/psnr-square.txt"); $below_square below 30 dB."
  echo "- \`--size 1024\` (JPEG photos as JPEG at quality 85, PNG as PNG): $(summary "$WORK/psnr-fit.txt"); $below_fit below 30 dB."
  echo "  For scale: vips's own Q 85 JPEG against its lossless output scores $(summary "$WORK/psnr-vips-jpeg.txt")"
  echo "  ($vips_below below 30 dB): a JPEG variant's PSNR is bounded by the JPEG encoding itself."
  echo
  echo "<details><summary>PSNR per image</summary>"
  echo
  echo "| photo | square:256 | dB | 1024 | dB | vips Q 85 JPEG, dB |"
  echo "|---|---|---|---|---|---|"
  join <(sort "$WORK/psnr-square.txt") <(sort "$WORK/psnr-fit.txt") | join -a1 - <(sort "$WORK/psnr-vips-jpeg.txt") \
    | awk '{printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, ($7 == "" ? "(PNG)" : $7)}'
  echo
  echo "</details>"
  echo
} > "$WORK/table.md"
cat "$WORK/table.md"
cat "$WORK/table.md" "$ROOT/bench/resize-notes.md" > "$ROOT/docs/benchmarks-resize.md"
echo "written to docs/benchmarks-resize.md"
