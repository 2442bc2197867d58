// What `photofs status` counts in a library.
import Foundation
import GRDB

/// What `photofs status` counts: photos shown (and how many of them private), albums shown, photos hidden.
public struct LibraryCounts: Equatable, Sendable {
    public var photos: Int
    public var privatePhotos: Int
    public var unavailablePhotos: Int
    public var albums: Int
}

extension Catalog {
    /// Whether any photo is not public (one index-free probe that stops at the first).
    public func holdsPrivatePhotos() throws -> Bool {
        try read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM photo WHERE NOT \(CatalogLimits.isPublicSQL("")))") ?? false
        }
    }

    public func counts() throws -> LibraryCounts {
        let albumCount = try albums().count
        return try read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT count(*), total(NOT \(CatalogLimits.isPublicSQL(""))) FROM photo WHERE \(CatalogLimits.usablePhotoSQL(""))
                """) else { return LibraryCounts(photos: 0, privatePhotos: 0, unavailablePhotos: 0, albums: albumCount) }
            let reader = ColumnReader(row, table: "photo")
            let all = try Int.fetchOne(db, sql: "SELECT count(*) FROM photo") ?? 0
            let shown = Int(clamping: reader.lenientInteger(0) ?? 0)
            let privateCount = Int(min(max(reader.lenientReal(1) ?? 0, 0), Double(Int32.max)))
            return LibraryCounts(photos: shown, privatePhotos: privateCount, unavailablePhotos: max(0, all - shown),
                                 albums: albumCount)
        }
    }
}
