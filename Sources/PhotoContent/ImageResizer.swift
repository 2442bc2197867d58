// Pure pixel operations for resized variants: EXIF orientation, block shrink, Lanczos-3 reduction, centre crop.
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

    /// How one reduction pass weighs the source pixels.
    public enum ReductionFilter: Sendable {
        /// Area averaging: every output pixel is the mean of the input area it covers, partial pixels weighted
        /// by coverage. No ringing, a little soft.
        case box
        /// Lanczos-3 scaled to the reduction: sharper (what vips and ImageMagick use); costs 6 taps per unit
        /// of reduction, so `resize` box-shrinks first and leaves it a factor of 2 to 4.
        case lanczos3
    }

    /// Scales the whole image to `width`×`height` (a `fit` variant) the way libvips does: an integer block
    /// shrink when the reduction is 4× or more, then Lanczos-3 for the rest.
    public static func resize(_ image: PixelImage, width: Int, height: Int) -> PixelImage {
        resample(image, .whole(sourceWidth: image.width, sourceHeight: image.height, width: width, height: height))
    }

    /// An N×N thumbnail, aspect fill (see `Resampling.square`). A photo smaller than `side` is enlarged.
    public static func squareThumbnail(_ image: PixelImage, side: Int) -> PixelImage {
        resample(image, .square(sourceWidth: image.width, sourceHeight: image.height, side: side))
    }

    /// Where a resampled image's pixels come from: output pixel (x, y) shows the source area from
    /// (left + x·scaleX, top + y·scaleY), scaleX × scaleY source pixels large. Computed from the source's
    /// size alone, so a decoder can learn from the header how far it may shrink while it decodes.
    public struct Resampling: Equatable, Sendable {
        public var width: Int, height: Int
        public var left: Double, top: Double, scaleX: Double, scaleY: Double

        /// The whole source scaled to `width`×`height`.
        public static func whole(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) -> Resampling {
            Resampling(width: width, height: height, left: 0, top: 0, scaleX: Double(sourceWidth) / Double(width),
                       scaleY: Double(sourceHeight) / Double(height))
        }

        /// An N×N thumbnail: the source scaled so its short side is `side`, then the centred square cut out at
        /// whole output pixels — vipsthumbnail's geometry, so its output and ours line up pixel for pixel
        /// (cropping the source first put ours up to half a pixel off, which cost ~4 dB PSNR on fine texture).
        /// Only the kept pixels are computed.
        public static func square(sourceWidth: Int, sourceHeight: Int, side: Int) -> Resampling {
            let short = Double(min(sourceWidth, sourceHeight))
            let scaledWidth = max(side, Int((Double(sourceWidth) * Double(side) / short).rounded()))
            let scaledHeight = max(side, Int((Double(sourceHeight) * Double(side) / short).rounded()))
            let scaleX = Double(sourceWidth) / Double(scaledWidth), scaleY = Double(sourceHeight) / Double(scaledHeight)
            return Resampling(width: side, height: side, left: Double((scaledWidth - side) / 2) * scaleX,
                              top: Double((scaledHeight - side) / 2) * scaleY, scaleX: scaleX, scaleY: scaleY)
        }

        /// The whole factor the source is block-shrunk by before Lanczos-3 (1: not at all). A reduction of
        /// more than 4× is box-shrunk first, leaving 2–4× (6 Lanczos taps per unit of reduction would cost 60
        /// taps a pixel at 10×). Against vipsthumbnail on 85 wallpapers, 256 px thumbnails scored a median
        /// 52 dB PSNR, none under 30 (area averaging alone: 41 dB, six under 30 on fine line art); see
        /// docs/benchmarks-resize.md.
        public var blockFactor: Int {
            let factor = Int(min(scaleX, scaleY) / 2)
            return factor >= 2 ? factor : 1
        }
    }

    /// Resamples `image` to `geometry`, which was computed for the source before it was block-shrunk by
    /// `shrunkBy` (1: `image` is the source itself, shrunk here if the geometry calls for it; otherwise
    /// `shrunkBy` must be the geometry's `blockFactor`, as a shrink-on-load decoder applied it).
    public static func resample(_ image: PixelImage, _ geometry: Resampling, shrunkBy: Int = 1) -> PixelImage {
        precondition(shrunkBy == 1 || shrunkBy == geometry.blockFactor, "shrunk by another factor than the geometry's")
        let factor = geometry.blockFactor
        let shrunk = shrunkBy == 1 && factor > 1 ? blockShrink(image, by: factor) : image
        let k = Double(factor)
        return reduce(shrunk, width: geometry.width, height: geometry.height, left: geometry.left / k,
                      top: geometry.top / k, scaleX: geometry.scaleX / k, scaleY: geometry.scaleY / k, filter: .lanczos3)
    }

    /// `resample` of a source whose rows arrive in order from a decoder (`read(target, count)` writes the next
    /// `count` rows), to the same bytes, without ever holding the whole decoded source: the block shrink takes
    /// `blockFactor` rows at a time, and with no block shrink the Lanczos pass takes each row as it needs it.
    /// A 5120×2880 JPEG decoded at 1/2 for a 1024 px variant is 10.5 MiB whole; this holds one row of it.
    /// Rows below the last one used are not read (the caller may read them to check the data's end).
    public static func resample(sourceWidth: Int, sourceHeight: Int, channels: Int, _ geometry: Resampling,
                                read: (UnsafeMutablePointer<UInt8>, Int) throws -> Void) throws -> PixelImage {
        let rowLength = sourceWidth * channels
        let factor = geometry.blockFactor
        if factor > 1 {
            // An image narrower or shorter than a block is shrunk whole, as `resample` does (to nothing).
            guard sourceWidth >= factor, sourceHeight >= factor else {
                var pixels = [UInt8](repeating: 0, count: rowLength * sourceHeight)
                try pixels.withUnsafeMutableBufferPointer { try read($0.baseAddress!, sourceHeight) }
                return resample(PixelImage(width: sourceWidth, height: sourceHeight, channels: channels, pixels: pixels),
                                geometry)
            }
            var shrinker = BlockShrinker(sourceWidth: sourceWidth, factor: factor, channels: channels)
            let height = sourceHeight / factor, shrunkRow = shrinker.width * channels
            var shrunk = [UInt8](repeating: 0, count: shrunkRow * height)
            var band = [UInt8](repeating: 0, count: factor * rowLength)
            try band.withUnsafeMutableBufferPointer { band in
                try shrunk.withUnsafeMutableBufferPointer { shrunk in
                    for y in 0..<height {
                        try read(band.baseAddress!, factor)
                        shrinker.shrink(rows: band.baseAddress!, into: shrunk.baseAddress! + y * shrunkRow)
                    }
                }
            }
            return resample(PixelImage(width: shrinker.width, height: height, channels: channels, pixels: shrunk),
                            geometry, shrunkBy: factor)
        }
        var row = [UInt8](repeating: 0, count: rowLength)
        var failure: Error?
        let result = row.withUnsafeMutableBufferPointer { row -> PixelImage in
            // The source row in `row`, and the next one the decoder will give.
            var held = -1
            return reduce(sourceWidth: sourceWidth, sourceHeight: sourceHeight, channels: channels,
                          width: geometry.width, height: geometry.height, left: geometry.left, top: geometry.top,
                          scaleX: geometry.scaleX, scaleY: geometry.scaleY, filter: .lanczos3) { wanted in
                // `reduce` asks in increasing order; after a failure the rest is never read (the result is
                // thrown away).
                while held < wanted && failure == nil {
                    do { try read(row.baseAddress!, 1) } catch { failure = error }
                    held += 1
                }
                return UnsafePointer(row.baseAddress!)
            }
        }
        if let failure { throw failure }
        return result
    }

    /// Averages every `factor`×`factor` block into one pixel (the last partial row and column of blocks are
    /// left out, ≤ factor−1 source pixels, as vips does), in integers, one output row at a time: a 15 MP PNG
    /// shrunk this way needs no more than its result, where the Float box pass held 47 MB of rows.
    static func blockShrink(_ image: PixelImage, by factor: Int) -> PixelImage {
        var shrinker = BlockShrinker(sourceWidth: image.width, factor: factor, channels: image.channels)
        let height = image.height / factor, rowLength = shrinker.width * image.channels
        var output = [UInt8](repeating: 0, count: rowLength * height)
        image.pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { output in
                for y in 0..<height {
                    shrinker.shrink(rows: source.baseAddress! + y * factor * image.width * image.channels,
                                    into: output.baseAddress! + y * rowLength)
                }
            }
        }
        return PixelImage(width: shrinker.width, height: height, channels: image.channels, pixels: output)
    }

    /// One step of `blockShrink`: `factor` consecutive source rows become one output row. A decoder that
    /// hands out rows (PNG) feeds it as it goes and never holds the whole image.
    public struct BlockShrinker {
        public let sourceWidth: Int, factor: Int, channels: Int
        /// Output pixels per row: the last partial block of a row is left out.
        public var width: Int { sourceWidth / factor }
        private var sums: [UInt64]

        public init(sourceWidth: Int, factor: Int, channels: Int) {
            precondition(factor >= 1 && (1...4).contains(channels), "a block of at least 1 pixel, 1 to 4 channels")
            self.sourceWidth = sourceWidth; self.factor = factor; self.channels = channels
            sums = [UInt64](repeating: 0, count: sourceWidth / factor * channels)
        }

        /// Reads `factor` rows of `sourceWidth` pixels from `rows` and writes `width` pixels to `target`.
        public mutating func shrink(rows: UnsafePointer<UInt8>, into target: UnsafeMutablePointer<UInt8>) {
            let width = self.width, channels = self.channels, factor = self.factor
            let alpha = channels == 2 || channels == 4 ? channels - 1 : -1
            let area = UInt64(factor * factor)
            sums.withUnsafeMutableBufferPointer { sums in
                for i in 0..<sums.count { sums[i] = 0 }
                for row in 0..<factor {
                    let sourceRow = rows + row * sourceWidth * channels
                    for x in 0..<width {
                        var at = sourceRow + x * factor * channels
                        let sum = sums.baseAddress! + x * channels
                        for _ in 0..<factor {
                            // Colours weighted by alpha (premultiplied), as in `reduce`.
                            let weight = alpha >= 0 ? UInt64(at[alpha]) : 1
                            for c in 0..<channels { sum[c] += UInt64(at[c]) * (c == alpha ? 1 : weight) }
                            at += channels
                        }
                    }
                }
                for x in 0..<width {
                    let sum = sums.baseAddress! + x * channels
                    let coverage = alpha >= 0 ? sum[alpha] : area
                    for c in 0..<channels {
                        let value = c == alpha ? (sum[c] + area / 2) / area
                            : coverage == 0 ? 0 : (sum[c] + coverage / 2) / coverage
                        target[x * channels + c] = UInt8(min(255, value))
                    }
                }
            }
        }
    }

    /// Shrinks the whole image to `width`×`height` in one separable pass of `filter`.
    public static func reduce(_ image: PixelImage, width: Int, height: Int, filter: ReductionFilter = .box) -> PixelImage {
        precondition(width > 0 && height > 0 && width <= image.width && height <= image.height, "reduce only shrinks")
        if width == image.width && height == image.height { return image }
        return reduce(image, width: width, height: height, left: 0, top: 0,
                      scaleX: Double(image.width) / Double(width), scaleY: Double(image.height) / Double(height),
                      filter: filter)
    }

    /// One separable pass, horizontal then vertical, in Float (deterministic: the same input gives the same
    /// bytes); the geometry is `resample`'s. With an alpha channel (2 or 4 channels) colours are weighted by
    /// alpha, so fully transparent pixels (often black or garbage) do not bleed into the visible edge. Source
    /// rows go through the horizontal pass as the vertical taps reach them, into a ring of as many rows as one
    /// output row's taps: a 3840×2400 RGBA wallpaper fitted to 1024 held 39 MB of Float rows when every
    /// used row was kept, and holds 0.4 MB this way (same bytes out).
    static func reduce(_ image: PixelImage, width: Int, height: Int, left: Double, top: Double, scaleX: Double,
                       scaleY: Double, filter: ReductionFilter) -> PixelImage {
        image.pixels.withUnsafeBufferPointer { source in
            reduce(sourceWidth: image.width, sourceHeight: image.height, channels: image.channels, width: width,
                   height: height, left: left, top: top, scaleX: scaleX, scaleY: scaleY, filter: filter) { row in
                source.baseAddress! + row * image.width * image.channels
            }
        }
    }

    /// `reduce` of a source whose rows `sourceRow` gives: each row is asked for once, in increasing order
    /// (rows the crop leaves out are skipped), and the pointer is read before the next is asked for, so a
    /// decoder can hand out its rows one at a time from a single row of memory.
    static func reduce(sourceWidth: Int, sourceHeight: Int, channels: Int, width: Int, height: Int, left: Double,
                       top: Double, scaleX: Double, scaleY: Double, filter: ReductionFilter,
                       sourceRow: (Int) -> UnsafePointer<UInt8>) -> PixelImage {
        let alpha = channels == 2 || channels == 4 ? channels - 1 : -1
        let horizontal = Taps(source: sourceWidth, target: width, start: left, scale: scaleX, filter: filter)
        let vertical = Taps(source: sourceHeight, target: height, start: top, scale: scaleY, filter: filter)
        let rowLength = width * channels
        let ringRows = max(1, vertical.counts.max() ?? 1)
        var ring = [Float](repeating: 0, count: ringRows * rowLength)
        // The source row each ring slot holds (-1: none yet).
        var held = [Int](repeating: -1, count: ringRows)
        var output = [UInt8](repeating: 0, count: width * height * channels)
        do {
            ring.withUnsafeMutableBufferPointer { ring in
                horizontal.withPointers { firsts, counts, offsets, weights in
                    let pass = HorizontalPass(width: width, firsts: firsts, counts: counts, offsets: offsets,
                                              weights: weights)
                    /// Source row `row` through the horizontal pass (premultiplied by alpha when there is one),
                    /// where the ring keeps it; computed once while it stays there.
                    func horizontalRow(_ row: Int) -> UnsafePointer<Float> {
                        let slot = row % ringRows, target = ring.baseAddress! + slot * rowLength
                        guard held[slot] != row else { return UnsafePointer(target) }
                        held[slot] = row
                        let source = sourceRow(row)
                        // One call per channel layout, so each loop is compiled for a constant channel count
                        // (the generic loop's per-tap branches cost a third of a 1024 px render).
                        switch (channels, alpha >= 0) {
                        case (1, _): pass.run(source: source, into: target, channels: 1, hasAlpha: false)
                        case (2, _): pass.run(source: source, into: target, channels: 2, hasAlpha: true)
                        case (3, _): pass.run(source: source, into: target, channels: 3, hasAlpha: false)
                        default: pass.run(source: source, into: target, channels: 4, hasAlpha: true)
                        }
                        return UnsafePointer(target)
                    }
                    // Vertical pass, then back to 8 bits (un-premultiplied).
                    output.withUnsafeMutableBufferPointer { output in
                        vertical.withPointers { firsts, counts, offsets, weights in
                            var line = [Float](repeating: 0, count: rowLength)
                            line.withUnsafeMutableBufferPointer { line in
                                for y in 0..<height {
                                    for i in 0..<rowLength { line[i] = 0 }
                                    for tap in 0..<counts[y] {
                                        let weight = weights[offsets[y] + tap]
                                        let sourceRow = horizontalRow(firsts[y] + tap)
                                        for i in 0..<rowLength { line[i] += sourceRow[i] * weight }
                                    }
                                    let targetRow = output.baseAddress! + y * rowLength
                                    if alpha >= 0 {
                                        for x in 0..<width {
                                            let base = x * channels
                                            let coverage = line[base + alpha]
                                            for c in 0..<channels where c != alpha {
                                                targetRow[base + c] = coverage > 0 ? clamp(line[base + c] / coverage) : 0
                                            }
                                            targetRow[base + alpha] = clamp(coverage)
                                        }
                                    } else {
                                        for i in 0..<rowLength { targetRow[i] = clamp(line[i]) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return PixelImage(width: width, height: height, channels: channels, pixels: output)
    }

    /// The horizontal pass over raw pointers: a source row becomes `width` Float pixels, colours premultiplied
    /// by alpha when there is one (the alpha itself is the plain weighted mean).
    struct HorizontalPass {
        let width: Int
        let firsts: UnsafePointer<Int>, counts: UnsafePointer<Int>, offsets: UnsafePointer<Int>
        let weights: UnsafePointer<Float>

        @inline(__always) func run(source sourceRow: UnsafePointer<UInt8>, into rowTarget: UnsafeMutablePointer<Float>,
                                   channels: Int, hasAlpha: Bool) {
            let colours = hasAlpha ? channels - 1 : channels
            var target = rowTarget
            for x in 0..<width {
                var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
                var at = sourceRow + firsts[x] * channels
                var weight = weights + offsets[x]
                for _ in 0..<counts[x] {
                    let w = weight.pointee
                    let a = hasAlpha ? Float(at[colours]) * w : w
                    sums.0 += Float(at[0]) * a
                    if colours > 1 { sums.1 += Float(at[1]) * a; sums.2 += Float(at[2]) * a }
                    if hasAlpha { sums.3 += Float(at[colours]) * w }
                    at += channels
                    weight += 1
                }
                target[0] = sums.0
                if colours > 1 { target[1] = sums.1; target[2] = sums.2 }
                if hasAlpha { target[colours] = sums.3 }
                target += channels
            }
        }
    }

    @inline(__always) private static func clamp(_ value: Float) -> UInt8 {
        UInt8(max(0, min(255, value.rounded())))
    }

    /// For each output index, the contiguous run of input indices it draws from and their weights (summing
    /// to 1), flat: run i starts at input `firsts[i]`, has `counts[i]` taps, whose weights start at
    /// `offsets[i]` in `weights`.
    struct Taps {
        var firsts: [Int] = []
        var counts: [Int] = []
        var offsets: [Int] = []
        var weights: [Float] = []

        /// Output i draws on the source span [start + i·scale, start + (i+1)·scale).
        init(source: Int, target: Int, start: Double, scale: Double, filter: ReductionFilter) {
            for index in 0..<target {
                var run: [Double] = []
                var first: Int
                switch filter {
                case .box:
                    let from = start + Double(index) * scale, to = from + scale
                    first = min(source - 1, Int(from.rounded(.down)))
                    var position = first
                    while Double(position) < to && position < source {
                        // A sliver of rounding noise still gets its slot (weight ~0): the run stays contiguous.
                        run.append(max(0, min(to, Double(position + 1)) - max(from, Double(position))))
                        position += 1
                    }
                case .lanczos3:
                    // Pixel j covers [j, j+1). Enlarging (scale < 1) uses the plain 3-lobe kernel.
                    let centre = start + (Double(index) + 0.5) * scale, stretch = max(1, scale), support = 3 * stretch
                    first = min(source - 1, max(0, Int((centre - support).rounded(.down))))
                    let last = max(first, min(source - 1, Int((centre + support).rounded(.up))))
                    for position in first...last {
                        run.append(lanczos3((Double(position) + 0.5 - centre) / stretch))
                    }
                }
                // Taps beyond an edge are left out and the rest renormalised (edges are not darkened).
                let total = run.reduce(0, +)
                firsts.append(first)
                counts.append(run.count)
                offsets.append(weights.count)
                weights += run.map { Float(total != 0 ? $0 / total : 1 / Double(run.count)) }
            }
        }

        func withPointers<R>(_ body: (UnsafePointer<Int>, UnsafePointer<Int>, UnsafePointer<Int>, UnsafePointer<Float>) -> R) -> R {
            firsts.withUnsafeBufferPointer { f in
                counts.withUnsafeBufferPointer { c in
                    offsets.withUnsafeBufferPointer { o in
                        weights.withUnsafeBufferPointer { w in body(f.baseAddress!, c.baseAddress!, o.baseAddress!, w.baseAddress!) }
                    }
                }
            }
        }

        private func lanczos3(_ x: Double) -> Double {
            if x == 0 { return 1 }
            guard abs(x) < 3 else { return 0 }
            let px = Double.pi * x
            return 3 * sin(px) * sin(px / 3) / (px * px)
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
