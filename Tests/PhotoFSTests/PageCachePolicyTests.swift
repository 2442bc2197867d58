// PageCachePolicy: the kernel never serves one version's cached pages to a reader of another.
import PhotoFS
import XCTest

final class PageCachePolicyTests: XCTestCase {
    func testAnUnknownInodeDropsThenTheSameVersionKeeps() {
        var policy = PageCachePolicy()
        XCTAssertEqual(policy.opened(inode: 7, identity: "v1"), .dropStale)
        XCTAssertEqual(policy.opened(inode: 7, identity: "v1"), .keep)
        policy.closed(inode: 7, identity: "v1", mode: .dropStale)
        policy.closed(inode: 7, identity: "v1", mode: .keep)
        XCTAssertEqual(policy.opened(inode: 7, identity: "v1"), .keep, "closed files leave their pages valid")
        XCTAssertEqual(policy.cachedIdentity(of: 7), "v1")
    }

    func testANewVersionWithNoOldReaderDropsTheOldPages() {
        var policy = PageCachePolicy()
        let first = policy.opened(inode: 7, identity: "v1")
        policy.closed(inode: 7, identity: "v1", mode: first)
        XCTAssertEqual(policy.opened(inode: 7, identity: "v2"), .dropStale)
        XCTAssertEqual(policy.cachedIdentity(of: 7), "v2")
        XCTAssertEqual(policy.opened(inode: 7, identity: "v2"), .keep)
    }

    func testANewVersionWhileTheOldIsOpenBypassesUntilTheOldCloses() {
        var policy = PageCachePolicy()
        let old = policy.opened(inode: 7, identity: "v1")
        let new = policy.opened(inode: 7, identity: "v2")
        XCTAssertEqual(new, .bypass)
        XCTAssertTrue(new.keepCache, "bypassing must not drop pages the old readers may be waiting on")
        XCTAssertEqual(policy.cachedIdentity(of: 7), "v1")
        policy.closed(inode: 7, identity: "v2", mode: new)
        XCTAssertEqual(policy.opened(inode: 7, identity: "v2"), .bypass, "v1 is still open")
        policy.closed(inode: 7, identity: "v1", mode: old)
        XCTAssertEqual(policy.opened(inode: 7, identity: "v2"), .dropStale)
        XCTAssertEqual(policy.cachedIdentity(of: 7), "v2")
    }

    func testForgettingClosedEntriesKeepsOpenOnesAndForgottenOnesDrop() {
        var policy = PageCachePolicy(limit: 2)
        let open = policy.opened(inode: 1, identity: "a")
        policy.closed(inode: 2, identity: "b", mode: policy.opened(inode: 2, identity: "b"))
        XCTAssertEqual(policy.opened(inode: 3, identity: "c"), .dropStale)
        XCTAssertEqual(policy.cachedIdentity(of: 1), "a", "an open file is never forgotten")
        XCTAssertNil(policy.cachedIdentity(of: 2))
        XCTAssertEqual(policy.opened(inode: 2, identity: "b"), .dropStale, "forgotten means unknown: drop, safely")
        policy.closed(inode: 1, identity: "a", mode: open)
    }
}
