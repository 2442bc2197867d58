// Lenient, checked readers for Flickr's JSON, which sends the same field as a number in one answer and a
// string in another.
import Foundation
import PhotoSources

enum FlickrJSON {
    /// Text of a value that may be a string, a number or `{"_content": ...}`; nil for anything else
    /// (null, a boolean, an array, an object without `_content`).
    static func text(_ value: JSONValue?) -> String? {
        text(value, depth: 0)
    }

    private static func text(_ value: JSONValue?, depth: Int) -> String? {
        switch value {
        case .string(let string)?: return string
        case .number(let number)?: return number.text
        // Flickr nests once ({"_content": "..."}); two levels is already not Flickr.
        case .object(let fields)? where depth < 2: return text(fields["_content"], depth: depth + 1)
        default: return nil
        }
    }

    /// An exact integer from a number or a numeric string ("  42 ", "4e3"); nil when it is none or out of
    /// Int64's range.
    static func int64(_ value: JSONValue?) -> Int64? {
        switch value {
        case .number(let number)?: return number.int64
        case .string(let string)?:
            let trimmed = string.trimmingCharacters(in: .whitespaces)
            return trimmed.count <= 40 ? JSONNumber(text: trimmed).int64 : nil
        default: return nil
        }
    }

    /// A finite Double from a number or a numeric string.
    static func double(_ value: JSONValue?) -> Double? {
        switch value {
        case .number(let number)?: return number.double
        case .string(let string)?:
            let trimmed = string.trimmingCharacters(in: .whitespaces)
            return trimmed.count <= 40 ? JSONNumber(text: trimmed).double : nil
        default: return nil
        }
    }

    /// Flickr's "2019-05-04 12:33:10" read as UTC seconds; nil for anything else, including Flickr's own
    /// "unknown" ("0000-00-00 00:00:00"), five-digit years and out-of-range fields (see `MomentRange`).
    static func dateTaken(_ text: String) -> Int64? {
        let parts = text.trimmingCharacters(in: .whitespaces)
            .split(omittingEmptySubsequences: false, whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" })
        // At most 4 digits a field: a five-digit year is no year the tree can show, and short fields keep
        // Int parsing far from overflow.
        guard parts.count == 6,
              parts.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy { ("0"..."9").contains($0) } }) else { return nil }
        let numbers = parts.compactMap { Int($0) }
        guard numbers.count == 6 else { return nil }
        return MomentRange.seconds(year: numbers[0], month: numbers[1], day: numbers[2], hour: numbers[3],
                                   minute: numbers[4], second: numbers[5])
    }
}
