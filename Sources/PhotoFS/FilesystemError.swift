// The one error type the filesystem logic throws: a code the FUSE adapter turns into an errno, and a message.
import Foundation

public struct FilesystemError: Error, CustomStringConvertible {
    /// What went wrong, in the terms a file system speaks. The adapter maps each to exactly one errno.
    public enum Code: Sendable {
        case notFound
        case notADirectory
        case isADirectory
        case readOnly
        case ioFailure
        case noSpace
        case badHandle
    }
    public var code: Code
    public var message: String
    public var underlying: Error?

    public init(_ code: Code, _ message: String, underlying: Error? = nil) {
        self.code = code; self.message = message; self.underlying = underlying
    }

    public var description: String {
        underlying.map { "\(message): \($0)" } ?? message
    }
}
