// Which handles read their photo whole (and so warm the next photos of their folder): a viewer or `cat` does, a
// header scan, a buffered size check or a trailer check does not.
import PhotoFS
import XCTest

final class WholeReadingTests: XCTestCase {
    let kib = 1 << 10, mib = 1 << 20

    func testASequentialReaderBecomesWholeOnceAtTheThreshold() {
        var reading = WholeReading(size: 10 << 20)
        var became: [Int] = []
        for index in 0..<40 where reading.read(offset: Int64(index * 128 * kib), count: 128 * kib) { became.append(index) }
        XCTAssertEqual(became, [15], "the read that reaches 2 MiB, and only that one")
        XCTAssertTrue(reading.isWhole)
    }

    func testHeaderReadersNeverAre() {
        var header = WholeReading(size: 10 << 20)
        XCTAssertFalse(header.read(offset: 0, count: 128 * kib), "exiftool -fast, file: one 128 KiB read")
        var pillow = WholeReading(size: 10 << 20)
        for index in 0..<9 { XCTAssertFalse(pillow.read(offset: Int64(index * 128 * kib), count: 128 * kib)) }
        XCTAssertFalse(pillow.isWhole, "a 1 MiB buffered read and the kernel's readahead: 1.125 MiB")
        var looping = WholeReading(size: 10 << 20)
        for _ in 0..<100 { XCTAssertFalse(looping.read(offset: 0, count: 64 * kib)) }
        XCTAssertEqual(looping.bytesRead, Int64(100 * 64 * kib), "a reader going over its header again and again")
    }

    func testAReadNearTheEndAloneIsNotReadingWhole() {
        var trailer = WholeReading(size: 10 << 20)
        XCTAssertFalse(trailer.read(offset: 0, count: 128 * kib))
        XCTAssertFalse(trailer.read(offset: Int64(10 * mib - 64 * kib), count: 128 * kib), "a trailer check past the end")
        XCTAssertEqual(trailer.furthest, Int64(10 * mib), "reads are counted up to the end of the photo only")
        XCTAssertFalse(trailer.isWhole)
    }

    func testASmallPhotoReadToItsEndIsWholeAndOutOfOrderReadsCount() {
        var small = WholeReading(size: 300 * Int64(1 << 10))
        XCTAssertFalse(small.read(offset: 128 * Int64(kib), count: 128 * kib), "the second read came first")
        XCTAssertFalse(small.read(offset: 0, count: 128 * kib))
        XCTAssertTrue(small.read(offset: 256 * Int64(kib), count: 128 * kib))
        XCTAssertFalse(small.read(offset: 0, count: 128 * kib), "once is enough")
    }

    func testNonsenseReadsAreIgnored() {
        var reading = WholeReading(size: 1000)
        XCTAssertFalse(reading.read(offset: -1, count: 10))
        XCTAssertFalse(reading.read(offset: 1000, count: 10))
        XCTAssertFalse(reading.read(offset: 0, count: 0))
        XCTAssertFalse(reading.read(offset: 0, count: -5))
        XCTAssertEqual(reading.bytesRead, 0)
        XCTAssertTrue(reading.read(offset: .max - 1, count: .max) == false)
        XCTAssertTrue(reading.read(offset: 999, count: .max) == false, "one byte of 1000 is not whole")
        var empty = WholeReading(size: 0)
        XCTAssertFalse(empty.read(offset: 0, count: 100))
        var big = WholeReading(size: .max, threshold: .max)
        XCTAssertFalse(big.read(offset: .max - 10, count: 100))
    }
}
