// Renders a smaller variant of a photo: decode (shrinking in the DCT domain when the target allows), crop,
// reduce (box, then Lanczos-3), make upright, encode. Deterministic: the same bytes in give the same bytes out.
import Foundation

/// What a mount shows in place of each original (`photofs mount --size`).
public enum VariantSpec: Hashable, Sendable, CustomStringConvertible {
    /// Long edge at most N, aspect kept, format kept; a photo already small enough is returned unchanged.
    case fit(Int)
    /// N×N centre-cropped (aspect fill) PNG.
    case square(Int)

    /// The key a variant is stored under in the catalog and the cache: "fit:1024", "square:256".
    public var description: String {
        switch self {
        case .fit(let edge): return "fit:\(edge)"
        case .square(let side): return "square:\(side)"
        }
    }

    /// Parses the `--size` value: a number ("1024") or "square:N". "original" is not a variant (nil).
    public init?(argument: String) {
        if argument.hasPrefix("square:"), let side = Int(argument.dropFirst(7)), side > 0, side <= 16384 {
            self = .square(side)
        } else if let edge = Int(argument), edge > 0, edge <= 65535 {
            self = .fit(edge)
        } else {
            return nil
        }
    }

    /// The format a variant of an original of `contentType` is served as: square thumbnails are PNG; a `fit`
    /// variant keeps the original's format, except HEIC and WebP (which photofs decodes but does not write): JPEG.
    public func servedType(forOriginal contentType: String?) -> String {
        switch self {
        case .square: return "image/png"
        case .fit: return contentType == "image/heic" || contentType == "image/webp" ? "image/jpeg" : contentType ?? "image/jpeg"
        }
    }

    public var edge: Int {
        switch self {
        case .fit(let edge), .square(let edge): return edge
        }
    }
}

public struct RenderedVariant: Sendable {
    public var data: Data
    public var contentType: String
    public var width: Int
    public var height: Int
    /// The source bytes were returned unchanged (already small enough, upright, in the right format).
    public var isUnchanged: Bool
}

public struct RenderOptions: Sendable {
    public var jpegQuality = 85
    /// Checked from the header, before any pixel is decoded: 200 megapixels is what today's largest phone
    /// sensors write at full resolution (Samsung's Ultra phones: 108 MP, 12000×9000, then 200 MP; 100 refused
    /// them, I/O errors in every sized mount); a baseline JPEG that large streams in a few MB, a progressive
    /// 4:4:4 one needs ~1.2 GB (rendered alone). Anything above is refused as a likely bomb.
    public var maxPixels = RenderOptions.defaultMaxPixels
    /// The default of `maxPixels`, which mounts, `photofs render` and desktop thumbnails start from.
    public static let defaultMaxPixels = 200_000_000
    public init(jpegQuality: Int = 85, maxPixels: Int = RenderOptions.defaultMaxPixels) {
        self.jpegQuality = jpegQuality; self.maxPixels = maxPixels
    }
}

