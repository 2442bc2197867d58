// A re-import in which nothing changed, decided by one merge of the walk with the remembered files: no
// dictionary, no copy of a row, nothing read twice, nothing written.
import Foundation
import PhotoCatalog

/// What the full reconciliation (`classify`, then `unchanged` or `resolve`) would count for a walk in which
/// every file is the one remembered at its path and nothing vanished: every file unchanged, no photo to
/// write or remove. The walk and `RememberedStats.files` are both in the byte order of their paths, so one
/// pass compares them; the photos' representatives and the duplicates come from the catalog's own counts.
/// An unchanged re-import of 100,000 files spent ~2.4 s of CPU in the dictionaries, copies and second reads
/// of the full reconciliation (perf), for this answer.
public enum UnchangedReimport {
    public struct Counts: Equatable, Sendable {
        public var unchanged: Int
        public var duplicateFiles: Int
    }

    /// The counts, or nil when anything may have changed (then the full reconciliation decides): a file
    /// new, gone, moved, edited, in another root or without a partial hash, a walk out of byte order (roots
    /// inside each other), or a photo not shown from one of its walked files (the import would write it).
    /// `roots` are the roots `stats` was read for; `walkedRoots` those the walk could read.
    public static func counts(walked: [WalkedFile], roots: [String], walkedRoots: Set<String>,
                              stats: RememberedStats) -> Counts? {
        let isWalked = roots.map { walkedRoots.contains($0) }
        var next = 0
        for file in stats.files where isWalked.indices.contains(file.root) && isWalked[file.root] {
            guard next < walked.count else { return nil } // a remembered file is gone
            let walkedFile = walked[next]
            next += 1
            guard file.hasPartialHash, walkedFile.device == file.device, walkedFile.inode == file.inode,
                  walkedFile.size == file.size, walkedFile.mtimeNanos == file.mtimeNanos,
                  walkedFile.root == roots[file.root], PathOrder.equal(walkedFile.path, file.path) else { return nil }
        }
        guard next == walked.count else { return nil } // a new file
        // Files sharing a photo are identical (an import made them one photo, and none changed since): the
        // duplicates are the files beyond the first of each photo a walked file holds, counting other folders'
        // files with a hash, as the full reconciliation does.
        var perPhoto: [String: (walked: Int, counted: Int)] = [:]
        for shared in stats.sharedFiles {
            let inWalk = shared.root.map { isWalked.indices.contains($0) && isWalked[$0] } ?? false
            guard inWalk || shared.hasPartialHash else { continue }
            perPhoto[shared.photoID, default: (0, 0)].counted += 1
            if inWalk { perPhoto[shared.photoID, default: (0, 0)].walked += 1 }
        }
        var duplicates = 0
        var heldPhotos = walked.count
        for (_, counts) in perPhoto where counts.walked > 0 {
            duplicates += counts.counted - 1
            if counts.walked > 1 { heldPhotos -= counts.walked - 1 }
        }
        // Each photo a walked file holds must be shown from one of its walked files, else it is written.
        var shown = 0
        for (index, count) in stats.photosShownFromOwnFile.enumerated() where isWalked.indices.contains(index) && isWalked[index] {
            shown += count
        }
        guard shown == heldPhotos else { return nil }
        return Counts(unchanged: walked.count, duplicateFiles: duplicates)
    }
}
