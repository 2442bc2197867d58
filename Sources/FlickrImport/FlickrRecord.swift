// One record of a Flickr photo list, validated on its own: a SourcePhoto, or the reason it was skipped.
import Foundation
import PhotoCatalog
import PhotoSources

enum FlickrRecord {
    /// Size suffixes of Flickr's `url_*` extras, largest first, for when widths are missing.
    static let sizeSuffixes = ["o", "6k", "5k", "4k", "3k", "k", "h", "l", "b", "c", "z", "m", "n", "w", "s", "q", "t", "sq"]

    /// Reads one element of `photos.photo`. Wrong types are read as JSON allows (numbers for strings and
    /// back, `{"_content": …}` for text); a value that still makes no sense is dropped (a date becomes
    /// unknown, a location none, a rendition is not kept). The record is skipped only when it has no usable
    /// id, owner or image URL, or is not an object.
    static func read(_ value: JSONValue) -> Result<SourcePhoto, SkippedRecord> {
        guard case .object(let json) = value else {
            return .failure(SkippedRecord(id: nil, field: "record", reason: "not a JSON object but \(value.kindName)"))
        }
        guard let id = FlickrJSON.text(json["id"]) else {
            let reason = json["id"].map { "not a string or number but \($0.kindName)" } ?? "missing"
            return .failure(SkippedRecord(id: nil, field: "id", reason: reason))
        }
        let owner = FlickrJSON.text(json["owner"]) ?? ""
        let description = FlickrJSON.text(json["description"]) ?? ""
        let name = FlickrJSON.text(json["ownername"])?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        // Title, else the description, else "Unknown" (cs193p Virtual Vacation).
        let rawTitle = FlickrJSON.text(json["title"]) ?? ""
        let title: String
        if !rawTitle.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            title = rawTitle
        } else if !description.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            title = description
        } else {
            title = "Unknown"
        }

        var dateTaken: String?
        var takenAt: Int64?
        let takenUnknown = FlickrJSON.int64(json["datetakenunknown"]) == 1
        if !takenUnknown, let taken = FlickrJSON.text(json["datetaken"]), let seconds = FlickrJSON.dateTaken(taken) {
            dateTaken = taken
            takenAt = seconds
        }
        // Zero and negative upload dates are "unknown" (no photo was uploaded before Flickr existed); the
        // range check in SourcePhoto drops the ones past year 9999.
        let uploadedAt = FlickrJSON.int64(json["dateupload"]).flatMap { $0 > 0 ? $0 : nil }
        let place = FlickrJSON.text(json["place_id"]) ?? ""

        // Original = url_o, else the largest url_* (by pixels when widths are given, else by suffix order).
        var candidates: [(url: String, pixels: Int64, rank: Int)] = []
        var renditions: [Rendition] = []
        for (rank, suffix) in sizeSuffixes.enumerated() {
            guard let url = FlickrJSON.text(json["url_\(suffix)"]), SourceURL.isUsable(url) else { continue }
            let width = edge(json["width_\(suffix)"]), height = edge(json["height_\(suffix)"])
            // Both edges are at most 65,535, so the product fits with room to spare.
            candidates.append((url, Int64(width) * Int64(height), rank))
            if width > 0 && height > 0 {
                renditions.append(Rendition(label: suffix, url: url, width: width, height: height))
            }
        }
        let originalURL: String
        if let original = candidates.first(where: { $0.rank == 0 }) {
            originalURL = original.url
        } else if let largest = candidates.min(by: { ($0.pixels, -$0.rank) > ($1.pixels, -$1.rank) }) {
            originalURL = largest.url
        } else {
            return .failure(SkippedRecord(id: id, field: "url", reason: "no url_o or other url_* holds a usable http(s) URL"))
        }
        let square = FlickrJSON.text(json["url_sq"]).flatMap { SourceURL.isUsable($0) ? $0 : nil }
        let thumbnailURL = square ?? FlickrJSON.text(json["url_t"]).flatMap { SourceURL.isUsable($0) ? $0 : nil }

        do {
            return .success(try SourcePhoto(
                id: id, owner: owner, ownerName: name, title: title, description: description,
                dateTaken: dateTaken, takenAt: takenAt, uploadedAt: uploadedAt, placeID: place.isEmpty ? nil : place,
                latitude: FlickrJSON.double(json["latitude"]), longitude: FlickrJSON.double(json["longitude"]),
                originalURL: originalURL, thumbnailURL: thumbnailURL, renditions: renditions))
        } catch let skipped as SkippedRecord {
            return .failure(skipped)
        } catch {
            return .failure(SkippedRecord(id: id, field: "record", reason: "\(error)"))
        }
    }

    /// A width or height: 1...65,535 (JPEG's limit), else 0 ("not given"); anything beyond is a malformed
    /// answer, not a size to trust.
    private static func edge(_ value: JSONValue?) -> Int {
        guard let number = FlickrJSON.int64(value), (1...Int64(SourceURL.maxPixelEdge)).contains(number) else { return 0 }
        return Int(number)
    }
}
