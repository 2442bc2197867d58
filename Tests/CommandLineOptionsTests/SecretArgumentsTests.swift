// Secret arguments: found in both forms, kept off a child's command line, read from a file without ever
// appearing in an error.
import CommandLineOptions
import Foundation
import XCTest

final class SecretArgumentsTests: XCTestCase {
    func testSpansOfBothForms() {
        let arguments = ["photofs", "import", "flickr", "lib.sqlite", "--api-key", "K1", "--api-secret=S2", "--api-keyx=no",
                         "--param", "tags=--api-key=x", "--", "--api-key", "positional"]
        let spans = SecretArguments.secretSpans(in: arguments)
        XCTAssertEqual(spans.map(\.index), [5, 6])
        XCTAssertEqual(spans.map(\.offset), [0, "--api-secret=".utf8.count])
        XCTAssertEqual(SecretArguments.secretSpans(in: ["photofs", "--api-key"]).count, 0, "no value: nothing to blank")
        XCTAssertEqual(SecretArguments.secretSpans(in: ["--api-key", "program-name-is-not-an-option"]).count, 0)
    }

    func testChildArgumentsCarryNoSecretAndTheEnvironmentDoes() {
        let (arguments, environment) = SecretArguments.withoutSecrets(
            ["photofs", "mount", "lib", "mnt", "--api-key", "K1", "-o", "ro", "--api-secret=S2", "--", "--api-key", "p"])
        XCTAssertEqual(arguments, ["photofs", "mount", "lib", "mnt", "-o", "ro", "--", "--api-key", "p"])
        XCTAssertEqual(environment, ["PHOTOFS_FLICKR_API_KEY": "K1", "PHOTOFS_FLICKR_API_SECRET": "S2"])
        let plain = ["photofs", "mount", "lib", "mnt", "--size", "512"]
        XCTAssertEqual(SecretArguments.withoutSecrets(plain).arguments, plain)
        XCTAssertEqual(SecretArguments.withoutSecrets(plain).environment, [:])
    }

    func testScrubbingThisProcessLeavesItsOwnArgumentsAlone() throws {
        // The test runner has no secret arguments: scrubbing must change nothing the kernel shows.
        let before = try Data(contentsOf: URL(fileURLWithPath: "/proc/self/cmdline"))
        SecretArguments.scrubProcessArguments()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: "/proc/self/cmdline")), before)
    }

    func testSourcesInOrderAndErrorsNeverHoldTheSecret() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("key").path
        try "  FILEKEY\n".write(toFile: file, atomically: true, encoding: .utf8)
        func resolve(_ option: String?, _ path: String?, _ environment: [String: String] = [:]) throws -> String? {
            try SecretSource.resolve(option: option, optionName: "--api-key", file: path, fileOptionName: "--api-key-file",
                                     variable: "PHOTOFS_FLICKR_API_KEY", environment: environment)
        }
        XCTAssertEqual(try resolve("OPTION", nil, ["PHOTOFS_FLICKR_API_KEY": "ENV"]), "OPTION")
        XCTAssertEqual(try resolve(nil, file, ["PHOTOFS_FLICKR_API_KEY": "ENV"]), "FILEKEY")
        XCTAssertEqual(try resolve(nil, nil, ["PHOTOFS_FLICKR_API_KEY": "ENV"]), "ENV")
        XCTAssertNil(try resolve(nil, nil, ["PHOTOFS_FLICKR_API_KEY": ""]))
        XCTAssertThrowsError(try resolve("OPTION", file)) { XCTAssertEqual("\($0)", "give --api-key or --api-key-file, not both") }
        XCTAssertThrowsError(try resolve(nil, directory.appendingPathComponent("missing").path)) {
            XCTAssertTrue("\($0)".contains("cannot read it (No such file or directory)"), "\($0)")
        }
        try "\n \n".write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try resolve(nil, file)) { XCTAssertTrue("\($0)".hasSuffix("the file is empty"), "\($0)") }
        try "SECRETONE\nSECRETTWO\n".write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try resolve(nil, file)) {
            XCTAssertTrue("\($0)".contains("one line"), "\($0)")
            XCTAssertFalse("\($0)".contains("SECRET"), "an error never shows the file's content")
        }
        try Data([0xff, 0xfe, 0x00]).write(to: URL(fileURLWithPath: file))
        XCTAssertThrowsError(try resolve(nil, file)) { XCTAssertTrue("\($0)".hasSuffix("not a text file"), "\($0)") }
    }
}
