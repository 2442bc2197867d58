// `photofs login immich`, `logout immich`, `import immich`, and the Immich keys a mount sends as headers.
import ArgumentParser
import CommandLineOptions
import FlickrImport
import Foundation
import ImmichImport
import ImmichOrigin
import Logging
import PhotoCatalog
import PhotoContent
import PhotoFS
import PhotoSources

/// The key comes from a file or the environment only: an option's value would show in the process list.
struct ImmichKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A file holding the API key on one line (default: $PHOTOFS_IMMICH_API_KEY). Make the key in Immich: Account Settings → API Keys, with asset.read, asset.view, asset.download, album.read, person.read and user.read.",
                               valueName: "file"))
    var apiKeyFile: String?

    func key() throws -> String {
        let given: String?
        do {
            given = try SecretSource.resolve(option: nil, optionName: "--api-key", file: apiKeyFile, fileOptionName: "--api-key-file",
                                             variable: "PHOTOFS_IMMICH_API_KEY", environment: ProcessInfo.processInfo.environment)
        } catch { throw CommandFailure("\(error)") }
        guard let key = given else { throw CommandFailure("no API key: pass --api-key-file FILE or set PHOTOFS_IMMICH_API_KEY") }
        return key
    }
}

enum ImmichStore {
    static func open() -> ImmichAccountStore {
        // Beside flickr-accounts.json: one directory of the user's photofs keys.
        ImmichAccountStore(directory: FlickrAccountStore.defaultDirectory(),
                           notice: { FileHandle.standardError.write(Data("photofs: \($0)\n".utf8)) })
    }

    /// Every signed-in server's key as a request header for that server's API, for a mount's downloads and
    /// renditions. A file that cannot be read leaves the mount without Immich keys (one warning): Flickr and
    /// folder photos are served as ever, Immich photos fail to open with the server's 401 in the log.
    static func requestCredentials(logger: Logger) -> RequestCredentials {
        var credentials = RequestCredentials()
        do {
            for account in try open().load() {
                guard let key = account.credentials.apiKey else { continue }
                credentials.add(prefix: account.server + "/api/", name: "x-api-key", value: key)
            }
        } catch {
            logger.warning("Immich keys not loaded; Immich photos cannot be fetched", metadata: ["reason": "\(error)"])
        }
        return credentials
    }
}

struct ImmichLoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "immich",
        abstract: "Sign in to an Immich server with an API key.",
        discussion: """
            Checks the key against the server (its user, and that the key has the permissions photofs needs), \
            then keeps the server and the key in $XDG_CONFIG_HOME/photofs/immich-accounts.json (default \
            ~/.config/photofs/), mode 0600, beside the Flickr accounts. A wrong key fails with the server's \
            message and stores nothing. The key travels only in the x-api-key header.

            Example:
              photofs login immich --server https://photos.example.org --api-key-file ~/immich.key
            """
    )

    @Option(help: ArgumentHelp("The Immich server (https://photos.example.org).", valueName: "url"))
    var server: String

    @OptionGroup var key: ImmichKeyOptions

    @Option(help: "Seconds to wait for a connection.")
    var connectTimeout: Double = 10

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        let apiKey = try key.key()
        let logger = logging.makeLogger("photofs.login")
        var http = HTTPConfiguration()
        http.connectTimeout = connectTimeout
        let signIn: ImmichSignIn
        do { signIn = try ImmichSignIn.check(server: server, apiKey: apiKey, http: http, logger: logger) } catch {
            throw CommandFailure("sign-in failed, nothing saved: \(error)")
        }
        let store = ImmichStore.open()
        do { try store.save(signIn.account) } catch {
            throw CommandFailure("signed in as \(signIn.account.userName), but the key could not be saved: \(error)")
        }
        print("Signed in to Immich \(signIn.version ?? "(version unknown)") at \(signIn.account.server) as \(signIn.account.userName)"
              + (signIn.account.email.isEmpty ? "." : " (\(signIn.account.email))."))
        Terminal.note("Key saved in \(store.path) (mode 0600). Import with: photofs import immich LIBRARY")
    }
}

