// Runs GLib's own `gio info` (Debian's libglib2.0-bin) so tests compare photofs's URIs and thumbnails with
// what GLib itself computes; a test without gio says it is skipped and why.
import Foundation
import TestRequirements
import XCTest

enum GIOInfo {
    static let executable = "/usr/bin/gio"

    /// Skips (fails under CI) when gio is not installed (`make deps` installs libglib2.0-bin).
    static func requireGIO() throws {
        try TestRequirement.program(executable, package: "libglib2.0-bin")
    }

    /// `gio info [-a attributes] path`'s output lines, run with `environment` added to this process's.
    static func lines(path: String, attributes: String? = nil, environment: [String: String] = [:]) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["info"] + (attributes.map { ["-a", $0] } ?? []) + [path]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "gio", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "gio info \(path) exited \(process.terminationStatus)"])
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The value after "name: " on the first line that has it (attribute lines are indented).
    static func value(_ name: String, in lines: [String]) -> String? {
        for line in lines {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix(name + ": ") { return String(trimmed.dropFirst(name.count + 2)) }
        }
        return nil
    }
}
