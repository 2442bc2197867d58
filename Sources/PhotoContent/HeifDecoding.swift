// HEIC/HEIF pixels through libheif: the primary image as displayed (irot/imir applied), as a PixelImage.
import CHeif
import Foundation

/// libheif's decoder for the renderer. libheif applies the file's own transformations (`irot`, `imir`, `clap`)
/// by default, so the pixels come out upright: a HEIC's EXIF orientation describes the stored pixels and must
/// not be applied again (HEIF's rule; iPhones write orientation 1 into the EXIF of rotated files for that
/// reason, others copy the camera's value).
public enum HeifDecoding {
    public struct Header: Sendable {
        /// The displayed size (after rotation), which is what the decoded image has.
        public var width: Int
        public var height: Int
        public var hasAlpha: Bool
        /// 8, or 10/12 for HDR files (decoded to 8 bits; their planes take twice the bytes meanwhile).
        public var lumaBits: Int
    }

    /// The primary image's header from the file's boxes (no pixel is decoded). Throws for anything libheif
    /// refuses, a file without a primary image, or a size that is zero.
    public static func header(_ data: Data) throws -> Header {
        try withPrimaryImage(data) { handle in try header(of: handle) }
    }

    /// Decodes the primary image to 8-bit RGB (RGBA when it has alpha), refusing more than `maxPixels`
    /// before anything is decoded.
    public static func decode(_ data: Data, maxPixels: Int) throws -> PixelImage {
        try withPrimaryImage(data) { handle in
            let header = try header(of: handle)
            guard header.width * header.height <= maxPixels else {
                throw ImageCodecError(message: "HEIC of \(header.width)×\(header.height) has more pixels than allowed")
            }
            guard let options = heif_decoding_options_alloc() else {
                throw ImageCodecError(message: "libheif could not allocate decoding options")
            }
            defer { heif_decoding_options_free(options) }
            options.pointee.convert_hdr_to_8bit = 1
            let channels = header.hasAlpha ? 4 : 3
            var decoded: OpaquePointer?
            let result = heif_decode_image(handle, &decoded, heif_colorspace_RGB,
                                           header.hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB,
                                           options)
            guard result.code == heif_error_Ok, let decoded else {
                throw ImageCodecError(message: "HEIC cannot be decoded: \(message(result))")
            }
            defer { heif_image_release(decoded) }
            let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
            let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
            var stride: Int32 = 0
            guard width > 0, height > 0, width * height <= maxPixels,
                  let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride),
                  Int(stride) >= width * channels else {
                throw ImageCodecError(message: "HEIC decoded to no usable pixels")
            }
            let rowBytes = width * channels
            var pixels = [UInt8](repeating: 0, count: rowBytes * height)
            pixels.withUnsafeMutableBytes { out in
                for row in 0..<height {
                    (out.baseAddress! + row * rowBytes).copyMemory(from: plane + row * Int(stride), byteCount: rowBytes)
                }
            }
            return PixelImage(width: width, height: height, channels: channels, pixels: pixels)
        }
    }

    /// What decoding holds at its peak besides the source: libheif's YCbCr planes (4:4:4 at worst, two bytes
    /// a sample above 8 bits) while it converts them to interleaved RGB, then that RGB image and the copy made
    /// here. HEVC tiles are decoded into the planes one at a time (a 12 MP iPhone photo is 48 tiles of 512²),
    /// so the decoder's own frames are small beside them.
    public static func decodingBytes(_ header: Header) -> Int {
        let pixels = header.width * header.height
        let channels = header.hasAlpha ? 4 : 3
        let planes = pixels * (header.hasAlpha ? 4 : 3) * (header.lumaBits > 8 ? 2 : 1)
        return max(planes + pixels * channels, 2 * pixels * channels)
    }

    private static func header(of handle: OpaquePointer) throws -> Header {
        let width = Int(heif_image_handle_get_width(handle))
        let height = Int(heif_image_handle_get_height(handle))
        guard width > 0, height > 0 else { throw ImageCodecError(message: "HEIC primary image has no size") }
        return Header(width: width, height: height, hasAlpha: heif_image_handle_has_alpha_channel(handle) != 0,
                      lumaBits: Int(heif_image_handle_get_luma_bits_per_pixel(handle)))
    }

    /// Runs `body` with the primary image of the HEIF in `data` (read in place, not copied).
    private static func withPrimaryImage<T>(_ data: Data, _ body: (OpaquePointer) throws -> T) throws -> T {
        guard let context = heif_context_alloc() else { throw ImageCodecError(message: "libheif could not allocate a context") }
        defer { heif_context_free(context) }
        // Tiles in the calling thread: the render pool already runs one render per core, and libheif's own
        // tile threads would multiply that.
        heif_context_set_max_decoding_threads(context, 0)
        return try data.withUnsafeBytes { bytes -> T in
            guard let base = bytes.baseAddress, bytes.count > 0 else { throw ImageCodecError(message: "empty HEIC") }
            let read = heif_context_read_from_memory_without_copy(context, base, bytes.count, nil)
            guard read.code == heif_error_Ok else { throw ImageCodecError(message: "not a readable HEIF file: \(message(read))") }
            var handle: OpaquePointer?
            let primary = heif_context_get_primary_image_handle(context, &handle)
            guard primary.code == heif_error_Ok, let handle else {
                throw ImageCodecError(message: "HEIF without a primary image: \(message(primary))")
            }
            defer { heif_image_handle_release(handle) }
            return try body(handle)
        }
    }

    private static func message(_ error: heif_error) -> String {
        error.message.map { String(cString: $0) } ?? "code \(error.code.rawValue)"
    }
}
