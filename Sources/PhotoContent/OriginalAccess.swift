// How a mount reaches a photo's original bytes: one protocol for the open, the renderer and the thumbnail writer.
import Foundation

/// A photo's original bytes, however they are reached: through the HTTP cache (`OriginalCache`: anonymous or
/// signed URLs, downloaded once, kept on disk) or straight from a local file (`LocalFileOriginals`: folder
/// imports, checked to be still the imported version, never copied). `PhotoOriginals` picks one per URL, so
/// the mount's open, the variant renderer and the desktop thumbnail writer each make one call whatever the
/// photo's source is.
public protocol OriginalAccess: AnyObject, Sendable {
    /// A handle to read the original through (the mount's open). `thumbnailer` names a thumbnailing process,
    /// whose download waits behind everyone's; a local file ignores it.
    func open(_ source: ContentSource, thumbnailer: String?) throws -> ContentHandle
    /// Ends a use of a handle `open` returned.
    func release(_ handle: ContentHandle)
    /// A file holding the whole original, fetched if needed (the renderer reads its header before it is
    /// admitted, its bytes after). Throws `.noSpace`/`.localIO` when the cache cannot keep it: `bytes` works then.
    func wholeFile(_ source: ContentSource) throws -> String
    /// The whole original in memory.
    func bytes(_ source: ContentSource, priority: DownloadPriority) throws -> Data
    /// Whether the bytes are here without any request (a cached original, a local file).
    func isAtHand(_ source: ContentSource) -> Bool
    /// Starts fetching at low priority what is not at hand (a no-op for local files).
    func prefetch(_ source: ContentSource)
}

extension OriginalCache: OriginalAccess {
    public func wholeFile(_ source: ContentSource) throws -> String { try fetch(source) }
    public func bytes(_ source: ContentSource, priority: DownloadPriority) throws -> Data {
        try fetchBytes(source, priority: priority)
    }
    public func isAtHand(_ source: ContentSource) -> Bool { cachedPath(for: source) != nil }
}

/// A mount's originals: `file:///` URLs from the file itself, every other URL through the cache.
public final class PhotoOriginals: OriginalAccess, @unchecked Sendable {
    public let cache: OriginalCache
    public let localFiles: LocalFileOriginals

    public init(cache: OriginalCache, localFiles: LocalFileOriginals = LocalFileOriginals()) {
        self.cache = cache; self.localFiles = localFiles
    }

    /// Which access serves `source`: decided by its URL alone, which the catalog keeps per photo (a folder
    /// import writes only `file:///` URLs, a web source never may: `SourcePhoto`'s URL rules).
    public func access(for source: ContentSource) -> OriginalAccess {
        LocalFileContent.path(fromFileURI: source.url) != nil ? localFiles : cache
    }

    public func open(_ source: ContentSource, thumbnailer: String?) throws -> ContentHandle {
        try access(for: source).open(source, thumbnailer: thumbnailer)
    }
    /// A local file's handle was never counted by the cache: releasing it there finds no count and evicts
    /// nothing it would not have evicted anyway.
    public func release(_ handle: ContentHandle) { cache.release(handle) }
    public func wholeFile(_ source: ContentSource) throws -> String { try access(for: source).wholeFile(source) }
    public func bytes(_ source: ContentSource, priority: DownloadPriority) throws -> Data {
        try access(for: source).bytes(source, priority: priority)
    }
    public func isAtHand(_ source: ContentSource) -> Bool { access(for: source).isAtHand(source) }
    public func prefetch(_ source: ContentSource) { access(for: source).prefetch(source) }
}
