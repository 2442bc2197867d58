// One Immich asset (AssetResponseDto, hostile JSON) as a photo: date, region, photographer, title, bytes' identity.
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoSources

/// What a listed asset is to photofs.
public enum ImmichListedAsset: Equatable {
    /// A photo, with its favourite flag and the named people in it (id → name).
    case photo(SourcePhoto, marks: PhotoMarks, people: [String: String], regionName: String?)
    /// A video (or audio): left out and counted.
    case video
    /// In the trash (listed with `withDeleted`): removed from the library.
    case trashed(String)
    /// The user's locked folder: never shown, and removed if an earlier import had it.
    case locked(String)
    case skipped(SkippedRecord)
}

/// The mapping rules, written once: date = `localDateTime` (the wall-clock time of capture, used as it is,
/// never converted); region = `exifInfo.state`, else `country`, else none; photographer = the owner's name;
/// title = `exifInfo.description` unless blank, else `originalFileName` without its extension; the type (and
/// so the extension) from `originalMimeType`, else the file name's extension; size from `fileSizeInByte`
/// (nothing to measure); `checksum` (SHA-1) in the original's URL fragment, so changed bytes are a new cache
/// key while the request stays `GET /api/assets/{id}/original` (a fragment is never sent).
public struct ImmichAssetMapping: Sendable {
    public let server: String
    public init(server: String) { self.server = server }

