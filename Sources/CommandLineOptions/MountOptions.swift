// `photofs mount`'s options in both spellings (`--long-option VALUE` and `-o name=value`), checked in one place.
import Foundation
import PhotoContent

/// A `photofs mount` option that also works inside `-o` (fstab, `mount -t fuse.photofs`): `--cache-dir DIR`
/// is `-o cache_dir=DIR` (or `-o cache-dir=DIR`).
public enum MountOption: String, CaseIterable, Sendable {
    case cacheDir = "cache-dir"
    case size
    case jpegQuality = "jpeg-quality"
    case maxPixels = "max-pixels"
    case cacheSize = "cache-size"
    case maxDownloads = "max-downloads"
    case prefetch
    case connectTimeout = "connect-timeout"
    case stallTimeout = "stall-timeout"
    case proxy
    case backupTools = "backup-tools"
    case desktopThumbnails = "desktop-thumbnails"
    case thumbnailListers = "thumbnail-listers"
    case busyPoll = "busy-poll"
    case allowNonempty = "allow-nonempty"
    case logLevel = "log-level"
    case foreground

    public var longName: String { "--" + rawValue }
    /// The fstab spelling; `-` is accepted too (see `named`).
    public var mountOptionName: String { rawValue.replacingOccurrences(of: "-", with: "_") }
    public var isFlag: Bool { self == .allowNonempty || self == .foreground }

    /// `cache_dir`, `cache-dir`; `nonempty` is FUSE 2's name for allow_nonempty (FUSE 3 dropped it), so an
    /// fstab line written for FUSE 2 keeps working.
    public static func named(_ name: String) -> MountOption? {
        if name == "nonempty" { return .allowNonempty }
        return MountOption(rawValue: name.replacingOccurrences(of: "_", with: "-"))
    }

    /// How an error names this option: as the user wrote it.
    public func spelling(_ origin: OptionOrigin) -> String {
        origin == .commandLine ? longName : "-o \(mountOptionName)"
    }
}

/// Where a value came from.
public enum OptionOrigin: Sendable, Equatable {
    case commandLine
    case mountOption
}

/// An option value that cannot be used; `description` is the message for the user.
public struct OptionError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Everything `photofs mount` was asked for, validated.
public struct MountSettings: Equatable, Sendable {
    public var cacheDirectory: String?
    public var variant: VariantSpec?
    public var jpegQuality = 85
    /// Megapixels.
    public var maxPixels = RenderOptions.defaultMaxPixels / 1_000_000
    public var cacheSize: Int64 = 2 << 30
    public var maxDownloads = 16
    public var prefetch = 3
    public var connectTimeout: Double = 10
    public var stallTimeout: Double = 30
    /// The HTTP proxy every request goes through: nil = libcurl's default (the standard variables
    /// `http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`); "" = none, whatever the environment says.
    public var proxy: String?
    /// nil: the file system's own default list.
    public var backupTools: [String]?
    /// Write freedesktop thumbnails of listed photos into the user's thumbnail cache.
    public var desktopThumbnails = true
    /// Commands whose listings get desktop thumbnails besides file managers and thumbnailers.
    public var thumbnailListers: [String] = []
    /// Microseconds the FUSE thread that answered a request polls for the next; 0 = off.
    public var busyPoll = 200
    public var allowNonempty = false
    public var logLevel: String?
    public var foreground = false
    /// What goes to libfuse, in the order given.
    public var fuseOptions: [String] = []
    /// fstab and mount(8) words that were accepted and dropped (for one log line).
    public var ignoredOptions: [String] = []

    public init() {}

    public var renderOptions: RenderOptions { RenderOptions(jpegQuality: jpegQuality, maxPixels: maxPixels * 1_000_000) }

    /// The settings from the long options given on the command line (flags with any value, e.g. "") and
    /// the `-o` lists. A long option given on the command line wins over the same option in `-o` (the
    /// command line is the more specific: `mount -t fuse.photofs` users cannot give long options, and a
    /// one-off `photofs mount ... --size 512` should beat an `-o` list copied from fstab); within `-o`, the
    /// last one wins, as for mount(8).
    public static func resolve(commandLine: [MountOption: String], optionLists: [String]) throws -> MountSettings {
        var settings = MountSettings()
        var values: [MountOption: (String, OptionOrigin)] = [:]
        for item in optionLists.flatMap(MountOptionList.split) {
            switch try MountOptionList.classify(item) {
            case .photofs(let option, let value): values[option] = (value, .mountOption)
            case .fuse: settings.fuseOptions.append(item)
            case .ignored: settings.ignoredOptions.append(item)
            }
        }
        for (option, value) in commandLine { values[option] = (value, .commandLine) }
        if settings.fuseOptions.contains("allow_other") && settings.fuseOptions.contains("allow_root") {
            throw OptionError("-o allow_other and -o allow_root exclude each other: allow_other lets every user in, allow_root only root and you")
        }
        // In the table's order, so that with several bad values the first option of the help is named.
        for option in MountOption.allCases {
            guard let (value, origin) = values[option] else { continue }
            try settings.apply(option, value, origin)
        }
        return settings
    }

