# Shared by bench/thumbnails.sh and bench/screenshot.sh (sourced, not run): an Xvfb display and pcmanfm in a
# home of its own, as a new user would have it. Expects WORK; the caller stops what it started (the pids).
#
# pcmanfm draws thumbnails in its own process (libfm 1.3): for each file it reads
# $XDG_CACHE_HOME/thumbnails/normal/<md5 of the URI>.png (large/ when thumbnail_size > 128) and uses it when its
# Thumb::MTime is the file's mtime; otherwise it reads the whole file and writes one itself.

# Starts Xvfb on a display number it picks (-displayfd: no clash with another X server); sets XVFB_PID and
# XDISPLAY (":N") once the server accepts clients.
start_display() {
  : > "$WORK/display-number"
  Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3> "$WORK/display-number" 2> "$WORK/xvfb.log" &
  XVFB_PID=$!
  for _ in $(seq 300); do grep -q . "$WORK/display-number" && break; sleep 0.1; done
  grep -q . "$WORK/display-number" || { echo "Xvfb did not start: $(tail -3 "$WORK/xvfb.log")" >&2; return 1; }
  XDISPLAY=:$(head -1 "$WORK/display-number")
}

# A home for pcmanfm at $1 (HOME, XDG_CONFIG_HOME below it), thumbnails of $2 px (128: libfm's default, read
# from normal/; 256: from large/). No size limit (libfm's default, 2 MB, would leave most real photographs
# without a thumbnail), no cursor blink (a still screen means pcmanfm has finished drawing).
make_pcmanfm_home() {
  mkdir -p "$1/.config/libfm" "$1/.config/pcmanfm/default" "$1/runtime"
  chmod 700 "$1/runtime"
  printf '[config]\nthumbnail_local=1\nthumbnail_max=0\n\n[ui]\nshow_thumbnail=1\nthumbnail_size=%s\n' "$2" \
    > "$1/.config/libfm/libfm.conf"
  printf '[ui]\nwin_width=%s\nwin_height=%s\nview_mode=thumbnail\n' "${PCMANFM_WIDTH:-1024}" \
    "${PCMANFM_HEIGHT:-720}" > "$1/.config/pcmanfm/default/pcmanfm.conf"
  echo 'gtk-cursor-blink = 0' > "$1/.gtkrc-2.0"
}

# pcmanfm on folder $2 with home $1 and thumbnail cache $3/thumbnails; sets PCMANFM_PID. No session bus, so
# nothing (gvfs, dbus) outlives it.
start_pcmanfm() {
  env HOME="$1" XDG_CONFIG_HOME="$1/.config" XDG_DATA_HOME="$1/.local/share" XDG_CACHE_HOME="$3" \
    XDG_RUNTIME_DIR="$1/runtime" DISPLAY="$XDISPLAY" DBUS_SESSION_BUS_ADDRESS="unix:path=$1/runtime/no-bus" \
    GIO_USE_VOLUME_MONITOR=unix NO_AT_BRIDGE=1 pcmanfm "$2" > "$1/pcmanfm.log" 2>&1 &
  PCMANFM_PID=$!
}

# Waits (up to $1 s) until pcmanfm's window shows; prints its id.
wait_for_window() {
  local id
  for _ in $(seq $(( $1 * 10 ))); do
    id=$(DISPLAY=$XDISPLAY xdotool search --onlyvisible --class pcmanfm 2>/dev/null | head -1)
    [ -n "$id" ] && { echo "$id"; return 0; }
    sleep 0.1
  done
  echo "pcmanfm's window did not appear in $1 s" >&2
  return 1
}

# Waits (up to $1 s) until two screenshots 0.5 s apart are the same: pcmanfm has drawn what it will.
wait_for_still_screen() {
  local previous="" current
  for _ in $(seq $(( $1 * 2 ))); do
    current=$(DISPLAY=$XDISPLAY import -window root -depth 8 rgb:- 2>/dev/null | md5sum)
    [ "$current" = "$previous" ] && return 0
    previous=$current
    sleep 0.5
  done
  echo "the screen kept changing for $1 s" >&2
  return 1
}

stop_pid() { # pid: TERM, then KILL after 5 s
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
}
