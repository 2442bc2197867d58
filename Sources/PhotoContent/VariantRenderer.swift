// Renders a smaller variant of a photo: decode (shrinking in the DCT domain when the target allows), make
// upright, reduce by area averaging, encode. Deterministic: the same bytes in give the same bytes out.
// (Groundwork of the resize-on-demand issue; the mount does not serve variants yet.)
import Foundation

public enum VariantSpec: Equatable, Sendable {
    /// Long edge at most N, aspect kept, format kept; a photo already small enough is returned unchanged.
    case fit(Int)
    /// N×N centre-cropped PNG.
    case square(Int)
}

public struct RenderedVariant: Sendable {
    public var data: Data
    public var contentType: String
    public var width: Int
    public var height: Int
}

public enum VariantRenderer {
    /// `maxPixels` (default 100 megapixels) is checked from the header, before any pixel is decoded.
    public static func render(_ original: Data, contentType: String, spec: VariantSpec, jpegQuality: Int = 85,
                              maxPixels: Int = 100_000_000) throws -> RenderedVariant {
        let isJPEG = contentType == "image/jpeg"
        guard isJPEG || contentType == "image/png" else {
            throw ImageCodecError(message: "variants are made from JPEG and PNG only, not \(contentType)")
        }
        var image: PixelImage
        var orientation = 1
        if isJPEG {
            let size = try ImageCodec.jpegSize(original)
            guard size.width * size.height <= maxPixels else {
                throw ImageCodecError(message: "JPEG of \(size.width)×\(size.height) has more pixels than allowed")
            }
            orientation = ExifOrientation.read(jpeg: original)
            let upright = orientation >= 5 ? (size.height, size.width) : (size.width, size.height)
            let target = targetSize(upright.0, upright.1, spec)
            if case .fit = spec, target == upright, orientation == 1 {
                return RenderedVariant(data: original, contentType: contentType, width: size.width, height: size.height)
            }
            // Shrink on load: the largest 1/2, 1/4, 1/8 DCT scale that still leaves at least the target.
            let denominator = [8, 4, 2].first { (d: Int) -> Bool in
                let width: Int = (upright.0 + d - 1) / d
                let height: Int = (upright.1 + d - 1) / d
                return width >= target.0 && height >= target.1
            } ?? 1
            image = try ImageCodec.decodeJPEG(original, scaleDenominator: denominator, maxPixels: maxPixels)
        } else {
            image = try ImageCodec.decodePNG(original, maxPixels: maxPixels)
            let target = targetSize(image.width, image.height, spec)
            if case .fit = spec, target == (image.width, image.height) {
                return RenderedVariant(data: original, contentType: contentType, width: image.width, height: image.height)
            }
        }
        image = ImageResizer.upright(image, orientation: orientation)
        switch spec {
        case .fit:
            let size = ImageResizer.fitting(width: image.width, height: image.height, maxEdge: targetEdge(spec))
            image = ImageResizer.reduce(image, width: size.width, height: size.height)
            let data = isJPEG ? try ImageCodec.encodeJPEG(image, quality: jpegQuality) : try ImageCodec.encodePNG(image)
            return RenderedVariant(data: data, contentType: contentType, width: image.width, height: image.height)
        case .square(let side):
            image = ImageResizer.centreSquare(image)
            let edge = min(side, image.width) // never upscale a photo smaller than the square
            image = ImageResizer.reduce(image, width: edge, height: edge)
            if image.channels == 3 { image = addOpaqueAlpha(image) }
            return RenderedVariant(data: try ImageCodec.encodePNG(image), contentType: "image/png",
                                   width: image.width, height: image.height)
        }
    }

    private static func targetEdge(_ spec: VariantSpec) -> Int {
        switch spec {
        case .fit(let edge), .square(let edge): return edge
        }
    }

    /// The decoded size needed for `spec` from an upright image of width×height.
    static func targetSize(_ width: Int, _ height: Int, _ spec: VariantSpec) -> (Int, Int) {
        switch spec {
        case .fit(let edge):
            let size = ImageResizer.fitting(width: width, height: height, maxEdge: edge)
            return (size.width, size.height)
        case .square(let side):
            // The short side must reach `side` after the centre crop.
            let short = min(width, height)
            guard short > side else { return (width, height) }
            return (max(1, width * side / short), max(1, height * side / short))
        }
    }

    private static func addOpaqueAlpha(_ image: PixelImage) -> PixelImage {
        var pixels = [UInt8]()
        pixels.reserveCapacity(image.width * image.height * 4)
        for index in stride(from: 0, to: image.pixels.count, by: 3) {
            pixels.append(contentsOf: image.pixels[index..<index + 3])
            pixels.append(255)
        }
        return PixelImage(width: image.width, height: image.height, channels: 4, pixels: pixels)
    }
}
