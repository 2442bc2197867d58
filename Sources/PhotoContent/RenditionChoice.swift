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
