// A small blocking HTTP client on libcurl: GET into memory, HEAD, and GET streamed into a file descriptor.
import CCurl
import Foundation
import Logging

/// Timeouts and limits for every transfer. Defaults: a loopback or LAN origin answers a connect in
/// milliseconds and Flickr's CDN in well under a second, so 10 s means "unreachable"; a transfer that moves
/// fewer than 1 byte/s for 30 s is stalled and is aborted rather than left to hang a reader.
public struct HTTPConfiguration: Sendable {
    public var connectTimeout: TimeInterval = 10
    public var stallTimeout: TimeInterval = 30
    /// Attempts for a request that failed in a way worth retrying (connection errors, timeouts, 5xx, 429).
    public var attempts = 3
    /// First retry delay; doubled each time, with up to 50% random jitter so many clients do not retry at once.
    public var retryBaseDelay: TimeInterval = 0.2
    /// The longest single wait between attempts, whatever Retry-After asks.
    public var retryMaxDelay: TimeInterval = 30
    public var userAgent = "photofs/0.1"
    /// The proxy for every request: nil leaves libcurl's default (the `http_proxy`, `https_proxy`,
    /// `all_proxy` and `no_proxy` variables); "" means none, whatever the environment says.
    public var proxy: String?
    /// Secret headers per server (Immich's `x-api-key`), added by the client to that server's requests only.
    public var credentials = RequestCredentials()
    public init() {}

    /// Delay before attempt `attempt + 1`: base × 2^(attempt-1), plus up to 50% jitter, or what the origin
    /// asked for with Retry-After; never more than `retryMaxDelay`.
    /// Retry-After comes from the network: NaN, infinite or negative values count as absent.
    public func retryDelay(attempt: Int, retryAfter: TimeInterval?) -> TimeInterval {
        let backoff = retryBaseDelay * pow(2, Double(min(max(0, attempt - 1), 30))) * Double.random(in: 1...1.5)
        let asked = retryAfter.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let delay = min(asked ?? backoff, retryMaxDelay)
        return delay.isFinite && delay >= 0 ? delay : 0
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names lower-cased; the last value wins.
    public var headers: [String: String]
    public var body: Data
    public var url: String

    public var contentLength: Int64? { headers["content-length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) } }
    public var contentType: String? { headers["content-type"] }
}

/// Why a transfer failed; `isRetryable` drives the retry loop.
public struct HTTPError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// libcurl gave up: connection refused, timeout, DNS, TLS, a body shorter than announced...
        case transport(code: Int, message: String)
        /// The origin answered with a non-2xx status.
        case status(Int)
        /// Our sink refused the bytes (disk full, too many bytes for the expected size...).
        case sink(String)
        case invalidURL
    }
    public var kind: Kind
    /// The URL with its credentials replaced (`URLRedaction`): errors end up in logs and messages.
    public var url: String
    /// Seconds the origin asked us to wait (Retry-After on 429/503, seconds or an HTTP date: `RetryAfter`).
    public var retryAfter: TimeInterval?

    public init(kind: Kind, url: String, retryAfter: TimeInterval? = nil) {
        self.kind = kind
        self.url = URLRedaction.redacted(url)
        self.retryAfter = retryAfter
    }

    public var isRetryable: Bool {
        switch kind {
        case .transport(let code, _):
            // Not retried: unsupported protocol (1), malformed URL (3), write errors (23), too many redirects (47).
            return ![1, 3, 23, 47].contains(code)
        case .status(let status): return status == 429 || (500...599).contains(status)
        case .sink, .invalidURL: return false
        }
    }

    public var description: String {
        switch kind {
        case .transport(_, let message): return "\(message) (\(url))"
        case .status(let status): return "HTTP \(status) from \(url)"
        case .sink(let message): return "\(message) (\(url))"
        case .invalidURL: return "not an http(s) URL: \(url)"
        }
    }
}

/// Where a response body goes while it arrives.
public protocol HTTPBodySink: AnyObject {
    /// Called once, before the first byte of a 2xx body, with the status and headers (names lower-cased).
    /// Returns false to abort the transfer (the reason goes into `failure`).
    func begin(status: Int, headers: [String: String]) -> Bool
    /// Returns false to abort the transfer (the reason goes into `failure`).
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool
    var failure: String? { get }
}

extension HTTPBodySink {
    public func begin(status: Int, headers: [String: String]) -> Bool { true }
}

final class MemorySink: HTTPBodySink {
    var data = Data()
    /// A JSON answer or image larger than this is not something we asked for (Flickr pages are ~100 KB).
    let limit: Int
    var failure: String?
    init(limit: Int) { self.limit = limit }
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if data.count + bytes.count > limit {
            failure = "response larger than \(limit) bytes"
            return false
        }
        data.append(contentsOf: bytes)
        return true
    }
}

