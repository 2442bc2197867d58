// Pure pixel operations for resized variants: EXIF orientation, area-averaging reduction, centre crop.
// (The groundwork of the resize-on-demand issue; not yet wired into the mount.)
import Foundation

public enum ImageResizer {
    /// The size that fits `maxEdge`×`maxEdge` keeping the aspect ratio; never larger than the original.
    public static func fitting(width: Int, height: Int, maxEdge: Int) -> (width: Int, height: Int) {
        guard width > maxEdge || height > maxEdge, width > 0, height > 0 else { return (width, height) }
        if width >= height {
            return (maxEdge, max(1, Int((Double(height) * Double(maxEdge) / Double(width)).rounded())))
        }
        return (max(1, Int((Double(width) * Double(maxEdge) / Double(height)).rounded())), maxEdge)
    }

    /// Reduces an image to `width`×`height` by area averaging: every output pixel is the mean of the input
    /// area it covers, partial pixels weighted by their coverage (no aliasing, no ringing; deterministic).
    /// Two separable passes, horizontal then vertical, in Float. With an alpha channel (2 or 4 channels) the
    /// colours are weighted by alpha, so fully transparent pixels (often black or garbage) do not bleed into
    /// the visible edge.
    public static func reduce(_ image: PixelImage, width: Int, height: Int) -> PixelImage {
        precondition(width > 0 && height > 0 && width <= image.width && height <= image.height, "reduce only shrinks")
        if width == image.width && height == image.height { return image }
        let channels = image.channels
        let hasAlpha = channels == 2 || channels == 4
        let horizontal = Taps(from: image.width, to: width)
        let vertical = Taps(from: image.height, to: height)
        // Pass 1: each source row → `width` pixels (premultiplied by alpha when there is one).
        let rowLength = width * channels
        var rows = [Float](repeating: 0, count: image.height * rowLength)
        image.pixels.withUnsafeBufferPointer { source in
            rows.withUnsafeMutableBufferPointer { rows in
                horizontal.starts.withUnsafeBufferPointer { starts in
                    horizontal.weights.withUnsafeBufferPointer { weights in
                        var sums = [Float](repeating: 0, count: channels)
                        for y in 0..<image.height {
                            let sourceRow = y * image.width * channels
                            let targetRow = y * rowLength
                            for x in 0..<width {
                                for c in 0..<channels { sums[c] = 0 }
                                let first = starts[x], count = starts[x + width]
                                for tap in 0..<count {
                                    let weight = weights[horizontal.weightOffset(x) + tap]
                                    let at = sourceRow + (first + tap) * channels
                                    if hasAlpha {
                                        let alpha = Float(source[at + channels - 1]) * weight
                                        for c in 0..<channels - 1 { sums[c] += Float(source[at + c]) * alpha }
                                        sums[channels - 1] += alpha
                                    } else {
                                        for c in 0..<channels { sums[c] += Float(source[at + c]) * weight }
                                    }
                                }
                                for c in 0..<channels { rows[targetRow + x * channels + c] = sums[c] }
                            }
                        }
                    }
                }
            }
        }
        // Pass 2: columns, then back to 8 bits (un-premultiplied).
        var output = [UInt8](repeating: 0, count: width * height * channels)
        rows.withUnsafeBufferPointer { rows in
            output.withUnsafeMutableBufferPointer { output in
                var line = [Float](repeating: 0, count: rowLength)
                for y in 0..<height {
                    for i in 0..<rowLength { line[i] = 0 }
                    let first = vertical.starts[y], count = vertical.starts[y + height]
                    for tap in 0..<count {
                        let weight = vertical.weights[vertical.weightOffset(y) + tap]
                        let sourceRow = (first + tap) * rowLength
                        for i in 0..<rowLength { line[i] += rows[sourceRow + i] * weight }
                    }
                    let targetRow = y * rowLength
                    if hasAlpha {
                        for x in 0..<width {
                            let base = x * channels
                            let alpha = line[base + channels - 1]
                            for c in 0..<channels - 1 {
                                output[targetRow + base + c] = alpha > 0 ? clamp(line[base + c] / alpha) : 0
                            }
                            output[targetRow + base + channels - 1] = clamp(alpha)
                        }
                    } else {
                        for i in 0..<rowLength { output[targetRow + i] = clamp(line[i]) }
                    }
                }
            }
        }
        return PixelImage(width: width, height: height, channels: channels, pixels: output)
    }

    @inline(__always) private static func clamp(_ value: Float) -> UInt8 {
        UInt8(max(0, min(255, value.rounded())))
    }

