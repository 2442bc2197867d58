// /recent's bookkeeping: which photos were opened last, written to the catalog in batches, or kept in memory
// when the library cannot be written.
import Foundation
import Logging
import PhotoCatalog

/// The photos opened most recently. Opens are written to the catalog (so /recent survives remounts and is
/// shared by every mount of a library) half a second after the first of a batch: writing each one (a SQLite
/// transaction with an fsync) cost a third of the time of re-reading 85 cached photos with `cat`; one write per
/// half second costs nothing measurable. A library this mount cannot write keeps its opens in memory instead,
/// for as long as the mount lives.
final class RecentOpens: @unchecked Sendable {
    private let catalog: Catalog
    private let limit: Int
    private let logger: Logger
    private var writer: CoalescingWriter<Int64, Date>!
    private let lock = NSLock()
    /// Opens kept in memory (a read-only library); empty while the catalog takes them.
    private var remembered: [Int64: Date] = [:]
    private var inMemory: Bool
    /// Batches that failed in a row for a passing reason (only the writer's thread touches it).
    private var failedWrites = 0
    /// Moves when `remembered` changes: the in-memory counterpart of the catalog's recent generation.
    private var rememberedGeneration = 0
    var memoryGeneration: Int { lock.lock(); defer { lock.unlock() }; return rememberedGeneration }
    /// The recent set, dropped when a batch lands or the catalog changes.
    let seqCache = StampedCache<Int, Set<Int64>>()

    /// `written` runs after each batch landed (on the writer's thread, never a FUSE request's): the owner
    /// then compares generations and tells the kernel what changed, as for another process's import.
    init(catalog: Catalog, limit: Int, persistent: Bool, logger: Logger, written: @escaping () -> Void) {
        self.catalog = catalog
        self.limit = limit
        self.logger = logger
        inMemory = !persistent
        writer = CoalescingWriter(delay: 0.5) { [weak self] batch in
            self?.record(batch)
            written()
        }
    }

    func noteOpen(seq: Int64, at date: Date = Date()) { writer.submit(date, for: seq) }

    /// Writes pending opens now (tests, and unmount through `stop`).
    func flush() { writer.flush() }
    func stop() { writer.stop() }

    /// The most recently opened available photos, newest first, at most `limit`.
    func photos() throws -> [PhotoRecord] {
        let stored = try catalog.recentPhotos(limit: limit)
        lock.lock()
        let memory = remembered
        lock.unlock()
        guard !memory.isEmpty else { return stored }
        // Opens of this mount are newer than anything the (unwritable) catalog holds.
        let fresh = memory.sorted { ($0.value, $0.key) > ($1.value, $1.key) }.prefix(limit)
            .compactMap { try? catalog.photo(seq: $0.key) }.filter(\.isAvailable)
        let freshSeqs = Set(fresh.map(\.seq))
        return Array((fresh + stored.filter { !freshSeqs.contains($0.seq) }).prefix(limit))
    }

    /// Seqs of `photos()`, cached until the next change.
    func seqs() throws -> Set<Int64> {
        try seqCache.value(for: 0) { Set(try photos().map(\.seq)) }
    }

    private func record(_ batch: [Int64: Date]) {
        let opens = batch.map { (seq: $0.key, at: $0.value) }.sorted { $0.at < $1.at }
        lock.lock()
        let memory = inMemory
        lock.unlock()
        if !memory {
            do {
                try catalog.recordOpens(opens)
                failedWrites = 0
                return
            } catch let error as CatalogError where error.reason == .readOnly {
                logger.warning("the library cannot be written; /recent is kept in memory for this mount",
                               metadata: ["count": "\(opens.count)", "error": "\(error)"])
            } catch {
                // Anything else passes (an import holding the writer past the busy timeout): the opens are
                // submitted again, to be written with the next batch; said once per run of failures.
                if failedWrites == 0 {
                    logger.warning("could not record recent opens; retrying", metadata: ["count": "\(opens.count)",
                                                                                         "error": "\(error)"])
                }
                failedWrites += 1
                writer.retry(batch)
                return
            }
        }
        lock.lock()
        inMemory = true
        for open in opens { remembered[open.seq] = open.at }
        // Bounded like the catalog's table (it keeps 100).
        if remembered.count > max(limit, 100) {
            let keep = remembered.sorted { $0.value > $1.value }.prefix(max(limit, 100))
            remembered = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
        rememberedGeneration += 1
        lock.unlock()
    }
}
