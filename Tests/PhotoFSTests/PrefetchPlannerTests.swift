// PrefetchPlanner: where an open lands among the folders listed most recently, whatever their order, their
// number and their repeats, and so which photos come next.
@testable import PhotoFS
@testable import PhotoTree
import XCTest

final class PrefetchPlannerTests: XCTestCase {
    /// A year folder holding the photos `seqs`, in that order.
    func folder(_ year: Int, _ seqs: [Int64]) -> DirectoryListing {
        DirectoryListing(attributes: NodeAttributes(node: .year(year), size: 4096, mtime: 0, linkCount: 2),
                         entries: seqs.map {
                             DirectoryEntry(name: "\($0).jpg", attributes: NodeAttributes(node: .photo(seq: $0), size: 1,
                                                                                          mtime: 0, linkCount: 3))
                         })
    }

    func inode(_ seq: Int64) -> UInt64 { Node.photo(seq: seq).inode }

    func testAFolderListedAgainIsSearchedInItsNewOrder() {
        let planner = PrefetchPlanner(count: 2)
        planner.listed(folder(2020, [1, 2, 3, 4, 5, 6]))
        planner.listed(folder(2021, [10, 11]))
        // Opens far from each other in the older folder: its second search makes its index.
        XCTAssertEqual(planner.neighbours(of: inode(2)).seqs, [3, 4])
        XCTAssertEqual(planner.neighbours(of: inode(5)).seqs, [6])
        // Listed again in another order (a file manager sorting by date, newest first).
        planner.listed(folder(2020, [6, 5, 4, 3, 2, 1]))
        XCTAssertEqual(planner.neighbours(of: inode(2)).seqs, [1], "the new order, not the index of the old one")
        XCTAssertEqual(planner.neighbours(of: inode(6)).seqs, [5, 4])
        XCTAssertEqual(planner.neighbours(of: inode(3)).seqs, [2, 1])
    }

    func testTheOldestOfNineListingsIsForgotten() {
        let planner = PrefetchPlanner(count: 1)
        planner.listed(folder(2000, [1, 2, 3]))
        XCTAssertEqual(planner.neighbours(of: inode(1)).folder, .year(2000))
        for year in 2001...2008 { planner.listed(folder(year, [Int64(year) * 10, Int64(year) * 10 + 1])) }
        XCTAssertNil(planner.neighbours(of: inode(2)).folder, "the ninth listing pushed the first out")
        XCTAssertEqual(planner.neighbours(of: inode(20010)).seqs, [20011], "the second listed is still there")
        XCTAssertEqual(planner.neighbours(of: inode(20080)).seqs, [20081])
    }

    func testAPhotoTwiceInAFolderIsFoundAtItsFirstPlace() {
        let planner = PrefetchPlanner(count: 2)
        planner.listed(folder(2020, [1, 2, 7, 3, 7, 4]))
        planner.listed(folder(2021, [10]))
        for _ in 0..<2 {
            // The first search is linear, the second reads the index: both find the first 7.
            XCTAssertEqual(planner.neighbours(of: inode(7)).seqs, [3, 7])
            _ = planner.neighbours(of: inode(10))
        }
    }
}