/// Per-transfer state the C callbacks reach through their userdata pointer.
private final class TransferState {
    var headers: [String: String] = [:]
    var status = 0
    var begun = false
    let sink: HTTPBodySink?
    /// Error answers' bodies go into the sink too (`getAnswer`).
    let keepsErrorBodies: Bool
    init(sink: HTTPBodySink?, keepsErrorBodies: Bool = false) { self.sink = sink; self.keepsErrorBodies = keepsErrorBodies }
}

private let headerCallback: photofs_curl_data_fn = { data, size, count, userdata in
    let length = size * count
    guard let data, let userdata else { return length }
    let state = Unmanaged<TransferState>.fromOpaque(userdata).takeUnretainedValue()
    switch HeaderLine.parse(UnsafeRawBufferPointer(start: data, count: length)) {
    case .statusLine(let status):
        // A new response (after a redirect or a 100 Continue): forget the previous one's headers.
        state.headers = [:]
        if let status { state.status = status }
    case .field(let name, let value): state.headers[name] = value
    case nil: break
    }
    return length
}

/// One response header line, parsed on its bytes: Foundation's `trimmingCharacters(in:)` and `lowercased()`
/// per line were a fifth of an import's CPU (its HEADs are nothing but headers: 20,000 of them, 15 s).
enum HeaderLine {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

    static func trimmed(_ bytes: UnsafeRawBufferPointer.SubSequence) -> UnsafeRawBufferPointer.SubSequence {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return bytes[start..<end]
    }

    enum Parsed: Equatable {
        /// "HTTP/1.1 200 OK": the status, when it is a number.
        case statusLine(Int?)
        /// A field, its name lower-cased and its value trimmed.
        case field(String, String)
    }

