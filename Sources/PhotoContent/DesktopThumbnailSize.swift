// The four sizes of the freedesktop Thumbnail Managing Standard and the directory each lives in.
import Foundation

/// A thumbnail size of the Thumbnail Managing Standard (0.9): the thumbnail fits inside edge×edge and is
/// stored in `$XDG_CACHE_HOME/thumbnails/<directoryName>/`.
public enum DesktopThumbnailSize: String, CaseIterable, Sendable {
    case normal
    case large
    case xLarge = "x-large"
    case xxLarge = "xx-large"

    /// The longest side a thumbnail of this size may have.
    public var edge: Int {
        switch self {
        case .normal: return 128
        case .large: return 256
        case .xLarge: return 512
        case .xxLarge: return 1024
        }
    }

    /// The directory under `thumbnails/` ("normal", "large", "x-large", "xx-large").
    public var directoryName: String { rawValue }
}
