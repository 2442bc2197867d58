// Secrets given on the command line (`--api-key KEY`): found, overwritten in this process's argv so that
// `ps` and /proc/PID/cmdline stop showing them, and kept off the command line of processes we start.
import Foundation

public enum SecretArguments {
    /// Options whose value is a secret, with the environment variable that carries the same value (how a
    /// child process gets it without a command line).
    public static let options: [String: String] = [
        "--api-key": "PHOTOFS_FLICKR_API_KEY",
        "--api-secret": "PHOTOFS_FLICKR_API_SECRET",
    ]

    /// Where each secret value is in `arguments` (the first being the program): the argument's index and
    /// the UTF-8 offset the secret starts at (0 for `--api-key KEY`, after the `=` for `--api-key=KEY`).
    /// After a `--` everything is positional and nothing is a secret.
    public static func secretSpans(in arguments: [String]) -> [(index: Int, offset: Int)] {
        var spans: [(index: Int, offset: Int)] = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if options[argument] != nil {
                if index + 1 < arguments.count { spans.append((index + 1, 0)) }
                index += 2
                continue
            }
            if let equals = argument.firstIndex(of: "="), options[String(argument[..<equals])] != nil {
                spans.append((index, argument.utf8.distance(from: argument.utf8.startIndex, to: equals) + 1))
            }
            index += 1
        }
        return spans
    }

    /// Overwrites every secret value in this process's argv strings with `x` (lengths kept, so the
    /// arguments still count and read as they did). On Linux `CommandLine.unsafeArgv` points at the
    /// strings the kernel shows in /proc/PID/cmdline. As with mysql's --password, the value is visible from
    /// exec until this runs (microseconds): --api-key-file and the environment variable never show it.
    /// Call once `CommandLine.arguments` (Swift's copy, which parsing reads) has been made.
    public static func scrubProcessArguments() {
        let argc = Int(CommandLine.argc)
        let argv = CommandLine.unsafeArgv
        var arguments: [String] = []
        for index in 0..<argc { arguments.append(argv[index].map { String(cString: $0) } ?? "") }
        for (index, offset) in secretSpans(in: arguments) {
            guard index < argc, let pointer = argv[index] else { continue }
            let length = strlen(pointer)
            guard offset < length else { continue }
            memset(pointer + offset, Int32(UInt8(ascii: "x")), length - offset)
        }
    }

    /// `arguments` without secret options and their values, and the environment entries that carry the
    /// values instead: what a process we start (the mount daemon) is given.
    public static func withoutSecrets(_ arguments: [String]) -> (arguments: [String], environment: [String: String]) {
        var kept: [String] = []
        var environment: [String: String] = [:]
        var index = 0
        var positionalOnly = false
        while index < arguments.count {
            let argument = arguments[index]
            if index > 0 && !positionalOnly {
                if argument == "--" { positionalOnly = true }
                if let variable = options[argument] {
                    if index + 1 < arguments.count { environment[variable] = arguments[index + 1] }
                    index += 2
                    continue
                }
                if let equals = argument.firstIndex(of: "="), let variable = options[String(argument[..<equals])] {
                    environment[variable] = String(argument[argument.index(after: equals)...])
                    index += 1
                    continue
                }
            }
            kept.append(argument)
            index += 1
        }
        return (kept, environment)
    }
}

/// A secret read from one of its three sources: an option's value, a file named by another option, or an
/// environment variable. Errors name the source, never the secret.
public enum SecretSource {
    /// The first of `option`, `file`, `environment[variable]`; nil when none is given. Both an option and a
    /// file is an error (which one was meant?).
    public static func resolve(option: String?, optionName: String, file: String?, fileOptionName: String,
                               variable: String, environment: [String: String]) throws -> String? {
        if option != nil && file != nil {
            throw OptionError("give \(optionName) or \(fileOptionName), not both")
        }
        if let option {
            guard !option.isEmpty else { throw OptionError("\(optionName) is empty") }
            return option
        }
        if let file { return try read(file: file, optionName: fileOptionName) }
        if let value = environment[variable], !value.isEmpty { return value }
        return nil
    }

    /// The file's one line, surrounding white space (a final newline from `echo KEY > file`) dropped.
    public static func read(file path: String, optionName: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw OptionError("\(optionName) \(path): cannot read it (\(String(cString: strerror(errno))))")
        }
        defer { try? handle.close() }
        // A key or token is under 100 bytes; 64 KiB read means the wrong file was named, not a long key.
        let data: Data = (try? handle.read(upToCount: 65_536)) ?? Data()
        guard let text = String(data: data, encoding: .utf8) else {
            throw OptionError("\(optionName) \(path): not a text file")
        }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else { throw OptionError("\(optionName) \(path): the file is empty") }
        guard !secret.contains(where: { $0.isNewline }), data.count < 65_536 else {
            throw OptionError("\(optionName) \(path): expected one line holding the secret alone")
        }
        return secret
    }
}
