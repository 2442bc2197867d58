// Which of a photo's renditions a variant is rendered from: the smallest one that is still big enough.
import PhotoCatalog

public enum RenditionChoice {
    /// The smallest rendition at least as large as `spec` needs, or nil for "render from the original".
    /// Edges are compared as long and short edges, which EXIF orientation does not change. A rendition at the
    /// original's URL is the original itself (nil), so its bytes come through the original's cache entry.
    /// Square crops (`sq` 75 px, `q` 150 px) serve square variants only. Flickr's renditions are JPEGs, so a
    /// PNG original (which may have alpha, and whose `fit` variants stay PNG) is always its own source.
    public static func source(for spec: VariantSpec, among renditions: [Rendition], originalURL: String,
                              originalType: String?) -> Rendition? {
        guard originalType != "image/png" else { return nil }
        let usable = renditions.filter { rendition in
            guard rendition.url != originalURL else { return false }
            let long = max(rendition.width, rendition.height), short = min(rendition.width, rendition.height)
            switch spec {
            case .fit(let edge): return !rendition.isSquareCrop && long >= edge
            case .square(let side): return short >= side
            }
        }
        // If the original is known to be smaller than a candidate, the original is the better source (it
        // can only happen with a malformed answer, but never render from something the original beats).
        let original = renditions.first { $0.url == originalURL }
        return usable.min { ($0.width * $0.height, $0.label) < ($1.width * $1.height, $1.label) }
            .flatMap { best in
                guard let original, original.width * original.height <= best.width * best.height else { return best }
                return nil
            }
    }
}

extension RenditionChoice {
    /// Where a photo's desktop thumbnails come from.
    public enum ThumbnailSource: Equatable, Sendable {
        case rendition(Rendition)
        case original
    }

    /// What desktop thumbnails up to `edge` px are made from, downloading as little as possible: the original
    /// when it is cached already (no network at all), else the smallest rendition at least `edge` on its long
    /// side (Flickr's `n`, 320 px, ~30 KB, for 256), else the largest smaller one (a thumbnail is never
    /// enlarged), and the original only when the photo has no rendition but square crops or none at all.
    public static func desktopThumbnailSource(edge: Int, among renditions: [Rendition], originalURL: String,
                                              originalCached: Bool) -> ThumbnailSource? {
        if originalCached { return .original }
        // originalType nil: a PNG original's JPEG renditions are fine for a thumbnail.
        if let best = source(for: .fit(edge), among: renditions, originalURL: originalURL, originalType: nil) {
            return .rendition(best)
        }
        let smaller = renditions.filter { !$0.isSquareCrop && $0.url != originalURL }
        if let largest = smaller.max(by: { (Double($0.width) * Double($0.height), $0.label) < (Double($1.width) * Double($1.height), $1.label) }) {
            return .rendition(largest)
        }
        return .original
    }
}
