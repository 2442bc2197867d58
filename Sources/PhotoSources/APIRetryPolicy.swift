// When a failed API call is tried again, and for how long every call then waits (HTTP 429, Retry-After).
import Foundation
import PhotoContent

/// What an API client does after a failed attempt. Retrying is bounded both ways: throttling answers (429,
/// or 503 with Retry-After) get up to `throttledAttempts` attempts in all, any other retryable failure
/// (connection lost, 5xx) the HTTP client's `attempts`.
public struct APIRetryPolicy: Sendable, Equatable {
    /// 6 attempts: five waits, which with Flickr's usual Retry-After of a few seconds ride out a throttled
    /// minute; a server that still refuses is not coming back soon.
    public var throttledAttempts = 6
    /// The longest Retry-After honoured by waiting. A server asking for more (Flickr may hold a key for the
    /// rest of its hour) is answered by stopping with a message that says when to try again: a silent
    /// wait of an hour looks like a hang, and an import can be run again.
    public var maxServerWait: TimeInterval = 60
    /// The wait after a throttling answer without Retry-After, doubled each time (2, 4, 8... s) up to
    /// `maxServerWait`; other failures use the HTTP client's own backoff.
    public var throttledBaseDelay: TimeInterval = 2

    public init() {}

    public enum Decision: Sendable, Equatable {
        /// Wait this long, then try again; `hold` says the server asked for it (every call waits, not just this one).
        case retry(after: TimeInterval, hold: Bool)
        /// Stop; `reason` says why when there is more to say than the error itself (nil: not worth retrying).
        case giveUp(reason: String?)
    }

    /// `attempt` is the number of the attempt that just failed (1 for the first); `throttledSoFar` counts
    /// throttling answers before this one.
    public func decide(after error: HTTPError, attempt: Int, throttledSoFar: Int, http: HTTPConfiguration) -> Decision {
        guard error.isRetryable else { return .giveUp(reason: nil) }
        if case .status(let status) = error.kind, status == 429 || (status == 503 && error.retryAfter != nil) {
            let throttled = throttledSoFar + 1
            guard throttled < throttledAttempts else {
                return .giveUp(reason: "the server still answered HTTP \(status) after \(throttled) attempts")
            }
            // Retry-After from the network: NaN, infinite or negative counts as absent (and cannot trap below).
            if let asked = error.retryAfter, asked.isFinite, asked >= 0 {
                guard asked <= maxServerWait else {
                    let when = Date().addingTimeInterval(min(asked, 31_536_000))
                    return .giveUp(reason: "the server asked to wait \(Int(min(asked, 999_999_999))) s (until "
                                   + "\(APIRetryPolicy.timeFormat(when))), longer than the \(Int(maxServerWait)) s "
                                   + "photofs waits; run it again then")
                }
                return .retry(after: asked, hold: true)
            }
            let backoff = throttledBaseDelay * pow(2, Double(min(throttled - 1, 30)))
            return .retry(after: min(backoff, maxServerWait), hold: true)
        }
        guard attempt < max(1, http.attempts) else { return .giveUp(reason: "\(attempt) attempts") }
        return .retry(after: http.retryDelay(attempt: attempt, retryAfter: error.retryAfter), hold: false)
    }

    static func timeFormat(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date)
    }
}
