// getxattr and listxattr without a kernel: the size probe, ERANGE, ENODATA, EOPNOTSUPP for every namespace but
// user. (answered without a catalog read), directories, gone photos, and values that follow the catalog.
import Foundation
import GRDB
import PhotoCatalog
import PhotoFS
import PhotoTree
import XCTest

final class ExtendedAttributeReplyTests: XCTestCase {
    typealias Name = ExtendedAttributeBuilder.Name

    /// Rewrites photo `index` of the fixture's origin with a description, a place and tags, as an import would.
    private func describe(_ fixture: FilesystemFixture, index: Int, description: String,
                          place: PlaceResolution? = nil) throws -> UInt64 {
        let origin = fixture.origin.photos[index]
        var record = try XCTUnwrap(try fixture.catalog.photo(id: origin.id))
        record.description = description
        record.placeID = place?.placeID
        record.tags = ["fog", "bay"]
        _ = try fixture.catalog.applyImport(places: place.map { [$0] } ?? [], photos: [
            ImportedPhoto(photo: record, owner: origin.owner, ownerName: origin.ownerName ?? origin.owner),
        ])
        fixture.filesystem.checkForCatalogChanges()
        return Node.photo(seq: record.seq).inode
    }

    private func code(_ body: @autoclosure () throws -> Any) -> FilesystemError.Code? {
        do { _ = try body(); return nil } catch let error as FilesystemError { return error.code } catch {
            XCTFail("not a FilesystemError: \(error)")
            return nil
        }
    }

