// When `import folder --watch` imports what changed: after a quiet moment, never a file still being written.
import Foundation

/// The pure timing policy of a watched import, fed with what inotify reported and asked what to do at a time
/// (seconds on any monotonic clock). A batch is one whole import (walk, reconcile, read what changed), so the
/// policy only decides *when*; the import finds *what*.
///
/// - Quiet: a batch starts once no change came for `quiet` (0.25 s): a camera copying 500 files, or `cp -r`,
///   makes a burst of events and one import, not 500. With the mount's 1 s catalog poll, a single new file is
///   visible in about 1.5 s (the figure is 2 s).
/// - Never starved: when changes keep coming (a long copy), a batch runs every `longest` (5 s) anyway.
/// - Being written: a file created or modified and not closed yet (no IN_CLOSE_WRITE) is deferred by every
///   batch: the library keeps what it remembered of it, and its close starts a batch of its own. Only its
///   close counts as a change, so a file being written starts no import. A close may never come: a file found
///   in a folder that appeared with files already in it (their events came before its watch) is judged by
///   size, done once a stat `unclosedQuiet` (1 s) after the walk that found it agrees with it (or at once when
///   it was last modified longer ago than that); in a folder moved in (`mv`), `movedInQuiet` (0.25 s) after; a
///   file created with bytes and not written to (a hard link) 1 s after it was made; a writer that holds a file open
///   without writing for `closeTimeout` (30 s) the same way.
public struct WatchBatching: Sendable {
    public var quiet: Double = 0.25
    public var longest: Double = 5
    public var unclosedQuiet: Double = 1
    /// A folder moved in was filled before it came: a writer still at it writes under the watch that the move
    /// added, and that write (IN_MODIFY) makes it a file being written again. Judged after 1 s like a folder
    /// made in place, a copied folder moved in (`cp -r` elsewhere, then `mv`: files modified within the last
    /// second) showed 2.6–3.0 s after the move; the figure is 2 s.
    public var movedInQuiet: Double = 0.25
    public var closeTimeout: Double = 30

    public enum Decision: Equatable, Sendable {
        /// Nothing to import: wait for events.
        case idle
        /// Ask again at this time (or when an event comes).
        case wait(until: Double)
        /// Import now, leaving these files (being written) as remembered.
        case importNow(deferring: Set<String>)
    }

    private struct Writing: Sendable {
        var lastEvent: Double
        /// A writer was seen (IN_MODIFY, or IN_CREATE of an empty file): its close is waited for, up to
        /// `closeTimeout`.
        var awaitsClose: Bool
        /// Size and mtime at the last stat, once one was asked for.
        var seen: FileStamp?
        /// How long after `lastEvent` its size is looked at again when no close is awaited.
        var quiet: Double
    }

    public struct FileStamp: Equatable, Sendable {
        public var size: Int64
        public var mtimeNanos: Int64
        public init(size: Int64, mtimeNanos: Int64) { self.size = size; self.mtimeNanos = mtimeNanos }
    }

    /// When the oldest change not yet imported came (nil: nothing pending).
    private var firstPending: Double?
    private var lastEvent = -Double.infinity
    private var writing: [String: Writing] = [:]

    public init() {}

    /// Files currently judged as being written.
    public var filesBeingWritten: Set<String> { Set(writing.keys) }

    /// A change that needs an import: a rename, a deletion, new attributes, a folder, a lost event queue.
    public mutating func changed(at now: Double) {
        lastEvent = max(lastEvent, now)
        if firstPending == nil { firstPending = now }
    }

    /// A file was created (IN_CREATE, not a symbolic link): deferred until its size and mtime, as `stamp` saw
    /// them, hold for `unclosedQuiet`, or, once written to (`writing`), until it is closed. A hard link is
    /// never written to. An empty file waits for its close as a written one does: a writer may open it and
    /// write later than a second after (wget, a copy over SMB), and imported empty it was a warning.
    public mutating func created(_ path: String, at now: Double, stamp: FileStamp?) {
        writing[path] = Writing(lastEvent: now, awaitsClose: stamp?.size == 0, seen: stamp, quiet: unclosedQuiet)
    }

    /// A file was written to (IN_MODIFY): deferred until it is closed.
    public mutating func writing(_ path: String, at now: Double) {
        writing[path] = Writing(lastEvent: now, awaitsClose: true, seen: nil, quiet: unclosedQuiet)
    }

    /// A file whose writer was not seen (found in a folder that appeared): deferred until its size settles,
    /// unless it was last modified as long before as it would be waited for (`modifiedAgo`, seconds): a folder
    /// moved in (`mv`) holds files written long ago, and waiting for two stats of each made a moved folder's
    /// photos show 2.4–2.9 s after the move (the figure is 2 s) and, in between, an import that saw
    /// their old paths gone removed them (new inodes once back). `stamp`: what the walk that found it saw, the
    /// first of the two stats (the second is then the only one waited for). `movedIn`: its folder was moved
    /// in (`movedInQuiet`).
    public mutating func appeared(_ path: String, at now: Double, modifiedAgo: Double = 0, stamp: FileStamp? = nil,
                                  movedIn: Bool = false) {
        let quiet = movedIn ? movedInQuiet : unclosedQuiet
        if modifiedAgo >= quiet {
            finished(path, at: now)
        } else {
            writing[path] = Writing(lastEvent: now, awaitsClose: false, seen: stamp, quiet: quiet)
            changed(at: now)
        }
    }

    /// A file moved with its folder inside the watched folders: still being written if it was (under its new
    /// path), else complete.
    public mutating func moved(from old: String, to new: String, at now: Double) {
        if let entry = writing.removeValue(forKey: old) {
            writing[new] = entry
            changed(at: now)
        } else {
            finished(new, at: now)
        }
    }

    /// A file was closed after writing (IN_CLOSE_WRITE), renamed, or deleted: it is complete, or gone.
    public mutating func finished(_ path: String, at now: Double) {
        writing[path] = nil
        changed(at: now)
    }

    /// Files being written whose writer is judged by size now: stat them and report with `stamped`.
    public func filesToStat(at now: Double) -> [String] {
        writing.filter { now >= statTime($0.value) }.map(\.key).sorted()
    }

    /// What a stat of a file being written found (nil: it is gone). The same size and mtime as the stat before
    /// means its writer is done.
    public mutating func stamped(_ path: String, _ stamp: FileStamp?, at now: Double) {
        guard let entry = writing[path] else { return }
        if stamp == nil || stamp == entry.seen {
            finished(path, at: now)
        } else {
            writing[path] = Writing(lastEvent: now, awaitsClose: false, seen: stamp, quiet: entry.quiet)
        }
    }

    public func decision(at now: Double) -> Decision {
        let nextStat = writing.values.map(statTime).min() ?? .infinity
        guard let first = firstPending else { return nextStat.isFinite ? .wait(until: nextStat) : .idle }
        let due = min(lastEvent + quiet, first + longest)
        if now >= due { return .importNow(deferring: Set(writing.keys)) }
        return .wait(until: min(due, nextStat))
    }

    /// A batch that started at `started` ended: what came meanwhile stays pending.
    public mutating func imported(startedAt started: Double) {
        firstPending = lastEvent >= started ? started : nil
    }

    private func statTime(_ entry: Writing) -> Double {
        entry.lastEvent + (entry.awaitsClose ? closeTimeout : entry.quiet)
    }
}
