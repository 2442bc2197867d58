// libexif: the EXIF fields photofs uses, from a JPEG prefix or a bare EXIF block, every length checked.
import CExif
import Foundation

public enum ExifReader {
    /// Reads EXIF from `bytes`: a JPEG (its APP1 segment, wherever it is among the segments before the image
    /// data: `JPEGSegments`) or a block starting "Exif\0\0". A block libexif cannot parse gives empty fields:
    /// EXIF is optional, the photo still imports.
    public static func fields(from bytes: [UInt8]) -> ExifFields {
        if bytes.starts(with: [0xFF, 0xD8]) {
            return JPEGSegments.exifBlock(bytes).map { ExifReader.fields(from: Array($0)) } ?? ExifFields()
        }
        guard !bytes.isEmpty, bytes.count <= Int(UInt32.max), let data = exif_data_new() else { return ExifFields() }
        defer { exif_data_unref(data) }
        // Not FOLLOW_SPECIFICATION: it "fixes" a block by adding every mandatory tag it lacks, DateTime set to
        // the current time among them, which would date every photo without one to the import.
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        exif_data_set_option(data, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
        exif_data_set_option(data, EXIF_DATA_OPTION_DONT_CHANGE_MAKER_NOTE)
        let corruptions = bytes.withUnsafeBufferPointer { buffer in
            photofs_exif_load_counting_corruption(data, buffer.baseAddress, UInt32(buffer.count))
        }
        let order = photofs_exif_byte_order(data)
        let ifds = withUnsafeBytes(of: data.pointee.ifd) { raw in Array(raw.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)) }
        func entry(_ ifd: ExifIfd, _ tag: UInt32) -> UnsafeMutablePointer<ExifEntry>? {
            let index = Int(ifd.rawValue)
            guard index < ifds.count, let content = ifds[index] else { return nil }
            return exif_content_get_entry(content, ExifTag(rawValue: tag))
        }
        var oversized: [UInt32: Int] = [:]
        func text(_ ifd: ExifIfd, _ tag: UInt32) -> String? {
            guard let entry = entry(ifd, tag), entry.pointee.format == EXIF_FORMAT_ASCII || entry.pointee.format == EXIF_FORMAT_UNDEFINED,
                  let base = entry.pointee.data else { return nil }
            let count = min(Int(entry.pointee.size), ExifFields.textLimit)
            if Int(entry.pointee.size) > ExifFields.textLimit { oversized[tag] = Int(entry.pointee.size) }
            var raw = Array(UnsafeBufferPointer(start: base, count: count))
            if let nul = raw.firstIndex(of: 0) { raw.removeSubrange(nul...) }
            return ExifText.decoded(raw)
        }
        func integer(_ ifd: ExifIfd, _ tag: UInt32) -> Int? {
            guard let entry = entry(ifd, tag), let base = entry.pointee.data, entry.pointee.components >= 1 else { return nil }
            switch entry.pointee.format {
            case EXIF_FORMAT_SHORT where entry.pointee.size >= 2: return Int(exif_get_short(base, order))
            case EXIF_FORMAT_LONG where entry.pointee.size >= 4: return Int(exif_get_long(base, order))
            default: return nil
            }
        }
        func rationals(_ ifd: ExifIfd, _ tag: UInt32, count: Int) -> [Double]? {
            guard let entry = entry(ifd, tag), entry.pointee.format == EXIF_FORMAT_RATIONAL, let base = entry.pointee.data,
                  entry.pointee.components >= count, Int(entry.pointee.size) >= 8 * count else { return nil }
            var values: [Double] = []
            for index in 0..<count {
                let value = exif_get_rational(base + 8 * index, order)
                guard value.denominator != 0 else { return nil }
                values.append(Double(value.numerator) / Double(value.denominator))
            }
            return values
        }
        var fields = ExifFields()
        fields.dateTimeOriginal = text(EXIF_IFD_EXIF, 0x9003)
        fields.dateTimeDigitized = text(EXIF_IFD_EXIF, 0x9004)
        fields.dateTime = text(EXIF_IFD_0, 0x0132)
        fields.offsetTime = text(EXIF_IFD_EXIF, 0x9010)
        fields.offsetTimeOriginal = text(EXIF_IFD_EXIF, 0x9011)
        fields.offsetTimeDigitized = text(EXIF_IFD_EXIF, 0x9012)
        fields.gpsLatitudeRef = text(EXIF_IFD_GPS, 0x0001)
        fields.gpsLatitude = rationals(EXIF_IFD_GPS, 0x0002, count: 3)
        fields.gpsLongitudeRef = text(EXIF_IFD_GPS, 0x0003)
        fields.gpsLongitude = rationals(EXIF_IFD_GPS, 0x0004, count: 3)
        fields.artist = text(EXIF_IFD_0, 0x013B)
        fields.make = text(EXIF_IFD_0, 0x010F)
        fields.model = text(EXIF_IFD_0, 0x0110)
        fields.imageDescription = text(EXIF_IFD_0, 0x010E)
        fields.orientation = integer(EXIF_IFD_0, 0x0112)
        fields.pixelWidth = integer(EXIF_IFD_EXIF, 0xA002)
        fields.pixelHeight = integer(EXIF_IFD_EXIF, 0xA003)
        // libexif loads the first 0xfffe bytes of a bare block (a JPEG segment's most); a HEIC's block can be
        // larger (exiftool put a 1.1 MB description there, and the date and GPS behind it were lost).
        if bytes.starts(with: Array("Exif".utf8) + [0, 0]), bytes.count - 6 > 0xfffe { fields.blockBytes = bytes.count - 6 }
        let names: [UInt32: String] = [0x013B: "Artist", 0x010F: "Make", 0x0110: "Model", 0x010E: "ImageDescription"]
        // A block cut at libexif's 64 KiB points past its end by design: said once, by `blockBytes`.
        fields.corruptions = fields.blockBytes == nil ? Int(corruptions) : 0
        fields.cutTexts = oversized.compactMap { tag, size in names[tag].map { ($0, size) } }.sorted { $0.0 < $1.0 }
            .map { ExifFields.CutText(name: $0.0, bytes: $0.1) }
        return fields
    }
}
