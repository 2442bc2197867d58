// Real encoded photos for folder tests, EXIF written by Debian's exiftool, HEIC made by heif-enc.
import Foundation
import PhotoContent
import TestRequirements
import XCTest

enum PhotoFixtures {
    /// A real JPEG (libjpeg-encoded gradient with noise), different for every seed.
    static func jpeg(width: Int = 96, height: Int = 64, seed: UInt8 = 0) throws -> Data {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var state = UInt32(seed) &+ 1
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 1_103_515_245 &+ 12_345
                let index = (y * width + x) * 3
                pixels[index] = UInt8(truncatingIfNeeded: x * 255 / max(1, width) &+ Int(seed) &* 37)
                pixels[index + 1] = UInt8(truncatingIfNeeded: y * 255 / max(1, height))
                pixels[index + 2] = UInt8(truncatingIfNeeded: state >> 24)
            }
        }
        return try ImageCodec.encodeJPEG(PixelImage(width: width, height: height, channels: 3, pixels: pixels), quality: 85)
    }

    static func png(width: Int = 40, height: Int = 30) throws -> Data {
        try ImageCodec.encodePNG(PixelImage(width: width, height: height, channels: 3,
                                            pixels: [UInt8](repeating: 200, count: width * height * 3)))
    }

    /// Skips the test when `program` (in /usr/bin, where Debian installs it) is missing, naming the Debian
    /// package; fails instead under CI (`make test` installs it).
    static func require(_ program: String, package: String) throws {
        try TestRequirement.program("/usr/bin/" + program, package: package)
    }

    /// Runs a tool; throws with its standard error when it fails.
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError("\(program) \(arguments.joined(separator: " ")): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Writes EXIF tags ("-Artist=Ada") into a file in place.
    static func exiftool(_ path: String, _ tags: [String]) throws {
        try require("exiftool", package: "libimage-exiftool-perl")
        try run("exiftool", ["-q", "-overwrite_original", "-m"] + tags + [path])
    }

    /// The bytes of a real JPEG with these EXIF tags written by exiftool (made in a folder removed after).
    static func jpegBytes(exif tags: [String]) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("exif-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a.jpg")
        try jpeg().write(to: path)
        try exiftool(path.path, tags)
        return [UInt8](try Data(contentsOf: path))
    }

    static func heic(from jpeg: String, to path: String) throws {
        try require("heif-enc", package: "libheif-examples")
        try run("heif-enc", ["-q", "50", "-o", path, jpeg])
    }

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