public enum VariantRenderer {
    /// Renders `spec` from `source` (an original or a smaller rendition of it). `outputType` is the original's
    /// content type: a `fit` variant keeps the photo's format even when its pixels come from a JPEG rendition.
    public static func render(_ source: Data, contentType: String, spec: VariantSpec, outputType: String? = nil,
                              options: RenderOptions = RenderOptions()) throws -> RenderedVariant {
        let isJPEG = contentType == "image/jpeg"
        let isHEIC = contentType == "image/heic"
        let isWebP = contentType == "image/webp"
        guard isJPEG || isHEIC || isWebP || contentType == "image/png" else {
            throw ImageCodecError(message: "variants are made from JPEG, PNG, HEIC and WebP only, not \(contentType)")
        }
        let fitType = spec.servedType(forOriginal: outputType ?? contentType)
        guard fitType == "image/jpeg" || fitType == "image/png" else {
            throw ImageCodecError(message: "variants are written as JPEG or PNG only, not \(fitType)")
        }
        var image: PixelImage
        var orientation = 1
        // The decoded size the geometry is computed for, and the factor the pixels were already block-shrunk
        // by while decoding (1: not shrunk; then `image` has that size).
        var decodedSize: (width: Int, height: Int)
        var shrunkBy = 1
        if isHEIC {
            // Decoded whole and upright (libheif has no shrink-on-load; its own rotation is applied, so
            // `orientation` stays 1). Never unchanged: a HEIC is served as JPEG.
            image = try HeifDecoding.decode(source, maxPixels: options.maxPixels)
            decodedSize = (image.width, image.height)
        } else if isWebP {
            // Immich's thumbnails (250 px on the short side): decoded whole, small; WebP carries no EXIF
            // orientation Immich would not have applied already. Never unchanged: served as JPEG.
            image = try WebPDecoding.decode(source, maxPixels: options.maxPixels)
            decodedSize = (image.width, image.height)
        } else if isJPEG {
            let stored = try ImageCodec.jpegSize(source)
            guard stored.width * stored.height <= options.maxPixels else {
                throw ImageCodecError(message: "JPEG of \(stored.width)×\(stored.height) has more pixels than allowed")
            }
            orientation = ExifOrientation.read(jpeg: source)
            let target = storedTarget(stored.width, stored.height, spec, orientation: orientation)
            if case .fit = spec, target == (stored.width, stored.height), orientation == 1, fitType == contentType {
                return RenderedVariant(data: source, contentType: contentType, width: stored.width,
                                       height: stored.height, isUnchanged: true)
            }
            let denominator = dctDenominator(stored.width, stored.height, target: target)
            // Resampled as rows are decoded: the decoded image is never whole (beside a progressive JPEG's
            // coefficients, which libjpeg holds whole: 84 MiB for a 5120×2880 4:4:4 wallpaper).
            let resampled = try ImageCodec.withJPEGRows(source, scaleDenominator: denominator,
                                                        maxPixels: options.maxPixels, dcOnly: true) { rows in
                let resampled = try ImageResizer.resample(
                    sourceWidth: rows.width, sourceHeight: rows.height, channels: rows.channels,
                    geometry(rows.width, rows.height, spec, orientation: orientation)) { target, count in
                    try rows.read(into: target, count: count)
                }
                // Damage below the rows used still fails the render, as decoding it whole did.
                var scratch = [UInt8](repeating: 0, count: rows.width * rows.channels)
                try scratch.withUnsafeMutableBufferPointer { try rows.readRest(scratch: $0.baseAddress!) }
                return resampled
            }
            return try encode(ImageResizer.upright(resampled, orientation: orientation), spec: spec,
                              fitType: fitType, options: options)
        } else {
            let header = try ImageCodec.pngHeader(source)
            let stored = (width: header.width, height: header.height)
            guard stored.width * stored.height <= options.maxPixels else {
                throw ImageCodecError(message: "PNG of \(stored.width)×\(stored.height) has more pixels than allowed")
            }
            let target = storedTarget(stored.width, stored.height, spec, orientation: 1)
            if case .fit = spec, target == (stored.width, stored.height), fitType == contentType {
                return RenderedVariant(data: source, contentType: contentType, width: stored.width,
                                       height: stored.height, isUnchanged: true)
            }
            // Shrink on load: the block shrink the resampling starts with is done band by band as rows are
            // decoded, to the same bytes: a 5120×2880 RGBA wallpaper is 59 MB decoded whole, 2.4 MB shrunk by 5
            // for a 256 px thumbnail (docs/benchmarks-resize.md).
            decodedSize = stored
            let factor = geometry(stored.width, stored.height, spec, orientation: 1).blockFactor
            if factor > 1, header.decodesByBands,
               let shrunk = try ImageCodec.decodePNG(source, maxPixels: options.maxPixels, shrinkingBy: factor) {
                image = shrunk
                shrunkBy = factor
            } else {
                image = try ImageCodec.decodePNG(source, maxPixels: options.maxPixels)
            }
        }
        // Crop and reduce in the stored orientation, then turn the small result upright (cheaper than turning
        // the large decoded image; a centred crop is the same either way).
        let resampled = ImageResizer.resample(image, geometry(decodedSize.width, decodedSize.height, spec,
                                                              orientation: orientation), shrunkBy: shrunkBy)
        return try encode(ImageResizer.upright(resampled, orientation: orientation), spec: spec, fitType: fitType,
                          options: options)
    }

