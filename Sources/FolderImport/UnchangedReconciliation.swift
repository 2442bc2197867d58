// The reconciliation of a walk in which nothing changed, without step 2's grouping of every file by content.
import Foundation

extension FileReconciliation {
    /// What `resolve` would answer when every walked file is unchanged, nothing vanished and every photo is
    /// still shown from one of its files; nil otherwise (then `resolve` decides). `resolve` groups every file by
    /// size and hash to find duplicates whatever changed: a third of an unchanged re-import of 100,000 files
    /// (perf), for an answer known in advance — the same files, the same photos, nothing to write.
    public static func unchanged(candidates: [Candidate], vanished: [RememberedFile], others: [RememberedFile],
                                 previousRepresentative: [String: String]) -> Resolution? {
        guard vanished.isEmpty else { return nil }
        var files: [RememberedFile] = []
        files.reserveCapacity(candidates.count)
        var members: [String: [String]] = [:]
        var changes: [String: FileChange] = [:]
        for candidate in candidates {
            guard candidate.change == .unchanged, let previous = candidate.previous,
                  previous.partialHash == candidate.partialHash, !previous.partialHash.isEmpty else { return nil }
            let file = candidate.file
            files.append(RememberedFile(path: file.path, root: file.root, device: file.device, inode: file.inode,
                                        size: file.size, mtimeNanos: file.mtimeNanos, partialHash: previous.partialHash,
                                        fullHash: previous.fullHash, photoID: previous.photoID))
            members[previous.photoID, default: []].append(file.path)
            changes[file.path] = .unchanged
        }
        var representative: [String: String] = [:]
        for (id, paths) in members {
            guard let shown = previousRepresentative[id], paths.contains(shown) else { return nil }
            representative[id] = shown
        }
        // Files sharing a photo are identical (an import made them one photo, and none changed since), so the
        // duplicates are the files beyond the first of each photo these folders hold, counting other folders'
        // files as `resolve` does.
        var perPhoto: [String: Int] = [:]
        for file in files { perPhoto[file.photoID, default: 0] += 1 }
        for other in others where !other.partialHash.isEmpty && perPhoto[other.photoID] != nil {
            perPhoto[other.photoID, default: 0] += 1
        }
        let duplicates = perPhoto.values.reduce(0) { $0 + $1 - 1 }
        return Resolution(files: files, changes: changes, removedPhotoIDs: [], duplicateFiles: duplicates,
                          representative: representative, photosToWrite: [])
    }
}
