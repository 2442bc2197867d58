# photofs: `make demo` and `make test` each work alone on a fresh Debian machine (they install what is missing).
SHELL := /bin/bash
PREFIX ?= /usr/local
SBINDIR ?= /sbin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Each target installs only what it uses (docs/build-time.md). Build and the demo's run time: libfuse3 and
# fusermount3, SQLite, libcurl, libpng, libjpeg-turbo, libcrypto (HMAC-SHA1, MD5), pkg-config.
# libexif, libheif and libgeonames (with GLib) for folder imports: EXIF, HEIC, the nearest city of a GPS position;
# libwebp for Immich's WebP thumbnails.
BUILD_PACKAGES := libfuse3-dev fuse3 libsqlite3-dev libcurl4-openssl-dev libpng-dev libjpeg62-turbo-dev libssl-dev pkg-config libexif-dev libheif-dev libgeonames-dev libwebp-dev
# The integration tests also run rsync, ps (procps), getfattr and setfattr (attr), gio (libglib2.0-bin) and
# python3 (a thumbnailer's reads); xvfb, pcmanfm, xdotool and imagemagick (import) for the file manager test;
# nginx-light for the caching proxy test.
# exiftool (libimage-exiftool-perl) and heif-enc (libheif-examples) write the folder tests' real EXIF and HEIC.
TEST_PACKAGES := rsync procps attr libglib2.0-bin python3 xvfb pcmanfm xdotool imagemagick nginx-light libimage-exiftool-perl libheif-examples
# bench/*.sh install what they compare against themselves; pgrep (procps) and python3 are what they assume.
BENCH_PACKAGES := procps python3
BIN := .build/release/photofs
TEST_BUILD := .build-tests

.PHONY: all deps deps-test deps-bench build test demo install uninstall bench clean

all: build

# $(call apt_install,packages): installs those not installed yet, with one apt-get update before.
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
endef

FUSE_CHECK := @[ -e /dev/fuse ] || { echo "/dev/fuse is missing: load the fuse module (modprobe fuse)"; exit 1; }

# One apt-get run per target: a second would update the package lists again.
deps:
	$(call apt_install,$(BUILD_PACKAGES))
	$(FUSE_CHECK)

deps-test:
	$(call apt_install,$(BUILD_PACKAGES) $(TEST_PACKAGES))
	$(FUSE_CHECK)

deps-bench:
	$(call apt_install,$(BUILD_PACKAGES) $(BENCH_PACKAGES))
	$(FUSE_CHECK)

build: deps
	swift build -c release --product photofs

# make test builds photofs and the tests together, in release, in a build folder of its own: the integration
# tests run a release photofs anyway, and a debug test build was a second compile of everything whose tests
# then made their photos (DemoLibrary's pixels and resizes) at -Onone (docs/build-time.md). Its own folder,
# because the tests' build flags (-enable-testing) differ from `make build`'s: sharing .build would rebuild
# everything at every switch between the two.
test: deps-test
	swift test -c release --scratch-path $(TEST_BUILD)

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
# folder imports and local photos read through a mount (docs/benchmarks-folders.md), /events and /search on
# 100,000 photos (docs/events-and-search.md), and an Immich import and mount against curl and a Flickr mount of
# the same photos (docs/benchmarks-immich.md).
bench: deps-bench build
	bash bench/run.sh
	bash bench/resize.sh
	bash bench/thumbnails.sh
	bash bench/wan.sh
	bash bench/floor.sh
	bash bench/folders.sh
	bash bench/finding.sh
	bash bench/immich.sh

uninstall:
	$(SUDO) rm -f $(PREFIX)/bin/photofs $(SBINDIR)/mount.fuse.photofs /etc/systemd/system/photofs@.service

clean:
	rm -rf .build $(TEST_BUILD) demo mnt thumbs backup bench-work bench-work-resize bench-work-thumbnails bench-work-screenshot bench-work-wan bench-work-floor bench-work-folders bench-work-finding bench-work-immich
