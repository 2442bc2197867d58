// After an import: the library's events settled, so a library imported while nothing is mounted has them too.
import Foundation
import Logging
import PhotoCatalog
import PhotoFS

enum ImportEvents {
    /// Before an import writes: events that ended more than 48 hours ago but were open at the last settle are
    /// settled first, so the import's photos cannot join or rename them (`LibraryEvents.settleAged`). A failure
    /// is logged, not fatal.
    static func settleAged(_ catalog: Catalog, logger: Logger) {
        do {
            if let events = try LibraryEvents.settleAged(catalog, now: Int64(Date().timeIntervalSince1970)) {
                logger.debug("events settled before the import", metadata: ["events": "\(events.count)"])
            }
        } catch {
            logger.warning("events not settled before the import: \(error)")
        }
    }

    /// Clusters the library's events and stores those that settled (ended more than 48 hours ago). A failure
    /// is logged, not fatal: the import itself is done, and the next mount settles them.
    static func settle(_ catalog: Catalog, logger: Logger) {
        let started = Date()
        do {
            let events = try LibraryEvents.settle(catalog, now: Int64(Date().timeIntervalSince1970))
            // Debug: at the default level it was a log line among the import's summary ("photofs status" counts
            // the events).
            logger.debug("\(LibraryEvents.summary(events))", metadata: [
                "ms": "\(Int(Date().timeIntervalSince(started) * 1000))",
            ])
        } catch {
            logger.warning("events not settled (the next mount settles them): \(error)")
        }
    }
}
