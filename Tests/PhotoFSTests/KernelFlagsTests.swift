// What the adapter sets besides the replies' values: open and opendir flags, the capabilities asked for at
// init, and the stat figures (st_blksize, st_blocks), decided in PhotoFS so they are tested without a kernel.
import Foundation
import PhotoContent
import PhotoFS
import PhotoTree
import XCTest

final class KernelFlagsTests: XCTestCase {
    func testAnOpenPhotoNeedsNoFlushAndItsPageCacheModeBecomesItsFlags() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let inode = try XCTUnwrap(fixture.yearEntries().first).attributes.inode
        let first = try fixture.filesystem.open(inode: inode)
        XCTAssertEqual(first.flags, KernelOpenFlags(keepCache: false, directIO: false, noFlush: true, cacheListing: false),
                       "first open in this mount: the kernel drops whatever it held")
        fixture.filesystem.release(first.handle)
        let second = try fixture.filesystem.open(inode: inode)
        XCTAssertEqual(second.flags, KernelOpenFlags(keepCache: true, directIO: false, noFlush: true, cacheListing: false))
        fixture.filesystem.release(second.handle)
    }

    func testADirectoryListingIsKeptAndCachedByTheKernel() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let directory = try fixture.filesystem.openDirectory(fixture.yearInode)
        XCTAssertEqual(directory.flags, KernelOpenFlags(keepCache: true, directIO: false, noFlush: false, cacheListing: true))
    }

    func testEveryCapabilityIsAskedFor() {
        XCTAssertEqual(Set(KernelCapability.wanted), [.parallelDirectoryOperations, .readdirplus, .spliceReplies])
    }

    func testAPhotoWhoseBytesAreInOneFileIsReadFromThatFile() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let entry = try XCTUnwrap(fixture.yearEntries().first)
        let inode = entry.attributes.inode
        let first = try fixture.filesystem.open(inode: inode)
        let bytes = try fixture.readAll(first.handle)
        fixture.filesystem.release(first.handle)
        // The download becomes the cache's file once it is stored, a moment after its last byte was read.
        guard case .photo(let seq) = entry.node, let photo = try fixture.catalog.photo(seq: seq),
              let size = photo.byteSize, let type = photo.contentType else { return XCTFail("a photo") }
        let source = ContentSource(photoID: photo.id, url: photo.originalURL, expectedSize: size, contentType: type,
                                   etag: photo.etag)
        XCTAssertTrue(eventually { fixture.cache.cachedPath(for: source) != nil })
        let second = try fixture.filesystem.open(inode: inode)
        defer { fixture.filesystem.release(second.handle) }
        guard case .fileRange(let descriptor, let offset, let count) = fixture.filesystem.readReply(second.handle, count: 4096, at: 0) else {
            return XCTFail("a cached original is answered from its file")
        }
        XCTAssertEqual(offset, 0)
        XCTAssertEqual(count, min(4096, bytes.count))
        var head = [UInt8](repeating: 0, count: count)
        XCTAssertEqual(pread(descriptor, &head, count, 0), count)
        XCTAssertEqual(Data(head), bytes.prefix(count))
        guard case .fileRange(_, _, let rest) = fixture.filesystem.readReply(second.handle, count: 4096, at: Int64(bytes.count) - 10) else {
            return XCTFail("the end of the file too")
        }
        XCTAssertEqual(rest, 10, "clamped to the photo's end")
    }

    func testTheIOSizeKeepsBufferedClientsSmallAndCoreutilsReadsWhole() {
        // Python's open() and glibc stdio allocate st_blksize per file; coreutils read max(128 KiB, st_blksize).
        XCTAssertLessThanOrEqual(StatFigures.preferredIOSize, 128 << 10, "not a 1 MiB buffer per open")
        XCTAssertGreaterThanOrEqual(StatFigures.preferredIOSize, 128 << 10, "coreutils' own 128 KiB reads stay whole")
        XCTAssertEqual(StatFigures.preferredIOSize % 4096, 0, "whole pages")
    }

    func testBlocksAreHalfKilobytesRoundedUpAndNeverNegative() {
        XCTAssertEqual(StatFigures.blocks(forSize: 0), 0)
        XCTAssertEqual(StatFigures.blocks(forSize: 1), 1)
        XCTAssertEqual(StatFigures.blocks(forSize: 512), 1)
        XCTAssertEqual(StatFigures.blocks(forSize: 513), 2)
        XCTAssertEqual(StatFigures.blocks(forSize: 6_000_000), 11_719)
        XCTAssertEqual(StatFigures.blocks(forSize: -5), 0, "a hostile size is no blocks")
        XCTAssertEqual(StatFigures.blocks(forSize: .max), Int64.max / 512 + 1, "no overflow at the largest size")
    }
}
