// `photofs login flickr`, `photofs logout flickr` and `photofs accounts`: signing in to Flickr and the accounts kept.
import ArgumentParser
import CommandLineOptions
import FlickrImport
import ImmichImport
import Foundation
import PhotoContent

struct LoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to a photo service, so imports can read your own library.",
        subcommands: [FlickrLoginCommand.self, ImmichLoginCommand.self]
    )
}

struct LogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Forget a signed-in account.",
        subcommands: [FlickrLogoutCommand.self, ImmichLogoutCommand.self]
    )
}

struct FlickrLoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flickr",
        abstract: "Sign in to Flickr (OAuth, as a desktop app), with read access only.",
        discussion: """
            photofs signs in as an app of your own: create one at \
            https://www.flickr.com/services/apps/create/ (a non-commercial key \
            is fine) and give its key and secret. The sign-in then goes:

              1. photofs asks Flickr for a request token and prints the page to
                 open (and opens it in your browser when there is a display);
              2. that page asks you to let the app read your photos, then shows
                 a code like 123-456-789;
              3. you type the code (or pass --verifier CODE); photofs trades it
                 for an access token, checks it with flickr.test.login and
                 prints who signed in.

            The key, the secret and the token are kept in \
            $XDG_CONFIG_HOME/photofs/flickr-accounts.json (default \
            ~/.config/photofs/): a file only you can read (0600) in a directory \
            only you can enter (0700). They never go into a library, a log or \
            an error message. Several accounts can be signed in: later commands \
            pick one with --account NSID|USERNAME, `photofs accounts` lists \
            them, `photofs logout flickr` forgets one.

            Examples:
              photofs login flickr --api-key-file ~/flickr.key \\
                  --api-secret-file ~/flickr.secret

            A server that speaks Flickr's API keeps its OAuth pages under \
            /services/oauth/ on the same host:
              photofs login flickr --api-key-file K --api-secret-file S \\
                  --endpoint http://127.0.0.1:8080/services/rest/
            """
    )

    @Option(help: ArgumentHelp("The Flickr REST endpoint.", valueName: "url"))
    var endpoint = FlickrEndpoints.defaultREST

    @Option(help: ArgumentHelp("The OAuth endpoint (request_token, authorize, access_token under it). Default: Flickr's, or /services/oauth/ on the host of a custom --endpoint.",
                               valueName: "url"))
    var oauthEndpoint: String?

    @Option(help: ArgumentHelp("The app's key (default: $PHOTOFS_FLICKR_API_KEY). Prefer --api-key-file or the variable: a key on the command line shows in `ps` until photofs starts and blanks it.",
                               valueName: "key"))
    var apiKey: String?

    @Option(help: ArgumentHelp("A file holding the app's key on one line.", valueName: "file"))
    var apiKeyFile: String?

    @Option(help: ArgumentHelp("The app's secret (default: $PHOTOFS_FLICKR_API_SECRET). Prefer --api-secret-file or the variable, as for --api-key.",
                               valueName: "secret"))
    var apiSecret: String?

    @Option(help: ArgumentHelp("A file holding the app's secret on one line.", valueName: "file"))
    var apiSecretFile: String?

    @Option(help: ArgumentHelp("The code the authorize page showed (default: read from standard input).", valueName: "code"))
    var verifier: String?

    @Flag(help: "Do not open the authorize page in a browser; only print it.")
    var noBrowser = false

    @Option(help: "Seconds to wait for a connection.")
    var connectTimeout: Double = 10

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        let logger = logging.makeLogger("photofs.login")
        let environment = ProcessInfo.processInfo.environment
        let key: String?, secret: String?
        do {
            key = try SecretSource.resolve(option: apiKey, optionName: "--api-key", file: apiKeyFile, fileOptionName: "--api-key-file",
                                           variable: "PHOTOFS_FLICKR_API_KEY", environment: environment)
            secret = try SecretSource.resolve(option: apiSecret, optionName: "--api-secret", file: apiSecretFile,
                                              fileOptionName: "--api-secret-file", variable: "PHOTOFS_FLICKR_API_SECRET",
                                              environment: environment)
        } catch { throw CommandFailure("\(error)") }
        guard let key else {
            throw CommandFailure("no API key: pass --api-key-file, set PHOTOFS_FLICKR_API_KEY, or pass --api-key "
                                 + "(create an app at https://www.flickr.com/services/apps/create/)")
        }
        guard let secret else {
            throw CommandFailure("no API secret: pass --api-secret-file, set PHOTOFS_FLICKR_API_SECRET, or pass --api-secret")
        }
        let endpoints: FlickrEndpoints
        do { endpoints = try FlickrEndpoints(rest: endpoint, oauth: oauthEndpoint) } catch { throw CommandFailure("\(error)") }
        let store = FlickrAccountStore(directory: FlickrAccountStore.defaultDirectory(environment: environment),
                                       notice: { FileHandle.standardError.write(Data("photofs: \($0)\n".utf8)) })
        // Before anything is asked of Flickr: an accounts file that cannot be written would lose the token.
        do { _ = try store.load() } catch { throw CommandFailure("\(error)") }

        var http = HTTPConfiguration()
        http.connectTimeout = connectTimeout
        let login = FlickrLogin(endpoints: endpoints, consumerKey: key, consumerSecret: secret, http: http, logger: logger)
        let account: FlickrAccount
        do {
            let authorization = try login.start()
            Terminal.note("Open this page, allow photofs to read your photos, and copy the code it shows:")
            print(authorization.url)
            fflush(stdout)
            if !noBrowser { Browser.open(authorization.url, environment: environment) }
            let code: String
            if let verifier {
                code = verifier
            } else {
                if isatty(STDIN_FILENO) == 1 { Terminal.prompt("Code: ") }
                guard let line = readLine(strippingNewline: true), !line.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw CommandFailure("no code given: type the code the page shows, or pass --verifier CODE")
                }
                code = line
            }
            account = try login.finish(authorization, verifier: code)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("sign-in failed: \(error)")
        }
        do { try store.save(account) } catch {
            throw CommandFailure("signed in as \(account.username) (\(account.nsid)), but the token could not be saved: \(error)")
        }
        print("Signed in to Flickr as \(account.username) (\(account.nsid)).")
        Terminal.note("Credentials saved in \(store.path) (mode 0600). Import the account with: "
                      + "photofs import flickr LIBRARY --user me")
    }
}

