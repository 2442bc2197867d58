// Which photos a whole read downloads ahead: the ones after it in its folder, or before it when the opener is
// stepping backwards (each open the entry before the last); found at once however the folder was entered; none
// for an open that only looks at its photo's header.
import Foundation
import Logging
import PhotoCatalog
@testable import PhotoContent
import PhotoFS
import PhotoTree
import XCTest

final class PrefetchDirectionTests: XCTestCase {
    var fixture: FilesystemFixture!
    var filesystem: PhotoFilesystem!
    var entries: [DirectoryEntry] = []

    override func setUpWithError() throws {
        fixture = try FilesystemFixture(photos: 12)
        var options = FilesystemOptions()
        options.prefetchCount = 2
        filesystem = PhotoFilesystem(catalog: fixture.catalog, cache: fixture.cache, options: options,
                                     logger: Logger(label: "test"))
        entries = try filesystem.listing(of: fixture.yearInode).entries
        XCTAssertEqual(entries.count, 12)
    }

    override func tearDown() {
        filesystem.stopWatchingCatalog()
        fixture = nil
    }

    func isCached(_ index: Int) throws -> Bool {
        guard case .photo(let seq) = entries[index].node, let photo = try fixture.catalog.photo(seq: seq),
              let size = photo.byteSize, let type = photo.contentType else { return false }
        let source = ContentSource(photoID: photo.id, url: photo.originalURL, expectedSize: size, contentType: type,
                                   etag: photo.etag)
        return fixture.cache.cachedPath(for: source) != nil
    }

    /// Opens the entry at `index`, reads it whole and closes it, as a viewer showing it would (through this
    /// test's filesystem: what a handle read is that filesystem's to know).
    func view(_ index: Int) throws {
        let reply = try filesystem.open(inode: entries[index].attributes.inode)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while case let count = try filesystem.read(reply.handle, into: buffer, at: offset), count > 0 { offset += Int64(count) }
        filesystem.release(reply.handle)
    }

    /// Waits until the prefetches queued so far have ended: what was queued is cached or failed.
    func settle(_ expected: [Int]) -> Bool {
        eventually { try expected.allSatisfy(isCached) }
    }

    func testStepsForwardPrefetchTheNextPhotos() throws {
        try view(3)
        XCTAssertTrue(settle([4, 5]), "the two after the one opened")
        try view(4)
        XCTAssertTrue(settle([6]))
        XCTAssertFalse(try isCached(2), "nothing behind a reader going forwards")
        XCTAssertFalse(try isCached(7), "no more than the prefetch count ahead")
    }

    func testStepsBackwardsPrefetchThePhotosBefore() throws {
        try view(9)
        XCTAssertTrue(settle([10, 11]), "a first open cannot know the direction: it looks ahead")
        try view(8)
        XCTAssertTrue(settle([7, 6]), "the entry before the last one opened: the two before it")
        try view(7)
        XCTAssertTrue(settle([5]))
        XCTAssertFalse(try isCached(4), "no more than the prefetch count behind")
    }

    func testAJumpPrefetchesAfterWhereItLanded() throws {
        try view(1)
        XCTAssertTrue(settle([2, 3]))
        try view(8)
        XCTAssertTrue(settle([9, 10]), "a jump is not a step back: it looks ahead of where it landed")
        XCTAssertFalse(try isCached(7))
    }

    func testAFolderListedBeforeOthersIsStillWhereOpensLand() throws {
        // Newer listings that do not hold the photos are searched first (by their index of positions).
        for inode in [Node.root.inode, Node.moments.inode, Node.regions.inode] {
            _ = try filesystem.listing(of: inode)
        }
        try view(1)
        XCTAssertTrue(settle([2, 3]))
        try view(8)
        XCTAssertTrue(settle([9, 10]), "a jump found in the older listing: ahead of where it landed")
        XCTAssertFalse(try isCached(7))
        try view(6)
        XCTAssertTrue(settle([7]), "a jump back by two is a jump too: ahead of where it landed")
        XCTAssertFalse(try isCached(5))
    }

    func inFlight(_ index: Int) throws -> Bool {
        guard case .photo(let seq) = entries[index].node, let photo = try fixture.catalog.photo(seq: seq),
              let size = photo.byteSize, let type = photo.contentType else { return false }
        return fixture.cache.engine.isInFlight(OriginalCache.key(for: ContentSource(
            photoID: photo.id, url: photo.originalURL, expectedSize: size, contentType: type, etag: photo.etag)))
    }

    func testAnOpenThatReadsOnlyAHeaderWarmsNothing() throws {
        let reply = try filesystem.open(inode: entries[3].attributes.inode)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 100, alignment: 16)
        defer { buffer.deallocate() }
        XCTAssertEqual(try filesystem.read(reply.handle, into: buffer, at: 0), 100)
        filesystem.release(reply.handle)
        // Flush: a later whole read's prefetches are queued behind any the header read had queued (one serial
        // queue), so once they are cached, photos 4 and 5 would be cached or coming.
        try view(8)
        XCTAssertTrue(settle([9, 10]))
        for index in [4, 5] {
            XCTAssertFalse(try isCached(index), "photo \(index) was warmed by a header read")
            XCTAssertFalse(try inFlight(index))
        }
    }

    /// Opens the entry at `index`, reads its first 100 bytes and closes it, as a header scan does.
    func peek(_ index: Int) throws {
        let reply = try filesystem.open(inode: entries[index].attributes.inode)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 100, alignment: 16)
        defer { buffer.deallocate() }
        XCTAssertEqual(try filesystem.read(reply.handle, into: buffer, at: 0), 100)
        filesystem.release(reply.handle)
    }

    func testAfterAWholeReadTheNextOpenWarmsAtOnceUntilAHandleReadsOnlyAHeader() throws {
        try view(0)
        XCTAssertTrue(settle([1, 2]))
        // The folder's last photo was read whole: this open warms 4 and 5 before it reads anything.
        let reply = try filesystem.open(inode: entries[3].attributes.inode)
        XCTAssertTrue(settle([4, 5]), "warmed at open, as a viewer waiting on this photo needs")
        filesystem.release(reply.handle)
        // That handle read nothing: the folder is being scanned, not read, and the next open waits again.
        try peek(6)
        try view(9)
        XCTAssertTrue(settle([10, 11]))
        for index in [7, 8] {
            XCTAssertFalse(try isCached(index), "photo \(index) was warmed by a header read")
            XCTAssertFalse(try inFlight(index))
        }
    }
}
