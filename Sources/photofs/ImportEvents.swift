// After an import: the library's events settled, so a library imported while nothing is mounted has them too.
import Foundation
import Logging
import PhotoCatalog
import PhotoFS

enum ImportEvents {
    /// Clusters the library's events and stores those that settled (ended more than 48 hours ago). A failure
    /// is logged, not fatal: the import itself is done, and the next mount settles them.
    static func settle(_ catalog: Catalog, logger: Logger) {
        let started = Date()
        do {
            let events = try LibraryEvents.settle(catalog, now: Int64(Date().timeIntervalSince1970))
            logger.info("\(LibraryEvents.summary(events))", metadata: [
                "ms": "\(Int(Date().timeIntervalSince(started) * 1000))",
            ])
        } catch {
            logger.warning("events not settled (the next mount settles them): \(error)")
        }
    }
}