    mutating func apply(_ option: MountOption, _ value: String, _ origin: OptionOrigin) throws {
        let name = option.spelling(origin)
        switch option {
        case .cacheDir:
            guard !value.isEmpty else { throw OptionError("\(name) takes a directory, not an empty value") }
            cacheDirectory = value
        case .size:
            if value == "original" {
                variant = nil
            } else {
                guard let spec = VariantSpec(argument: value) else {
                    throw OptionError("\(name) takes original, a number of pixels (1024) or square:N (square:256), not \"\(value)\"")
                }
                variant = spec
            }
        case .jpegQuality:
            jpegQuality = try Self.integer(value, in: 1...100, name: name, what: "1 to 100")
        case .maxPixels:
            maxPixels = try Self.integer(value, in: 1...10_000, name: name, what: "1 to 10000 (megapixels)")
        case .cacheSize:
            guard let bytes = ByteSize.parse(value) else {
                throw OptionError("\(name) takes a size like 500M or 2G, not \"\(value)\"")
            }
            cacheSize = bytes
        case .maxDownloads:
            // Each download is a thread with its own connection; 64 is far past where a photo origin (or a
            // home uplink) gives more throughput.
            maxDownloads = try Self.integer(value, in: 1...64, name: name, what: "1 to 64")
        case .prefetch:
            prefetch = try Self.integer(value, in: 0...100, name: name, what: "0 (off) to 100")
        case .connectTimeout:
            connectTimeout = try Self.seconds(value, in: 0.001...3600, name: name, what: "seconds, more than 0 and at most 3600")
        case .stallTimeout:
            // libcurl's low-speed limit counts whole seconds, hence at least 1.
            stallTimeout = try Self.seconds(value, in: 1...86_400, name: name, what: "seconds, 1 to 86400")
        case .proxy:
            proxy = try ProxySetting.parse(value, name: name)
        case .backupTools:
            backupTools = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .desktopThumbnails:
            switch value.trimmingCharacters(in: .whitespaces).lowercased() {
            case "on", "yes", "true", "1", "": desktopThumbnails = true
            case "off", "no", "false", "0": desktopThumbnails = false
            default: throw OptionError("\(name) takes on or off, not \"\(value)\"")
            }
        case .thumbnailListers:
            thumbnailListers = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .busyPoll:
            // 10 ms: past any gap between one program's requests; beyond it polling only burns a CPU.
            busyPoll = try Self.integer(value, in: 0...10_000, name: name, what: "microseconds, 0 (off) to 10000")
        case .logLevel:
            logLevel = try LogLevelName.check(value, name: name)
        case .allowNonempty:
            allowNonempty = true
        case .foreground:
            foreground = true
        }
    }

    static func integer(_ text: String, in range: ClosedRange<Int>, name: String, what: String) throws -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw OptionError("\(name) takes \(what), not \"\(text)\"")
        }
        return value
    }

    static func seconds(_ text: String, in range: ClosedRange<Double>, name: String, what: String) throws -> Double {
        // Double("nan") and Double("inf") parse; neither is in the range, and both would trap in the
        // `Int(seconds * 1000)` handed to libcurl.
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw OptionError("\(name) takes \(what), not \"\(text)\"")
        }
        return value
    }
}

/// The log levels `--log-level` names (swift-log's).
public enum LogLevelName {
    public static let all = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    public static func check(_ text: String, name: String = "--log-level") throws -> String {
        let level = text.lowercased()
        guard all.contains(level) else {
            throw OptionError("\(name) takes trace, debug, info, notice, warning, error or critical, not \"\(text)\"")
        }
        return level
    }
}

/// "500M", "2G", "1048576" → bytes (binary units, as `du -h` prints them).
public enum ByteSize {
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = trimmed
        var multiplier: Int64 = 1
        if trimmed.hasSuffix("IB") { digits.removeLast(2) } else if trimmed.hasSuffix("B") { digits.removeLast() }
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits.removeLast()
        }
        // NaN fails `>= 0`; "inf" and 1e30 fail the bound, so the conversion below cannot trap.
        guard let value = Double(digits), value >= 0 else { return nil }
        let bytes = value * Double(multiplier)
        guard bytes < 9.0e18 else { return nil }
        return Int64(bytes)
    }
}