struct ImmichLogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "immich",
        abstract: "Forget a signed-in Immich server (its API key).",
        discussion: "Delete the key in Immich too (Account Settings → API Keys) if you no longer trust this machine."
    )

    @Option(help: ArgumentHelp("Which server; needed when several are signed in.", valueName: "url"))
    var server: String?

    func run() throws {
        do { print("Signed out \(try ImmichStore.open().remove(server: server)).") } catch { throw CommandFailure("\(error)") }
    }
}

struct ImmichImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "immich",
        abstract: "Import the photos an Immich API key can see (sign in first with `photofs login immich`).",
        discussion: """
            Lists every asset with POST /api/search/metadata (1,000 a page), then albums, people and the \
            owner's name. Later imports ask only for what changed since the last one (updatedAfter), remove \
            trashed and deleted photos, and fetch no photo's bytes. Videos are counted and left out.
            """
    )

    @Argument(help: "The library file (SQLite); created if missing.")
    var library: String

    @Option(help: ArgumentHelp("Which signed-in server, when several are.", valueName: "url"))
    var server: String?

    @Flag(help: "List everything again instead of the changes since the last import.")
    var full = false

    @Flag(inversion: .prefixedNo, help: "Import albums.")
    var albums = true

    @Option(help: "Seconds to wait for a connection.")
    var connectTimeout: Double = 10

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        let logger = logging.makeLogger("photofs.import")
        let account: ImmichAccount
        do { account = try ImmichStore.open().account(server: server) } catch { throw CommandFailure("\(error)") }
        var http = HTTPConfiguration()
        http.connectTimeout = connectTimeout
        guard let apiKey = account.credentials.apiKey,
              let client = ImmichClient(server: account.server, apiKey: apiKey, http: http, logger: logger) else {
            throw CommandFailure("the signed-in server \(account.server) is not usable; sign in again")
        }
        let catalog: Catalog
        do { catalog = try Catalog(path: library) } catch { throw CommandFailure("\(error)") }
        var options = LibraryImportOptions()
        options.full = full
        options.albums = albums
        let progress = TerminalProgress(logger: logger)
        let importer = ImmichImporter(catalog: catalog, source: ImmichSource(client: client, logger: logger), options: options,
                                      progress: progress, logger: logger)
        // Events that ended more than 48 hours ago settle before this import's photos are written.
        ImportEvents.settleAged(catalog, logger: logger)
        do {
            let report = try importer.run()
            ImportEvents.settle(catalog, logger: logger)
            print(ImportCommand.describe(report.library))
            print("\(report.favorites) favourite(s) among the photos listed, \(report.people) named people; \(report.calls) API call(s)")
        } catch let stopped as ImportStopped {
            throw CommandFailure(ImportCommand.explain(stopped))
        } catch {
            throw CommandFailure("import stopped: \(error)")
        }
    }
}

/// `photofs origin --format immich`: the loopback Immich-format origin with its generated library.
enum ImmichOriginRunner {
    /// `photosDir`: its JPEG and PNG files instead of generated photos. `logRequests`: each request's route on
    /// standard output, one a line (benchmarks count them).
    static func run(port: UInt16, photos: Int, apiKey: String, photosDir: String? = nil, logRequests: Bool = false) throws -> Never {
        let library: ImmichOriginLibrary
        if let photosDir {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: photosDir)) ?? []
            let images = names.filter { name in [".jpg", ".jpeg", ".png"].contains { name.lowercased().hasSuffix($0) } }
            library = .files(images.map { URL(fileURLWithPath: photosDir).appendingPathComponent($0).path })
        } else {
            library = .generated(count: photos)
        }
        let server = ImmichOriginServer(library: library, keys: [apiKey: ["all"]])
        if logRequests {
            server.onRequest = { route in
                print("request \(route)")
                fflush(stdout)
            }
        }
        try server.start(port: port)
        print("serving an Immich-format library of \(server.current.assets.count) assets at \(server.baseURL) "
              + "(API key \"\(apiKey)\": photofs login immich --server \(server.baseURL) --api-key-file FILE)")
        fflush(stdout)
        while true { sleep(3600) }
    }
}
