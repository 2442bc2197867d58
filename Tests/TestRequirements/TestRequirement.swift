// What a test needs from the machine — a Debian package's program, root — checked and reported one way.
import Foundation
import XCTest

/// A test that needs something this machine may lack says what, and how to get it.
///
/// A missing privilege skips: a developer's machine need not run tests as root. A missing package skips
/// too, except under CI (`CI=true`, as GitHub Actions and GitLab set it): `make test` installs every package
/// the tests use (the Makefile's APT_PACKAGES), so there a missing one is a broken setup and the test fails
/// instead — a CI run never passes by skipping what it was meant to run.
public enum TestRequirement {
    /// Whether this run is CI's.
    public static var isCI: Bool {
        ["true", "1"].contains(ProcessInfo.processInfo.environment["CI"]?.lowercased() ?? "")
    }

    /// `path` must be an executable file; `package` is the Debian package that installs it.
    public static func program(_ path: String, package: String) throws {
        guard !FileManager.default.isExecutableFile(atPath: path) else { return }
        try missing("needs \(package) for \(path) (apt-get install \(package))")
    }

    /// The test must run as root; `purpose` says what for ("to mount a tmpfs").
    public static func root(_ purpose: String) throws {
        guard geteuid() != 0 else { return }
        throw XCTSkip("needs root \(purpose)")
    }

    /// A package-like need (something `make test` provides) that is not met: a skip, or under CI a failure.
    public static func missing(_ message: String) throws {
        if isCI { throw MissingRequirement(description: message + " — CI=true, where make test installs it: failing, not skipping") }
        throw XCTSkip(message)
    }
}

/// Thrown under CI for a missing package: the test fails with this message.
public struct MissingRequirement: Error, CustomStringConvertible {
    public var description: String
}
