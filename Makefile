# photofs: `make demo` and `make test` each work alone on a fresh Debian machine (they install what is missing).
SHELL := /bin/bash
PREFIX ?= /usr/local
SBINDIR ?= /sbin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Build and run-time needs: libfuse3 + fusermount3, SQLite, libcurl, libpng, libjpeg-turbo, pkg-config;
# rsync, file, procps (ps), attr (getfattr, setfattr) and libglib2.0-bin (gio) are used by the integration
# tests and the demo's hints; xvfb, pcmanfm, xdotool and imagemagick (import) by the file manager test;
# nginx-light by the caching proxy test.
APT_PACKAGES := libfuse3-dev fuse3 libsqlite3-dev libcurl4-openssl-dev libpng-dev libjpeg62-turbo-dev pkg-config rsync file procps attr libglib2.0-bin xvfb pcmanfm xdotool imagemagick nginx-light libexif-dev libheif-dev libgeonames-dev libimage-exiftool-perl libheif-examples
BIN := .build/release/photofs

.PHONY: all deps build test demo install uninstall bench clean

all: build

deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@[ -e /dev/fuse ] || { echo "/dev/fuse is missing: load the fuse module (modprobe fuse)"; exit 1; }

build: deps
	swift build -c release --product photofs

test: deps build
	swift test

demo: deps build
	$(BIN) demo

install: build
	$(SUDO) install -m 0755 $(BIN) $(PREFIX)/bin/photofs
	$(SUDO) install -m 0755 mount-scripts/mount.photofs $(SBINDIR)/mount.fuse.photofs
	$(SUDO) install -m 0644 mount-scripts/photofs@.service /etc/systemd/system/photofs@.service

# Installs nginx-light, rclone, curl, libvips-tools, ImageMagick, Xvfb, pcmanfm and Debian's wallpaper
# photographs, then measures photofs against them: fetching and listing (docs/benchmarks.md), resizing
# (docs/benchmarks-resize.md), a file manager's look at a 200-photo folder (docs/benchmarks.md, "Desktop thumbnails"),
# what a person feels over a WAN (40 ms round trips, 100 Mbit/s, made by bench/wanproxy.py: docs/benchmarks-wan.md),
# and folder imports and local photos read through a mount (docs/benchmarks-folders.md).
bench: deps build
	bash bench/run.sh
	bash bench/resize.sh
	bash bench/thumbnails.sh
	bash bench/wan.sh
	bash bench/floor.sh
	bash bench/folders.sh

uninstall:
	$(SUDO) rm -f $(PREFIX)/bin/photofs $(SBINDIR)/mount.fuse.photofs /etc/systemd/system/photofs@.service

clean:
	rm -rf .build demo mnt thumbs backup bench-work bench-work-resize bench-work-thumbnails bench-work-screenshot bench-work-wan bench-work-floor bench-work-folders
