// libheif: a HEIC/HEIF file's primary image size and the EXIF block it carries.
import CHeif
import Foundation

public enum HeifReader {
    /// What a HEIC file says about itself: the primary image's size and its EXIF fields.
    public struct Reading: Sendable {
        public var width: Int
        public var height: Int
        public var exif: ExifFields
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        /// What the file holds is refused (`FileReadFailure.isAboutContent`), not the reading of it.
        public var isAboutContent = true
    }

    /// An EXIF block larger than this is not read (a camera writes under 64 KiB; a HEIC's block has no cap).
    /// libexif reads only a block's first 64 KiB anyway; what a larger block is read for is the warning that
    /// says so (a 1.1 MB description written by exiftool put the date behind it). 16 MiB bounds the memory.
    static let exifLimit = 16 << 20

    /// Parses the file's boxes (libheif reads what it needs, not the image data) and returns its primary
    /// image's size and EXIF. Throws for a file libheif refuses or one without a primary image.
    public static func read(path: String) throws -> Reading {
        guard let context = heif_context_alloc() else {
            throw Failure(description: "libheif could not allocate a context", isAboutContent: false)
        }
        defer { heif_context_free(context) }
        let opened = heif_context_read_from_file(context, path, nil)
        guard opened.code == heif_error_Ok else {
            // Only what libheif calls invalid input is the file's own fault: memory, a plugin, an I/O error on a
            // share, a feature this libheif lacks may pass.
            throw Failure(description: "not a readable HEIF file: \(message(opened))",
                          isAboutContent: opened.code == heif_error_Invalid_input)
        }
        var handle: OpaquePointer?
        let primary = heif_context_get_primary_image_handle(context, &handle)
        guard primary.code == heif_error_Ok, let handle else {
            throw Failure(description: "no primary image: \(message(primary))")
        }
        defer { heif_image_handle_release(handle) }
        let width = Int(heif_image_handle_get_width(handle))
        let height = Int(heif_image_handle_get_height(handle))
        guard width > 0, height > 0 else { throw Failure(description: "the primary image has no size") }
        return Reading(width: width, height: height, exif: exifFields(handle))
    }

    private static func exifFields(_ handle: OpaquePointer) -> ExifFields {
        let count = Int(heif_image_handle_get_number_of_metadata_blocks(handle, "Exif"))
        guard count > 0 else { return ExifFields() }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &ids, Int32(count)))
        guard listed > 0, let id = ids.first else { return ExifFields() }
        let size = heif_image_handle_get_metadata_size(handle, id)
        guard size > 4, size <= exifLimit else { return ExifFields() }
        var block = [UInt8](repeating: 0, count: Int(size))
        let read = heif_image_handle_get_metadata(handle, id, &block)
        guard read.code == heif_error_Ok else { return ExifFields() }
        return ExifReader.fields(from: tiffBlock(block))
    }

    /// HEIF's EXIF item starts with a 4-byte big-endian offset to the TIFF header; libexif wants the block
    /// behind JPEG's "Exif\0\0" header. An offset past the end gives an empty block.
    static func tiffBlock(_ item: [UInt8]) -> [UInt8] {
        guard item.count >= 4 else { return [] }
        let offset = item[0..<4].reduce(0) { $0 << 8 | Int($1) }
        let start = 4 + offset
        guard start < item.count else { return [] }
        return Array("Exif".utf8) + [0, 0] + item[start...]
    }

    private static func message(_ error: heif_error) -> String {
        // libheif ends some messages with a newline: one warning is one line.
        error.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "code \(error.code.rawValue)"
    }
}
