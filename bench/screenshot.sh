#!/usr/bin/env bash
# Makes docs/images/pcmanfm-thumbnails.png: pcmanfm (under Xvfb, in a home of its own) opened on a folder of a
# photofs mount of the demo library, showing the thumbnails photofs wrote when the folder was listed. Needs a
# built photofs (make build; PHOTOFS_BIN=path for another); installs xvfb, pcmanfm, xdotool, imagemagick and
# curl if missing. FOLDER=moments/2019 (say) picks another folder. Everything it starts, it stops.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${PHOTOFS_BIN:-$ROOT/.build/release/photofs}
WORK=${BENCH_WORK:-$ROOT/bench-work}-screenshot
ORIGIN_PORT=18187
FOLDER=${FOLDER:-moments/2024}
OUT=$ROOT/docs/images/pcmanfm-thumbnails.png
# ImageMagick's `convert` by full path: a stand-in of the same name may come first on PATH.
CONVERT=/usr/bin/convert
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
missing=$(for p in xvfb pcmanfm xdotool imagemagick curl; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"; done)
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi
source bench/desktop.sh

HOME_DIR=$WORK/home
MNT=$HOME_DIR/Photos
ORIGIN_PID="" XVFB_PID="" PCMANFM_PID=""
cleanup() {
  [ -n "$PCMANFM_PID" ] && stop_pid "$PCMANFM_PID"
  fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null || true
  [ -n "$ORIGIN_PID" ] && stop_pid "$ORIGIN_PID"
  [ -n "$XVFB_PID" ] && stop_pid "$XVFB_PID"
}
trap cleanup EXIT
fusermount3 -uz "$MNT" 2>/dev/null || true
rm -rf "$WORK"
mkdir -p "$MNT" "$HOME_DIR/.cache"

# The demo library (generated photographs with Flickr's renditions) from the loopback origin.
"$BIN" origin --port "$ORIGIN_PORT" > "$WORK/origin.log" 2>&1 &
ORIGIN_PID=$!
for _ in $(seq 1200); do curl -s -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/services/rest/" && break; sleep 0.1; done
"$BIN" import flickr "$WORK/library.sqlite" --endpoint "http://127.0.0.1:$ORIGIN_PORT/services/rest/" --api-key demo \
  > "$WORK/import.log" 2>&1
# trace: the log names every photo opened, and by whom.
XDG_CACHE_HOME=$HOME_DIR/.cache "$BIN" mount "$WORK/library.sqlite" "$MNT" --cache-dir "$WORK/cache" --log-level trace
# find's listing writes no thumbnails (photofs leaves backup and search tools' listings alone): pcmanfm's is first.
photos=$(find "$MNT/$FOLDER" -maxdepth 1 -type f | wc -l)

start_display
make_pcmanfm_home "$HOME_DIR" 128
start_pcmanfm "$HOME_DIR" "$MNT/$FOLDER" "$HOME_DIR/.cache"
window=$(wait_for_window 30)
for _ in $(seq 600); do
  [ "$(ls "$HOME_DIR/.cache/thumbnails/normal" 2>/dev/null | wc -l)" -ge "$photos" ] && break
  sleep 0.1
done
wait_for_still_screen 60
mkdir -p "$(dirname "$OUT")"
DISPLAY=$XDISPLAY import -window "$window" "$WORK/window.png"
# 1024 × 720 → 800 px wide, 256 colours: about 200 KB instead of 1 MB, the photos still recognisable.
"$CONVERT" "$WORK/window.png" -resize 800x -dither FloydSteinberg -colors 256 -strip "PNG8:$OUT"
echo "$OUT: $(stat -c %s "$OUT") bytes; $photos photos in /$FOLDER, $(ls "$HOME_DIR/.cache/thumbnails/normal" | wc -l) thumbnails;" \
  "pcmanfm opened $(grep -c "open not counted as recent" "$WORK/cache/photofs.log" || true) photos"
grep "desktop thumbnails before listing" "$WORK/cache/photofs.log" | sed 's/^[^ ]* [^ ]* [^ ]* //' || true
