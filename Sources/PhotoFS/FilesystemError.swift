// The one error type the filesystem logic throws: a code the FUSE adapter turns into an errno, and a message.
import Foundation
import Logging

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
        /// No attribute of that name (ENODATA): getxattr of a name the node does not carry.
        case noAttribute
        /// The caller's buffer is shorter than the value or list (ERANGE); a size-0 probe gives the length.
        case bufferTooSmall
        /// An attribute namespace photofs does not have (EOPNOTSUPP): everything but `user.`.
        case notSupported
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

/// Runs a catalog read for the file system: failures (a library deleted, corrupted or locked underneath the
/// mount) become EIO with the cause in the log, never a crash.
func catalogRead<T>(logging logger: Logger, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as FilesystemError { throw error } catch {
        logger.error("catalog read failed", metadata: ["error": "\(error)"])
        throw FilesystemError(.ioFailure, "catalog read failed", underlying: error)
    }
}
