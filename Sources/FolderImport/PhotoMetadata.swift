// What a photo file says about itself (raw EXIF fields) and the rules that make it a photo's metadata.
import Foundation
import PhotoSources

/// The EXIF fields photofs reads, as found in the file: nothing here is trusted yet. Text is cut to
/// `ExifFields.textLimit` when read; numbers are whatever the file holds.
public struct ExifFields: Equatable, Sendable {
    /// EXIF text fields of a megabyte exist in the wild (a HEIC EXIF block has no 64 KiB cap); nothing photofs
    /// shows needs more than a title's 1,000 characters.
    public static let textLimit = 4096

    public var dateTimeOriginal: String?
    public var offsetTimeOriginal: String?
    public var dateTimeDigitized: String?
    public var offsetTimeDigitized: String?
    public var dateTime: String?
    public var offsetTime: String?
    /// Degrees, minutes, seconds as EXIF's three rationals; nil when a denominator was 0 or a value missing.
    public var gpsLatitude: [Double]?
    public var gpsLatitudeRef: String?
    public var gpsLongitude: [Double]?
    public var gpsLongitudeRef: String?
    public var artist: String?
    public var make: String?
    public var model: String?
    public var imageDescription: String?
    public var orientation: Int?
    public var pixelWidth: Int?
    public var pixelHeight: Int?
    /// Text fields longer than `textLimit`, cut to it (the import warns of each).
    public var cutTexts: [CutText] = []
    /// The size of an EXIF block larger than libexif reads (64 KiB): tags stored beyond are lost.
    public var blockBytes: Int?
    /// How many times libexif found the block corrupt (an IFD or value outside it, a loop): tags it dropped.
    public var corruptions = 0

    public struct CutText: Equatable, Sendable {
        public var name: String
        public var bytes: Int
        public init(name: String, bytes: Int) { self.name = name; self.bytes = bytes }
    }

    public init() {}
}

/// A photo's metadata as photofs imports it, every value in range.
public struct FileMetadata: Equatable, Sendable {
    public var captured: CaptureDate?
    public var latitude: Double?
    public var longitude: Double?
    public var photographer: Photographer
    /// The title and the description (the EXIF description when it is the title's source, else "").
    public var title: String
    public var description: String
    /// EXIF orientation 1–8 (1 when absent or out of range).
    public var orientation: Int
    public var pixelWidth: Int?
    public var pixelHeight: Int?
    /// EXIF Make and Model ("Canon EOS 80D"), whoever the photographer is.
    public var camera: String? = nil
}

/// Who took a photo, as EXIF says: `Artist`, else the camera, else nobody known.
public enum Photographer: Equatable, Sendable {
    case artist(String)
    case camera(String)
    case unknown

    public var name: String {
        switch self {
        case .artist(let name), .camera(let name): return name
        case .unknown: return "Unknown Photographer"
        }
    }
}

public enum PhotoMetadataRules {
    /// Descriptions cameras write by themselves: they say nothing about the photo, so the file name is the
    /// better title. Compared case-insensitively after trimming (sources: exiftool's and digiKam's lists of
    /// maker defaults, and what the cameras named here are known to write).
    public static let placeholderDescriptions: Set<String> = [
        "olympus digital camera", "sony dsc", "digital camera", "konica minolta digital camera",
        "minolta digital camera", "samsung digital camera", "samsung digimax", "kodak digital still camera",
        "nikon digital camera", "pentax digital camera", "ricoh digital camera", "hp digital camera",
        "casio digital camera", "exif_jpeg_picture", "exif jpeg picture", "lead technologies inc. v1.01",
        "default", "untitled", "image", "picture", "photo", "camera", "dsc", "dcim", "my beautiful picture",
        "jpeg image", "imagedescription", "description", "samsung camera pictures", "samsung", "huawei", "xiaomi",
        "oppo", "vivo", "lg electronics", "motorola", "sony", "canon", "nikon", "fujifilm", "leica camera ag",
    ]

    public static func metadata(exif: ExifFields, fileName: String, modifiedWallClock: Int64?, now: Int64,
                                headerSize: (width: Int, height: Int)?) -> FileMetadata {
        let (latitude, longitude) = coordinates(exif) ?? (nil, nil)
        let size = pixelSize(header: headerSize, exif: exif)
        let description = meaningfulDescription(exif.imageDescription)
        return FileMetadata(
            captured: CaptureDateRules.captureDate(exif, fileName: fileName, modifiedWallClock: modifiedWallClock, now: now),
            latitude: latitude, longitude: longitude,
            photographer: photographer(exif),
            title: description ?? titleFromFileName(fileName),
            description: description ?? "",
            orientation: orientation(exif.orientation),
            pixelWidth: size?.width, pixelHeight: size?.height,
            camera: camera(exif))
    }