    func testAProbeGivesTheLengthAShortBufferERANGEAndAFittingOneTheBytes() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let inode = try describe(fixture, index: 0, description: "Fog over the bay")
        let fs = fixture.filesystem
        let value = Array("Fog over the bay".utf8)
        XCTAssertEqual(try fs.getExtendedAttribute(inode: inode, name: Name.comment, size: 0), .size(value.count))
        XCTAssertEqual(try fs.getExtendedAttribute(inode: inode, name: Name.comment, size: value.count), .data(value))
        XCTAssertEqual(try fs.getExtendedAttribute(inode: inode, name: Name.comment, size: 65_536), .data(value))
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: inode, name: Name.comment, size: value.count - 1)),
                       .bufferTooSmall)
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: inode, name: Name.comment, size: 1)), .bufferTooSmall)
        XCTAssertEqual(try fs.getExtendedAttribute(inode: inode, name: Name.tags, size: 100), .data(Array("fog,bay".utf8)))
        let id = fixture.origin.photos[0].id
        XCTAssertEqual(try fs.getExtendedAttribute(inode: inode, name: Name.id, size: 100), .data(Array(id.utf8)))
    }

    func testListxattrHasTheSameContract() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let inode = try describe(fixture, index: 0, description: "Fog")
        let fs = fixture.filesystem
        guard case .size(let length) = try fs.listExtendedAttributes(inode: inode, size: 0) else {
            return XCTFail("a probe answers a length")
        }
        guard case .data(let names) = try fs.listExtendedAttributes(inode: inode, size: length) else {
            return XCTFail("a fitting buffer gets the names")
        }
        XCTAssertEqual(names.count, length)
        XCTAssertEqual(names.last, 0, "every name ends with a NUL")
        let origin = fixture.origin.photos[0]
        XCTAssertEqual(names.split(separator: 0).map { String(decoding: $0, as: UTF8.self) },
                       [Name.originURL, Name.comment, Name.tags, Name.creator, Name.id],
                       "the fixture's photos have no date taken, place or coordinates: \(origin.id)")
        XCTAssertEqual(code(try fs.listExtendedAttributes(inode: inode, size: length - 1)), .bufferTooSmall)
        XCTAssertEqual(try fs.listExtendedAttributes(inode: Node.root.inode, size: 0), .size(0))
        XCTAssertEqual(try fs.listExtendedAttributes(inode: Node.root.inode, size: 10), .data([]))
    }

    func testAnAbsentOrUnknownUserNameIsENODATA() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let inode = Node.photo(seq: try XCTUnwrap(try fixture.catalog.photo(id: fixture.origin.photos[1].id)).seq).inode
        let fs = fixture.filesystem
        for name in [Name.comment, Name.taken, Name.albums, "user.baloo.rating", "user.", "user.xdg.comment.x",
                     "user.XDG.COMMENT", "user.\u{FFFD}"] {
            XCTAssertEqual(code(try fs.getExtendedAttribute(inode: inode, name: name, size: 0)), .noAttribute, name)
            XCTAssertEqual(code(try fs.getExtendedAttribute(inode: inode, name: name, size: 100)), .noAttribute, name)
        }
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: Node.root.inode, name: Name.comment, size: 0)), .noAttribute)
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: fixture.yearInode, name: Name.comment, size: 0)), .noAttribute)
    }

    func testEveryOtherNamespaceIsEOPNOTSUPPNeverENOSYSOrENODATA() throws {
        let fixture = try FilesystemFixture(photos: 1)
        let photo = try XCTUnwrap(try fixture.yearEntries().first).attributes.inode
        for inode in [photo, Node.root.inode, fixture.yearInode, UInt64.max] {
            for name in ["security.selinux", "system.posix_acl_access", "system.posix_acl_default", "trusted.overlay",
                         "security.capability", "", "user", "USER.xdg.comment", "xdg.comment", " user.x"] {
                XCTAssertEqual(code(try fixture.filesystem.getExtendedAttribute(inode: inode, name: name, size: 0)),
                               .notSupported, "\(name) on \(inode)")
            }
        }
    }

    /// `ls -l` asks every file for security.selinux and system.posix_acl_access; the kernel caches neither, so
    /// those answers must not read the catalog. Here the catalog cannot be read at all, and they still come.
    func testOtherNamespacesAndNamesNoNodeCarriesAreAnsweredWithoutTheCatalog() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let photo = try XCTUnwrap(try fixture.yearEntries().first).attributes.inode
        let fs = PhotoFilesystem(catalog: fixture.catalog, cache: fixture.cache, options: FilesystemOptions(),
                                 logger: .init(label: "test"))
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let other = try DatabaseQueue(path: fixture.catalog.path, configuration: configuration)
        try other.writeWithoutTransaction { db in try db.execute(sql: "DROP TABLE album_photo; DROP TABLE photo") }
        try other.close()
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: photo, name: Name.comment, size: 0)), .ioFailure,
                       "a name photos carry needs the catalog, which now fails")
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: photo, name: "security.selinux", size: 255)), .notSupported)
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: photo, name: "system.posix_acl_access", size: 0)),
                       .notSupported)
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: photo, name: "user.baloo.rating", size: 0)), .noAttribute)
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: Node.root.inode, name: Name.comment, size: 0)),
                       .noAttribute)
        XCTAssertEqual(try fs.listExtendedAttributes(inode: Node.moments.inode, size: 0), .size(0))
    }

    func testRegionsAndAlbumsCarryAComment() throws {
        let fixture = try FilesystemFixture(photos: 3)
        _ = try describe(fixture, index: 0, description: "",
                         place: PlaceResolution(placeID: "sf", placeName: "San Francisco", regionName: "California"))
        let ids = fixture.origin.photos.map(\.id)
        try fixture.catalog.applyAlbums([
            AlbumImport(sourceID: "1", title: "Harbour", description: "Mornings\nby the water", updatedAt: 1, memberIDs: [ids[1]]),
            AlbumImport(sourceID: "2", title: "Plain", description: "", updatedAt: 1, memberIDs: [ids[2]]),
        ], keepingOnly: nil)
        let fs = fixture.filesystem
        fs.checkForCatalogChanges()
        let regions = try fs.listing(of: Node.regions.inode)
        let california = try XCTUnwrap(regions.entry(named: "California")).attributes.inode
        XCTAssertEqual(try fs.getExtendedAttribute(inode: california, name: Name.comment, size: 100),
                       .data(Array("San Francisco".utf8)))
        let unknown = try XCTUnwrap(regions.entries.first { $0.name != "California" }).attributes.inode
        XCTAssertEqual(try fs.listExtendedAttributes(inode: unknown, size: 100), .data([]), "no places, no comment")
        let albums = try fs.listing(of: Node.albums.inode)
        let harbour = try XCTUnwrap(albums.entry(named: "Harbour")).attributes.inode
        XCTAssertEqual(try fs.getExtendedAttribute(inode: harbour, name: Name.comment, size: 0), .size(21))
        XCTAssertEqual(try fs.listExtendedAttributes(inode: harbour, size: 100), .data(Array((Name.comment + "\0").utf8)))
        let plain = try XCTUnwrap(albums.entry(named: "Plain")).attributes.inode
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: plain, name: Name.comment, size: 0)), .noAttribute)
        let photo = Node.photo(seq: try XCTUnwrap(try fixture.catalog.photo(id: ids[0])).seq).inode
        XCTAssertEqual(try fs.getExtendedAttribute(inode: photo, name: Name.region, size: 100), .data(Array("California".utf8)))
        XCTAssertEqual(try fs.getExtendedAttribute(inode: photo, name: Name.place, size: 100), .data(Array("San Francisco".utf8)))
        let inHarbour = Node.photo(seq: try XCTUnwrap(try fixture.catalog.photo(id: ids[1])).seq).inode
        XCTAssertEqual(try fs.getExtendedAttribute(inode: inHarbour, name: Name.albums, size: 100), .data(Array("Harbour".utf8)))
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: Node.album(999).inode, name: Name.comment, size: 0)), .notFound)
        XCTAssertEqual(code(try fs.listExtendedAttributes(inode: Node.region(999).inode, size: 0)), .notFound)
    }

    func testAGonePhotoIsENOENT() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let entry = try XCTUnwrap(try fixture.yearEntries().first)
        try fixture.catalog.removePhotos(ids: [try fixture.photoID(of: entry)])
        fixture.filesystem.checkForCatalogChanges()
        XCTAssertEqual(code(try fixture.filesystem.getExtendedAttribute(inode: entry.attributes.inode, name: Name.id, size: 0)),
                       .notFound)
        XCTAssertEqual(code(try fixture.filesystem.listExtendedAttributes(inode: entry.attributes.inode, size: 0)), .notFound)
    }

    /// Values are cached per node, and the cache goes with the catalog's change counter, as listings do.
    func testValuesFollowTheCatalogAfterAnImport() throws {
        let fixture = try FilesystemFixture(photos: 2)
        let inode = try describe(fixture, index: 0, description: "Before")
        let fs = fixture.filesystem
        XCTAssertEqual(try fs.getExtendedAttribute(inode: inode, name: Name.comment, size: 100), .data(Array("Before".utf8)))
        _ = try describe(fixture, index: 0, description: "After the edit")
        XCTAssertEqual(try fs.getExtendedAttribute(inode: inode, name: Name.comment, size: 100),
                       .data(Array("After the edit".utf8)))
        _ = try describe(fixture, index: 0, description: "")
        XCTAssertEqual(code(try fs.getExtendedAttribute(inode: inode, name: Name.comment, size: 0)), .noAttribute)
    }
}