struct FlickrLogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flickr",
        abstract: "Forget a signed-in Flickr account (its key, secret and token).",
        discussion: """
            Removes the account from $XDG_CONFIG_HOME/photofs/flickr-accounts.json; \
            with no account left, the file goes. Libraries imported from it are \
            kept. Flickr still lists photofs among the apps allowed to read your \
            account until you remove it there (Flickr has no call for an app to \
            give its token back): https://www.flickr.com/account/sharing/

            Examples:
              photofs logout flickr                  (the only account)
              photofs logout flickr --account ansel
            """
    )

    @Option(help: ArgumentHelp("Which account, by NSID or username; needed when several are signed in.", valueName: "nsid|username"))
    var account: String?

    @Option(help: ArgumentHelp("Only accounts of this REST endpoint (the same account signed in to two servers).", valueName: "url"))
    var endpoint: String?

    func run() throws {
        let store = FlickrAccountStore(directory: FlickrAccountStore.defaultDirectory(),
                                       notice: { FileHandle.standardError.write(Data("photofs: \($0)\n".utf8)) })
        let gone: FlickrAccount
        do { gone = try store.remove(account, endpoint: endpoint) } catch { throw CommandFailure("\(error)") }
        print("Signed out \(gone).")
    }
}

struct AccountsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "List the signed-in accounts (never their secrets).",
        discussion: """
            One line per account: service, username, NSID and the REST \
            endpoint it signed in to. Sign in with `photofs login flickr`; \
            other commands pick one account with --account NSID|USERNAME.
            """
    )

    func run() throws {
        let store = FlickrAccountStore(directory: FlickrAccountStore.defaultDirectory(),
                                       notice: { FileHandle.standardError.write(Data("photofs: \($0)\n".utf8)) })
        let accounts: [FlickrAccount]
        do { accounts = try store.load() } catch { throw CommandFailure("\(error)") }
        let immich: [ImmichAccount]
        do { immich = try ImmichStore.open().load() } catch { throw CommandFailure("\(error)") }
        guard !accounts.isEmpty || !immich.isEmpty else {
            print("No account is signed in. Sign in with: photofs login flickr --api-key-file FILE --api-secret-file FILE, "
                  + "or photofs login immich --server URL --api-key-file FILE")
            return
        }
        let rows = [["SERVICE", "USERNAME", "NSID", "ENDPOINT"]] + accounts.map { ["flickr", $0.username, $0.nsid, $0.restEndpoint] }
            + immich.map { ["immich", $0.userName, $0.userID, $0.server] }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let padded = (0..<3).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
            print((padded + [row[3]]).joined(separator: "  "))
        }
    }
}

/// Lines for a person at a terminal, on standard error so that standard output holds only the URL and the
/// result (what a script reads).
enum Terminal {
    static func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
    static func prompt(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }
}

/// Opens a page in the user's browser with xdg-open when there is a display to show it on. Best effort: the
/// URL is printed anyway, so a missing xdg-open or a browser that fails changes nothing.
enum Browser {
    static func open(_ url: String, environment: [String: String]) {
        let hasDisplay = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
        guard hasDisplay else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url]
        // The browser has no use for secrets a user keeps in the environment.
        process.environment = environment.filter { !SecretArguments.options.values.contains($0.key) }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
