// Finding photos by their words (/search), and listing rows of photos given by seq (/search and /events).
import Foundation
import GRDB

extension Catalog {
    /// At most this many results: a folder a person can look through, and a bound on every search's work.
    public static let searchLimit = 1000

    /// The seqs of listed photos matching every term of `query`, best first (bm25 over the word index, title,
    /// places and people weighing most; ties newest first), at most `limit`. Terms in scripts written without
    /// spaces must also appear as substrings (the trigram index; terms under 3 characters by a scan of the
    /// photos that hold such text). Throws only for a failing library, never for what the query says: every
    /// word reaches SQLite as a quoted FTS5 string or a bound value.
    public func searchPhotos(_ query: SearchQuery, limit: Int = Catalog.searchLimit) throws -> [Int64] {
        let limit = min(max(limit, 0), Catalog.searchLimit)
        guard limit > 0 else { return [] }
        var conditions: [String] = [CatalogLimits.usablePhotoSQL("p")]
        var arguments: [DatabaseValueConvertible] = []
        let base: String
        var order: String
        let weights = SearchIndex.weights.map { String($0) }.joined(separator: ", ")
        var substring = query.substringTerms
        if let words = query.wordExpression {
            base = "\(SearchIndex.wordTable) s"
            conditions.insert("s.\(SearchIndex.wordTable) MATCH ?", at: 0)
            arguments.append(words)
            order = "bm25(\(SearchIndex.wordTable), \(weights))"
        } else if let first = substring.firstIndex(where: { $0.expression != nil }), let expression = substring[first].expression {
            base = "\(SearchIndex.trigramTable) s"
            conditions.insert("s.\(SearchIndex.trigramTable) MATCH ?", at: 0)
            arguments.append(expression)
            order = "bm25(\(SearchIndex.trigramTable), \(weights))"
            substring.remove(at: first)
        } else {
            base = "\(SearchIndex.trigramTable) s"
            order = ""
        }
        for (term, expression) in substring {
            if let expression {
                conditions.append("s.rowid IN (SELECT rowid FROM \(SearchIndex.trigramTable) WHERE \(SearchIndex.trigramTable) MATCH ?)")
                arguments.append(expression)
            } else {
                // Under 3 characters the trigram index matches nothing: a scan of its rows (only photos with such
                // text), case as typed. instr() is a plain function, so the text is never a pattern.
                let columns = term.field.map { $0.columns } ?? SearchIndex.columns
                let haystack = columns.map { "coalesce(t.\($0), '')" }.joined(separator: " || ' ' || ")
                conditions.append("s.rowid IN (SELECT t.rowid FROM \(SearchIndex.trigramTable) t WHERE instr(\(haystack), ?) > 0)")
                arguments.append(term.text)
            }
        }
        order = (order.isEmpty ? "" : order + ", ") + "p.moment_at DESC, p.seq DESC"
        arguments.append(limit)
        let sql = """
            SELECT p.seq FROM \(base) JOIN photo p ON p.seq = s.rowid
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order) LIMIT ?
            """
        return try read { db in
            try DatabaseValue.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).compactMap {
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
