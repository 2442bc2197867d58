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
            // Everything read there may be hostile (hand-edited counters, a FIFO for a file): CacheReport
            // reads it without blocking and adds it without overflowing.
            for line in CacheReport.read(directory: location.directory.path).lines { print(line) }
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
                let (count, bytes) = CacheReport.usage(ofOriginals: folder.path)
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
}
