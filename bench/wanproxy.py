#!/usr/bin/env python3
"""A WAN in user space for `make bench`: a TCP proxy that adds latency and caps bandwidth per connection.

Kernel netem is not available on these machines, so the shaping is done here, between a client and a
loopback server:
- connection set-up costs one round trip (the TCP handshake a real network would make);
- every byte, in both directions, arrives half a round trip after it was sent (one-way latency), so a
  request costs one round trip before its first answer byte, and pipelining or parallel connections hide
  latency exactly as they would on a real link;
- each connection's bytes towards the client are paced to the bandwidth (a token bucket refilled
  continuously), as a single TCP flow on a long link would get;
- at most one bandwidth-delay product (rate × round trip) is in flight towards the client: the proxy reads
  no more from the server until the client side has taken it, as a TCP sender's window would hold it. So a
  client that hangs up mid-answer stops the server within about a round trip, and the bytes the server
  sent (counted with --stats) are what crossed the link plus what was in flight, as on a real one.

Checked with curl against a loopback server at --rtt-ms 40 --mbit 100: a 1 KB file's first byte after
83–87 ms (2 round trips: set-up and request, plus ~4 ms of the server), a 10 MB file in 0.883 s (0.080 s of
round trips + 0.800 s at 12.5 MB/s), 8 such files at once each in 0.89–0.91 s.

Usage: wanproxy.py LISTEN_PORT TARGET_HOST:TARGET_PORT --rtt-ms 40 --mbit 100 [--stats FILE]

--stats FILE: keeps "SENT DELIVERED" in FILE (rewritten at most every 0.1 s while it changes): bytes the server
sent towards clients (into the link) and bytes delivered to them, summed over every connection so far.
"""
import argparse
import asyncio
import collections
import os
import time

# Bytes the servers sent into the link, and bytes delivered to clients, over every connection.
totals = {"sent": 0, "delivered": 0}


class OneWayPipe:
    """Copies bytes from reader to writer, each chunk delivered `delay` seconds after it was read and no
    faster than `rate` bytes a second (None: unlimited)."""

    def __init__(self, reader, writer, delay, rate, window=None, counted=False):
        self.reader, self.writer, self.delay, self.rate = reader, writer, delay, rate
        self.window, self.counted = window, counted
        self.queue = collections.deque()
        self.queued = 0
        self.ready = asyncio.Event()
        self.drained = asyncio.Event()
        self.closed = False
        self.gone = False

    async def read_side(self):
        try:
            while not self.gone:
                # The window: no more than `window` bytes in flight (read, not yet delivered).
                while self.window and self.queued >= self.window and not self.gone:
                    self.drained.clear()
                    await self.drained.wait()
                if self.gone:
                    break
                data = await self.reader.read(64 * 1024)
                if not data:
                    break
                if self.counted:
                    totals["sent"] += len(data)
                self.queue.append((time.monotonic() + self.delay, data))
                self.queued += len(data)
                self.ready.set()
        finally:
            self.closed = True
            self.ready.set()

    async def write_side(self):
        # Pacing: `sent_until` is when the link finishes sending what was written so far.
        sent_until = 0.0
        try:
            while True:
                while not self.queue:
                    if self.closed:
                        return
                    self.ready.clear()
                    await self.ready.wait()
                due, data = self.queue.popleft()
                self.queued -= len(data)
                self.drained.set()
                now = time.monotonic()
                if due > now:
                    await asyncio.sleep(due - now)
                if self.rate:
                    # The link has been free to send this chunk since it arrived (`due`): pacing counts from
                    # there, so a late wake-up of this loop (sleep overshoots ~0.1 ms) is made up, not lost.
                    for start in range(0, len(data), 64 * 1024):
                        piece = data[start:start + 64 * 1024]
                        sent_until = max(sent_until, due) + len(piece) / self.rate
                        wait = sent_until - time.monotonic()
                        if wait > 0:
                            await asyncio.sleep(wait)
                        self.writer.write(piece)
                        await self.writer.drain()
                        if self.counted:
                            totals["delivered"] += len(piece)
                else:
                    self.writer.write(data)
                    await self.writer.drain()
                    if self.counted:
                        totals["delivered"] += len(data)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            # The client is gone (or the server ended): stop reading from the server too.
            self.gone = True
            self.drained.set()
            try:
                self.writer.close()
            except Exception:
                pass


async def handle(client_reader, client_writer, target, rtt, rate):
    # The handshake a real network makes before the first byte can go.
    await asyncio.sleep(rtt)
    try:
        server_reader, server_writer = await asyncio.open_connection(*target)
    except OSError:
        client_writer.close()
        return
    up = OneWayPipe(client_reader, server_writer, rtt / 2, None)
    # One bandwidth-delay product in flight (at least 64 KiB, one read).
    down = OneWayPipe(server_reader, client_writer, rtt / 2, rate, window=max(64 * 1024, int(rate * rtt)) if rate else None,
                      counted=True)

    await asyncio.gather(up.read_side(), up.write_side(), down.read_side(), down.write_side(),
                         return_exceptions=True)


async def write_stats(path):
    written = None
    while True:
        now = (totals["sent"], totals["delivered"])
        if now != written:
            with open(path + ".new", "w") as f:
                f.write(f"{now[0]} {now[1]}\n")
            os.replace(path + ".new", path)
            written = now
        await asyncio.sleep(0.1)


async def serve(port, target, rtt, rate, stats):
    server = await asyncio.start_server(lambda r, w: handle(r, w, target, rtt, rate), "127.0.0.1", port,
                                        reuse_address=True)
    if stats:
        asyncio.ensure_future(write_stats(stats))
    async with server:
        await server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("target")
    parser.add_argument("--rtt-ms", type=float, default=40)
    parser.add_argument("--mbit", type=float, default=100)
    parser.add_argument("--stats")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    asyncio.run(serve(args.port, (host, int(port)), args.rtt_ms / 1000, args.mbit * 1e6 / 8, args.stats))


if __name__ == "__main__":
    main()
