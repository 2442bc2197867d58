// A directory name under /search read as a query, and the FTS5 expressions it becomes: every word quoted, so no
// name can be an FTS5 syntax error.
import Foundation

/// A search as a directory name states it: words that must all match, some limited to a field
/// (`year:2019`, `place:lisb`, `album:`, `person:`, `camera:`), the last one a prefix (a file dialog looks names
/// up as they are typed, so "lisb" already finds Lisbon).
public struct SearchQuery: Equatable, Hashable, Sendable {
    /// What a field prefix limits a word to (`SearchIndex.columns` names them).
    public enum Field: String, CaseIterable, Sendable {
        case year, place, album, person, camera

        /// The index columns a field searches: a place is the place's own name or its region's; a person is
        /// someone in the photo or the photographer.
        var columns: [String] {
            switch self {
            case .year: return ["taken"]
            case .place: return ["place", "region"]
            case .album: return ["albums"]
            case .person: return ["people", "photographer"]
            case .camera: return ["camera"]
            }
        }
    }

    public struct Term: Equatable, Hashable, Sendable {
        public var field: Field?
        /// The word as typed (without its field prefix); quoted when it becomes an expression.
        public var text: String
        public var isPrefix: Bool
        /// Holds a character of a script written without spaces (Han, kana, Hangul): matched as a substring
        /// through the trigram index, since the word index sees a whole run of such text as one word.
        public var needsSubstringMatch: Bool
        /// Emoji and nothing the word index keeps ("🍕"): found by a scan of the indexed text, since the
        /// tokenizer drops symbols (`SearchIndex`).
        public var isSymbolsOnly = false
        /// The word's compatibility forms folded (NFKC), when that differs: full-width Latin ("Ｐｏｒｔｏ", as a
        /// Japanese input method types it) as "Porto", half-width katakana as full width. Either form matches:
        /// the index holds text as it was written, and unicode61 folds neither.
        public var folded: String? = nil

        /// The forms a match may take: as typed, and folded.
        var forms: [String] { [text] + (folded.map { [$0] } ?? []) }
    }

    /// The directory name, exactly as looked up.
    public let name: String
    public let terms: [Term]

    /// Linux's NAME_MAX: no longer name reaches a lookup.
    public static let maxNameBytes = 255

    /// Reads a name looked up under /search; nil when it is not a query, which the lookup answers with ENOENT:
    /// empty or over 255 bytes; not UTF-8; holding NUL or "/"; "." and ".."; starting with "." (tools and
    /// desktops probe `.hidden`, `.directory`, `.git` in every folder they open); ending with a space (a GUI
    /// types a query one character at a time, and "harbour " is "harbour" half typed); and a name with no
    /// letter, digit or emoji to search for ("*", "-", quotes alone).
    public init?(nameBytes bytes: [UInt8]) {
        guard (1...Self.maxNameBytes).contains(bytes.count), !bytes.contains(0), !bytes.contains(UInt8(ascii: "/")),
              bytes.first != UInt8(ascii: "."), let name = String(validating: bytes, as: UTF8.self)
        else { return nil }
        self.init(validName: name)
    }

    /// The same rules for a name already decoded (a String from Swift is UTF-8 by construction).
    public init?(name: String) {
        self.init(nameBytes: Array(name.utf8))
    }

