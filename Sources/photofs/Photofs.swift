// The `photofs` command: import photo folders, Flickr or Immich into a SQLite library, mount it, run the demo, manage the cache.
import ArgumentParser
import CommandLineOptions
import Foundation
import Logging
import PhotoContent

@main
struct Photofs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photofs",
        abstract: "Your photos (your own folders, Flickr, Immich) as read-only folders, by place, time, event and search.",
        discussion: """
            A library is one SQLite file of photo metadata. Fill it from your own photo folders \
            (`photofs import folder LIB ~/Pictures`: dates, places and cameras from each file's EXIF, the files \
            served in place), from Flickr (`photofs login flickr` once, then `photofs import flickr LIB --user \
            me`) or from an Immich server (`photofs import immich`); one library can follow several. Then \
            `photofs mount LIB DIR` shows it as folders:

              <mount>/regions/<Region>/<Photographer>/<Title>.jpg
              <mount>/moments/<Year>/<YYYY-MM-DD HH.MM.SS> <Title>.jpg
              <mount>/events/<Year>/<YYYY-MM-DD Place>/...   (photos taken close in time and place)
              <mount>/search/<words>/...   (any name looked up here is a search: ls "mnt/search/harbour 2019")
              <mount>/recent/<Title>.jpg      (the 20 most recently opened)
              <mount>/albums/<Album>/<Title>.jpg

            Flickr and Immich photos are downloaded when first opened and kept in a disk cache; a folder's \
            photos are read from their files. `photofs demo` does all of this against a built-in library. See \
            docs/user-guide.md.
            """,
        subcommands: [ImportCommand.self, MountCommand.self, StatusCommand.self, LoginCommand.self, LogoutCommand.self,
                      AccountsCommand.self, DemoCommand.self, CacheCommand.self, OriginCommand.self, RenderCommand.self,
                      ThumbnailsCommand.self]
    )

    /// ArgumentParser's main, with secrets (`--api-key KEY`) overwritten in the process's argv before any
    /// command runs, so `ps` stops showing them. Swift's copy of the arguments is taken first: parsing reads it.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        SecretArguments.scrubProcessArguments()
        main(arguments)
    }
}

/// Options every command shares.
struct LoggingOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error or critical. Also PHOTOFS_LOG (and -o log_level=L for mount).",
                                            valueName: "level"))
    var logLevel: String?

    func validate() throws {
        if let logLevel {
            do { _ = try LogLevelName.check(logLevel) } catch { throw ValidationError("\(error)") }
        }
    }

    /// Sets up swift-log once: lines on standard error with their metadata (photo id, inode, op). `level`
    /// (mount's settings, from --log-level or -o log_level) wins over --log-level and PHOTOFS_LOG.
    func makeLogger(_ label: String, level chosen: String? = nil) -> Logger {
        let wanted = chosen ?? logLevel ?? ProcessInfo.processInfo.environment["PHOTOFS_LOG"] ?? "info"
        let level = Logger.Level(rawValue: wanted.lowercased()) ?? .info
        LoggingBootstrap.once(level: level)
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}

enum LoggingBootstrap {
    private static var done = false
    /// The terminal's progress bar, which every log line is printed above (TerminalStatusLine.swift). One per
    /// process, as stderr and swift-log's bootstrap are.
    static let statusLine = TerminalStatusLine()
    static func once(level: Logger.Level) {
        guard !done else { return }
        done = true
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return StatusLineLogHandler(inner: handler, statusLine: statusLine)
        }
    }
}

/// A message for the user and a non-zero exit, without a stack trace.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
    init(_ message: String) { self.message = message }
}

enum Paths {
    /// Default cache directory of a library: ${XDG_CACHE_HOME:-~/.cache}/photofs/<name>-<hash of its path>,
    /// so two libraries never share a cache by accident and every mount of one library shares the same one.
    static func defaultCacheDirectory(forLibrary library: String) -> URL {
        let absolute = URL(fileURLWithPath: library).standardizedFileURL.path
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.cache"
        let hash = StableHash.fnv1a64(absolute)
        let name = URL(fileURLWithPath: absolute).deletingPathExtension().lastPathComponent
        return URL(fileURLWithPath: base).appendingPathComponent("photofs")
            .appendingPathComponent("\(name)-\(String(hash, radix: 16).prefix(8))")
    }

    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
