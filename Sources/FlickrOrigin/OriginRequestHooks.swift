// Test hooks on chosen requests of the loopback origin: hold them until the test lets go (so the test knows a
// client is in the middle of a page), or answer them with an HTTP status (an origin gone bad at one page).
import Foundation
import PhotoContent

/// Which requests a hook acts on.
public struct OriginRequestMatch: Sendable {
    let matches: @Sendable (ServerRequest) -> Bool
    public init(_ matches: @escaping @Sendable (ServerRequest) -> Bool) { self.matches = matches }

    /// REST calls of `method`; with `page`, only that page (a call that names none is page 1); with
    /// `withExtras`, only calls that ask for photo extras (true: a photo listing) or that do not (false: an id
    /// listing, which asks for `media` alone).
    public static func rest(_ method: String, page: Int? = nil, withExtras: Bool? = nil) -> OriginRequestMatch {
        OriginRequestMatch { request in
            guard request.path.hasPrefix("/services/rest"), request.query["method"] == method else { return false }
            if let page, (request.query["page"].flatMap { Int($0) } ?? 1) != page { return false }
            if let withExtras, FlickrOriginServer.asksForPhotoExtras(request.query) != withExtras { return false }
            return true
        }
    }

    /// Requests with this HTTP method ("HEAD", "GET") for this path.
    public static func request(_ httpMethod: String, path: String) -> OriginRequestMatch {
        OriginRequestMatch { $0.method == httpMethod && $0.path == path }
    }
}

/// Requests held by `FlickrOriginServer.hold(_:)`: each waits until `release()` (or its own time limit, so a
/// failing test cannot hang the suite), then is answered normally.
public final class OriginHeldRequests: @unchecked Sendable {
    /// Monotonic: a clock step must not end a hold early nor make a failing test wait past its limit.
    private let condition = MonotonicCondition()
    private var released = false
    private var count = 0
    let limit: TimeInterval

    init(limit: TimeInterval) { self.limit = limit }

    /// How many matching requests arrived so far.
    public var arrivals: Int { condition.withLock { count } }

    /// Waits until at least one matching request arrived; false if none did within `timeout`.
    public func waitForArrival(timeout: TimeInterval) -> Bool {
        let deadline = DispatchTime.now() + timeout
        condition.lock(); defer { condition.unlock() }
        while count == 0 { if !condition.wait(until: deadline) { return count > 0 } }
        return true
    }

    /// Lets every held request (and every later one) through.
    public func release() {
        condition.withLock { released = true; condition.broadcast() }
    }

    /// Called on the request's connection thread: counts it and blocks while the hold lasts.
    func holdHere() {
        let deadline = DispatchTime.now() + limit
        condition.lock(); defer { condition.unlock() }
        count += 1
        condition.broadcast()
        while !released { if !condition.wait(until: deadline) { return } }
    }
}

/// The hooks in force (guarded by the server's lock).
struct OriginRequestHooks {
    var holds: [(match: OriginRequestMatch, held: OriginHeldRequests)] = []
    var statuses: [(match: OriginRequestMatch, status: Int)] = []
}

extension FlickrOriginServer {
    /// Holds every request that matches until the returned object's `release()` (at most `limit` seconds each).
    @discardableResult
    public func hold(_ match: OriginRequestMatch, limit: TimeInterval = 30) -> OriginHeldRequests {
        let held = OriginHeldRequests(limit: limit)
        withLock { requestHooks.holds.append((match, held)) }
        return held
    }

    /// Answers every matching request with `status` (a scripted failure, with the scripted Retry-After for 429
    /// and 503) until `clearRequestHooks()`: unlike `scriptRESTStatuses`, it does not depend on the order calls
    /// arrive in, so "page 3 of the listing fails, however often it is retried" is exact.
    public func answer(_ match: OriginRequestMatch, status: Int) {
        withLock { requestHooks.statuses.append((match, status)) }
    }

    /// Removes every hook and lets held requests go.
    public func clearRequestHooks() {
        let holds = withLock { () -> [OriginHeldRequests] in
            defer { requestHooks = OriginRequestHooks() }
            return requestHooks.holds.map(\.held)
        }
        for held in holds { held.release() }
    }

    /// Runs the hooks for one request (after it is counted and logged): holds it while a hold matches, then
    /// the first matching status answer; nil: answer it normally.
    func applyRequestHooks(_ request: ServerRequest) -> ServerResponse? {
        let (holds, status) = withLock {
            (requestHooks.holds.filter { $0.match.matches(request) }.map(\.held),
             requestHooks.statuses.first { $0.match.matches(request) }?.status)
        }
        for held in holds { held.holdHere() }
        return status.map(scriptedFailure)
    }
}

extension FlickrOriginServer {
    /// Whether a list call asks for more than `media`: a photo listing, not an id listing.
    static func asksForPhotoExtras(_ query: [String: String]) -> Bool {
        (query["extras"] ?? "").split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) != "media" }
    }
}
