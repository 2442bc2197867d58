// swift-tools-version:6.0
// photofs: a read-only FUSE filesystem over a Flickr-style photo library (catalog → tree → content → FUSE adapter → CLI).
import PackageDescription

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
        // HMAC-SHA1 for OAuth 1.0a signatures (no hand-written crypto).
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
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

        // catalog → tree → content → filesystem logic → FUSE adapter → CLI
        .target(name: "PhotoCatalog", dependencies: [.product(name: "GRDB", package: "GRDB.swift")]),
        .target(name: "PhotoTree", dependencies: ["PhotoCatalog"]),
        .target(name: "PhotoContent", dependencies: ["PhotoCatalog", "CCurl", "CJPEG", "CPNG", "CHeif", .product(name: "Logging", package: "swift-log"),
                                                   .product(name: "Crypto", package: "swift-crypto")]),
        // What a photo source is (listing, changes, places, measuring, credentials) and the importer that
        // drives any source into the catalog; Flickr is its first implementation.
        // OAuth 1.0a signing (RFC 5849): the Flickr client signs with it, the loopback origin checks with it.
        .target(name: "OAuth1", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "PhotoSources", dependencies: ["PhotoCatalog", "PhotoContent", .product(name: "Logging", package: "swift-log")]),
        .target(name: "FlickrImport", dependencies: ["PhotoCatalog", "PhotoContent", "PhotoSources", "OAuth1", .product(name: "Logging", package: "swift-log")]),
        .target(name: "FlickrOrigin", dependencies: ["PhotoContent", "OAuth1", .product(name: "Logging", package: "swift-log")]),
        // Your own photo folders as a source: walking, EXIF/HEIF metadata, places, file identity across imports.
        .target(name: "FolderImport", dependencies: ["PhotoCatalog", "PhotoContent", "PhotoSources", "CExif", "CHeif", "CGeonames",
                                                   .product(name: "Logging", package: "swift-log"),
                                                   .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "PhotoFS", dependencies: ["PhotoCatalog", "PhotoTree", "PhotoContent", .product(name: "Logging", package: "swift-log")]),
        .target(name: "FuseAdapter", dependencies: ["CFuse", "PhotoFS", .product(name: "Logging", package: "swift-log")]),
        // The CLI's pure parsing: `-o` mount option lists, secret arguments (unit-tested without a process).
        .target(name: "CommandLineOptions", dependencies: ["PhotoContent"]),
        .executableTarget(name: "photofs", dependencies: [
            "PhotoCatalog", "PhotoFS", "FuseAdapter", "FlickrImport", "FlickrOrigin", "PhotoContent", "PhotoSources", "FolderImport",
            "CommandLineOptions", "OAuth1",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // What tests need from the machine (a package's program, root): a skip that names it, a failure under CI.
        .target(name: "TestRequirements", path: "Tests/TestRequirements"),
        .testTarget(name: "OAuth1Tests", dependencies: ["OAuth1"]),
        .testTarget(name: "PhotoCatalogTests", dependencies: ["PhotoCatalog", "TestRequirements"]),
        .testTarget(name: "PhotoTreeTests", dependencies: ["PhotoTree", "PhotoCatalog", "FlickrOrigin"]),
        .testTarget(name: "PhotoContentTests", dependencies: ["PhotoContent", "FlickrOrigin", "TestRequirements"]),
        .testTarget(name: "FlickrImportTests", dependencies: ["FlickrImport", "FlickrOrigin", "PhotoCatalog", "PhotoSources", "PhotoTree", "PhotoContent", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "PhotoFSTests", dependencies: ["PhotoFS", "PhotoCatalog", "PhotoTree", "PhotoContent", "FlickrOrigin",
                                                    .product(name: "Logging", package: "swift-log"),
                                                    .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "FolderImportTests", dependencies: ["FolderImport", "TestRequirements", "PhotoSources", "PhotoCatalog", "PhotoContent",
                                                         .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CommandLineOptionsTests", dependencies: ["CommandLineOptions", "PhotoContent"]),
        .testTarget(name: "IntegrationTests", dependencies: ["FlickrOrigin", "PhotoCatalog", "PhotoContent", "TestRequirements",
                                                        .product(name: "GRDB", package: "GRDB.swift")]),
    ],
    swiftLanguageModes: [.v5]
)
