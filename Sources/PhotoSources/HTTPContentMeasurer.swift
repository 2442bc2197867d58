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
            guard let size = response.contentLength, size > 0 else { return .failure(MeasureFailure("origin gave no size")) }
            return .success(MeasuredContent(size: size, contentType: ImageContentType.normalized(type),
                                            etag: response.headers["etag"], lastModified: response.headers["last-modified"]))
        } catch {
            return .failure(MeasureFailure(redactor.redact("\(error)")))
        }
    }
}
