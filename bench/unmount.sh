# Sourced by the bench scripts: an unmount that waits for the mount's daemon to exit.
# fusermount3 returns before the daemon has written its last recent opens and statistics, so a copy of its
# library or a removal of its cache made meanwhile races it (a torn library once, "rm: Directory not empty" once).
unmount_and_wait() { # mountpoint
  local daemon
  daemon=$(pgrep -f -- "photofs mount .* $1 " | head -1 || true)
  fusermount3 -u "$1"
  [ -n "$daemon" ] || return 0
  for _ in $(seq 300); do kill -0 "$daemon" 2>/dev/null || return 0; sleep 0.1; done
}
