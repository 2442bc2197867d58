// `photofs cache stats|clear`: what the disk cache of a library holds, and emptying it.
import ArgumentParser
import Foundation
import PhotoContent

struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect or clear a library's photo cache.",
        subcommands: [Stats.self, Clear.self]
    )

    struct Location: ParsableArguments {
        @Argument(help: "The library file.")
        var library: String
        @Option(help: "The cache directory, if not the default for this library.")
        var cacheDir: String?
        var directory: URL {
            cacheDir.map { URL(fileURLWithPath: Paths.absolute($0)) }
                ?? Paths.defaultCacheDirectory(forLibrary: Paths.absolute(library))
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show how many photos and bytes the cache holds.")
        @OptionGroup var location: Location
        func run() throws {
            let directory = location.directory
            let (count, bytes) = CacheCommand.usage(of: directory.appendingPathComponent("originals"))
            // Prefixes of photos whose readers stopped early (a header scan): counted against the limit too.
            let (partialCount, partialBytes) = CacheCommand.usage(of: directory.appendingPathComponent("partial"))
            print("cache: \(directory.path)")
            print("photos: \(count)")
            print("partial: \(partialCount) (\(ByteCountFormatter.string(fromByteCount: partialBytes, countStyle: .binary)))")
            let total = bytes &+ partialBytes
            print("bytes: \(total) (\(ByteCountFormatter.string(fromByteCount: total, countStyle: .binary)))")
            if let limit = try? String(contentsOf: directory.appendingPathComponent("limit"), encoding: .utf8),
               let value = Int64(limit.trimmingCharacters(in: .whitespacesAndNewlines)) {
                print("limit: \(value) (\(ByteCountFormatter.string(fromByteCount: value, countStyle: .binary)))")
            }
            if let data = FileManager.default.contents(atPath: directory.appendingPathComponent("statistics.json").path),
               let stats = try? JSONDecoder().decode(CacheStatistics.self, from: data) {
                let opens = stats.hits + stats.misses
                let rate = opens > 0 ? String(format: "%.1f%%", 100 * Double(stats.hits) / Double(opens)) : "n/a"
                print("opens: \(opens), hit rate: \(rate), downloaded: \(stats.downloadedBytes) bytes, evictions: \(stats.evictions)")
            }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete every cached photo and partial photo (a live mount downloads them again when opened).")
        @OptionGroup var location: Location
        func run() throws {
            // Only a photofs cache (tagged, empty, or an earlier photofs's) is cleared: never a folder of the user's.
            do { try CacheDirectory.checkUsable(location.directory.path) } catch { throw CommandFailure("\(error)") }
            var removed: [Int64] = []
            for subdirectory in ["originals", "partial"] {
                let folder = location.directory.appendingPathComponent(subdirectory)
                let (count, bytes) = CacheCommand.usage(of: folder)
                // Only what photofs wrote: a file of someone else's that found its way in is left alone.
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                where CacheDirectory.isEntryName(name) {
                    // Unlinking is safe under a live mount: open files keep their bytes until closed.
                    unlink(folder.appendingPathComponent(name).path)
                }
                removed += [Int64(count), bytes]
            }
            print("removed \(removed[0]) photos and \(removed[2]) partial photos, \(removed[1] &+ removed[3]) bytes from \(location.directory.path)")
        }
    }

    static func usage(of directory: URL) -> (Int, Int64) {
        var count = 0
        var bytes: Int64 = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        where CacheDirectory.isEntryName(name) {
            var info = stat()
            if lstat(directory.appendingPathComponent(name).path, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                count += 1
                bytes &+= Int64(info.st_size)
            }
        }
        return (count, bytes)
    }
}
