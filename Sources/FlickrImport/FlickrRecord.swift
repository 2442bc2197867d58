// One record of a Flickr photo list, validated on its own: a SourcePhoto, or the reason it was skipped.
import Foundation
import PhotoCatalog
import PhotoSources

/// What a record is read against: where static image URLs live, and whose photos a list holds.
struct FlickrRecordContext: Sendable {
    /// Scheme and host of Flickr's static image URLs (no trailing slash), for records without any url_*.
    var staticHost = FlickrSourceOptions.defaultStaticHost
    /// The account a list belongs to: records that name no owner are its (photosets.getPhotos names the
    /// owner once, on the set), and records that name another owner are skipped. nil: any owner.
    var account: String?
    /// A signed list of the member's own photos: a record without ispublic/isfriend/isfamily is private.
    var missingFlagsMeanPrivate = false
}

enum FlickrRecord {
    /// Size suffixes of Flickr's `url_*` extras, largest first, for when widths are missing.
    static let sizeSuffixes = ["o", "6k", "5k", "4k", "3k", "k", "h", "l", "b", "c", "z", "m", "n", "w", "s", "q", "t", "sq"]

    /// Whether the record is a video (`"media": "video"`, sent with the `media` extra). photofs imports
    /// photos only; a video's url_* are its poster frame, not the video.
    static func isVideo(_ value: JSONValue) -> Bool {
        FlickrJSON.text(value["media"])?.lowercased() == "video"
    }

    /// Reads one element of `photos.photo`. Wrong types are read as JSON allows (numbers for strings and
    /// back, `{"_content": …}` for text); a value that still makes no sense is dropped (a date becomes
    /// unknown, a location none, a rendition is not kept). The record is skipped only when it has no usable
    /// id, owner or image URL, or is not an object.
    static func read(_ value: JSONValue, context: FlickrRecordContext = FlickrRecordContext()) -> Result<SourcePhoto, SkippedRecord> {
        guard case .object(let json) = value else {
            return .failure(SkippedRecord(id: nil, field: "record", reason: "not a JSON object but \(value.kindName)"))
        }
        guard let id = FlickrJSON.text(json["id"]) else {
            let reason = json["id"].map { "not a string or number but \($0.kindName)" } ?? "missing"
            return .failure(SkippedRecord(id: nil, field: "id", reason: reason))
        }
        let owner: String
        switch (FlickrJSON.text(json["owner"]), context.account) {
        case (let named?, let account?) where named != account:
            return .failure(SkippedRecord(id: id, field: "owner", reason: "not a photo of the account listed"))
        case (let named?, _): owner = named
        case (nil, let account?): owner = account
        case (nil, nil): owner = ""
        }
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
        var thumbnailURL: String?
        if let original = candidates.first(where: { $0.rank == 0 }) {
            originalURL = original.url
        } else if let largest = candidates.min(by: { ($0.pixels, -$0.rank) > ($1.pixels, -$1.rank) }) {
            originalURL = largest.url
        } else if let built = staticURLs(json, id: id, host: context.staticHost) {
            originalURL = built.original
            renditions = built.squares
            thumbnailURL = built.squares.first?.url
        } else {
            return .failure(SkippedRecord(id: id, field: "url", reason: "no url_o or other url_* holds a usable http(s) URL, "
                                          + "and no server and secret to build one from"))
        }
        if thumbnailURL == nil {
            let square = FlickrJSON.text(json["url_sq"]).flatMap { SourceURL.isUsable($0) ? $0 : nil }
            thumbnailURL = square ?? FlickrJSON.text(json["url_t"]).flatMap { SourceURL.isUsable($0) ? $0 : nil }
        }
        // Only Flickr's own "1" (or true) sets a flag: an unreadable flag leaves the photo more private, never
        // less. No flags at all is a public list's record (getRecent and search list public photos only), but
        // private in a member's own signed list, which always sends them.
        let flags = ["ispublic", "isfriend", "isfamily"]
        var visibility: PhotoVisibility = context.missingFlagsMeanPrivate ? .privateOnly : .everyone
        if flags.contains(where: { json[$0] != nil }) {
            visibility = []
            if isSet(json["ispublic"]) { visibility.insert(.everyone) }
            if isSet(json["isfriend"]) { visibility.insert(.friends) }
            if isSet(json["isfamily"]) { visibility.insert(.family) }
        }
        // The `tags` extra: one space-separated string of Flickr's normalised tags.
        let tags = FlickrJSON.text(json["tags"]).map { $0.split(whereSeparator: { $0 == " " }).map(String.init) } ?? []
        let lastUpdate = FlickrJSON.int64(json["lastupdate"]).flatMap { $0 > 0 ? $0 : nil }

        do {
            return .success(try SourcePhoto(
                id: id, owner: owner, ownerName: name, title: title, description: description,
                dateTaken: dateTaken, takenAt: takenAt, uploadedAt: uploadedAt, placeID: place.isEmpty ? nil : place,
                latitude: FlickrJSON.double(json["latitude"]), longitude: FlickrJSON.double(json["longitude"]),
                originalURL: originalURL, thumbnailURL: thumbnailURL, renditions: renditions, visibility: visibility,
                tags: tags, views: FlickrJSON.int64(json["views"]), lastUpdate: lastUpdate))
        } catch let skipped as SkippedRecord {
            return .failure(skipped)
        } catch {
            return .failure(SkippedRecord(id: id, field: "record", reason: "\(error)"))
        }
    }

