// `--proxy` / `-o proxy=`: what libcurl is handed, what is refused, and that no message repeats a password.
import CommandLineOptions
import XCTest

final class ProxySettingTests: XCTestCase {
    func testProxyURLsAsLibcurlGetsThem() throws {
        let cases: [(String, String)] = [
            ("http://proxy.home:3128", "http://proxy.home:3128"),
            ("proxy.home:3128", "http://proxy.home:3128"), // libcurl reads a bare host:port as http too
            ("HTTP://Proxy.Home:8080/", "http://Proxy.Home:8080"),
            ("socks5h://127.0.0.1:1080", "socks5h://127.0.0.1:1080"),
            ("https://[::1]:8443", "https://[::1]:8443"),
            ("  http://10.0.0.1  ", "http://10.0.0.1"),
        ]
        for (given, expected) in cases {
            XCTAssertEqual(try ProxySetting.parse(given, name: "--proxy"), expected, given)
        }
    }

    func testNoneIgnoresTheEnvironment() throws {
        for word in ["none", "NONE", "direct", "off"] {
            XCTAssertEqual(try ProxySetting.parse(word, name: "--proxy"), "", word)
            XCTAssertEqual(try MountSettings.resolve(commandLine: [:], optionLists: ["proxy=\(word)"]).proxy, "")
        }
        XCTAssertNil(MountSettings().proxy, "by default libcurl reads the standard variables")
    }

    func testRefusalsNameTheOptionAndNeverRepeatTheValue() {
        let refused: [(String, String)] = [
            ("http://alice:s3cr3t-pw@proxy.home:3128", "environment variables"),
            ("http://s3cr3t-pw@proxy.home:3128", "environment variables"),
            ("ftp://proxy.home:21", "ftp://"),
            ("http://proxy.home:3128/s3cr3t-pw", "not a path"),
            ("http://proxy.home:3128/?s3cr3t-pw", "not a path"),
            ("http://proxy.home:99999", "port"),
            ("http://", "proxy URL"),
            ("", "proxy URL"),
        ]
        for (value, hint) in refused {
            for (commandLine, lists, spelling) in [([MountOption.proxy: value], [String](), "--proxy"),
                                                   ([:], ["proxy=\"\(value)\""], "-o proxy")] {
                XCTAssertThrowsError(try MountSettings.resolve(commandLine: commandLine, optionLists: lists), value) { error in
                    let message = "\(error)"
                    XCTAssertTrue(message.hasPrefix(spelling), message)
                    XCTAssertTrue(message.contains(hint), "\(value): \(message)")
                    XCTAssertFalse(message.contains("s3cr3t-pw"), message)
                }
            }
        }
    }

    func testTheLogLineHidesCredentialsFromTheEnvironment() {
        XCTAssertEqual(ProxySetting.describe(configured: "http://p:3128", environment: ["http_proxy": "http://x:y@q:1"]), "http://p:3128")
        XCTAssertEqual(ProxySetting.describe(configured: "", environment: ["http_proxy": "http://q:1"]), "none")
        let fromEnvironment = ProxySetting.describe(configured: nil, environment: ["http_proxy": "http://bob:s3cr3t-pw@q:1"])
        XCTAssertFalse(fromEnvironment.contains("s3cr3t-pw"), fromEnvironment)
        XCTAssertTrue(fromEnvironment.contains("q:1") && fromEnvironment.contains("http_proxy"), fromEnvironment)
        XCTAssertEqual(ProxySetting.describe(configured: nil, environment: ["HTTP_PROXY": "http://q:1"]), "none",
                       "libcurl ignores an upper-case HTTP_PROXY")
    }
}
