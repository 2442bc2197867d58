// The one place filesystem errors become errno values for the kernel.
import Foundation
import PhotoFS

extension FilesystemError.Code {
    /// Exhaustive on purpose: a new error code does not compile until it is given an errno here.
    var errno: Int32 {
        switch self {
        case .notFound: return ENOENT
        case .notADirectory: return ENOTDIR
        case .isADirectory: return EISDIR
        case .readOnly: return EROFS
        case .ioFailure: return EIO
        case .noSpace: return ENOSPC
        case .badHandle: return EBADF
        case .noAttribute: return ENODATA
        case .bufferTooSmall: return ERANGE
        // Never ENOSYS: libfuse's ENOSYS makes the kernel stop asking for every attribute of the mount.
        case .notSupported: return EOPNOTSUPP
        }
    }
}

/// errno for any error a handler caught: ours carry their code; anything else is an I/O failure.
func errnoValue(for error: Error) -> Int32 {
    (error as? FilesystemError)?.code.errno ?? EIO
}