    private init?(validName name: String) {
        guard let last = name.unicodeScalars.last, !last.properties.isWhitespace else { return nil }
        let words = name.split(whereSeparator: { $0.unicodeScalars.allSatisfy { $0.properties.isWhitespace } })
            .map(String.init)
        var terms: [Term] = []
        // A field written apart from its word ("year: 2019", "place: lisbon") limits the next word; alone at the
        // end ("album:", half typed) it stays text.
        var fieldOfNext: Field?
        for (position, word) in words.enumerated() {
            var field = fieldOfNext
            fieldOfNext = nil
            var text = word
            if let colon = word.firstIndex(of: ":"), let named = Field(rawValue: word[..<colon].lowercased()) {
                if word.index(after: colon) < word.endIndex {
                    field = named
                    text = String(word[word.index(after: colon)...])
                } else if position < words.count - 1 {
                    fieldOfNext = named
                    continue
                }
            }
            let compatible = text.precomposedStringWithCompatibilityMapping
            let folded = compatible.unicodeScalars.elementsEqual(text.unicodeScalars) ? nil : compatible
            let forms = [text] + (folded.map { [$0] } ?? [])
            if forms.contains(where: Self.isSearchable) {
                terms.append(Term(field: field, text: text, isPrefix: position == words.count - 1,
                                  needsSubstringMatch: forms.contains(where: Self.needsSubstringMatch), folded: folded))
            } else if Self.holdsEmoji(text) {
                terms.append(Term(field: field, text: text, isPrefix: false, needsSubstringMatch: false, isSymbolsOnly: true))
            }
        }
        guard !terms.isEmpty else { return nil }
        self.name = name
        self.terms = terms
    }

    /// Whether a word holds something the index's tokenizer keeps (a letter or a digit); a word of only
    /// punctuation would be an empty phrase.
    static func isSearchable(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.isAlphabetic || $0.properties.numericType != nil }
    }

    /// Whether a word holds an emoji (a pictograph, not a digit or "#", which Unicode also calls emoji).
    static func holdsEmoji(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.isEmojiPresentation || ($0.properties.isEmoji && $0.value >= 0x2000) }
    }

    /// Han, Hiragana, Katakana (full and half width), Hangul, Thai: scripts written without spaces between
    /// words, where `unicode61` makes one token of a whole phrase.
    static func needsSubstringMatch(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch scalar.value {
            case 0x0E00...0x0E7F, 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7AF, 0xF900...0xFAFF,
                 0xFF66...0xFF9F, 0x20000...0x2FA1F: return true
            default: return false
            }
        }
    }

    /// The terms the word index answers, as one FTS5 expression (nil when every term needs the trigram index):
    /// `"harbour" AND {place region} : "lisb" *`. Every word is a quoted string (a `"` in it doubled), column
    /// names come from the fixed list above, so no name is an FTS5 syntax error. The words are joined by an
    /// explicit AND: FTS5's implicit AND (a space) is only allowed between phrases, and a folded word is a
    /// group, `("ｔｏｗｅｒ" * OR "tower" *)`, so `"harbour" ("２０１９" * OR "2019" *)` was a syntax error.
    public var wordExpression: String? {
        let words = terms.filter { !$0.needsSubstringMatch && !$0.isSymbolsOnly }
        return words.isEmpty ? nil : words.map(Self.expression).joined(separator: " AND ")
    }

    /// The words of emoji alone, each found by a scan of the indexed text.
    public var symbolTerms: [Term] { terms.filter(\.isSymbolsOnly) }

    /// The terms that need substring matching, each as its own trigram expression, or nil for a term of fewer
    /// than 3 characters, which the trigram index cannot match (`SearchIndex` scans for those).
    public var substringTerms: [(term: Term, expression: String?)] {
        terms.filter(\.needsSubstringMatch).map { term in
            var whole = term
            whole.isPrefix = false
            return (term, term.forms.allSatisfy { $0.unicodeScalars.count >= 3 } ? Self.expression(for: whole) : nil)
        }
    }

    /// `"word" *`, both forms when folded (`("Ｐｏｒｔｏ" * OR "Porto" *)`), behind its field's columns.
    static func expression(for term: Term) -> String {
        let quoted = term.forms.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (term.isPrefix ? " *" : "") }
        let either = quoted.count == 1 ? quoted[0] : "(" + quoted.joined(separator: " OR ") + ")"
        guard let field = term.field else { return either }
        return "{" + field.columns.joined(separator: " ") + "} : " + either
    }

    public static func == (lhs: SearchQuery, rhs: SearchQuery) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
