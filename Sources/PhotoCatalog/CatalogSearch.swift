// Finding photos by their words (/search), and listing rows of photos given by seq (/search and /events).
import Foundation
import GRDB

extension Catalog {
    /// At most this many results: a folder a person can look through, and a bound on every search's work.
    public static let searchLimit = 1000

    /// Matches ranked by bm25 at most: the newest this many (by seq) when more match. bm25 reads each match's
    /// column sizes: over 100,000 matches (a word in every title) it took 130 ms of CPU and 200–300 ms on a
    /// busy 2-core machine, over the 200 ms a search may take; over 10,000 it takes 13 ms. A word that common
    /// says little about which photo is meant, and the newest of its matches are the likeliest.
    public static let rankedMatchLimit = 10_000

    /// The seqs of listed photos matching every term of `query`, best first (bm25 over the word index: title,
    /// places and people weigh most; ties newest import first), at most `limit` (1,000). Terms in scripts
    /// written without spaces must also appear as substrings (the trigram index; a term under 3 characters by
    /// a scan of the photos that hold such text). Throws only for a failing library, never for what the query
    /// says: every word reaches SQLite as a quoted FTS5 string or a bound value. A photo whose row the tree
    /// leaves out may be among the seqs: `photos(seqs:)` leaves it out again.
    public func searchPhotos(_ query: SearchQuery, limit: Int = Catalog.searchLimit) throws -> [Int64] {
        let limit = min(max(limit, 0), Catalog.searchLimit)
        guard limit > 0 else { return [] }
        let substring = query.substringTerms
        // Every trigram term in one MATCH (`"東京" AND "タワー"`): a subquery each, 17 of them, was more than SQLite
        // would plan ("unable to use function MATCH in the requested context": EIO in the mount).
        let trigramExpressions = substring.compactMap(\.expression)
        var trigramMatch = trigramExpressions.isEmpty ? nil : trigramExpressions.joined(separator: " AND ")
        let table: String
        var match: String?
        if let words = query.wordExpression {
            (table, match) = (SearchIndex.wordTable, words)
        } else if let trigrams = trigramMatch {
            (table, match) = (SearchIndex.trigramTable, trigrams)
            trigramMatch = nil
        } else {
            // Only short terms in scripts without spaces (the photos that have such text) or emoji (any photo).
            table = substring.isEmpty ? SearchIndex.wordTable : SearchIndex.trigramTable
        }
        var conditions: [String] = []
        var arguments: [DatabaseValueConvertible] = []
        if let match {
            conditions.append("\(table) MATCH ?")
            arguments.append(match)
        }
        /// Per table, what its rows' text must hold: a term each, one of the term's `texts` in the term's fields
        /// (case as typed). instr() is a plain function, so the text is never a pattern. One subquery per table
        /// whatever the number of terms: a subquery per term beside a MATCH, 16 of them, was more than SQLite
        /// would plan ("unable to use function MATCH in the requested context": EIO in the mount).
        var scans: [(table: String, holds: [String], arguments: [DatabaseValueConvertible])] = []
        func scan(_ table: String, for term: SearchQuery.Term, holding texts: [String]) {
            let columns = term.field.map { $0.columns } ?? SearchIndex.columns
            let haystack = columns.map { "coalesce(s.\($0), '')" }.joined(separator: " || ' ' || ")
            let holds = "(" + texts.map { _ in "instr(\(haystack), ?) > 0" }.joined(separator: " OR ") + ")"
            if let index = scans.firstIndex(where: { $0.table == table }) {
                scans[index].holds.append(holds)
                scans[index].arguments += texts as [DatabaseValueConvertible]
            } else {
                scans.append((table, [holds], texts))
            }
        }
        if let trigramMatch {
            conditions.append("rowid IN (SELECT rowid FROM \(SearchIndex.trigramTable) WHERE \(SearchIndex.trigramTable) MATCH ?)")
            arguments.append(trigramMatch)
        }
        // Under 3 characters the trigram index matches nothing: a scan of its rows (only photos with such text), in
        // either form.
        for (term, expression) in substring where expression == nil { scan(SearchIndex.trigramTable, for: term, holding: term.forms) }
        // Emoji are no tokens: a scan of the word table's text (every photo; ~100 ms for 100,000), as typed.
        for term in query.symbolTerms { scan(SearchIndex.wordTable, for: term, holding: [term.text]) }
        for scan in scans {
            conditions.append("rowid IN (SELECT s.rowid FROM \(scan.table) s WHERE \(scan.holds.joined(separator: " AND ")))")
            arguments += scan.arguments
        }
        let filter = conditions.isEmpty ? "1" : conditions.joined(separator: " AND ")
        let weights = SearchIndex.weights.map { String($0) }.joined(separator: ", ")
        return try read { db in
            var ranked = filter
            var rankArguments = arguments
            if match != nil, let floor = try Catalog.integer(db, sql: """
                SELECT rowid FROM \(table) WHERE \(filter) ORDER BY rowid DESC LIMIT 1 OFFSET ?
                """, arguments: StatementArguments(arguments + [Catalog.rankedMatchLimit - 1])) {
                ranked += " AND rowid >= ?"
                rankArguments.append(floor)
            }
            let order = match == nil ? "rowid DESC" : "bm25(\(table), \(weights)), rowid DESC"
            return try DatabaseValue.fetchAll(db, sql: "SELECT rowid FROM \(table) WHERE \(ranked) ORDER BY \(order) LIMIT ?",
                                              arguments: StatementArguments(rankArguments + [limit])).compactMap {
                if case .int64(let seq) = $0.storage { return seq } else { return nil }
            }
        }
    }

    /// Listing rows (`PhotoRecord.listingColumns`) of the available photos among `seqs`, in the order given
    /// (a seq given twice is listed once; rows that cannot be used are left out). One statement per photo,
    /// prepared once: a search's 1,000 results take about as long as one indexed range query.
    public func photos(seqs: [Int64]) throws -> [PhotoRecord] {
        try read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT \(PhotoRecord.listingColumns) FROM photo WHERE seq = ? AND available
                """)
            var seen = Set<Int64>()
            var rows: [PhotoRecord] = []
            rows.reserveCapacity(seqs.count)
            for seq in seqs where seen.insert(seq).inserted {
                rows += try decodeAll(Row.fetchCursor(statement, arguments: [seq]), PhotoRecord.decode(listingRow:))
            }
            return rows
        }
    }
}
