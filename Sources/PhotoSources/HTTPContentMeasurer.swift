// Measures a photo's bytes over HTTP (HEAD, else a counted GET): the `measure` of every HTTP source.
import Foundation
import PhotoCatalog
import PhotoContent

public struct HTTPContentMeasurer: Sendable {
    private let http: HTTPClient
    private let redactor: SecretRedactor

    /// `redactor` cleans failure reasons: a photo URL carries no secret today, a signed one would.
    public init(http: HTTPClient, redactor: SecretRedactor) {
        self.http = http
        self.redactor = redactor
    }

    public func measure(_ url: String) -> Result<MeasuredContent, MeasureFailure> {
        do {
            var response = try http.head(url)
            if response.contentLength == nil {
                // No Content-Length on HEAD (chunked origins): count the bytes of a GET instead.
                response = try http.get(url)
                response.headers["content-length"] = String(response.body.count)
            }
            let type = response.contentType ?? ""
            guard ImageContentType.isAccepted(type) else {
                return .failure(MeasureFailure(redactor.redact(
                    "content type \"\(type.prefix(100))\" is not a JPEG, PNG, GIF or WebP image")))
            }
            guard let size = response.contentLength else { return .failure(MeasureFailure("origin gave no size")) }
            // The catalog's own bound (1 TiB): a size beyond it would be refused by every layer after this one.
            guard (1...CatalogLimits.maxByteSize).contains(size) else {
                return .failure(MeasureFailure("origin gave a size of \(size) bytes, not within 1...\(CatalogLimits.maxByteSize)"))
            }
            return .success(MeasuredContent(size: size, contentType: ImageContentType.normalized(type),
                                            etag: HTTPContentMeasurer.validator(response.headers["etag"]),
                                            lastModified: HTTPContentMeasurer.validator(response.headers["last-modified"])))
        } catch {
            return .failure(MeasureFailure(redactor.redact("\(error)")))
        }
    }

    /// 256 bytes: a real ETag is a quoted hash (Flickr's are 34 bytes) and an HTTP date is 29; a longer
    /// value is not one, and it would be stored in the library and sent back in every If-Range.
    public static let maxValidatorLength = 256

    /// An ETag or Last-Modified kept only when non-empty and at most `maxValidatorLength` bytes (else absent).
    static func validator(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= maxValidatorLength else { return nil }
        return value
    }
}
