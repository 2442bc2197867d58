// Reads the files an import must read several at a time: cold disks want requests in flight, warm ones both cores.
import Foundation
import PhotoContent
import PhotoSources

/// `PhotoFileReader.read` over many files at once. Why parallel: each file costs a 128 KiB read at its start
/// and a 4 KiB read at its end (two seeks on a cold disk) and then CPU (the SHA-256 of 128 KiB, libexif);
/// one file at a time leaves the disk waiting while the CPU works and the CPU waiting on each seek. Results
/// come back in the order of `files`, so an import's plan does not depend on which thread finished first.
enum ParallelFileReading {
    /// Reads in flight: a virtio or SATA disk serves 8 queued reads faster than 1 (the kernel merges and
    /// reorders them), and on 2 cores 8 threads also keep both busy hashing once the files are cached.
    static let width = 8

    static func read(_ files: [WalkedFile], progress: ImportProgress?) -> [Result<FileReading, Error>] {
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var items: [Result<FileReading, Error>?]
            var done = 0
            init(count: Int) { items = Array(repeating: nil, count: count) }
        }
        let results = Results(count: files.count)
        let total = files.count
        // ImportProgress is not Sendable (a terminal line); it is only called under the lock.
        nonisolated(unsafe) let progress = progress
        BoundedParallel.forEach(count: files.count, width: width) { index in
            let result = Result { try PhotoFileReader.read(files[index]) }
            results.lock.lock()
            results.items[index] = result
            results.done += 1
            progress?.update(stage: "read", done: results.done, total: total)
            results.lock.unlock()
        }
        return results.items.map { $0 ?? .failure(FileReadFailure(description: "not read")) }
    }
}
