// Reading rows of a library file that may hold anything: every column type-checked, ranges enforced, no trap.
import Foundation
import GRDB
import GRDBSQLite

/// The values the catalog hands to the rest of photofs. A row outside them is left out (a photo is then
/// treated as unavailable) and reported once through `Catalog.onBadRow`; so the tree, the inode numbers and
/// the FUSE replies only ever see values inside these ranges.
public enum CatalogLimits {
    /// 1 TiB: far above any photo (Flickr's originals stop at 200 MB for video, far less for images), and small
    /// enough that `size + 4095`, `size / 512` rounding and offsets in the layers above cannot overflow.
    public static let maxByteSize: Int64 = 1 << 40
    /// Years 1 to 9999: what a `YYYY-MM-DD` name and SQLite's date functions can show. 0001-01-01T00:00:00Z and
    /// 9999-12-31T23:59:59Z in seconds since 1970 (proleptic Gregorian, as gmtime and SQLite count).
    public static let momentRange: ClosedRange<Int64> = -62_135_596_800 ... 253_402_300_799
    public static let yearRange: ClosedRange<Int> = 1 ... 9999
    /// A photo's seq numbers its inode below the tree's 8-bit kind tag (PhotoTree's `Node`): 56 bits.
    public static let seqRange: ClosedRange<Int64> = 1 ... (1 << 56) - 1
    /// Region and photographer ids share one inode as two 28-bit fields (PhotoTree's `Node`): 268 million each.
    public static let directoryIDRange: ClosedRange<Int64> = 1 ... (1 << 28) - 1
    /// Stored counts (photos or photographers of a region): a library of 2^31 photos is not a photo library.
    public static let countRange: ClosedRange<Int64> = 0 ... Int64(Int32.max)
    /// A rendition's width or height: Flickr's largest sizes are ~10,000 px; a million keeps width × height
    /// (10^12) far from overflowing Int.
    public static let dimensionRange: ClosedRange<Int64> = 1 ... 1_000_000
    /// Albums one photo is counted in (its link count): far above what any account has, and it only adds
    /// to a link count.
    public static let maxAlbumsPerPhoto: Int64 = 10_000

    /// The same rules for a photo row as SQL, for aggregates (counts, newest moments, totals) so that a
    /// directory's numbers agree with the rows its listing keeps. `moment_year` must be the UTC year of
    /// `moment_at`, as `PhotoRecord.year(ofMoment:)` computes it (SQLite's strftime uses the same calendar).
    ///
    /// `choosingNoIndex`: none of the rules may pick the index a query reads through (each column behind a
    /// unary `+`), for a query whose ORDER BY should choose it: with the rules as they are, SQLite reads the
    /// rows of the seq range (all of them) and sorts.
    static func usablePhotoSQL(_ alias: String, choosingNoIndex: Bool = false) -> String {
        let p = alias.isEmpty ? "" : alias + "."
        let c = choosingNoIndex ? "+" + p : p
        return """
            (typeof(\(p)seq) = 'integer' AND \(c)seq BETWEEN \(seqRange.lowerBound) AND \(seqRange.upperBound)
             AND typeof(\(p)id) = 'text' AND \(c)id <> ''
             AND typeof(\(p)byte_size) = 'integer' AND \(c)byte_size BETWEEN 1 AND \(maxByteSize)
             AND typeof(\(p)content_type) = 'text'
             AND typeof(\(p)photographer_id) = 'integer'
             AND \(c)photographer_id BETWEEN \(directoryIDRange.lowerBound) AND \(directoryIDRange.upperBound)
             AND typeof(\(p)region_id) = 'integer'
             AND \(c)region_id BETWEEN \(directoryIDRange.lowerBound) AND \(directoryIDRange.upperBound)
             AND typeof(\(p)moment_at) = 'integer'
             AND \(c)moment_at BETWEEN \(momentRange.lowerBound) AND \(momentRange.upperBound)
             AND typeof(\(p)moment_year) = 'integer'
             AND \(c)moment_year = CAST(strftime('%Y', \(p)moment_at, 'unixepoch') AS INTEGER))
            """
    }
}

extension CatalogLimits {
    /// Whether a photo is public, as SQL agreeing with the Swift decoder: only an INTEGER with bit 1 set is
    /// public; text '1', a real 1.0 or NULL read as private, in aggregates (a directory's mode) as in rows.
    static func isPublicSQL(_ alias: String) -> String {
        let p = alias.isEmpty ? "" : alias + "."
        return "(typeof(\(p)visibility) = 'integer' AND (\(p)visibility & 1) = 1)"
    }
}

/// Why one row was left out: which table and row, and what was wrong; one warning line.
struct BadRow: Error, CustomStringConvertible {
    var table: String
    /// The row's key as far as it could be read ("seq 17", "id 4"); dedupes warnings.
    var key: String
    var problem: String
    var description: String { "library row left out: \(table) \(key): \(problem)" }
}

/// One row read column by column, by position (by name cost 14% of a 17,000-photo listing: GRDB lower-cases
/// and compares every name for every row). Every column is read as a `DatabaseValue` and its storage class
/// checked: GRDB's typed getters would turn the text "abc" into the integer 0 and trap on a NULL.
struct ColumnReader {
    let row: Row
    let table: String
    /// The row's key for a warning line ("id 4"); for photo rows, `photoSeq` and `photoID` instead, formatted
    /// only when the row turns out bad (formatting it for each of 20,000 good rows cost a quarter of a listing).
    var key = "(unreadable key)"
    var photoSeq: Int64?
    var photoID: String?