    /// nil for anything else (the empty line that ends the headers, a line without a colon).
    static func parse(_ raw: UnsafeRawBufferPointer) -> Parsed? {
        let line = trimmed(raw[...])
        if line.starts(with: "HTTP/".utf8) {
            let parts = line.split(separator: 0x20, omittingEmptySubsequences: true)
            return .statusLine(parts.count >= 2 ? Int(String(decoding: parts[1], as: UTF8.self)) : nil)
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        // Names are ASCII tokens (RFC 9110 §5.1): lower-cased byte by byte.
        let name = String(decoding: line[line.startIndex..<colon].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        return .field(name, String(decoding: trimmed(line[(colon + 1)...]), as: UTF8.self))
    }
}

private let bodyCallback: photofs_curl_data_fn = { data, size, count, userdata in
    let length = size * count
    guard let data, let userdata else { return length }
    let state = Unmanaged<TransferState>.fromOpaque(userdata).takeUnretainedValue()
    // Error bodies (404 pages) are not written into the sink: they are not the photo.
    guard (200...299).contains(state.status) || state.keepsErrorBodies, let sink = state.sink else { return length }
    if !state.begun {
        state.begun = true
        guard sink.begin(status: state.status, headers: state.headers) else { return 0 }
    }
    return sink.write(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

public final class HTTPClient: @unchecked Sendable {
    public let configuration: HTTPConfiguration
    /// Every request waits here for its host's turn and reports its answer: a host that answers 429 slows
    /// every request of this client to it (imports' HEADs, a mount's downloads), not just the one refused.
    public let backoff: HostBackoffGate
    private let logger: Logger
    /// Idle easy handles: reusing one reuses its connection (keep-alive), saving a TCP handshake per photo.
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private let lock = NSLock()

    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    public init(configuration: HTTPConfiguration = HTTPConfiguration(), logger: Logger = Logger(label: "photofs.http"),
                backoff: HostBackoffGate = HostBackoffGate()) {
        _ = HTTPClient.globalInit
        self.configuration = configuration
        self.logger = logger
        self.backoff = backoff
    }

    deinit {
        for handle in idleHandles { curl_easy_cleanup(handle) }
    }

    /// GET into memory, retried as configured; non-2xx answers throw `.status`.
    public func get(_ url: String, limit: Int = 64 << 20) throws -> HTTPResponse {
        try withRetries(url) {
            let sink = MemorySink(limit: limit)
            var response = try perform(url, method: .get, sink: sink)
            response.body = sink.data
            return response
        }
    }

    /// GET into memory, one attempt: for callers that own their retries (the REST client takes a rate-limit
    /// permit before each attempt, so a retry is counted like any call).
    public func getOnce(_ url: String, limit: Int = 64 << 20) throws -> HTTPResponse {
        let sink = MemorySink(limit: limit)
        var response = try perform(url, method: .get, sink: sink)
        response.body = sink.data
        return response
    }

    /// GET into memory, one attempt, whatever the status: for answers whose error bodies say why (OAuth
    /// endpoints answer 401 with `oauth_problem=...`). Only transport failures throw.
    public func getAnswer(_ url: String, limit: Int = 64 << 10) throws -> HTTPResponse {
        let sink = MemorySink(limit: limit)
        var response = try perform(url, method: .get, sink: sink, acceptingAnyStatus: true)
        response.body = sink.data
        return response
    }

    /// One request with a JSON body (`POST`), or a GET when `body` is nil, whatever the status: for APIs whose
    /// error answers say why in JSON (Immich's `{"message": ...}`). Only transport failures throw.
    public func sendAnswer(_ url: String, json body: Data?, limit: Int = 64 << 20) throws -> HTTPResponse {
        let sink = MemorySink(limit: limit)
        var headers = ["Accept: application/json"]
        if body != nil { headers.append("Content-Type: application/json") }
        var response = try perform(url, method: body == nil ? .get : .post(body ?? Data()), headers: headers, sink: sink,
                                   acceptingAnyStatus: true)
        response.body = sink.data
        return response
    }

    /// HEAD, retried as configured; non-2xx answers throw `.status`.
    public func head(_ url: String) throws -> HTTPResponse {
        try withRetries(url) { try perform(url, method: .head, sink: nil) }
    }

    /// GET streamed into `sink`, one attempt: the caller owns retries because a retry may resume.
    /// `headers` are extra request headers ("Range: bytes=100-").
    public func download(_ url: String, headers: [String] = [], into sink: HTTPBodySink) throws -> HTTPResponse {
        try perform(url, method: .get, headers: headers, sink: sink)
    }

    /// Runs `attempt` up to `configuration.attempts` times with exponential backoff and jitter.
    public func withRetries<T>(_ url: String, _ attempt: () throws -> T) throws -> T {
        for number in 1...max(1, configuration.attempts) {
            do { return try attempt() } catch let error as HTTPError where error.isRetryable && number < configuration.attempts {
                let wait = configuration.retryDelay(attempt: number, retryAfter: error.retryAfter)
                logger.info("retrying", metadata: ["url": "\(URLRedaction.redacted(url))", "error": "\(error)",
                                                   "wait_s": "\(wait)"])
                Thread.sleep(forTimeInterval: wait)
            }
        }
        preconditionFailure("the last attempt either returns or throws")
    }

    private enum Method: Equatable { case get, head, post(Data) }

    private func perform(_ url: String, method: Method, headers: [String] = [], sink: HTTPBodySink?,
                         acceptingAnyStatus: Bool = false) throws -> HTTPResponse {
        guard url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") else {
            throw HTTPError(kind: .invalidURL, url: url)
        }
        backoff.waitTurn(for: url)
        let handle = try checkOutHandle()
        var reusable = true
        defer { checkIn(handle, reusable: reusable) }
        let state = TransferState(sink: sink, keepsErrorBodies: acceptingAnyStatus)
        let userdata = Unmanaged.passUnretained(state).toOpaque()
        curl_easy_reset(handle)
        photofs_curl_set_string(handle, CURLOPT_URL, url)
        photofs_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        photofs_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        photofs_curl_set_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // A request carrying a credential header follows no redirect: libcurl would send the header to the
        // redirect's host too, whoever that is.
        let secretHeaders = configuration.credentials.headers(for: url)
        photofs_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, secretHeaders.isEmpty ? 1 : 0)
        photofs_curl_set_long(handle, CURLOPT_MAXREDIRS, 5)
        photofs_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, HTTPClient.clampedSeconds(configuration.connectTimeout, scale: 1000))
        photofs_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        photofs_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, HTTPClient.clampedSeconds(configuration.stallTimeout, scale: 1)))
        photofs_curl_set_string(handle, CURLOPT_USERAGENT, configuration.userAgent)
        photofs_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, "identity")
        // 512 KiB receive buffer instead of libcurl's 16 KiB: a photo arrives in a few dozen callbacks (each
        // a pwrite and a wake-up of waiting readers) instead of hundreds.
        photofs_curl_set_long(handle, CURLOPT_BUFFERSIZE, 512 * 1024)
        photofs_curl_set_data_fn(handle, CURLOPT_HEADERFUNCTION, headerCallback)
        photofs_curl_set_pointer(handle, CURLOPT_HEADERDATA, userdata)
        photofs_curl_set_data_fn(handle, CURLOPT_WRITEFUNCTION, bodyCallback)
        photofs_curl_set_pointer(handle, CURLOPT_WRITEDATA, userdata)
        if method == .head { photofs_curl_set_long(handle, CURLOPT_NOBODY, 1) }
        if case .post(let body) = method {
            // POSTFIELDSIZE first: COPYPOSTFIELDS then copies exactly that many bytes (the body may hold NUL).
            photofs_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
            body.withUnsafeBytes { raw in
                var bytes = [CChar](repeating: 0, count: raw.count + 1)
                for index in 0..<raw.count { bytes[index] = CChar(bitPattern: raw[index]) }
                bytes.withUnsafeBufferPointer { photofs_curl_set_string(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
            }
        }
        if let proxy = configuration.proxy { photofs_curl_set_string(handle, CURLOPT_PROXY, proxy) }
        var headerList: UnsafeMutablePointer<curl_slist>?
        for header in headers + secretHeaders { headerList = curl_slist_append(headerList, header) }
        defer { curl_slist_free_all(headerList) }
        if let headerList { photofs_curl_set_slist(handle, CURLOPT_HTTPHEADER, headerList) }

        let code = withExtendedLifetime(state) { curl_easy_perform(handle) }
        var status = 0
        photofs_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if state.status == 0 { state.status = status }
        if code != CURLE_OK {
            reusable = false
            if code == CURLE_WRITE_ERROR, let failure = sink?.failure {
                throw HTTPError(kind: .sink(failure), url: url)
            }
            let message = String(cString: curl_easy_strerror(code))
            throw HTTPError(kind: .transport(code: Int(code.rawValue), message: message), url: url)
        }
        let retryAfter = RetryAfter.delay(state.headers["retry-after"])
        backoff.record(url: url, status: status, retryAfter: retryAfter)
        guard (200...299).contains(status) || acceptingAnyStatus else {
            throw HTTPError(kind: .status(status), url: url, retryAfter: retryAfter)
        }
        return HTTPResponse(status: status, headers: state.headers, body: Data(), url: url)
    }

    /// A timeout for libcurl's `long`: NaN or negative → 0, beyond a day → a day (no conversion can trap).
    static func clampedSeconds(_ seconds: TimeInterval, scale: Double) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int(min(seconds, 86_400) * scale)
    }

    private func checkOutHandle() throws -> UnsafeMutableRawPointer {
        lock.lock()
        let idle = idleHandles.popLast()
        lock.unlock()
        if let idle { return idle }
        guard let handle = curl_easy_init() else {
            throw HTTPError(kind: .transport(code: -1, message: "libcurl could not create a handle"), url: "")
        }
        return handle
    }

    private func checkIn(_ handle: UnsafeMutableRawPointer, reusable: Bool) {
        // 16 idle handles: enough for the parallel HEADs of an import and the FUSE threads of a mount.
        lock.lock()
        if reusable && idleHandles.count < 16 {
            idleHandles.append(handle)
            lock.unlock()
        } else {
            lock.unlock()
            curl_easy_cleanup(handle)
        }
    }
}
