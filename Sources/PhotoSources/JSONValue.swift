// A JSON reader for hostile answers: every RFC 8259 escape, bad surrogates repaired, numbers kept as text.
import Foundation

/// One JSON value. Foundation's JSONSerialization rejects a whole page for one lone surrogate escape
/// ("\ud800") or a number it cannot represent (1e400), and `NSNumber.intValue` of a huge double traps;
/// this reader accepts both and leaves every conversion to the caller, checked.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's text exactly as sent: converted on demand, with range checks.
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    /// Duplicate keys: the last one wins (what JSONSerialization and most readers do).
    case object([String: JSONValue])

    /// Nesting deeper than this is refused. Flickr's deepest answer is 4 levels (photos.photo[].description);
    /// 64 leaves room for any honest format and keeps the recursive reader's stack under ~20 KB.
    public static let maxDepth = 64

    /// Reads a whole document. Throws `JSONParseError` only when the bytes are not JSON at all (truncated,
    /// not a value, nested too deep, bytes after the value); oddities inside strings are repaired instead:
    /// - a lone or reversed surrogate escape, an unknown escape ("\q") or a malformed "\u" becomes U+FFFD;
    /// - invalid UTF-8 becomes U+FFFD;
    /// - a raw control character inside a string is kept (RFC 8259 wants it escaped; nothing is gained by
    ///   refusing a page for it).
    public static func parse(_ data: Data) throws -> JSONValue {
        try data.withUnsafeBytes { raw in
            var reader = JSONReader(bytes: raw.bindMemory(to: UInt8.self))
            return try reader.document()
        }
    }

    public static func parse(_ text: String) throws -> JSONValue { try parse(Data(text.utf8)) }

    public subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    public var objectValue: [String: JSONValue]? { if case .object(let fields) = self { return fields }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let items) = self { return items }; return nil }
    public var stringValue: String? { if case .string(let text) = self { return text }; return nil }

    /// What kind of value this is, for messages ("a string", "an object").
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON number as its text. Conversions answer nil instead of trapping or rounding silently.
public struct JSONNumber: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Valid RFC 8259 number syntax, e.g. "-0", "1e400", "99999999999999999999".
    public let text: String
    public init(text: String) { self.text = text }
    public var description: String { text }

    /// The exact integer, or nil when it is not one or does not fit (Int64.max + 1, 1e400, 1.5).
    /// "1e3" and "2.0" are integers; "-0" is 0.
    public var int64: Int64? {
        if let exact = Int64(text) { return exact }
        // Exponent or fraction forms: through Double, only when the result is integral and exactly
        // representable (|x| ≤ 2^53), so no rounding changes the value.
        guard let double, double == double.rounded(.towardZero), abs(double) <= 9_007_199_254_740_992 else { return nil }
        return Int64(double)
    }

    /// The value as a finite Double, or nil (1e400 is not infinity here: it is out of range).
    public var double: Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }
}

public struct JSONParseError: Error, CustomStringConvertible, Equatable {
    /// Byte offset where reading stopped.
    public var offset: Int
    public var reason: String
    public var description: String { "\(reason) at byte \(offset)" }
}

/// The reader proper: one pass over the bytes, recursion bounded by `JSONValue.maxDepth`.
private struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func document() throws -> JSONValue {
        // A UTF-8 byte order mark is not JSON, but some servers send one; it carries no meaning.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        skipWhitespace()
        let value = try readValue()
        skipWhitespace()
        guard position == bytes.count else { throw fail("unexpected bytes after the JSON value") }
        return value
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: position, reason: reason) }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func readValue() throws -> JSONValue {
        guard position < bytes.count else { throw fail("the JSON ends where a value was expected") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try readObject()
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try readNumber())
        default: throw fail("not a JSON value")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { throw fail("the JSON ends inside a literal") }
        for index in 0..<count where bytes[position + index] != literal.utf8Start[index] {
            throw fail("not a JSON value")
        }
        position += count
    }

    mutating func enter() throws {
        depth += 1
        guard depth <= JSONValue.maxDepth else { throw fail("nested deeper than \(JSONValue.maxDepth) levels") }
    }

    mutating func readObject() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        position += 1 // {
        var fields: [String: JSONValue] = [:]
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(fields) }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            let key = try readString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            position += 1
            skipWhitespace()
            fields[key] = try readValue()
            skipWhitespace()
            guard position < bytes.count else { throw fail("the JSON ends inside an object") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(fields) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func readArray() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        position += 1 // [
        var items: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try readValue())
            skipWhitespace()
            guard position < bytes.count else { throw fail("the JSON ends inside an array") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
            throw fail("expected ',' or ']'")
        }
    }

    /// RFC 8259 number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; kept as text.
    mutating func readNumber() throws -> JSONNumber {
        let start = position
        func digits() -> Int {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            return position - first
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw fail("the JSON ends inside a number") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if digits() == 0 {
            throw fail("not a number")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw fail("a number's fraction has no digits") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { throw fail("a number's exponent has no digits") }
        }
        return JSONNumber(text: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
    }

    /// A string from its opening quote. Collects UTF-8 bytes and decodes once at the end, which also turns
    /// invalid UTF-8 into U+FFFD.
    mutating func readString() throws -> String {
        position += 1 // "
        var utf8: [UInt8] = []
        var runStart = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                position += 1
                return String(decoding: utf8, as: UTF8.self)
            }
            if byte != UInt8(ascii: "\\") { position += 1; continue }
            utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
            position += 1
            guard position < bytes.count else { break }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): utf8.append(0x22)
            case UInt8(ascii: "\\"): utf8.append(0x5C)
            case UInt8(ascii: "/"): utf8.append(0x2F)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"): append(readUnicodeEscape(), to: &utf8)
            default: append(Unicode.Scalar.replacement, to: &utf8)
            }
            runStart = position
        }
        throw fail("the JSON ends inside a string")
    }

    /// After "\u": one scalar. A high surrogate takes a following "\uDC00-\uDFFF" to make a pair; a lone
    /// surrogate of either kind, or fewer than four hex digits, is U+FFFD (and the digits are not consumed,
    /// so they come out as text).
    mutating func readUnicodeEscape() -> Unicode.Scalar {
        guard let unit = readHex4() else { return .replacement }
        switch unit {
        case 0xD800...0xDBFF:
            let save = position
            if bytes.count - position >= 2, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                position += 2
                if let low = readHex4(), (0xDC00...0xDFFF).contains(low) {
                    return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? .replacement
                }
            }
            // Not a pair: the next escape is read again on its own.
            position = save
            return .replacement
        case 0xDC00...0xDFFF:
            return .replacement
        default:
            return Unicode.Scalar(unit) ?? .replacement
        }
    }

    mutating func readHex4() -> UInt32? {
        guard bytes.count - position >= 4 else { return nil }
        var value: UInt32 = 0
        for index in 0..<4 {
            let byte = bytes[position + index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A")) + 10
            default: return nil
            }
            value = value << 4 | digit
        }
        position += 4
        return value
    }

    func append(_ scalar: Unicode.Scalar, to utf8: inout [UInt8]) {
        utf8.append(contentsOf: scalar.utf8)
    }
}

private extension Unicode.Scalar {
    static let replacement: Unicode.Scalar = "\u{FFFD}"
}
