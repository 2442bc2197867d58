// Reads a Retry-After header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, as seconds to wait from now.
import Foundation

public enum RetryAfter {
    /// Seconds to wait from `now`, or nil when the value is neither form (then the caller's own backoff
    /// applies). A date in the past is 0. The header comes from the network: only ASCII digits count as
    /// delay-seconds (no sign, fraction, exponent, "inf" or "nan", which `TimeInterval(_:)` would take),
    /// and a number of more than 9 digits reads as 999,999,999 s: callers cap the wait anyway.
    public static func delay(_ header: String?, now: Date = Date()) -> TimeInterval? {
        guard let header else { return nil }
        let value = header.trimmingCharacters(in: .whitespaces)
        guard !value.isEmpty, value.utf8.count <= 64 else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard value.utf8.count <= 9, let seconds = Int(value) else { return 999_999_999 }
            return TimeInterval(seconds)
        }
        guard let date = httpDate(value, now: now) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// RFC 9110 §5.6.7: the IMF-fixdate every server sends ("Sun, 06 Nov 1994 08:49:37 GMT") and the two
    /// obsolete forms a recipient must still read: RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime
    /// ("Sun Nov  6 08:49:37 1994"). Always UTC. nil for anything else, or for fields out of range.
    public static func httpDate(_ text: String, now: Date = Date()) -> Date? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        let day: Int?, monthName: String, year: Int?, time: String
        switch words.count {
        case 6 where words[5] == "GMT":
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            day = Int(words[1]); monthName = words[2]; year = fourDigits(words[3]); time = words[4]
        case 4 where words[3] == "GMT":
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[2].count == 2, let twoDigits = Int(parts[2]), twoDigits >= 0 else { return nil }
            day = Int(parts[0]); monthName = parts[1]; time = words[2]
            // §5.6.7: a two-digit year more than 50 years in the future is the most recent past such year.
            let thisYear = Calendar(identifier: .gregorian).component(.year, from: now)
            var candidate = thisYear - thisYear % 100 + twoDigits
            if candidate > thisYear + 50 { candidate -= 100 }
            year = candidate
        case 5:
            // asctime: Sun Nov  6 08:49:37 1994
            monthName = words[1]; day = Int(words[2]); time = words[3]; year = fourDigits(words[4])
        default:
            return nil
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let month = months.firstIndex(of: monthName).map({ $0 + 1 }), let day, let year, (1...31).contains(day) else {
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var components = DateComponents()
        components.year = year; components.month = month; components.day = day
        components.hour = hour; components.minute = minute; components.second = second
        var calendar = Calendar(identifier: .gregorian)
        guard let utc = TimeZone(identifier: "UTC") else { return nil }
        calendar.timeZone = utc
        guard let date = calendar.date(from: components),
              calendar.component(.day, from: date) == day else { return nil } // "31 Feb" is not a date
        return date
    }

    private static func fourDigits(_ text: String) -> Int? {
        guard text.utf8.count == 4, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(text)
    }
}