    /// `ownerName` turns an owner id into the photographer's name (nil: unknown, the id is shown).
    public func map(_ value: JSONValue, ownerName: (String) -> String?) -> ImmichListedAsset {
        guard case .object(let asset) = value else {
            return .skipped(SkippedRecord(id: nil, field: "record", reason: "\(value.kindName), not an object"))
        }
        guard case .string(let id)? = asset["id"] else {
            return .skipped(SkippedRecord(id: nil, field: "id", reason: "missing or not text"))
        }
        guard ImmichAssetMapping.isUUID(id) else {
            return .skipped(SkippedRecord(id: id, field: "id", reason: "not a UUID"))
        }
        let type = asset["type"]?.stringValue ?? "IMAGE"
        if asset["isTrashed"] == .bool(true) { return .trashed(id) }
        if asset["visibility"]?.stringValue == "locked" { return .locked(id) }
        guard type == "IMAGE" else { return .video }
        let exif = asset["exifInfo"]?.objectValue ?? [:]
        let fileName = ImmichAssetMapping.text(asset["originalFileName"]) ?? ""
        guard let contentType = ImmichAssetMapping.contentType(mime: ImmichAssetMapping.text(asset["originalMimeType"]), fileName: fileName) else {
            return .skipped(SkippedRecord(id: id, field: "originalMimeType",
                                          reason: "not a JPEG, PNG, GIF, WebP or HEIC image (\(SkippedRecord.printable(ImmichAssetMapping.text(asset["originalMimeType"]) ?? fileName)))"))
        }
        let owner = ImmichAssetMapping.text(asset["ownerId"]) ?? ""
        let embeddedName = asset["owner"]?["name"].flatMap(ImmichAssetMapping.text)
        let description = ImmichAssetMapping.text(exif["description"]) ?? ""
        let title = description.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            ? ImmichAssetMapping.stem(fileName) : description
        let local = ImmichAssetMapping.text(asset["localDateTime"]).flatMap(ImmichDate.parse)
        let created = (ImmichAssetMapping.text(asset["fileCreatedAt"]) ?? ImmichAssetMapping.text(asset["createdAt"])).flatMap(ImmichDate.parse)
        let updated = ImmichAssetMapping.text(asset["updatedAt"]).flatMap(ImmichDate.parse)
        let regionName = [exif["state"], exif["country"]].lazy.compactMap { $0.flatMap(ImmichAssetMapping.text) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.first { !$0.isEmpty }
        let size = ImmichAssetMapping.integer(exif["fileSizeInByte"]).flatMap { (1...(Int64(1) << 40)).contains($0) ? $0 : nil }
        let checksum = ImmichAssetMapping.text(asset["checksum"]).flatMap(ImmichAssetMapping.checksumHex)
        let original = server + "/api/assets/\(id.lowercased())/original" + (checksum.map { "#sha1=\($0)" } ?? "")
        var renditions: [Rendition] = []
        // Immich's renditions: `thumbnail` (WebP, short side 250 px) and `preview` (JPEG, short side 1440 px),
        // never enlarged; their sizes are known from the asset's own only. Desktop thumbnails (256 px on the long
        // side) come from the WebP one whenever its long side reaches 256, a --size mount from the smallest that
        // is big enough; the original only when neither is.
        if let width = ImmichAssetMapping.integer(asset["width"]) ?? ImmichAssetMapping.integer(exif["exifImageWidth"]),
           let height = ImmichAssetMapping.integer(asset["height"]) ?? ImmichAssetMapping.integer(exif["exifImageHeight"]),
           (1...65_535).contains(width), (1...65_535).contains(height) {
            for (label, short) in [("thumbnail", 250.0), ("preview", 1440.0)] {
                let scale = min(1, short / Double(min(width, height)))
                renditions.append(Rendition(label: label, url: server + "/api/assets/\(id.lowercased())/thumbnail?size=\(label)",
                                            width: max(1, Int((Double(width) * scale).rounded())),
                                            height: max(1, Int((Double(height) * scale).rounded()))))
            }
        }
        var people: [String: String] = [:]
        for person in asset["people"]?.arrayValue ?? [] {
            guard let personID = ImmichAssetMapping.text(person["id"]), ImmichAssetMapping.isUUID(personID),
                  person["isHidden"] != .bool(true),
                  let name = ImmichAssetMapping.text(person["name"])?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty
            else { continue }
            people[personID.lowercased()] = SourceText.clean(name, limit: SourceText.nameLimit)
        }
        do {
            let photo = try SourcePhoto(
                id: id.lowercased(), owner: owner, ownerName: embeddedName ?? ownerName(owner) ?? owner, title: title,
                description: description, dateTaken: local.map { ImmichDate.text($0.wallClock) }, takenAt: local?.wallClock,
                uploadedAt: created?.instant, placeID: regionName.map(ImmichAssetMapping.placeID),
                latitude: ImmichAssetMapping.double(exif["latitude"]), longitude: ImmichAssetMapping.double(exif["longitude"]),
                originalURL: original, thumbnailURL: nil,
                renditions: renditions, visibility: .privateOnly, lastUpdate: updated?.instant,
                content: size.map { MeasuredContent(size: $0, contentType: contentType, etag: nil, lastModified: nil) },
                camera: SourceText.cameraName(make: exif["make"].flatMap(ImmichAssetMapping.text),
                                              model: exif["model"].flatMap(ImmichAssetMapping.text)))
            return .photo(photo, marks: PhotoMarks(isFavorite: asset["isFavorite"] == .bool(true), personIDs: people.keys.sorted()),
                          people: people, regionName: regionName.map { SourceText.clean($0, limit: SourceText.nameLimit) })
        } catch let skipped as SkippedRecord {
            return .skipped(skipped)
        } catch {
            return .skipped(SkippedRecord(id: id, field: "record", reason: "\(error)"))
        }
    }

    /// The place id of a region name: "immich-region-" and a hash of the name (ids must be identifiers).
    public static func placeID(_ regionName: String) -> String {
        "immich-region-" + String(StableHash.fnv1a64(regionName), radix: 16)
    }

    static func text(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    static func integer(_ value: JSONValue?) -> Int64? {
        if case .number(let number)? = value { return number.int64 }
        return nil
    }

    static func double(_ value: JSONValue?) -> Double? {
        if case .number(let number)? = value, let double = number.double, double.isFinite { return double }
        return nil
    }

    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) { guard byte == UInt8(ascii: "-") else { return false } }
            else { guard (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte) else { return false } }
        }
        return true
    }

    /// "IMG_0001.JPG" → "IMG_0001"; a name that is all extension (".jpg") stays as it is.
    static func stem(_ fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), dot > fileName.startIndex else { return fileName }
        return String(fileName[..<dot])
    }

    /// The catalog's type from the MIME type, else from the file name's extension; nil for what photofs
    /// does not show (raw files, TIFF, AVIF).
    static func contentType(mime: String?, fileName: String) -> String? {
        if let mime, ImageContentType.isAccepted(mime) { return ImageContentType.normalized(mime) }
        if mime == "image/heif" { return "image/heic" }
        let ext = fileName.split(separator: ".").last.map { $0.lowercased() } ?? ""
        let byExtension = ["jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
                           "webp": "image/webp", "heic": "image/heic", "heif": "image/heic"]
        return mime == nil || mime == "" || mime == "application/octet-stream" ? byExtension[ext] : nil
    }

    /// Immich's checksum is the SHA-1 of the bytes in base64 (28 characters); as hex for the URL. Anything
    /// else is no checksum.
    static func checksumHex(_ base64: String) -> String? {
        guard base64.utf8.count <= 64, let data = Data(base64Encoded: base64), data.count == 20 else { return nil }
        return data.map { String(format: "%02x", $0) }.joined()
    }
}

/// Immich's ISO 8601 dates ("2024-07-14T09:30:12.000Z", "…+02:00").
public enum ImmichDate {
    /// `wallClock`: the date and time as written, read as UTC (what `localDateTime` means); `instant`: the
    /// moment it names, its offset applied (Z when none is written).
    public static func parse(_ text: String) -> (wallClock: Int64, instant: Int64)? {
        let bytes = Array(text.utf8.prefix(64))
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"),
              bytes[16] == UInt8(ascii: ":"),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2),
              let wallClock = MomentRange.seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        var index = 19
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
        }
        var offset: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            guard let hours = number(index + 1, 2), hours <= 18 else { return nil }
            let minutesStart = index + 3 < bytes.count && bytes[index + 3] == UInt8(ascii: ":") ? index + 4 : index + 3
            let minutes = number(minutesStart, 2) ?? 0
            guard minutes < 60 else { return nil }
            offset = Int64(hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        }
        return (wallClock, MomentRange.clamp(wallClock - offset))
    }

    /// "2024-07-14 09:30:12", the catalog's date-taken text.
    static func text(_ seconds: Int64) -> String { MomentRange.dateTakenText(seconds) }
}
