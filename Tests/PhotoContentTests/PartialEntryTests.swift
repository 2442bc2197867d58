// The partial entry's footer and checks, on bytes and on real files: every field that can be wrong makes the
// entry refused, so a prefix is served only when it is the catalog's version, whole and untouched.
@testable import PhotoContent
import XCTest

final class PartialEntryTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("partial-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    let prefix = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    func entry(etag: String? = "\"v1\"") -> PartialEntry {
        PartialEntry(prefixLength: Int64(prefix.count), photoSize: 9000, etag: etag,
                     prefixChecksum: prefix.withUnsafeBytes { PartialEntry.checksum($0) })
    }

    func file(_ entry: PartialEntry, prefix: Data? = nil) -> Data { (prefix ?? self.prefix) + entry.footer() }

    func testAFooterDecodesToWhatWasWritten() {
        for tag in ["\"v1\"", nil, "W/\"weak\"", String(repeating: "e", count: 256)] {
            let written = entry(etag: tag)
            let bytes = file(written)
            XCTAssertEqual(PartialEntry.decode(tail: bytes, fileSize: Int64(bytes.count)), written)
        }
    }

    func testAnEtagLongerThanTheLimitIsCutAndStillDecodes() {
        let long = entry(etag: String(repeating: "x", count: 400))
        let bytes = file(long)
        XCTAssertEqual(PartialEntry.decode(tail: bytes, fileSize: Int64(bytes.count))?.etag?.utf8.count, 256)
    }

    func testEveryDamagedFooterIsRefused() {
        let good = file(entry())
        let size = Int64(good.count)
        XCTAssertNil(PartialEntry.decode(tail: good, fileSize: size + 1), "bytes appended after the footer")
        XCTAssertNil(PartialEntry.decode(tail: good, fileSize: size - 1), "a prefix shorter than it says")
        XCTAssertNil(PartialEntry.decode(tail: Data(good.prefix(good.count - 1)), fileSize: size - 1), "a torn magic")
        XCTAssertNil(PartialEntry.decode(tail: Data(), fileSize: 0), "an empty file")
        XCTAssertNil(PartialEntry.decode(tail: Data(count: 300), fileSize: 300), "zeros")
        // Any single byte of the footer flipped: its own checksum (or the magic) no longer matches.
        let footerStart = prefix.count
        for index in footerStart..<good.count {
            var damaged = good
            damaged[index] ^= 0x40
            XCTAssertNil(PartialEntry.decode(tail: damaged, fileSize: size), "byte \(index - footerStart) of the footer")
        }
    }

    func testImpossibleLengthsAreRefusedEvenWithAValidChecksum() {
        for (length, photo) in [(Int64(0), Int64(9000)), (9000, 9000), (9001, 9000), (-1, 9000), (5000, Int64.min)] {
            let bad = PartialEntry(prefixLength: length, photoSize: photo, etag: nil, prefixChecksum: 1)
            let footer = bad.footer()
            XCTAssertNil(PartialEntry.decode(tail: footer, fileSize: Int64(footer.count) &+ max(0, length)),
                         "prefix \(length) of \(photo)")
        }
        // A prefix length that overflows with the footer's.
        let huge = PartialEntry(prefixLength: .max - 10, photoSize: .max, etag: nil, prefixChecksum: 1).footer()
        XCTAssertNil(PartialEntry.decode(tail: huge, fileSize: .max))
    }

    func testAnEtagWithControlCharactersOrInvalidUTF8IsRefused() {
        // Built by hand: `footer()` itself never writes one.
        func forged(_ tag: [UInt8]) -> Data {
            var bytes = tag
            for value in [UInt64(10), UInt64(9000), UInt64(0)] {
                for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
            }
            bytes += [UInt8(tag.count), 0]
            let check = bytes.withUnsafeBytes { PartialEntry.checksum($0) }
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: check >> UInt64(shift))) }
            return Data(Array(repeating: 0, count: 10) + bytes + Array("PFSPART1".utf8))
        }
        let fine = forged(Array("\"ok\"".utf8))
        XCTAssertEqual(PartialEntry.decode(tail: fine, fileSize: Int64(fine.count))?.etag, "\"ok\"")
        for tag in [Array("\"a\r\nX: y\"".utf8), [0x22, 0xff, 0xfe, 0x22], Array(" \"padded\"".utf8)] {
            let bytes = forged(tag)
            XCTAssertNil(PartialEntry.decode(tail: bytes, fileSize: Int64(bytes.count)), "\(tag)")
        }
    }

    func testTheChecksumDependsOnEveryByteAndNotOnHowItIsRead() throws {
        let sum = prefix.withUnsafeBytes { PartialEntry.checksum($0) }
        var changed = prefix
        changed[4999] ^= 1
        XCTAssertNotEqual(changed.withUnsafeBytes { PartialEntry.checksum($0) }, sum)
        changed = prefix
        changed[0] ^= 1
        XCTAssertNotEqual(changed.withUnsafeBytes { PartialEntry.checksum($0) }, sum)
        XCTAssertNotEqual(Data(count: 8).withUnsafeBytes { PartialEntry.checksum($0) },
                          Data(count: 16).withUnsafeBytes { PartialEntry.checksum($0) }, "zeros of another length")
        // Read back from a file in chunks (a prefix larger than one chunk): the same value.
        let big = Data((0..<(PartialEntry.checksumChunk + 12_345)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 3) })
        let path = directory.appendingPathComponent("big").path
        FileManager.default.createFile(atPath: path, contents: big)
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        XCTAssertEqual(PartialEntry.checksum(fd: fd, length: Int64(big.count)), big.withUnsafeBytes { PartialEntry.checksum($0) })
        XCTAssertNil(PartialEntry.checksum(fd: fd, length: Int64(big.count) + 1), "a file shorter than the prefix")
    }

    // MARK: Files

    func write(_ data: Data, name: String = "entry") -> String {
        let path = directory.appendingPathComponent(name).path
        FileManager.default.createFile(atPath: path, contents: data)
        return path
    }

    func testSealingAFileAndOpeningItGivesBackExactlyThePrefix() throws {
        let path = write(prefix + Data(repeating: 0xAA, count: 777)) // an earlier answer's longer bytes
        let fd = open(path, O_RDWR)
        let sealed = PartialEntry.seal(OpenFile(fd: fd), received: Int64(prefix.count), photoSize: 9000, etag: "\"v1\"")
        XCTAssertEqual(sealed, Int64(prefix.count + PartialEntry.fixedLength + 4))
        let opened = try XCTUnwrap(PartialEntry.open(path: path, photoSize: 9000, catalogETag: "W/\"v1\""))
        XCTAssertEqual(opened.entry, entry())
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), prefix, "the footer is cut off for the resume")
    }

    func testNothingIsSealedThatIsEmptyOrWhole() {
        let path = write(prefix)
        let file = OpenFile(fd: open(path, O_RDWR))
        XCTAssertNil(PartialEntry.seal(file, received: 0, photoSize: 9000, etag: nil))
        XCTAssertNil(PartialEntry.seal(file, received: 9000, photoSize: 9000, etag: nil))
        XCTAssertNil(PartialEntry.seal(file, received: 6000, photoSize: 9000, etag: nil), "more than the file holds")
    }

    func testAnEntryOfAnotherSizeOrVersionIsNotOpened() {
        let good = file(entry())
        XCTAssertNil(PartialEntry.open(path: write(good), photoSize: 9001, catalogETag: "\"v1\""), "the catalog's size changed")
        XCTAssertNil(PartialEntry.open(path: write(good), photoSize: 9000, catalogETag: "\"v2\""), "another version")
        let untagged = file(entry(etag: nil))
        XCTAssertNil(PartialEntry.open(path: write(untagged), photoSize: 9000, catalogETag: "\"v1\""),
                     "the catalog knows a version the prefix cannot show")
        XCTAssertNotNil(PartialEntry.open(path: write(untagged), photoSize: 9000, catalogETag: nil))
        XCTAssertNotNil(PartialEntry.open(path: write(good), photoSize: 9000, catalogETag: nil))
    }

    func testACorruptPrefixIsNeverOpened() {
        var damaged = prefix
        damaged[1234] ^= 0x10
        XCTAssertNil(PartialEntry.open(path: write(file(entry(), prefix: damaged)), photoSize: 9000, catalogETag: "\"v1\""))
        var zeroed = prefix
        zeroed.replaceSubrange(4096..<5000, with: Data(count: 904)) // a page that never reached the disk
        XCTAssertNil(PartialEntry.open(path: write(file(entry(), prefix: zeroed)), photoSize: 9000, catalogETag: "\"v1\""))
    }

    func testOnlyAPlainFileWithOneLinkIsOpened() throws {
        let target = write(file(entry()), name: "target")
        let link = directory.appendingPathComponent("symlink").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        XCTAssertNil(PartialEntry.open(path: link, photoSize: 9000, catalogETag: "\"v1\""), "a symlink")
        let hard = directory.appendingPathComponent("hardlink").path
        XCTAssertEqual(Glibc.link(target, hard), 0)
        XCTAssertNil(PartialEntry.open(path: hard, photoSize: 9000, catalogETag: "\"v1\""),
                     "a hard link: resuming would truncate and write someone's file")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), file(entry()), "and it was left untouched")
        let fifo = directory.appendingPathComponent("fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertNil(PartialEntry.open(path: fifo, photoSize: 9000, catalogETag: nil))
        XCTAssertNil(PartialEntry.open(path: directory.path, photoSize: 9000, catalogETag: nil), "a directory")
        XCTAssertNil(PartialEntry.open(path: directory.appendingPathComponent("missing").path, photoSize: 9000, catalogETag: nil))
    }
}