    private static func isSet(_ value: JSONValue?) -> Bool {
        if case .bool(let flag)? = value { return flag }
        return FlickrJSON.int64(value) == 1
    }

    /// URLs by Flickr's documented scheme (https://www.flickr.com/services/api/misc.urls.html) for a record
    /// without any url_*: `{host}/{server}/{id}_{secret}_{suffix}.jpg`. The original is
    /// `_o.{originalformat}` under `originalsecret` when the answer gives both (only callers who may see the
    /// original get them); otherwise `_b`, the largest size that shares the photo's secret (1024 px; the
    /// larger ones have secrets of their own). Sizes in pixels are unknown except for the square crops (`s`
    /// 75×75, `q` 150×150), which are kept as renditions; the importer measures the original's bytes. Every
    /// part must be letters and digits (server, secrets, format) or an identifier (id): nothing else may be
    /// spliced into a URL.
    static func staticURLs(_ json: [String: JSONValue], id: String, host: String)
        -> (original: String, squares: [Rendition])? {
        func token(_ key: String, limit: Int) -> String? {
            guard let text = FlickrJSON.text(json[key]), (1...limit).contains(text.utf8.count),
                  text.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
            else { return nil }
            return text
        }
        guard SourceIdentifier.isValid(id), SourceURL.isUsable(host), let server = token("server", limit: 32),
              let secret = token("secret", limit: 64) else { return nil }
        let base = "\(host)/\(server)/\(id)_"
        let original: String
        if let originalSecret = token("originalsecret", limit: 64), let format = token("originalformat", limit: 8) {
            original = base + "\(originalSecret)_o.\(format.lowercased())"
        } else {
            original = base + "\(secret)_b.jpg"
        }
        let squares = [Rendition(label: "sq", url: base + "\(secret)_s.jpg", width: 75, height: 75),
                       Rendition(label: "q", url: base + "\(secret)_q.jpg", width: 150, height: 150)]
        return (original, squares)
    }

    /// A width or height: 1...65,535 (JPEG's limit), else 0 ("not given"); anything beyond is a malformed
    /// answer, not a size to trust.
    private static func edge(_ value: JSONValue?) -> Int {
        guard let number = FlickrJSON.int64(value), (1...Int64(SourceURL.maxPixelEdge)).contains(number) else { return 0 }
        return Int(number)
    }
}
