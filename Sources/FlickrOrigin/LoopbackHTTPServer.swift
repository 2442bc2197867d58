// A small HTTP/1.1 server on 127.0.0.1 (thread per connection, keep-alive) for the test and demo origin.
import Foundation
import Logging

public struct ServerRequest: Sendable {
    public var method: String
    /// Path without the query string, percent-decoded.
    public var path: String
    public var query: [String: String]
    /// Header names lower-cased.
    public var headers: [String: String]
    /// The request's body (Content-Length bytes; none for GET and HEAD).
    public var body = Data()
}

public struct ServerResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: Data
    /// Test hook: close the connection after this many body bytes although Content-Length promised more.
    public var truncateAfter: Int?
    /// Test hook: wait this long before sending anything.
    public var delay: TimeInterval = 0
    /// Test hook: send the body at about this many bytes per second (a slow link).
    public var bytesPerSecond: Int?
    /// Told how many body bytes each write handed to the socket (what the origin sent, as a counter sees it).
    public var bodySent: (@Sendable (Int) -> Void)?

    public init(status: Int, headers: [(String, String)] = [], body: Data = Data(), truncateAfter: Int? = nil) {
        self.status = status; self.headers = headers; self.body = body; self.truncateAfter = truncateAfter
    }

    public static func text(_ status: Int, _ text: String) -> ServerResponse {
        ServerResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8))
    }
}

public final class LoopbackHTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (ServerRequest) -> ServerResponse
    public private(set) var port: UInt16 = 0
    private var listener: Int32 = -1
    private let handler: Handler
    private let logger: Logger
    private let lock = NSLock()
    private var connections = Set<Int32>()
    private var stopped = false

    public init(handler: @escaping Handler, logger: Logger = Logger(label: "photofs.origin")) {
        self.handler = handler
        self.logger = logger
    }

    /// Binds 127.0.0.1:`port` (0 picks a free port, see `port`) and starts accepting.
    public func start(port requested: UInt16 = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = requested.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        let thread = Thread { [self] in acceptLoop(fd) }
        thread.name = "origin-accept"
        thread.start()
    }

    public func stop() {
        lock.lock()
        guard !stopped else { lock.unlock(); return }
        stopped = true
        let open = connections
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    private func acceptLoop(_ fd: Int32) {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            lock.lock()
            if stopped { lock.unlock(); close(client); return }
            connections.insert(client)
            lock.unlock()
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let thread = Thread { [self] in
                serve(client)
                lock.lock()
                connections.remove(client)
                lock.unlock()
                close(client)
            }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let terminator = Data("\r\n\r\n".utf8)
        while true {
            var headerEnd = buffer.range(of: terminator)
            while headerEnd == nil {
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { return }
                buffer.append(contentsOf: chunk[0..<n])
                if buffer.count > 64 * 1024 { return } // no request of ours has 64 KB of headers
                headerEnd = buffer.range(of: terminator)
            }
            let head = String(decoding: buffer[buffer.startIndex..<headerEnd!.lowerBound], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex..<headerEnd!.upperBound)
            guard var request = parse(head) else { return }
            if let length = request.headers["content-length"].flatMap(Int.init), length > 0 {
                // No request of ours has a body near 16 MiB (an Immich search is a few hundred bytes).
                if length > 16 << 20 { return }
                while buffer.count < length {
                    let n = read(fd, &chunk, chunk.count)
                    if n <= 0 { return }
                    buffer.append(contentsOf: chunk[0..<n])
                }
                request.body = Data(buffer[buffer.startIndex..<buffer.startIndex + length])
                buffer.removeSubrange(buffer.startIndex..<buffer.startIndex + length)
            }
            let response = handler(request)
            if response.delay > 0 { Thread.sleep(forTimeInterval: response.delay) }
            let keepAlive = request.headers["connection"]?.lowercased() != "close" && response.truncateAfter == nil
            guard send(response, for: request, keepAlive: keepAlive, to: fd), keepAlive else { return }
        }
    }

    private func parse(_ head: String) -> ServerRequest? {
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2 else { return nil }
        let target = String(parts[1])
        let components = URLComponents(string: target)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return ServerRequest(method: String(parts[0]), path: components?.path ?? target, query: query, headers: headers)
    }

    private func send(_ response: ServerResponse, for request: ServerRequest, keepAlive: Bool, to fd: Int32) -> Bool {
        var head = "HTTP/1.1 \(response.status) \(LoopbackHTTPServer.reason(response.status))\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        if !response.headers.contains(where: { $0.0.lowercased() == "content-length" }) {
            head += "Content-Length: \(response.body.count)\r\n"
        }
        head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        let bytes = Data(head.utf8)
        let body = request.method == "HEAD" ? Data() : response.truncateAfter.map { response.body.prefix($0) } ?? response.body
        guard let rate = response.bytesPerSecond, rate > 0 else {
            let written = write(bytes + body, to: fd)
            response.bodySent?(max(0, written - bytes.count))
            return written == bytes.count + body.count
        }
        guard write(bytes, to: fd) == bytes.count else { return false }
        // 10 chunks a second at the requested rate.
        let chunk = max(1, rate / 10)
        var offset = body.startIndex
        while offset < body.endIndex {
            let end = min(offset + chunk, body.endIndex)
            let written = write(body[offset..<end], to: fd)
            response.bodySent?(written)
            guard written == end - offset else { return false }
            offset = end
            if offset < body.endIndex { Thread.sleep(forTimeInterval: 0.1) }
        }
        return true
    }

    /// Sends `bytes`; returns how many went (all of them unless the peer went away).
    private func write(_ bytes: Data, to fd: Int32) -> Int {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n <= 0 { return offset }
                offset += n
            }
            return offset
        }
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 206: return "Partial Content"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}
