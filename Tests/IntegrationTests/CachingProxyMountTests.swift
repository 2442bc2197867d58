// Issue 11, "many mounts, one origin fetch": two mounts of one library behind a caching nginx proxy (one given
// `-o proxy=`, one the standard `http_proxy` variable) cost the origin one fetch per photo, with equal bytes.
import FlickrOrigin
import Foundation
import TestRequirements
import XCTest

final class CachingProxyMountTests: XCTestCase {
    var first: MountHarness!
    var second: MountHarness!
    var proxy: Process?
    var proxyRoot: URL!

    override func tearDown() {
        let failed = (testRun?.failureCount ?? 0) > 0
        if failed, let log = try? String(contentsOf: proxyRoot.appendingPathComponent("error.log"), encoding: .utf8) {
            print("--- nginx error log ---\n" + log.suffix(4000))
        }
        second?.tearDown(failed: failed)
        first?.tearDown(failed: failed)
        if let proxy, proxy.isRunning {
            proxy.terminate()
            proxy.waitUntilExit()
        }
        if let proxyRoot { try? FileManager.default.removeItem(at: proxyRoot) }
    }

    func testTwoMountsBehindACachingProxyCostTheOriginOneFetchPerPhoto() throws {
        try TestRequirement.program("/usr/sbin/nginx", package: "nginx-light")
        let library = DemoLibrary.make(count: 12, scale: 4)
        first = try MountHarness(library: library)
        second = try MountHarness(library: library)
        XCTAssertEqual(first.importLibrary().status, 0)
        // Both libraries come from the first origin: one household, one Flickr account, two machines.
        let imported = second.photofs(["import", "flickr", second.library, "--endpoint", first.origin.endpoint,
                                       "--api-key", first.origin.apiKey])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let port = try startCachingProxy()
        let proxyURL = "http://127.0.0.1:\(port)"

        first.origin.resetCounters()
        try first.mount(extra: ["-o", "proxy=\(proxyURL),prefetch=3"])
        try second.mount(extra: [], environment: ["http_proxy": proxyURL])
        XCTAssertTrue(first.daemonLog.contains("proxy=\(proxyURL)"), "the mount names its proxy: " + first.daemonLog.suffix(600))
        XCTAssertTrue(second.daemonLog.contains("proxy=\(proxyURL) (http_proxy)"), String(second.daemonLog.suffix(600)))

        // The first mount reads every photo, then the second: each file holds the origin's bytes.
        let photos = try first.catalog().allPhotos()
        for harness in [first!, second!] {
            let files = harness.files(under: "regions")
            XCTAssertEqual(files.count, photos.count)
            for file in files {
                let id = try harness.photoID(ofInode: harness.inode(of: file))
                let served = first.origin.photos.first { $0.id == id }?.image.data
                XCTAssertNotNil(served, file)
                XCTAssertEqual(FileManager.default.contents(atPath: file), served, "bytes of \(file)")
            }
        }
        // The origin sent each original once: the second mount's came from nginx's cache.
        for photo in photos {
            let path = URL(string: photo.originalURL)?.path ?? ""
            XCTAssertEqual(first.origin.requestCount(method: "GET", path: path), 1, "origin fetches of \(photo.id)")
        }
        XCTAssertEqual(second.origin.requestCount(method: "GET"), 0, "the second harness's own origin is not used")
        // Both mounts asked the proxy for every photo (and nothing went around it).
        let access = (try? String(contentsOf: proxyRoot.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        let hits = access.split(separator: "\n").filter { $0.hasPrefix("GET /photos/") && $0.hasSuffix(" HIT") }
        XCTAssertEqual(Set(hits.map { $0.split(separator: " ")[1] }).count, photos.count,
                       "every photo was a cache hit for the second mount: \(access.suffix(2000))")
    }

    /// nginx as a forward proxy that caches what it fetches (the set-up docs/proxy-cache.md describes), on a
    /// port the kernel picked; returns the port once nginx answers.
    func startCachingProxy() throws -> Int {
        proxyRoot = first.root.appendingPathComponent("proxy")
        try FileManager.default.createDirectory(at: proxyRoot.appendingPathComponent("cache"), withIntermediateDirectories: true)
        for attempt in 1...3 {
            let port = try freePort()
            let root = proxyRoot.path
            try """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(root)/nginx.pid;
                error_log \(root)/error.log;
                events { worker_connections 256; }
                http {
                  log_format cache '$request_method $uri $status $upstream_cache_status';
                  access_log \(root)/access.log cache;
                  client_body_temp_path \(root)/body;
                  proxy_temp_path \(root)/temp;
                  fastcgi_temp_path \(root)/fastcgi;
                  uwsgi_temp_path \(root)/uwsgi;
                  scgi_temp_path \(root)/scgi;
                  proxy_cache_path \(root)/cache keys_zone=photos:1m max_size=1g inactive=1h;
                  server {
                    listen 127.0.0.1:\(port);
                    location / {
                      proxy_pass http://$http_host;
                      proxy_cache photos;
                      proxy_cache_key $http_host$uri$is_args$args;
                      proxy_cache_valid 200 1h;
                      proxy_cache_lock on;
                      proxy_http_version 1.1;
                      proxy_set_header Connection "";
                    }
                  }
                }
                """.write(to: proxyRoot.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            process.arguments = ["-c", proxyRoot.appendingPathComponent("nginx.conf").path, "-p", root, "-e", root + "/error.log"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            proxy = process
            if eventually(within: 10, { !process.isRunning || accepts(port: port) }),
               process.isRunning {
                return port
            }
            // Another program took the port between freePort and nginx's bind: try a new one.
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            if attempt == 3 { break }
        }
        throw HarnessError("nginx did not start: \((try? String(contentsOf: proxyRoot.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")")
    }

    /// Whether something accepts TCP connections on the port.
    func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// A port nothing listens on now: the kernel's pick for a socket bound to port 0.
    func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw HarnessError("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
