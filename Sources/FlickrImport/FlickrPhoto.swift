// One photo of a Flickr photo list, read from its JSON with the import rules for titles, owners and URLs.
import Foundation
import PhotoCatalog

struct FlickrPhoto: Equatable {
    var id: String
    var owner: String
    var ownerName: String
    var title: String
    var description: String
    var dateTaken: String?
    var takenAt: Int64?
    var uploadedAt: Int64?
    var placeID: String?
    var latitude: Double?
    var longitude: Double?
    var originalURL: String
    var thumbnailURL: String?
    /// Every `url_*` that came with its width and height (sized mounts render from the smallest that is big
    /// enough). A URL without dimensions cannot be chosen by size, so it is not kept.
    var renditions: [Rendition] = []

    /// Size suffixes of Flickr's `url_*` extras, largest first, for when widths are missing.
    static let sizeSuffixes = ["o", "6k", "5k", "4k", "3k", "k", "h", "l", "b", "c", "z", "m", "n", "w", "s", "q", "t", "sq"]

    /// Reads one element of `photos.photo`. Returns nil (the caller counts it as skipped) when the photo has
    /// no id or no image URL at all.
    init?(json: [String: Any]) {
        guard let id = FlickrJSON.text(json["id"]), !id.isEmpty else { return nil }
        self.id = id
        owner = FlickrJSON.text(json["owner"]).flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
        let name = FlickrJSON.text(json["ownername"])?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        ownerName = name.isEmpty ? owner : name
        description = FlickrJSON.text(json["description"]) ?? ""
        // Title, else the description, else "Unknown" (cs193p Virtual Vacation).
        let rawTitle = FlickrJSON.text(json["title"]) ?? ""
        if !rawTitle.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            title = rawTitle
        } else if !description.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            title = description
        } else {
            title = "Unknown"
        }
        let takenUnknown = FlickrJSON.text(json["datetakenunknown"]) == "1"
        if let taken = FlickrJSON.text(json["datetaken"]), !takenUnknown, let seconds = FlickrJSON.dateTaken(taken) {
            dateTaken = taken
            takenAt = seconds
        }
        uploadedAt = FlickrJSON.text(json["dateupload"]).flatMap { Int64($0) }
        let place = FlickrJSON.text(json["place_id"]) ?? ""
        placeID = place.isEmpty ? nil : place
        let lat = FlickrJSON.double(json["latitude"]), lon = FlickrJSON.double(json["longitude"])
        // Flickr sends 0/0 for "no location".
        if let lat, let lon, lat != 0 || lon != 0 { latitude = lat; longitude = lon }

        // Original = url_o, else the largest url_* (by pixels when widths are given, else by suffix order).
        var candidates: [(url: String, pixels: Int, rank: Int)] = []
        for (rank, suffix) in FlickrPhoto.sizeSuffixes.enumerated() {
            guard let url = FlickrJSON.text(json["url_\(suffix)"]), !url.isEmpty else { continue }
            let width = FlickrJSON.int(json["width_\(suffix)"]) ?? 0, height = FlickrJSON.int(json["height_\(suffix)"]) ?? 0
            candidates.append((url, width * height, rank))
            // 65,535 px is JPEG's limit; anything beyond is a malformed answer, not a size to trust.
            if (1...65535).contains(width) && (1...65535).contains(height) {
                renditions.append(Rendition(label: suffix, url: url, width: width, height: height))
            }
        }
        if let original = FlickrJSON.text(json["url_o"]), !original.isEmpty {
            originalURL = original
        } else if let largest = candidates.min(by: { ($0.pixels, -$0.rank) > ($1.pixels, -$1.rank) }) {
            originalURL = largest.url
        } else {
            return nil
        }
        let square = FlickrJSON.text(json["url_sq"]).flatMap { $0.isEmpty ? nil : $0 }
        thumbnailURL = square ?? FlickrJSON.text(json["url_t"]).flatMap { $0.isEmpty ? nil : $0 }
    }
}
