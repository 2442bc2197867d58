// `photofs mount` options through MountSettings.resolve: both spellings of every option, validation messages,
// FUSE pass-through, fstab words dropped, unknown options named.
import CommandLineOptions
import PhotoContent
import XCTest

final class MountOptionsTests: XCTestCase {
    /// A valid value for each option, and what it must set.
    static let samples: [(MountOption, String, (MountSettings) -> Bool)] = [
        (.cacheDir, "/var/cache/photofs", { $0.cacheDirectory == "/var/cache/photofs" }),
        (.size, "square:256", { $0.variant == .square(256) }),
        (.jpegQuality, "70", { $0.jpegQuality == 70 && $0.renderOptions.jpegQuality == 70 }),
        (.maxPixels, "50", { $0.maxPixels == 50 && $0.renderOptions.maxPixels == 50_000_000 }),
        (.cacheSize, "500M", { $0.cacheSize == 500 << 20 }),
        (.maxDownloads, "4", { $0.maxDownloads == 4 }),
        (.prefetch, "0", { $0.prefetch == 0 }),
        (.connectTimeout, "2.5", { $0.connectTimeout == 2.5 }),
        (.stallTimeout, "60", { $0.stallTimeout == 60 }),
        (.proxy, "http://proxy.home:3128", { $0.proxy == "http://proxy.home:3128" }),
        (.backupTools, "rsync,borg", { $0.backupTools == ["rsync", "borg"] }),
        (.desktopThumbnails, "off", { !$0.desktopThumbnails }),
        (.thumbnailListers, "gthumb, geeqie,", { $0.thumbnailListers == ["gthumb", "geeqie"] }),
        (.busyPoll, "0", { $0.busyPoll == 0 }),
        (.logLevel, "DEBUG", { $0.logLevel == "debug" }),
        (.allowNonempty, "", { $0.allowNonempty }),
        (.foreground, "", { $0.foreground }),
    ]

    func testEveryOptionHasASample() {
        XCTAssertEqual(Set(Self.samples.map(\.0.rawValue)), Set(MountOption.allCases.map(\.rawValue)))
    }

    func testEveryOptionWorksOnTheCommandLineAndInBothDashAndUnderscoreSpellings() throws {
        for (option, value, check) in Self.samples {
            XCTAssertFalse(check(MountSettings()), "\(option): the sample must differ from the default")
            let fromCommandLine = try MountSettings.resolve(commandLine: [option: value], optionLists: [])
            XCTAssertTrue(check(fromCommandLine), "\(option.longName) \(value)")
            let quoted = value.contains(",") ? "\"\(value)\"" : value
            for name in [option.mountOptionName, option.rawValue] {
                let item = option.isFlag ? name : "\(name)=\(quoted)"
                let fromList = try MountSettings.resolve(commandLine: [:], optionLists: ["ro,\(item),allow_other"])
                XCTAssertTrue(check(fromList), "-o \(item)")
                XCTAssertEqual(fromList.fuseOptions, ["ro", "allow_other"], "-o \(item)")
            }
        }
    }

    func testDefaultsWithNothingGiven() throws {
        let settings = try MountSettings.resolve(commandLine: [:], optionLists: [])
        XCTAssertEqual(settings, MountSettings())
        XCTAssertNil(settings.variant)
        XCTAssertEqual(settings.cacheSize, 2 << 30)
        XCTAssertEqual(settings.renderOptions.maxPixels, 200_000_000, "a 200 MP phone photo (100 refused 108 MP ones)")
        XCTAssertGreaterThanOrEqual(settings.renderOptions.maxPixels, 12_000 * 9_000)
        XCTAssertNil(settings.backupTools, "nil: the file system's own default list")
        XCTAssertEqual(settings.fuseOptions, [])
    }

    func testCommandLineWinsOverMountOptionsAndTheLastMountOptionWins() throws {
        let settings = try MountSettings.resolve(commandLine: [.size: "512"],
                                                 optionLists: ["size=square:64,prefetch=1", "prefetch=7"])
        XCTAssertEqual(settings.variant, .fit(512))
        XCTAssertEqual(settings.prefetch, 7)
        // The command line replaces an -o value before validation: only what is used is checked.
        XCTAssertEqual(try MountSettings.resolve(commandLine: [.size: "original"], optionLists: ["size=banana"]).variant, nil)
    }