    /// For each output index, the run of input indices it covers and their weights (summing to 1), flat:
    /// `starts[i]` is the first input index of output i, `starts[target + i]` how many taps it has.
    struct Taps {
        var starts: [Int]
        var weights: [Float]
        var offsets: [Int]
        func weightOffset(_ index: Int) -> Int { offsets[index] }

        init(from source: Int, to target: Int) {
            let scale = Double(source) / Double(target)
            var firsts = [Int](), counts = [Int]()
            weights = []
            offsets = []
            for index in 0..<target {
                let start = Double(index) * scale, end = Double(index + 1) * scale
                var position = Int(start.rounded(.down))
                offsets.append(weights.count)
                firsts.append(position)
                var count = 0
                while Double(position) < end && position < source {
                    let covered = min(end, Double(position + 1)) - max(start, Double(position))
                    // A sliver under 1e-9 of a pixel is rounding noise; it still gets a slot (weight 0) so
                    // the taps stay one contiguous run.
                    weights.append(Float(max(0, covered) / scale))
                    count += 1
                    position += 1
                }
                counts.append(count)
            }
            starts = firsts + counts
        }
    }

    /// The centred square of side min(width, height) (aspect fill before a square thumbnail).
    public static func centreSquare(_ image: PixelImage) -> PixelImage {
        let side = min(image.width, image.height)
        let left = (image.width - side) / 2, top = (image.height - side) / 2
        var pixels = [UInt8]()
        pixels.reserveCapacity(side * side * image.channels)
        for y in top..<top + side {
            let start = (y * image.width + left) * image.channels
            pixels.append(contentsOf: image.pixels[start..<start + side * image.channels])
        }
        return PixelImage(width: side, height: side, channels: image.channels, pixels: pixels)
    }

    /// Applies an EXIF orientation (1–8) so the result is upright. Values outside 1–8 are treated as 1.
    public static func upright(_ image: PixelImage, orientation: Int) -> PixelImage {
        guard (2...8).contains(orientation) else { return image }
        let (w, h, c) = (image.width, image.height, image.channels)
        let swaps = orientation >= 5
        let (outW, outH) = swaps ? (h, w) : (w, h)
        var output = [UInt8](repeating: 0, count: image.pixels.count)
        for y in 0..<h {
            for x in 0..<w {
                // Where source pixel (x, y) lands, per the EXIF definitions of the eight orientations.
                let (tx, ty): (Int, Int)
                switch orientation {
                case 2: (tx, ty) = (w - 1 - x, y)          // mirrored horizontally
                case 3: (tx, ty) = (w - 1 - x, h - 1 - y)  // rotated 180°
                case 4: (tx, ty) = (x, h - 1 - y)          // mirrored vertically
                case 5: (tx, ty) = (y, x)                  // transposed
                case 6: (tx, ty) = (h - 1 - y, x)          // rotated 90° clockwise to display
                case 7: (tx, ty) = (h - 1 - y, w - 1 - x)  // transversed
                default: (tx, ty) = (y, w - 1 - x)         // 8: rotated 90° counter-clockwise to display
                }
                let from = (y * w + x) * c, to = (ty * outW + tx) * c
                for channel in 0..<c { output[to + channel] = image.pixels[from + channel] }
            }
        }
        return PixelImage(width: outW, height: outH, channels: c, pixels: output)
    }
}

/// Reads the EXIF orientation tag (0x0112) from a JPEG's APP1 segment, bounds-checked throughout.
public enum ExifOrientation {
    public static func read(jpeg data: Data) -> Int {
        let bytes = [UInt8](data.prefix(128 * 1024)) // APP1 comes first; 64 KiB is its maximum size
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return 1 }
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2 else { return 1 }
            if marker == 0xE1, offset + 10 <= bytes.count, Array(bytes[offset + 4..<offset + 10]) == Array("Exif\0\0".utf8) {
                return orientation(inTIFF: Array(bytes[min(bytes.count, offset + 10)..<min(bytes.count, offset + 2 + length)]))
            }
            if marker == 0xDA { return 1 } // image data: no EXIF before it
            offset += 2 + length
        }
        return 1
    }

    static func orientation(inTIFF tiff: [UInt8]) -> Int {
        guard tiff.count >= 8 else { return 1 }
        let little = tiff[0] == 0x49 && tiff[1] == 0x49
        guard little || (tiff[0] == 0x4D && tiff[1] == 0x4D) else { return 1 }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let high = u16(little ? at + 2 : at), let low = u16(little ? at : at + 2) else { return nil }
            return high << 16 | low
        }
        guard let ifd = u32(4), let count = u16(ifd) else { return 1 }
        for entry in 0..<min(count, 512) {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return 1 }
            if tag == 0x0112, let value = u16(at + 8), (1...8).contains(value) { return value }
        }
        return 1
    }
}
