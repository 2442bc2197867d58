// StampedCache: a value read before an invalidation is never stored after it.
import PhotoFS
import XCTest

final class StampedCacheTests: XCTestCase {
    func testAValueReadBeforeAnInvalidationIsNotStored() {
        let cache = StampedCache<String, Int>()
        let stamp = cache.stamp()
        // ... the catalog is read here, then an import lands and the watcher drops the cache ...
        XCTAssertEqual(cache.invalidate().count, 0)
        XCTAssertFalse(cache.store(1, for: "year", readAt: stamp))
        XCTAssertNil(cache.value(for: "year"))
        XCTAssertTrue(cache.store(2, for: "year", readAt: cache.stamp()))
        XCTAssertEqual(cache.value(for: "year"), 2)
    }

    func testBuildStoresWhenNothingChangedAndInvalidateReturnsWhatWasCached() {
        let cache = StampedCache<String, Int>()
        var builds = 0
        XCTAssertEqual(cache.value(for: "a") { builds += 1; return 7 }, 7)
        XCTAssertEqual(cache.value(for: "a") { builds += 1; return 8 }, 7)
        XCTAssertEqual(builds, 1)
        XCTAssertEqual(cache.invalidate(), ["a": 7])
    }

    func testABuildAcrossAnInvalidationIsBuiltAgainAndTheSettledOneKept() {
        let cache = StampedCache<String, Int>()
        var stale: [(String, Int)] = []
        cache.onStale = { stale.append(($0, $1)) }
        var builds = 0
        let value = cache.value(for: "a") { () -> Int in
            builds += 1
            if builds == 1 { invalidateDuringBuild(cache) } // an import lands during the first read
            return builds
        }
        XCTAssertEqual(value, 2, "the read that started after the import is the one answered")
        XCTAssertEqual(cache.value(for: "a"), 2)
        XCTAssertTrue(stale.isEmpty)
    }

    func testACatalogThatKeepsChangingHandsOutTheLastBuildAndReportsIt() {
        let cache = StampedCache<String, Int>()
        var stale: [(String, Int)] = []
        cache.onStale = { stale.append(($0, $1)) }
        var builds = 0
        let value = cache.value(for: "a") { () -> Int in
            builds += 1
            invalidateDuringBuild(cache)
            return builds
        }
        XCTAssertEqual(builds, 3)
        XCTAssertEqual(value, 3)
        XCTAssertNil(cache.value(for: "a"), "never kept")
        XCTAssertEqual(stale.map(\.0), ["a"])
        XCTAssertEqual(stale.map(\.1), [3], "the owner is told what the kernel may now hold")
    }

    func testALimitedCacheStartsOverWhenFull() {
        let cache = StampedCache<Int, Int>(limit: 3)
        for key in 0..<3 { cache.store(key, for: key, readAt: cache.stamp()) }
        cache.store(3, for: 3, readAt: cache.stamp())
        XCTAssertEqual(cache.value(for: 3), 3)
        XCTAssertNil(cache.value(for: 0))
    }

    private func invalidateDuringBuild(_ cache: StampedCache<String, Int>) { cache.invalidate() }
}