    func testInvalidValuesNameTheOptionAsWritten() {
        let bad: [(MountOption, String, String)] = [
            (.size, "banana", "takes original, a number of pixels (1024) or square:N (square:256), not \"banana\""),
            (.size, "square:0", "takes original"),
            (.jpegQuality, "0", "takes 1 to 100, not \"0\""),
            (.jpegQuality, "high", "takes 1 to 100, not \"high\""),
            (.maxPixels, "10001", "takes 1 to 10000 (megapixels), not \"10001\""),
            (.cacheSize, "lots", "takes a size like 500M or 2G, not \"lots\""),
            (.cacheSize, "inf", "takes a size like 500M or 2G"),
            (.cacheSize, "1e30G", "takes a size like 500M or 2G"),
            (.maxDownloads, "0", "takes 1 to 64, not \"0\""),
            (.maxDownloads, "65", "takes 1 to 64"),
            (.prefetch, "-1", "takes 0 (off) to 100, not \"-1\""),
            (.busyPoll, "10001", "takes microseconds, 0 (off) to 10000, not \"10001\""),
            (.busyPoll, "-5", "takes microseconds, 0 (off) to 10000"),
            (.connectTimeout, "0", "takes seconds, more than 0 and at most 3600, not \"0\""),
            (.connectTimeout, "nan", "takes seconds"),
            (.connectTimeout, "inf", "takes seconds"),
            (.stallTimeout, "0.5", "takes seconds, 1 to 86400, not \"0.5\""),
            (.logLevel, "loud", "takes trace, debug, info, notice, warning, error or critical, not \"loud\""),
            (.cacheDir, "", "takes a directory"),
        ]
        for (option, value, message) in bad {
            XCTAssertThrowsError(try MountSettings.resolve(commandLine: [option: value], optionLists: []), "\(option) \(value)") {
                XCTAssertTrue("\($0)".hasPrefix("\(option.longName) \(message)"), "\($0)")
            }
            XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["\(option.mountOptionName)=\(value)"])) {
                XCTAssertTrue("\($0)".hasPrefix("-o \(option.mountOptionName) \(message)"), "\($0)")
            }
        }
    }

    func testFlagsAndValuesInTheWrongShape() {
        XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["allow_nonempty=yes"])) {
            XCTAssertEqual("\($0)", "-o allow_nonempty takes no value (write allow_nonempty, not allow_nonempty=yes)")
        }
        XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["size"])) {
            XCTAssertEqual("\($0)", "-o size needs a value: size=square:256")
        }
        XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["allow_other=1"])) {
            XCTAssertEqual("\($0)", "-o allow_other takes no value (write allow_other, not allow_other=1)")
        }
        XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["max_read=131072"])) {
            XCTAssertTrue("\($0)".contains("\"max_read=131072\" is not supported"), "\($0)")
        }
        XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["fsname="])) {
            XCTAssertEqual("\($0)", "-o fsname needs a value: fsname=...")
        }
        XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["allow_other,allow_root"])) {
            XCTAssertTrue("\($0)".contains("exclude each other"), "\($0)")
        }
        XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["blkdev"])) {
            XCTAssertTrue("\($0)".contains("block device"), "\($0)")
        }
    }

    func testUnknownOptionsAreNamedWithWhereToLook() {
        for item in ["frobnicate", "frobnicate=3", "nonempty=1x", "uid=1000", "relatime=1", "clone_fd", "allow-other"] {
            XCTAssertThrowsError(try MountSettings.resolve(commandLine: [:], optionLists: ["ro,\(item)"]), item) {
                let message = "\($0)"
                if item == "nonempty=1x" {
                    XCTAssertEqual(message, "-o allow_nonempty takes no value (write nonempty, not nonempty=1x)")
                    return
                }
                XCTAssertTrue(message.hasPrefix("unknown mount option \"\(item)\""), message)
                XCTAssertTrue(message.contains("photofs mount --help") && message.contains("man 8 fuse"), message)
                XCTAssertTrue(message.contains("cache_dir=") && message.contains("allow_other"), message)
            }
        }
    }

    func testFuseOptionsPassThroughInOrder() throws {
        let list = "allow_other,default_permissions,auto_unmount,noatime,atime,nosuid,nodev,noexec,suid,dev,exec,ro,"
            + "sync,async,dirsync,debug,fsname=photos,subtype=photofs,context=system_u:object_r:fusefs_t:s0"
        let settings = try MountSettings.resolve(commandLine: [:], optionLists: [list])
        XCTAssertEqual(settings.fuseOptions, MountOptionList.split(list))
        XCTAssertEqual(settings.ignoredOptions, [])
        XCTAssertEqual(try MountSettings.resolve(commandLine: [:], optionLists: ["allow_root"]).fuseOptions, ["allow_root"])
    }

    func testMountAndFstabWordsAreDropped() throws {
        let words = ["rw", "defaults", "auto", "noauto", "user", "users", "nouser", "owner", "group", "_netdev", "nofail",
                     "relatime", "norelatime", "strictatime", "nodiratime", "lazytime", "x-systemd.automount",
                     "x-systemd.mount-timeout=30", "x-gvfs-show", "comment=photos", "user=alice"]
        let settings = try MountSettings.resolve(commandLine: [:], optionLists: [words.joined(separator: ",") + ",allow_other"])
        XCTAssertEqual(settings.fuseOptions, ["allow_other"])
        XCTAssertEqual(settings.ignoredOptions, words)
        XCTAssertEqual(settings.variant, nil)
    }

    func testFuse2NonemptyMeansAllowNonempty() throws {
        XCTAssertTrue(try MountSettings.resolve(commandLine: [:], optionLists: ["nonempty"]).allowNonempty)
    }

    func testListSplittingKeepsQuotedCommas() {
        XCTAssertEqual(MountOptionList.split("a,b=1,,c=\"x,y\",d,"), ["a", "b=1", "c=x,y", "d"])
        XCTAssertEqual(MountOptionList.split(""), [])
        XCTAssertEqual(try MountSettings.resolve(commandLine: [:], optionLists: ["backup_tools=\"tar, rsync,\""]).backupTools,
                       ["tar", "rsync"])
        XCTAssertEqual(try MountSettings.resolve(commandLine: [:], optionLists: ["backup_tools="]).backupTools, [],
                       "an empty list: every open counts")
    }

    func testByteSizes() {
        XCTAssertEqual(ByteSize.parse("2G"), 2 << 30)
        XCTAssertEqual(ByteSize.parse("1.5k"), 1536)
        XCTAssertEqual(ByteSize.parse("100MiB"), 100 << 20)
        XCTAssertEqual(ByteSize.parse("4096"), 4096)
        XCTAssertEqual(ByteSize.parse("8T"), 8 << 40)
        for bad in ["", "G", "-1M", "nan", "inf", "1e300", "9000000T", "12Q"] { XCTAssertNil(ByteSize.parse(bad), bad) }
    }
}
