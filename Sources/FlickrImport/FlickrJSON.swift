// Lenient readers for Flickr's JSON, which sends the same field as a number in one answer and a string in another.
import Foundation

enum FlickrJSON {
    /// Text of a JSON value that may be a string, a number or `{"_content": ...}`. NUL becomes a space:
    /// SQLite (through GRDB) would cut the text there, and no name may hold one anyway.
    static func text(_ value: Any?) -> String? {
        switch value {
        case let string as String: return string.contains("\u{0}") ? string.replacingOccurrences(of: "\u{0}", with: " ") : string
        case let number as NSNumber: return number.stringValue
        case let int as Int: return String(int)
        case let double as Double: return String(double)
        case let object as [String: Any]: return text(object["_content"])
        default: return nil
        }
    }

    static func int(_ value: Any?) -> Int? {
        switch value {
        case let int as Int: return int
        case let number as NSNumber: return number.intValue
        case let string as String: return Int(string.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    static func double(_ value: Any?) -> Double? {
        switch value {
        case let double as Double: return double
        case let number as NSNumber: return number.doubleValue
        case let string as String: return Double(string.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    /// Flickr's "2019-05-04 12:33:10" read as UTC seconds; nil for anything else.
    static func dateTaken(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" }).compactMap { Int($0) }
        guard parts.count == 6, (1...12).contains(parts[1]), (1...31).contains(parts[2]), (0...23).contains(parts[3]),
              (0...59).contains(parts[4]), (0...60).contains(parts[5]) else { return nil }
        var fields = tm()
        fields.tm_year = Int32(parts[0] - 1900)
        fields.tm_mon = Int32(parts[1] - 1)
        fields.tm_mday = Int32(parts[2])
        fields.tm_hour = Int32(parts[3])
        fields.tm_min = Int32(parts[4])
        fields.tm_sec = Int32(parts[5])
        return Int64(timegm(&fields))
    }
}
