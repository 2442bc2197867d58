// `photofs origin`: runs the built-in Flickr-format origin on loopback, for trying imports by hand and benchmarks.
import ArgumentParser
import FlickrOrigin
import Foundation

struct OriginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "origin",
        abstract: "Serve the built-in demo library over the Flickr REST format on 127.0.0.1.",
        discussion: """
            Answers the Flickr REST methods photofs uses at http://127.0.0.1:PORT/services/rest/, OAuth 1.0a \
            sign-in at /services/oauth/ (its authorize page shows the code, as Flickr's does), and serves the \
            photos' bytes (with Content-Length, Range and ETag). The generated library belongs to several \
            photographers; one of them, the member "ansel", also has private photos and albums. Runs until \
            interrupted. Import from it with:
              photofs import flickr demo.sqlite --endpoint http://127.0.0.1:PORT/services/rest/ --api-key demo
            or sign in as ansel (open the printed authorize URL to see the code) and import the account:
              photofs login flickr --endpoint http://127.0.0.1:PORT/services/rest/ --api-key demo --api-secret SECRET
              photofs import flickr demo.sqlite --user me
            The app secret is printed at start (it is a demo secret, not a real one).
            """
    )

    @Option(help: "flickr (the Flickr REST format) or immich (Immich's API: its key is --api-key).")
    var format = "flickr"

    @Option(help: "TCP port on 127.0.0.1 (0 picks a free one).")
    var port: UInt16 = 18080

    @Option(help: "The API key the origin accepts.")
    var apiKey = "demo"

    @Option(help: "Number of generated photos; in the Flickr format the member \"ansel\" adds 6 items of his own (4 private photos, 2 videos).")
    var photos = 240

    @Option(help: "Instead of generated photos, list the JPEG/PNG files of this directory...")
    var photosDir: String?

    @Option(help: "...served by another server at this URL prefix (file name appended; Flickr format only).")
    var imageBaseURL: String?

    @Flag(help: "Print each request's route on standard output (Immich format; benchmarks count them).")
    var logRequests = false

    func run() throws {
        if format == "immich" {
            try ImmichOriginRunner.run(port: port, photos: photos, apiKey: apiKey, photosDir: photosDir, logRequests: logRequests)
        }
        guard format == "flickr" else { throw CommandFailure("--format is flickr or immich") }
        let library: OriginLibrary
        if let photosDir {
            guard let imageBaseURL else { throw CommandFailure("--photos-dir needs --image-base-url") }
            let files = try FileManager.default.contentsOfDirectory(atPath: photosDir)
                .filter { [".jpg", ".jpeg", ".png"].contains(where: $0.lowercased().hasSuffix) }
                .map { photosDir + "/" + $0 }
            library = DemoLibrary.external(files: files, baseURL: imageBaseURL)
        } else {
            library = DemoLibrary.account(count: photos)
        }
        let server = FlickrOriginServer(library: library, apiKey: apiKey)
        try server.start(port: port)
        print("serving \(library.photos.count) photos at \(server.endpoint) (API key \"\(apiKey)\", "
              + "app secret \"\(server.apiSecret)\" for `photofs login flickr`)")
        fflush(stdout)
        while true { sleep(3600) }
    }
}
