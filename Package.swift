// swift-tools-version:6.0
// photofs: a read-only FUSE filesystem over a Flickr-style photo library (catalog → tree → content → FUSE adapter → CLI).
import PackageDescription

// Test targets are compiled without optimisation even in `make test`'s release build: the code under test is
// optimised, the tests' own bodies need not be. -O on them cost 80 of that build's 370 CPU seconds, and the
// 522 tests ran no slower without it (docs/build-time.md).
let testSettings: [SwiftSetting] = [.unsafeFlags(["-Onone"])]

let package = Package(
    name: "photofs",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "photofs", targets: ["photofs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // C libraries. Each is a pkg-config system library with a small shim.h for what Swift cannot call
        // (function-like macros, variadic functions, setjmp/longjmp error handling).
        .systemLibrary(name: "CFuse", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // Folder imports: EXIF (libexif), HEIC/HEIF (libheif), the nearest city of a GPS position (libgeonames).
        .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CGeonames", pkgConfig: "geonames", providers: [.apt(["libgeonames-dev"])]),
        // HMAC-SHA1 (OAuth 1.0a) and MD5 (thumbnail names) from Debian's libcrypto, not hand-written; swift-crypto
        // did the same but compiled BoringSSL from source: 128 of a fresh release build's 379 CPU seconds, the
        // largest part (docs/build-time.md).
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // Immich's 250 px thumbnails are WebP (libwebp).
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),

        // catalog → tree → content → filesystem logic → FUSE adapter → CLI
        .target(name: "PhotoCatalog", dependencies: [.product(name: "GRDB", package: "GRDB.swift")]),
        .target(name: "PhotoTree", dependencies: ["PhotoCatalog"]),
        .target(name: "PhotoContent", dependencies: ["PhotoCatalog", "CCurl", "CJPEG", "CPNG", "CHeif", "CWebP", "CCrypto",
                                                   .product(name: "Logging", package: "swift-log")]),
        // What a photo source is (listing, changes, places, measuring, credentials) and the importer that
        // drives any source into the catalog; Flickr is its first implementation.
        // OAuth 1.0a signing (RFC 5849): the Flickr client signs with it, the loopback origin checks with it.
        .target(name: "OAuth1", dependencies: ["CCrypto"]),
        .target(name: "PhotoSources", dependencies: ["PhotoCatalog", "PhotoContent", .product(name: "Logging", package: "swift-log")]),
        .target(name: "FlickrImport", dependencies: ["PhotoCatalog", "PhotoContent", "PhotoSources", "OAuth1", .product(name: "Logging", package: "swift-log")]),
        .target(name: "FlickrOrigin", dependencies: ["PhotoContent", "OAuth1", .product(name: "Logging", package: "swift-log")]),
        // Your own photo folders as a source: walking, EXIF/HEIF metadata, places, file identity across imports.
        .target(name: "FolderImport", dependencies: ["PhotoCatalog", "PhotoContent", "PhotoSources", "CExif", "CHeif", "CGeonames", "CCrypto",
                                                   .product(name: "Logging", package: "swift-log")]),
        // Immich as a source: WebP images, the loopback Immich-format origin, and the importer (client, sign-in, mapping).
        .target(name: "WebPImage", dependencies: ["CWebP", "PhotoContent"]),
        .target(name: "ImmichOrigin", dependencies: ["FlickrOrigin", "PhotoContent", "WebPImage", "CCrypto"]),
        .target(name: "ImmichImport", dependencies: ["PhotoCatalog", "PhotoContent", "PhotoSources", .product(name: "Logging", package: "swift-log")]),
        .target(name: "PhotoFS", dependencies: ["PhotoCatalog", "PhotoTree", "PhotoContent", .product(name: "Logging", package: "swift-log")]),
        // The session's I/O in C (its state, its threads): FUSE passthrough, which libfuse 3.14 lacks (Linux 6.9+),
        // and one request reader at a time that busy-polls between requests.
        .target(name: "CFuseSessionIO", dependencies: ["CFuse"]),
        .target(name: "FuseAdapter", dependencies: ["CFuse", "CFuseSessionIO", "PhotoFS", .product(name: "Logging", package: "swift-log")]),
        // The CLI's pure parsing: `-o` mount option lists, secret arguments (unit-tested without a process).
        .target(name: "CommandLineOptions", dependencies: ["PhotoContent"]),
        .executableTarget(name: "photofs", dependencies: [
            "PhotoCatalog", "PhotoFS", "FuseAdapter", "FlickrImport", "FlickrOrigin", "PhotoContent", "PhotoSources", "FolderImport",
            "CommandLineOptions", "OAuth1",
            "ImmichImport", "ImmichOrigin",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // What tests need from the machine (a package's program, root): a skip that names it, a failure under CI.
        .target(name: "TestRequirements", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Tests/TestRequirements"),
        .testTarget(name: "OAuth1Tests", dependencies: ["OAuth1"], swiftSettings: testSettings),
        .testTarget(name: "PhotoCatalogTests", dependencies: ["PhotoCatalog", "TestRequirements"], swiftSettings: testSettings),
        .testTarget(name: "PhotoTreeTests", dependencies: ["PhotoTree", "PhotoCatalog", "FlickrOrigin"], swiftSettings: testSettings),
        .testTarget(name: "PhotoContentTests", dependencies: ["PhotoContent", "FlickrOrigin", "TestRequirements"], swiftSettings: testSettings),
        .testTarget(name: "FlickrImportTests", dependencies: ["FlickrImport", "FlickrOrigin", "PhotoCatalog", "PhotoSources", "PhotoTree", "PhotoContent", .product(name: "Logging", package: "swift-log")], swiftSettings: testSettings),
        .testTarget(name: "PhotoFSTests", dependencies: ["PhotoFS", "PhotoCatalog", "PhotoTree", "PhotoContent", "FlickrOrigin",
                                                    .product(name: "Logging", package: "swift-log"),
                                                    .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: testSettings),
        .testTarget(name: "FolderImportTests", dependencies: ["FolderImport", "TestRequirements", "PhotoSources", "PhotoCatalog", "PhotoContent",
                                                         .product(name: "Logging", package: "swift-log")], swiftSettings: testSettings),
        .testTarget(name: "CommandLineOptionsTests", dependencies: ["CommandLineOptions", "PhotoContent"], swiftSettings: testSettings),
        .testTarget(name: "ImmichImportTests", dependencies: ["ImmichImport", "ImmichOrigin", "WebPImage", "PhotoSources", "PhotoCatalog",
                                                          "PhotoContent", .product(name: "Logging", package: "swift-log")],
                    swiftSettings: testSettings),
        .testTarget(name: "FuseSessionIOTests", dependencies: ["CFuseSessionIO"], swiftSettings: testSettings),
        .testTarget(name: "IntegrationTests", dependencies: ["FlickrOrigin", "ImmichOrigin", "PhotoCatalog", "PhotoContent", "TestRequirements",
                                                        .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: testSettings),
    ],
    swiftLanguageModes: [.v5]
)