    /// The variant's bytes: a `fit` in the type it is served as, a square always as PNG.
    private static func encode(_ image: PixelImage, spec: VariantSpec, fitType: String,
                               options: RenderOptions) throws -> RenderedVariant {
        let encoded: Data
        let outputType: String
        switch spec {
        case .fit:
            if fitType == "image/jpeg" {
                encoded = try ImageCodec.encodeJPEG(withoutAlpha(image), quality: options.jpegQuality)
            } else {
                encoded = try ImageCodec.encodePNG(image)
            }
            outputType = fitType
        case .square:
            encoded = try ImageCodec.encodePNG(image)
            outputType = "image/png"
        }
        return RenderedVariant(data: encoded, contentType: outputType, width: image.width, height: image.height,
                               isUnchanged: false)
    }

    /// Shrink on load: the largest 1/8, 1/4, 1/2 DCT scale that still leaves twice the target, so the final
    /// Lanczos step has a factor of 2 to work with (a DCT shrink is a plain block average; going straight to the
    /// target with it scored under 30 dB PSNR against vips on fine detail).
    static func dctDenominator(_ width: Int, _ height: Int, target: (Int, Int)) -> Int {
        [8, 4, 2].first { (d: Int) -> Bool in
            (width + d - 1) / d >= 2 * target.0 && (height + d - 1) / d >= 2 * target.1
        } ?? 1
    }

    /// The most memory a render of a source of `sourceBytes` holds at once, estimated from the source's header
    /// (`prefix`: its first bytes, enough to reach the JPEG's frame header or the PNG's first image data). The
    /// source is held throughout. A JPEG streams: libjpeg's coefficient arrays for a progressive JPEG (whatever
    /// the scale), a row or a block shrink's band and its result, the Lanczos pass's ring and the result, all
    /// at once. Otherwise the larger of two phases: decoding (the decoded pixels, or a PNG's band and its
    /// shrunk result) and resampling (the decoded pixels, the block shrink's result, the Lanczos pass's ring
    /// of Float rows, the result with its upright copy and its encoding). Against heaptrack's peak heap on the
    /// bench's large wallpapers: 0.91–1.00× for JPEG, 1.01–1.32× for PNG. nil when `prefix` does not hold a
    /// readable header: the caller assumes the worst.
    public static func estimatedPeakBytes(prefix: Data, sourceBytes: Int, contentType: String, spec: VariantSpec,
                                          outputType: String? = nil, maxPixels: Int = RenderOptions().maxPixels) -> Int? {
        // A header over the limit is refused before anything is decoded: it costs its bytes, not the tens of GB
        // its header claims (which would make every other render wait for it). Sizes are at most 65,535
        // (JPEG) and 1,000,000 (libpng's default limit) a side, so the products below fit an Int; the sum
        // with `sourceBytes` (a size from the catalog) saturates.
        func withSource(_ bytes: Int) -> Int {
            let (sum, overflow) = max(0, sourceBytes).addingReportingOverflow(bytes)
            return overflow ? Int.max : sum
        }
        let decoded: (width: Int, height: Int)
        let channels: Int
        var orientation = 1
        var decoding: Int
        var shrunkOnLoad = false
        // A JPEG's rows go straight into the resampling; its coefficients (if any) are held throughout.
        var streamed = false
        var coefficients = 0
        if contentType == "image/jpeg" {
            guard let header = try? ImageCodec.jpegHeader(prefix), header.width > 0, header.height > 0 else { return nil }
            guard header.width * header.height <= maxPixels else { return withSource(0) }
            orientation = ExifOrientation.read(jpeg: prefix)
            let target = storedTarget(header.width, header.height, spec, orientation: orientation)
            if case .fit = spec, target == (header.width, header.height), orientation == 1,
               (outputType ?? contentType) == contentType {
                return withSource(0)
            }
            let d = dctDenominator(header.width, header.height, target: target)
            decoded = ((header.width + d - 1) / d, (header.height + d - 1) / d)
            channels = 3
            // Decoded a row (or a block shrink's band) at a time while resampling (`render`), beside the
            // coefficients of a progressive JPEG, which stay until the decoder closes after the last row.
            coefficients = header.coefficientBytes
            decoding = 0
            streamed = true
        } else if contentType == "image/png" {
            guard let header = try? ImageCodec.pngHeader(prefix), header.width > 0, header.height > 0 else { return nil }
            guard header.width * header.height <= maxPixels else { return withSource(0) }
            let size = (width: header.width, height: header.height)
            if case .fit = spec, storedTarget(size.width, size.height, spec, orientation: 1) == size,
               (outputType ?? contentType) == contentType {
                return withSource(0)
            }
            decoded = size
            channels = header.channels
            let factor = geometry(size.width, size.height, spec, orientation: 1).blockFactor
            shrunkOnLoad = factor > 1 && header.decodesByBands
            // A band of `factor` rows and the shrunk result, or the whole image for a file decoded whole
            // (interlaced, 16-bit, another gamma than sRGB's).
            decoding = shrunkOnLoad ? factor * size.width * channels + size.width / factor * (size.height / factor) * channels
                : size.width * size.height * channels
        } else if contentType == "image/heic" {
            // libheif reads the boxes before `mdat`; a file whose boxes do not fit the prefix is estimated by
            // the caller as the whole budget.
            guard let header = try? HeifDecoding.header(prefix) else { return nil }
            guard header.width * header.height <= maxPixels else { return withSource(0) }
            decoded = (header.width, header.height)
            channels = header.hasAlpha ? 4 : 3
            decoding = HeifDecoding.decodingBytes(header)
        } else if contentType == "image/webp" {
            guard let size = WebPDecoding.size(prefix) else { return nil }
            guard size.width * size.height <= maxPixels else { return withSource(0) }
            decoded = size
            channels = 3
            // libwebp's output, then its copy into a Swift array.
            decoding = 2 * size.width * size.height * channels
        } else {
            return withSource(0)
        }
        let geometry = geometry(decoded.width, decoded.height, spec, orientation: orientation)
        let factor = geometry.blockFactor
        let shrunk = factor > 1 ? (decoded.width / factor, decoded.height / factor) : decoded
        let output = geometry.width * geometry.height * channels
        var resampling = shrunk.0 * shrunk.1 * channels // the image the Lanczos pass reads
        if factor > 1 && !shrunkOnLoad { resampling += decoded.width * decoded.height * channels }
        // The Lanczos pass's ring: one Float row per vertical tap (6 per unit of reduction, plus the edges) and
        // the row being summed.
        let taps = Int(6 * max(1, geometry.scaleY / Double(factor))) + 3
        let ringAndOutput = taps * geometry.width * channels * MemoryLayout<Float>.size + 3 * output
        if streamed {
            let row = decoded.width * channels
            let held = factor > 1 ? factor * row + shrunk.0 * shrunk.1 * channels : row
            return withSource(coefficients + held + ringAndOutput)
        }
        resampling += ringAndOutput
        return withSource(max(decoding, resampling))
    }

