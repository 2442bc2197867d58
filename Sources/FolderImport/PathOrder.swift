// Paths compared as bytes: the order SQLite's BINARY collation keeps `folder_file` in, and the walk's.
import Foundation

enum PathOrder {
    /// memcmp order of the UTF-8 bytes. Swift's `<` on strings is Unicode's canonical order and `==` canonical
    /// equivalence (an NFC and an NFD name are "equal"), neither of which SQLite's index or the file system knows.
    static func compare(_ a: String, _ b: String) -> Int32 {
        let fast = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right -> Int32 in
                let common = min(left.count, right.count)
                if common > 0, let l = left.baseAddress, let r = right.baseAddress {
                    let order = memcmp(l, r, common)
                    if order != 0 { return order }
                }
                return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
            }
        }
        if let fast = fast ?? nil { return fast }
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    }

    static func precedes(_ a: String, _ b: String) -> Bool { compare(a, b) < 0 }
    static func equal(_ a: String, _ b: String) -> Bool { a.utf8.count == b.utf8.count && compare(a, b) == 0 }
}