    /// Text as a name may use it: control characters become spaces, runs of spaces one, ends trimmed.
    public static func cleanText(_ text: String?) -> String? {
        guard let text else { return nil }
        var out = ""
        var lastWasSpace = true
        for scalar in text.unicodeScalars.prefix(ExifFields.textLimit) {
            let isSpace = scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
                || scalar.value == 0
            if isSpace {
                if !lastWasSpace { out.unicodeScalars.append(" ") }
                lastWasSpace = true
            } else {
                out.unicodeScalars.append(scalar)
                lastWasSpace = false
            }
        }
        if out.hasSuffix(" ") { out.removeLast() }
        return out.isEmpty ? nil : out
    }

    /// The EXIF description when it says something: not blank, not a camera's placeholder.
    public static func meaningfulDescription(_ text: String?) -> String? {
        guard let clean = cleanText(text) else { return nil }
        let lowered = clean.lowercased()
        // A file name or path without spaces (DJI drones write "DCIM\100MEDIA\DJI_0001.JPG"): the file's own
        // name is the title, not "IMG_1234.JPG.jpg".
        let looksLikeFileName = !lowered.contains(" ")
            && [".jpg", ".jpeg", ".png", ".heic", ".heif", ".dng", ".tif", ".tiff"].contains { lowered.hasSuffix($0) }
        // "." and ".." name nothing (a file name cannot be either): the file name is the title, not "Untitled".
        return placeholderDescriptions.contains(lowered) || looksLikeFileName || clean == "." || clean == ".." ? nil : clean
    }

