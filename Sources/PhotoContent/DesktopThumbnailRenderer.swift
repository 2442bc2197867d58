// Makes freedesktop thumbnails from a photo's small rendition: decode (shrinking in the DCT domain when the
// largest size allows), fit each size, turn upright, encode as RGBA PNG. No Thumb:: chunks (the store adds them).
import Foundation

public enum DesktopThumbnailRenderer {
    /// Checked from the JPEG header before any pixel is decoded (VariantRenderer's limit: a rendition is a
    /// fraction of this, but its bytes come from the network).
    public static let maxPixels = RenderOptions.defaultMaxPixels

    /// From a JPEG (or PNG) rendition's bytes: one PNG per requested size, upright (EXIF orientation), fitted
    /// inside the size's edge keeping the aspect ratio, 8-bit RGBA, non-interlaced (the Thumbnail Managing
    /// Standard's "full alpha transparency"; a photo's alpha is opaque unless a PNG source had its own).
    ///
    /// Never enlarged: the standard gives each directory a maximum, and a file manager scales down, never up,
    /// what it finds. A size whose edge is at least the source's long edge gets the source at its own size —
    /// still written, so a reader looking only in `large/` finds it — and all such sizes share the same bytes.
    /// Smaller sizes are made from the next larger result (each step a reduction of at most 2× when the sizes
    /// follow each other), which costs a fraction of reducing the source again.
    ///
    /// Measured, normal+large per photo, median of 40 on one core of a shared 2-core machine. Optimised
    /// (swiftc -O -wmo, as a release build): 3.6 ms from the test's 320×240 JPEG, 4.6 ms from its 500×375 one;
    /// 3.3–6.0 ms from 320 and 500 px renditions of three real photos (adding x-large: 5.9–15.8 ms). Debug
    /// build, as the tests run it: 19 ms and 27 ms. Before area averaging and Huffman-only PNGs (Lanczos-3,
    /// zlib level 1 LZ77) the optimised figure was 5.8–11 ms.
    public static func pngs(from rendition: Data, sizes: [DesktopThumbnailSize]) throws -> [DesktopThumbnailSize: Data] {
        let wanted = Set(sizes).sorted { $0.edge > $1.edge }
        guard let largest = wanted.first else { return [:] }
        let decoded = try decode(rendition, largestEdge: largest.edge)
        let source = decoded.image
        let swaps = decoded.orientation >= 5
        // The source's upright size; fitting it keeps the long/short edges, so swapping back gives the size to
        // reduce to in the stored orientation.
        let upright = swaps ? (decoded.height, decoded.width) : (decoded.width, decoded.height)
        var results: [DesktopThumbnailSize: Data] = [:]
        var unscaled: Data?
        var previous = source
        for size in wanted {
            let fit = ImageResizer.fitting(width: upright.0, height: upright.1, maxEdge: size.edge)
            if fit.width == upright.0 && fit.height == upright.1 {
                if unscaled == nil {
                    unscaled = try encode(fullSizeOf: source, storedWidth: decoded.width, storedHeight: decoded.height,
                                          orientation: decoded.orientation)
                }
                results[size] = unscaled
                continue
            }
            let stored = swaps ? (fit.height, fit.width) : (fit.width, fit.height)
            let reduced = shrink(previous, width: stored.0, height: stored.1)
            results[size] = try ImageCodec.encodePNG(rgba(ImageResizer.upright(reduced, orientation: decoded.orientation)),
                                                     compression: .huffmanOnly)
            previous = reduced
        }
        return results
    }

    /// The decoded pixels (possibly DCT-shrunk), the source's own stored size, and its EXIF orientation.
    private static func decode(_ data: Data, largestEdge: Int) throws
        -> (image: PixelImage, width: Int, height: Int, orientation: Int) {
        let bytes = data.prefix(8)
        if bytes.starts(with: [0xFF, 0xD8]) {
            let stored = try ImageCodec.jpegSize(data)
            guard stored.width > 0, stored.height > 0, stored.width <= maxPixels / stored.height else {
                throw ImageCodecError(message: "JPEG of \(stored.width)×\(stored.height) is empty or has more pixels than allowed")
            }
            let target = ImageResizer.fitting(width: stored.width, height: stored.height, maxEdge: largestEdge)
            // Shrink on load by VariantRenderer's rule: the largest DCT scale still leaving twice the largest target.
            let denominator = VariantRenderer.dctDenominator(stored.width, stored.height, target: target)
            let image = try ImageCodec.decodeJPEG(data, scaleDenominator: denominator, maxPixels: maxPixels, dcOnly: true)
            return (image, stored.width, stored.height, ExifOrientation.read(jpeg: data))
        }
        if bytes.starts(with: PNGTextChunks.signature) {
            let image = try ImageCodec.decodePNG(data, maxPixels: maxPixels)
            guard image.width > 0, image.height > 0 else { throw ImageCodecError(message: "PNG without pixels") }
            return (image, image.width, image.height, 1)
        }
        throw ImageCodecError(message: "a thumbnail is made from a JPEG or PNG rendition, not these bytes")
    }

    /// The source at its own size: only ever reached undecimated (a size at least as large as the source is
    /// the largest wanted, and no DCT scale leaves twice the source), so no resampling is needed.
    private static func encode(fullSizeOf image: PixelImage, storedWidth: Int, storedHeight: Int,
                               orientation: Int) throws -> Data {
        let whole = image.width == storedWidth && image.height == storedHeight
            ? image : ImageResizer.resize(image, width: storedWidth, height: storedHeight)
        return try ImageCodec.encodePNG(rgba(ImageResizer.upright(whole, orientation: orientation)), compression: .huffmanOnly)
    }

    /// Area averaging: at the 1–4× reductions left after the DCT shrink it took 0.7–1.4 ms for a 256 px
    /// thumbnail of a real photo against 1.4–3.7 ms for Lanczos-3, and a thumbnail is looked at at its own size
    /// or smaller, where Lanczos's extra sharpness hardly shows (GNOME's own thumbnailer scales bilinearly).
    /// Only ever shrinks; `resize` covers the case that cannot happen (a target larger than the image).
    private static func shrink(_ image: PixelImage, width: Int, height: Int) -> PixelImage {
        guard width <= image.width, height <= image.height, width > 0, height > 0 else {
            return ImageResizer.resize(image, width: max(1, width), height: max(1, height))
        }
        return ImageResizer.reduce(image, width: width, height: height, filter: .box)
    }

    /// Gray, gray+alpha or RGB widened to RGBA (opaque where there was no alpha).
    static func rgba(_ image: PixelImage) -> PixelImage {
        let channels = image.channels
        guard channels != 4 else { return image }
        let count = image.width * image.height
        var pixels = [UInt8](repeating: 255, count: count * 4)
        image.pixels.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { target in
                for index in 0..<count {
                    let from = index * channels, to = index * 4
                    switch channels {
                    case 1:
                        target[to] = source[from]; target[to + 1] = source[from]; target[to + 2] = source[from]
                    case 2:
                        target[to] = source[from]; target[to + 1] = source[from]; target[to + 2] = source[from]
                        target[to + 3] = source[from + 1]
                    default:
                        target[to] = source[from]; target[to + 1] = source[from + 1]; target[to + 2] = source[from + 2]
                    }
                }
            }
        }
        return PixelImage(width: image.width, height: image.height, channels: 4, pixels: pixels)
    }
}