    /// How the decoded image (`width`×`height` as stored, not yet upright) maps onto `spec`'s pixels.
    static func geometry(_ width: Int, _ height: Int, _ spec: VariantSpec, orientation: Int) -> ImageResizer.Resampling {
        switch spec {
        case .fit:
            let stored = storedTarget(width, height, spec, orientation: orientation)
            return .whole(sourceWidth: width, sourceHeight: height, width: stored.0, height: stored.1)
        case .square(let side):
            // Always N×N, as a file manager expects of a thumbnail: the rare photo smaller than N is enlarged.
            return .square(sourceWidth: width, sourceHeight: height, side: side)
        }
    }

    /// The smallest decoded size, in the stored (not yet upright) orientation, that `spec` can be made from.
    static func storedTarget(_ width: Int, _ height: Int, _ spec: VariantSpec, orientation: Int) -> (Int, Int) {
        switch spec {
        case .fit(let edge):
            // Long and short edges are the same upright or not, so fitting the stored shape gives the same
            // numbers, swapped.
            let size = ImageResizer.fitting(width: width, height: height, maxEdge: edge)
            return (size.width, size.height)
        case .square(let side):
            // The short side must reach `side` after the centre crop.
            let short = min(width, height)
            guard short > side else { return (width, height) }
            return (max(1, width * side / short), max(1, height * side / short))
        }
    }

    /// JPEG has no alpha: a PNG original's alpha is dropped for a JPEG variant (never happens for `fit`,
    /// which keeps the format; kept as a guard).
    private static func withoutAlpha(_ image: PixelImage) -> PixelImage {
        guard image.channels == 2 || image.channels == 4 else { return image }
        let kept = image.channels - 1
        var pixels = [UInt8]()
        pixels.reserveCapacity(image.width * image.height * kept)
        for index in stride(from: 0, to: image.pixels.count, by: image.channels) {
            pixels.append(contentsOf: image.pixels[index..<index + kept])
        }
        return PixelImage(width: image.width, height: image.height, channels: kept, pixels: pixels)
    }
}