    /// The file name without its last extension ("IMG_1234.JPG" → "IMG_1234"; ".jpg" stays ".jpg").
    public static func titleFromFileName(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// `Artist`, else "Make Model" (the model alone when it already starts with the make, as "Canon EOS R5"
    /// does), else unknown. An Artist of no letter or digit ("." , "..", "-") names nobody: it made folders
    /// "Unknown" and "Unknown (a03f2d)" beside "Unknown Photographer".
    public static func photographer(_ exif: ExifFields) -> Photographer {
        if let artist = cleanText(exif.artist),
           artist.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil }) {
            return .artist(String(artist.prefix(SourceText.nameLimit)))
        }
        let camera = camera(exif)
        return camera.map { .camera(String($0.prefix(SourceText.nameLimit))) } ?? .unknown
    }

    /// EXIF's Make and Model as one name (`SourceText.cameraName`), nil when neither says anything.
    public static func camera(_ exif: ExifFields) -> String? {
        SourceText.cameraName(make: cleanText(exif.make), model: cleanText(exif.model))
    }

    /// 1–8 as EXIF defines them; anything else is 1 (as shot).
    public static func orientation(_ value: Int?) -> Int {
        guard let value, (1...8).contains(value) else { return 1 }
        return value
    }

    /// The image's own header first (it is what a decoder will see), else EXIF's PixelX/YDimension; edges
    /// outside 1–65,535 px are unknown.
    public static func pixelSize(header: (width: Int, height: Int)?, exif: ExifFields) -> (width: Int, height: Int)? {
        let valid = 1...SourceURL.maxPixelEdge
        if let header, valid.contains(header.width), valid.contains(header.height) { return header }
        if let width = exif.pixelWidth, let height = exif.pixelHeight, valid.contains(width), valid.contains(height) {
            return (width, height)
        }
        return nil
    }

    /// Decimal degrees from EXIF GPS: degrees + minutes/60 + seconds/3600, negative for S and W. nil when a
    /// part is missing, not finite, negative, or the result is out of range (|lat| > 90, |lon| > 180).
    public static func coordinates(_ exif: ExifFields) -> (Double, Double)? {
        guard let latitude = degrees(exif.gpsLatitude, reference: exif.gpsLatitudeRef, positive: "N", negative: "S", limit: 90),
              let longitude = degrees(exif.gpsLongitude, reference: exif.gpsLongitudeRef, positive: "E", negative: "W", limit: 180)
        else { return nil }
        // 0,0 is a GPS that had no fix (SourcePhoto treats it as no location too).
        if latitude == 0 && longitude == 0 { return nil }
        return (latitude, longitude)
    }

    /// `positive` and `negative`: the reference letters EXIF allows ("N"/"S", "E"/"W"); any other reference
    /// makes the position unusable (a "Z" read as east put a photo on the wrong side of the world). A missing
    /// reference reads as positive, as exiftool reads it.
    static func degrees(_ parts: [Double]?, reference: String?, positive: String, negative: String, limit: Double) -> Double? {
        // Minutes and seconds of 60 are rounding, not errors: exiftool writes 9.1° as 9 5 60.
        guard let parts, parts.count == 3, parts.allSatisfy({ $0.isFinite && $0 >= 0 }),
              parts[1] <= 60, parts[2] <= 60 else { return nil }
        let value = parts[0] + parts[1] / 60 + parts[2] / 3600
        guard value <= limit else { return nil }
        switch cleanText(reference)?.uppercased() {
        case nil, positive?: return value
        case negative?: return -value
        default: return nil
        }
    }

    /// What a file's EXIF held that the import could not use, one phrase each ("DateTimeOriginal
    /// \"2019:13:45 10:00:00\" is not a valid date, …"): each becomes a warning naming the file, and the photo imports
    /// without it (the next date in the fallback order, no place, a cut text). A camera's "no value" — blank,
    /// or a date of zeros — is not worth one.
    public static func unusableValues(_ exif: ExifFields, now: Int64) -> [String] {
        var found: [String] = []
        let latest = CaptureDateRules.latestYear(now: now)
        for (name, text) in [("DateTimeOriginal", exif.dateTimeOriginal), ("DateTimeDigitized", exif.dateTimeDigitized),
                             ("DateTime", exif.dateTime)] {
            guard let text, !isNoValue(text), CaptureDateRules.exifDate(text, latestYear: latest) == nil else { continue }
            found.append("\(name) \(shown(text)) is not a valid date, or not between 1826 and \(latest)")
        }
        for (name, text) in [("OffsetTimeOriginal", exif.offsetTimeOriginal), ("OffsetTimeDigitized", exif.offsetTimeDigitized),
                             ("OffsetTime", exif.offsetTime)] {
            guard let text, !isNoValue(text), CaptureDateRules.offsetMinutes(text) == nil else { continue }
            found.append("\(name) \(shown(text)) is not a time zone offset (-12:00 to +14:00)")
        }
        // A camera without a fix writes the references and no position, or a position of zeros: no value.
        let hasPosition = [exif.gpsLatitude, exif.gpsLongitude].contains { $0?.contains { $0 != 0 } ?? false }
        if hasPosition && coordinates(exif) == nil {
            found.append("GPS position (latitude \(shown(exif.gpsLatitude, exif.gpsLatitudeRef)), longitude "
                         + "\(shown(exif.gpsLongitude, exif.gpsLongitudeRef))) is incomplete or out of range: no place")
        }
        if exif.corruptions > 0 {
            found.append("block damaged (\(exif.corruptions) part(s) point outside it or loop): the tags stored there are lost")
        }
        if let bytes = exif.blockBytes {
            found.append("block of \(bytes) bytes: only its first 65534 are read, tags stored beyond them are lost")
        }
        for cut in exif.cutTexts {
            found.append("\(cut.name) of \(cut.bytes) bytes cut to its first \(ExifFields.textLimit)")
        }
        return found
    }

    /// Blank, or only zeros and separators ("0000:00:00 00:00:00", "  :  :     :  :  "): what cameras write
    /// for "unknown".
    private static func isNoValue(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0 == "0" || $0 == ":" || $0 == "-" || $0 == " " || $0 == "\0" || $0 == "T" }
    }

    /// A value as a warning shows it: quoted, at most 40 characters, control characters (C0 and C1, which a
    /// terminal would act on) escaped as paths are (`FolderScan.printable`).
    private static func shown(_ text: String) -> String {
        var head = ""
        head.unicodeScalars.append(contentsOf: text.unicodeScalars.prefix(40))
        return "\"" + FolderScan.printable(head) + (text.unicodeScalars.count > 40 ? "…" : "") + "\""
    }

    private static func shown(_ parts: [Double]?, _ reference: String?) -> String {
        let value = parts.map { $0.map { String(format: "%g", $0) }.joined(separator: " ") } ?? "none"
        return value + (reference.map { " " + shown($0) } ?? "")
    }
}
