// Which failed requests are logged: the first of a kind, then one a minute, saying how many were left out.
import Foundation

/// A program retrying a photo that cannot be opened (its file changed since the import) sends the same failing
/// request thousands of times a minute: a trial's reader retrying for a minute wrote 11,557 identical lines (9
/// MB of log). The first failure of a kind (an operation on an inode, with an errno) is logged, then at most one
/// a minute, with the count of those left out since.
public struct RepeatedFailures: Sendable {
    /// What a failure gets: logged (with how many like it were not logged since the last that was), or not.
    public enum Verdict: Equatable, Sendable {
        case log(leftOut: Int)
        case leaveOut
    }

    /// One line a minute per kind keeps a retrying program's failure in view without filling the disk.
    public static let defaultIntervalNanoseconds: UInt64 = 60_000_000_000
    /// Kinds remembered at most; past it, all are forgotten (each is then logged once more): 4,096 kinds is
    /// more than any burst of distinct failures a mount has, at ~100 bytes each.
    public static let defaultLimit = 4096

    private struct Seen: Sendable {
        var loggedAt: UInt64
        var leftOut: Int
    }

    private var seen: [String: Seen] = [:]
    private let interval: UInt64
    private let limit: Int

    public init(intervalNanoseconds: UInt64 = RepeatedFailures.defaultIntervalNanoseconds,
                limit: Int = RepeatedFailures.defaultLimit) {
        self.interval = intervalNanoseconds
        self.limit = limit
    }

    /// The verdict on a failure of kind `key` at `now` (monotonic nanoseconds).
    public mutating func failed(_ key: String, now: UInt64) -> Verdict {
        if var entry = seen[key] {
            guard now &- entry.loggedAt >= interval else {
                entry.leftOut += 1
                seen[key] = entry
                return .leaveOut
            }
            seen[key] = Seen(loggedAt: now, leftOut: 0)
            return .log(leftOut: entry.leftOut)
        }
        if seen.count >= limit { seen.removeAll(keepingCapacity: true) }
        seen[key] = Seen(loggedAt: now, leftOut: 0)
        return .log(leftOut: 0)
    }
}