    var rowKey: String {
        guard let photoSeq else { return table == "photo" ? "seq \(Self.keyText(value(0)))" : key }
        return "seq \(photoSeq)" + (photoID.map { " (id \(Self.printable($0)))" } ?? "")
    }

    /// The statement `row` is the current row of, read with SQLite's own calls (`Catalog.decodeEach`).
    private let statement: SQLiteStatement?

    init(_ row: Row, table: String) {
        self.row = row
        self.table = table
        statement = nil
    }

    /// A reader of the row `statement` stands on (`row` is the cursor's view of it): each value read with
    /// `sqlite3_column_*` as GRDB's `DatabaseValue(sqliteStatement:index:)` reads them (without its traps on a
    /// NULL text pointer or an unknown type), skipping GRDB's generic `Row.decode` path, which took 40–50 ms of
    /// a mount's 250 ms scan of 100,000 photos (16 columns each).
    init(current row: Row, of statement: Statement, table: String) {
        self.row = row
        self.table = table
        self.statement = statement.sqliteStatement
    }

    func value(_ index: Int) -> DatabaseValue {
        // Only fails for an index past the row's end, which the fixed SELECTs here never ask for.
        guard index < row.count else { return .null }
        guard let statement else { return (try? row.decode(DatabaseValue.self, atIndex: index)) ?? .null }
        let column = Int32(index)
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return sqlite3_column_int64(statement, column).databaseValue
        case SQLITE_FLOAT:
            return sqlite3_column_double(statement, column).databaseValue
        case SQLITE_TEXT:
            // As GRDB reads text: up to the first NUL, invalid UTF-8 repaired. A NULL pointer only when SQLite is
            // out of memory (GRDB would trap): read as NULL, so the row is left out or shows an empty title.
            guard let text = sqlite3_column_text(statement, column) else { return .null }
            return String(cString: text).databaseValue
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data().databaseValue }
            return Data(bytes: bytes, count: count).databaseValue
        default:
            return .null
        }
    }

    func bad(_ problem: String) -> BadRow { BadRow(table: table, key: rowKey, problem: problem) }

    /// Strictly an INTEGER inside `range`.
    func integer(_ index: Int, _ column: String, in range: ClosedRange<Int64>) throws -> Int64 {
        let value = value(index)
        guard case .int64(let number) = value.storage else { throw bad("\(column) is \(Self.describe(value)), not an integer") }
        guard range.contains(number) else {
            throw bad("\(column) is \(number), outside \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// NULL is nil; any other value must be an INTEGER inside `range`.
    func nullableInteger(_ index: Int, _ column: String, in range: ClosedRange<Int64>) throws -> Int64? {
        if value(index).isNull { return nil }
        return try integer(index, column, in: range)
    }

    /// An INTEGER, else nil: for columns no listing depends on (a bad `uploaded_at` hides nothing).
    func lenientInteger(_ index: Int) -> Int64? {
        if case .int64(let number) = value(index).storage { return number }
        return nil
    }

    /// Strictly non-empty TEXT: identities (a photo's id, an owner) and URLs.
    func text(_ index: Int, _ column: String) throws -> String {
        let value = value(index)
        guard case .string(let text) = value.storage else { throw bad("\(column) is \(Self.describe(value)), not text") }
        guard !text.isEmpty else { throw bad("\(column) is empty") }
        return text
    }

    /// NULL is nil; any other value must be TEXT.
    func nullableText(_ index: Int, _ column: String) throws -> String? {
        let value = value(index)
        switch value.storage {
        case .null: return nil
        case .string(let text): return text
        default: throw bad("\(column) is \(Self.describe(value)), not text")
        }
    }

    /// TEXT, else nil: optional metadata no listing depends on.
    func lenientText(_ index: Int) -> String? {
        if case .string(let text) = value(index).storage { return text }
        return nil
    }

    /// Display text (titles, names): whatever is stored, as text; NULL is "". The tree sanitises it and falls
    /// back to "Untitled"/"Unknown", so a title stored as a number or a blob still shows the photo.
    func displayText(_ index: Int) -> String {
        switch value(index).storage {
        case .null: return ""
        case .string(let text): return text
        case .int64(let number): return String(number)
        case .double(let number): return String(number)
        case .blob(let data): return String(decoding: data.prefix(4096), as: UTF8.self)
        }
    }

    /// A REAL (an INTEGER is converted), else nil.
    func lenientReal(_ index: Int) -> Double? {
        switch value(index).storage {
        case .double(let number): return number
        case .int64(let number): return Double(number)
        default: return nil
        }
    }

    /// What a value is, for a warning line: never the value itself when it is text or a blob (it may be huge,
    /// or hold control characters a terminal would obey).
    static func describe(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let number): return "the integer \(number)"
        case .double(let number): return "the real \(number)"
        case .string(let text): return "text of \(text.utf8.count) bytes"
        case .blob(let data): return "a blob of \(data.count) bytes"
        }
    }

    /// A row key for a warning line: an integer as itself ("-7"), anything else described ("NULL").
    static func keyText(_ value: DatabaseValue) -> String {
        if case .int64(let number) = value.storage { return String(number) }
        return describe(value)
    }

    /// A key value for a warning line: printable ASCII only, at most 40 characters.
    static func printable(_ text: String) -> String {
        let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.prefix(40).map {
            (0x20..<0x7F).contains($0.value) ? $0 : "?"
        }))
        return text.unicodeScalars.count > 40 ? cleaned + "…" : cleaned
    }
}
