# Shared by bench/run.sh and bench/resize.sh (sourced, not run): package installs, the photo set, nginx and
# the Flickr-format origin in front of it, the import, and a trap that stops everything started.
# Expects ROOT, BIN, WORK, NGINX_PORT, ORIGIN_PORT, PACKAGES; sets count, bytes, largest.
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
# Real photographs from Debian's wallpaper packages (JPEG and PNG, 0.1–16 MB).
PACKAGES="$PACKAGES nginx-light curl sqlite3 bc ukui-wallpapers gnome-backgrounds mate-backgrounds plasma-workspace-wallpapers"
missing=$(for p in $PACKAGES; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"; done)
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

pids=()
mounts=()
source "$(dirname "${BASH_SOURCE[0]}")/unmount.sh"
cleanup() {
  for m in "${mounts[@]}"; do fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || true; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
}
trap cleanup EXIT

# A previous run that was interrupted may have left its nginx, origin or mounts behind.
pkill -f "nginx -c $WORK/nginx.conf" 2>/dev/null || true
pkill -f "photofs origin --port $ORIGIN_PORT" 2>/dev/null || true
for m in "$WORK"/mnt* "$WORK/rclone"; do fusermount3 -uz "$m" 2>/dev/null || true; done
rm -rf "$WORK"
mkdir -p "$WORK/www"
while IFS= read -r -d '' f; do
  # Flatten to unique, URL-safe names.
  cp "$f" "$WORK/www/$(echo "${f#/usr/share/}" | tr '/ ' '__')"
done < <(find /usr/share/backgrounds /usr/share/wallpapers /usr/share/images -type f \
           \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) -size +100k -print0 2>/dev/null)
count=$(ls "$WORK/www" | wc -l)
bytes=$(du -cb "$WORK"/www/* | tail -1 | cut -f1)
largest=$(ls -S "$WORK/www" | head -1)

cat > "$WORK/nginx.conf" <<CONF
worker_processes 2;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log $WORK/nginx-access.log;
  sendfile on;
  tcp_nopush on;
  types { image/jpeg jpg jpeg; image/png png; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $WORK/www;
    autoindex on;
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK"
sleep 0.5

"$BIN" origin --port "$ORIGIN_PORT" --photos-dir "$WORK/www" --image-base-url "http://127.0.0.1:$NGINX_PORT/" \
  > "$WORK/origin.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/services/rest/" && break; sleep 0.1; done
"$BIN" import flickr "$WORK/library.sqlite" --endpoint "http://127.0.0.1:$ORIGIN_PORT/services/rest/" --api-key demo \
  > "$WORK/import.log" 2>&1

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }
ratio() { echo "scale=2; $1 / $2" | bc -l; }
