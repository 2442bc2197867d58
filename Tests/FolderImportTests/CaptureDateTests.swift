// Capture dates: EXIF texts, offsets, file names, the fallback order, and hostile values.
import FolderImport
import PhotoSources
import XCTest

final class CaptureDateTests: XCTestCase {
    /// 2025-06-01 UTC: the "now" of these tests (latest plausible year 2026).
    let now: Int64 = 1_748_736_000

    func seconds(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int) -> Int64 {
        MomentRange.seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s)!
    }

    func testExifDatesAreWallClockNeverConverted() {
        XCTAssertEqual(CaptureDateRules.exifDate("2024:07:14 09:30:12", latestYear: 2026), seconds(2024, 7, 14, 9, 30, 12))
        XCTAssertEqual(CaptureDateRules.exifDate("2024-07-14 09:30:12", latestYear: 2026), seconds(2024, 7, 14, 9, 30, 12))
        XCTAssertEqual(CaptureDateRules.exifDate("2024:07:14 09:30:12.345", latestYear: 2026), seconds(2024, 7, 14, 9, 30, 12))
    }

    func testAbsurdExifDatesAreNoDate() {
        for text in ["0000:00:00 00:00:00", "    :  :     :  :  ", "", "2024:13:01 00:00:00", "2023:02:29 10:00:00",
                     "2024:07:14 24:00:00", "9999:12:31 23:59:59", "0001:01:01 00:00:00", "1800:01:01 00:00:00",
                     "2024:07:14", "abcd:ef:gh ij:kl:mn", String(repeating: "9", count: 1 << 20)] {
            XCTAssertNil(CaptureDateRules.exifDate(text, latestYear: 2026), text.prefix(40).description)
        }
    }

    func testOffsets() {
        XCTAssertEqual(CaptureDateRules.offsetMinutes("+02:00"), 120)
        XCTAssertEqual(CaptureDateRules.offsetMinutes("-05:30"), -330)
        XCTAssertEqual(CaptureDateRules.offsetMinutes("+14:00"), 840)
        XCTAssertEqual(CaptureDateRules.offsetMinutes("-12:00"), -720)
        for text in ["+99:00", "+14:01", "-12:30", "+02:60", "02:00", "+2:00", "", "+0a:00", "   :  "] {
            XCTAssertNil(CaptureDateRules.offsetMinutes(text), text)
        }
    }

    func testFileNameDates() {
        // A leap second stays in its minute, day and year (as the second before it).
        XCTAssertEqual(CaptureDateRules.fileNameDate("2016-12-31 23.59.60.jpg", latestYear: 2030),
                       MomentRange.seconds(year: 2016, month: 12, day: 31, hour: 23, minute: 59, second: 59))
        let expected = seconds(2024, 7, 14, 9, 30, 12)
        for name in ["IMG_20240714_093012.jpg", "PXL_20240714_093012345.jpg", "2024-07-14 09.30.12.jpg",
                     "20240714_093012.jpg", "VID-20240714-093012.jpg", "Screenshot_2024-07-14-09-30-12.png",
                     "Screenshot 2024-07-14 at 09.30.12.png", "signal-2024-07-14-093012.jpg", "WIN_20240714_09_30_12_Pro.jpg",
                     "DJI_20240714093012_0001_D.JPG", "00000IMG_00000_BURST20240714093012_COVER.jpg",
                     "IMG_20240714093012345.jpg"] {
            XCTAssertEqual(CaptureDateRules.fileNameDate(name, latestYear: 2026), expected, name)
        }
        for name in ["IMG_1234.jpg", "120240714_093012.jpg", "20241314_093012.jpg", "2024-07-14.jpg",
                     "IMG_202407140930121.jpg", "20240714093012345678.jpg", "Screenshot 2024-07-14 at .png",
                     "99990714_093012.jpg", "", String(repeating: "1", count: 100_000)] {
            XCTAssertNil(CaptureDateRules.fileNameDate(name, latestYear: 2026), String(name.prefix(40)))
        }
    }

    /// macOS names screenshots in the user's clock format: "… at 10.30.12 PM" is 22:30:12.
    func testTwelveHourScreenshotNames() {
        XCTAssertEqual(CaptureDateRules.fileNameDate("Screenshot 2024-07-14 at 10.30.12 PM.png", latestYear: 2026), seconds(2024, 7, 14, 22, 30, 12))
        XCTAssertEqual(CaptureDateRules.fileNameDate("Screenshot 2024-07-14 at 10.30.12\u{202F}am.png", latestYear: 2026), seconds(2024, 7, 14, 10, 30, 12))
        XCTAssertEqual(CaptureDateRules.fileNameDate("Screenshot 2024-07-14 at 12.05.00 AM.png", latestYear: 2026), seconds(2024, 7, 14, 0, 5, 0))
        XCTAssertEqual(CaptureDateRules.fileNameDate("Screenshot 2024-07-14 at 12.05.00 PM.png", latestYear: 2026), seconds(2024, 7, 14, 12, 5, 0))
        XCTAssertEqual(CaptureDateRules.fileNameDate("2024-07-14 09.30.12 Amsterdam.jpg", latestYear: 2026), seconds(2024, 7, 14, 9, 30, 12),
                       "a word after the time is no AM")
        XCTAssertNil(CaptureDateRules.fileNameDate("Screenshot 2024-07-14 at 13.05.00 PM.png", latestYear: 2026))
        XCTAssertEqual(CaptureDateRules.fileNameDate("Screenshot 2024-07-14 at 9.05.01 AM.png", latestYear: 2026), seconds(2024, 7, 14, 9, 5, 1),
                       "one digit before 10")
        XCTAssertEqual(CaptureDateRules.fileNameDate("Screen Shot 2020-01-01 at 4.05.06 PM.png", latestYear: 2026), seconds(2020, 1, 1, 16, 5, 6),
                       "older macOS")
        XCTAssertEqual(CaptureDateRules.fileNameDate("Screenshot 2024-07-14 at 21.05.01.png", latestYear: 2026), seconds(2024, 7, 14, 21, 5, 1))
    }

    /// WhatsApp's names hold a day and no time (and WhatsApp strips EXIF): the modification time when it is on
    /// that day, else the day's first second.
    func testADayWithoutATimeInTheName() {
        let day = seconds(2024, 7, 14, 0, 0, 0)
        XCTAssertEqual(CaptureDateRules.fileNameDay("IMG-20240714-WA0001.jpg", latestYear: 2026), day)
        XCTAssertEqual(CaptureDateRules.fileNameDay("VID-20240714-WA0012.mp4", latestYear: 2026), day)
        for name in ["IMG-20240714-0001.jpg", "IMG-120240714-WA0001.jpg", "IMG-20241314-WA0001.jpg", "IMG-99990714-WA1.jpg", "-WA"] {
            XCTAssertNil(CaptureDateRules.fileNameDay(name, latestYear: 2026), name)
        }
        let now = seconds(2026, 1, 1, 0, 0, 0)
        let received = seconds(2024, 7, 14, 18, 5, 0)
        XCTAssertEqual(CaptureDateRules.captureDate(ExifFields(), fileName: "IMG-20240714-WA0001.jpg", modifiedWallClock: received,
                                                    now: now)?.wallClock, received)
        let copiedLater = seconds(2025, 3, 1, 10, 0, 0)
        let date = CaptureDateRules.captureDate(ExifFields(), fileName: "IMG-20240714-WA0001.jpg", modifiedWallClock: copiedLater, now: now)
        XCTAssertEqual(date?.wallClock, day)
        XCTAssertEqual(date?.origin, .fileName)
    }

    func testFallbackOrder() {
        var exif = ExifFields()
        exif.dateTime = "2020:01:01 10:00:00"
        exif.dateTimeDigitized = "2021:01:01 10:00:00"
        exif.dateTimeOriginal = "2022:01:01 10:00:00"
        exif.offsetTimeOriginal = "+09:00"
        let mtime = seconds(2019, 5, 5, 5, 5, 5)
        var date = CaptureDateRules.captureDate(exif, fileName: "IMG_20180101_000000.jpg", modifiedWallClock: mtime, now: now)
        XCTAssertEqual(date, CaptureDate(wallClock: seconds(2022, 1, 1, 10, 0, 0), offsetMinutes: 540, origin: .dateTimeOriginal))
        XCTAssertEqual(date?.text, "2022-01-01 10:00:00+09:00")
        exif.dateTimeOriginal = "0000:00:00 00:00:00"
        date = CaptureDateRules.captureDate(exif, fileName: "x.jpg", modifiedWallClock: mtime, now: now)
        XCTAssertEqual(date?.origin, .dateTimeDigitized)
        XCTAssertNil(date?.offsetMinutes, "OffsetTimeOriginal belongs to DateTimeOriginal")
        exif.dateTimeDigitized = nil
        XCTAssertEqual(CaptureDateRules.captureDate(exif, fileName: "x.jpg", modifiedWallClock: mtime, now: now)?.origin, .dateTime)
        exif.dateTime = "9999:01:01 00:00:00"
        date = CaptureDateRules.captureDate(exif, fileName: "IMG_20180101_000000.jpg", modifiedWallClock: mtime, now: now)
        XCTAssertEqual(date, CaptureDate(wallClock: seconds(2018, 1, 1, 0, 0, 0), origin: .fileName))
        date = CaptureDateRules.captureDate(exif, fileName: "holiday.jpg", modifiedWallClock: mtime, now: now)
        XCTAssertEqual(date, CaptureDate(wallClock: mtime, origin: .fileModified))
        XCTAssertEqual(date?.text, "2019-05-05 05:05:05")
        XCTAssertNil(CaptureDateRules.captureDate(exif, fileName: "holiday.jpg", modifiedWallClock: Int64.max, now: now))
    }

    func testTextOfEarlyAndNegativeOffsets() {
        XCTAssertEqual(CaptureDate(wallClock: seconds(1900, 3, 1, 0, 0, 1), offsetMinutes: -330, origin: .dateTime).text,
                       "1900-03-01 00:00:01-05:30")
    }
}

extension CaptureDateTests {
    /// `MomentRange.dateTakenText` (shared by every source) inverts `MomentRange.seconds` across the range's
    /// ends, leap days and dates before 1970, and clamps what lies outside.
    func testDateTakenTextInvertsMomentSecondsOverTheWholeRange() throws {
        let dates = [(1, 1, 1, 0, 0, 0), (1969, 12, 31, 23, 59, 59), (1970, 1, 1, 0, 0, 0), (2000, 2, 29, 12, 0, 1),
                     (2024, 7, 14, 9, 30, 12), (2100, 3, 1, 0, 0, 0), (9999, 12, 31, 23, 59, 59)]
        for (y, mo, d, h, mi, s) in dates {
            let seconds = try XCTUnwrap(MomentRange.seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s))
            XCTAssertEqual(MomentRange.dateTakenText(seconds),
                           String(format: "%04d-%02d-%02d %02d:%02d:%02d", y, mo, d, h, mi, s))
        }
        XCTAssertEqual(MomentRange.dateTakenText(.max), "9999-12-31 23:59:59")
        XCTAssertEqual(MomentRange.dateTakenText(.min), "0001-01-01 00:00:00")
    }
}
