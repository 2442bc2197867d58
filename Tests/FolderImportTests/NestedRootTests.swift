// A folder to import inside one the library follows (or names with it) is refused: FolderImporter.nestedRoot.
import FolderImport
import XCTest

/// Which folder to import lies inside another the library follows or names with it (`FolderImporter.nestedRoot`).
final class NestedRootTests: XCTestCase {
    let one: (String, String) -> Bool = { _, _ in true }

    func testAFolderInsideAFollowedOneIsNested() {
        let nested = FolderImporter.nestedRoot(["/home/a/Pictures/2024"], followed: ["/home/a/Pictures"], onOneFileSystem: one)
        XCTAssertEqual(nested?.root, "/home/a/Pictures/2024")
        XCTAssertEqual(nested?.holder, "/home/a/Pictures")
        XCTAssertEqual(FolderImporter.nestedRoot(["/home/a/Pictures", "/home/a/Pictures/x"], followed: [], onOneFileSystem: one)?.holder,
                       "/home/a/Pictures", "named together")
        XCTAssertEqual(FolderImporter.nestedRoot(["/x"], followed: ["/"], onOneFileSystem: one)?.holder, "/")
    }

    func testNeighboursFollowedNestingAndOtherFileSystemsAreNot() {
        XCTAssertNil(FolderImporter.nestedRoot(["/home/a/Pictures 2"], followed: ["/home/a/Pictures"], onOneFileSystem: one),
                     "a name that only starts the same")
        XCTAssertNil(FolderImporter.nestedRoot(["/home/a"], followed: ["/home/a/Pictures"], onOneFileSystem: one),
                     "a folder holding a followed one")
        XCTAssertNil(FolderImporter.nestedRoot(["/home/a/P/2024", "/home/a/P"], followed: ["/home/a/P/2024", "/home/a/P"],
                                               onOneFileSystem: one), "both followed already")
        XCTAssertNil(FolderImporter.nestedRoot(["/home/a/Pictures/card"], followed: ["/home/a/Pictures"],
                                               onOneFileSystem: { _, _ in false }), "a disk mounted inside")
    }
}
