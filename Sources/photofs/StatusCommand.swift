// `photofs status LIBRARY`: which account or listing a library follows, when it last synced, what it holds.
import ArgumentParser
import FolderImport
import Foundation
import PhotoCatalog
import PhotoFS

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what a library follows, when it last synced, and how many photos and albums it has.",
        discussion: """
            Reads the library only (it may be mounted meanwhile). For each listing the library follows — a \
            Flickr account imported with --user, a getRecent/search query, or a folder imported with \
            `photofs import folder` (with its files, photos and duplicate files) — it shows the account, the time \
            of the last complete import, the records skipped and the videos left out by it, and whether an \
            interrupted import is waiting to be continued by the next `photofs import`.

            Example:
              photofs status photos.sqlite
            """
    )

    @Argument(help: "The library file (SQLite).")
    var library: String

    func run() throws {
        let catalog: Catalog
        do { catalog = try Catalog(path: library, mode: .mounting) } catch { throw CommandFailure("\(error)") }
        let states: [SyncState]
        let counts: LibraryCounts
        let folders: [String: FolderCounts]
        do {
            states = try catalog.syncStates()
            counts = try catalog.counts()
            folders = try catalog.folderCounts()
        } catch { throw CommandFailure("\(error)") }
        print(StatusCommand.describe(states: states, counts: counts, folders: folders, now: Date()))
        // As a mount would show them now (nothing is stored: status only reads).
        do {
            print(LibraryEvents.summary(try LibraryEvents.current(catalog, now: Int64(Date().timeIntervalSince1970))))
        } catch { throw CommandFailure("\(error)") }
    }

    static func describe(states: [SyncState], counts: LibraryCounts, folders: [String: FolderCounts] = [:],
                         now: Date) -> String {
        var lines: [String] = []
        if states.isEmpty { lines.append("follows: nothing yet (no import has finished a page)") }
        for state in states {
            if let id = state.accountID {
                let name = state.accountName.map { "\($0) " } ?? ""
                lines.append("follows: \(state.sourceKind) account \(name)(\(id))")
            } else {
                lines.append("follows: \(state.listingKey)")
            }
            if let synced = state.lastSyncedAt {
                lines.append("  last synced: \(timeText(synced)) (\(ago(synced, now: now)))")
            } else {
                lines.append("  last synced: never completely")
            }
            if state.sourceKind == "folder" {
                let root = FolderSource.root(ofListingKey: state.listingKey)
                let folder = folders[root] ?? FolderCounts(files: 0, photos: 0, duplicateFiles: 0)
                lines.append("  files: \(folder.files); photos: \(folder.photos); duplicate files: \(folder.duplicateFiles)"
                             + (folder.refusedFiles > 0 ? "; refused (not readable as images): \(folder.refusedFiles)" : ""))
            } else {
                lines.append("  skipped records: \(state.skippedCount); videos left out: \(state.videoCount)")
            }
            if let resume = state.resume {
                lines.append("  an interrupted import stopped after \(resume.pages) page(s); `photofs import` continues it")
            }
        }
        lines.append("photos: \(counts.photos) shown (\(counts.privatePhotos) private)"
                     + (counts.unavailablePhotos > 0 ? ", \(counts.unavailablePhotos) hidden until measured" : ""))
        lines.append("albums: \(counts.albums)")
        return lines.joined(separator: "\n")
    }

    static func timeText(_ seconds: Int64) -> String {
        var time = time_t(clamping: seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(seconds)" }
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d UTC", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    static func ago(_ seconds: Int64, now: Date) -> String {
        let (difference, overflow) = Int64(now.timeIntervalSince1970).subtractingReportingOverflow(seconds)
        guard !overflow, difference >= 0 else { return "in the future: check this machine's clock" }
        switch difference {
        case ..<120: return "\(difference) s ago"
        case ..<7200: return "\(difference / 60) min ago"
        case ..<172_800: return "\(difference / 3600) h ago"
        default: return "\(difference / 86_400) days ago"
        }
    }
}
