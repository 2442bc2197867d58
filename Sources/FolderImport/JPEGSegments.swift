// The marker segments at the start of a JPEG, walked with every offset checked against the bytes at hand.

/// A JPEG's marker segments up to its image data: what the frame size (SOF) and the EXIF block (APP1) are read
/// from. Any segment may come first: ImageMagick writes a comment (COM, "Created with GIMP") before the APP1 that
/// exiftool then adds, and libexif, which gives up at the first segment that is not an APPn, read no EXIF there.
enum JPEGSegments {
    /// The first value `visit` gives for a segment (its marker, and its payload's range after the two length
    /// bytes, cut at the end of `bytes`), walking from the start of image; nil when `bytes` is not a JPEG's
    /// start, when the image data (SOS) or its end (EOI) comes first, when `bytes` ends first, or when a
    /// segment's length is impossible.
    static func first<Result>(in bytes: [UInt8], _ visit: (_ marker: UInt8, _ payload: Range<Int>) -> Result?) -> Result? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var index = 2
        while index + 4 <= bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue } // fill byte
            // Markers without a length: start of image, TEM, restart markers.
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { index += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2 else { return nil }
            let payload = (index + 4)..<min(index + 2 + length, bytes.count)
            if let result = visit(marker, payload) { return result }
            index += 2 + length
        }
        return nil
    }

    /// The EXIF block ("Exif\0\0" and the TIFF structure after it) of the first APP1 segment that holds one.
    static func exifBlock(_ bytes: [UInt8]) -> ArraySlice<UInt8>? {
        let header: [UInt8] = Array("Exif".utf8) + [0, 0]
        return first(in: bytes) { marker, payload in
            marker == 0xE1 && bytes[payload].starts(with: header) ? bytes[payload] : nil
        }
    }
}
