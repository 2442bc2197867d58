// When a photo was taken, as the camera's wall clock read it: EXIF date texts, their offsets, dates in file names.
import Foundation
import PhotoCatalog
import PhotoSources

/// A capture time as local wall-clock fields read as if they were UTC (the catalog's `moment_at` convention:
/// a photo taken at 09:30 in Tokyo is named 09.30 and filed under its Tokyo year, never converted), with the
/// offset from UTC the camera recorded, when it recorded one.
public struct CaptureDate: Equatable, Sendable {
    /// Wall-clock seconds since 1970 read as UTC (always within `MomentRange`).
    public var wallClock: Int64
    /// Minutes east of UTC (`+02:00` → 120), when known.
    public var offsetMinutes: Int?
    /// Where it came from, for the photo's `date_taken` text and for tests.
    public var origin: Origin

    public enum Origin: String, Equatable, Sendable {
        case dateTimeOriginal, dateTimeDigitized, dateTime, fileName, fileModified
        /// The date an earlier import gave the photo, kept when its file now has only its mtime to go by.
        case earlierImport
    }

    public init(wallClock: Int64, offsetMinutes: Int? = nil, origin: Origin) {
        self.wallClock = wallClock; self.offsetMinutes = offsetMinutes; self.origin = origin
    }

    /// "2024-07-14 09:30:12", with "+02:00" appended when the offset is known: the catalog's `date_taken`.
    public var text: String {
        var text = MomentRange.dateTakenText(wallClock)
        if let offsetMinutes {
            let sign = offsetMinutes < 0 ? "-" : "+"
            text += String(format: "%@%02d:%02d", sign, abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
        }
        return text
    }
}

/// The rules that turn what a file says into a capture date.
public enum CaptureDateRules {
    /// The first photograph (Niépce) is from 1826; an EXIF year before it, or more than a year after the
    /// import, is a camera clock that was never set or a corrupt field (year 0, 9999): the next source of
    /// the date is used instead.
    public static let earliestYear = 1826

    /// The latest plausible year for a photo imported at `now` (seconds since 1970): the next year, so a
    /// camera a few hours ahead on New Year's Eve still counts.
    public static func latestYear(now: Int64) -> Int {
        CivilDate.of(days: CivilDate.day(ofSecond: now)).year + 1
    }

    /// `DateTimeOriginal` (with `OffsetTimeOriginal`), else `DateTimeDigitized` (with `OffsetTimeDigitized`),
    /// else `DateTime` (with `OffsetTime`), else a date in the file name, else the file's modification time
    /// as the importing machine's local clock showed it (`modifiedWallClock`).
    public static func captureDate(_ exif: ExifFields, fileName: String, modifiedWallClock: Int64?,
                                   now: Int64) -> CaptureDate? {
        let latest = latestYear(now: now)
        let candidates: [(String?, String?, CaptureDate.Origin)] = [
            (exif.dateTimeOriginal, exif.offsetTimeOriginal, .dateTimeOriginal),
            (exif.dateTimeDigitized, exif.offsetTimeDigitized, .dateTimeDigitized),
            (exif.dateTime, exif.offsetTime, .dateTime),
        ]
        for (text, offset, origin) in candidates {
            if let text, let seconds = exifDate(text, latestYear: latest) {
                return CaptureDate(wallClock: seconds, offsetMinutes: offset.flatMap(offsetMinutes), origin: origin)
            }
        }
        if let seconds = fileNameDate(fileName, latestYear: latest) {
            return CaptureDate(wallClock: seconds, origin: .fileName)
        }
        // A day without a time (WhatsApp's IMG-20240714-WA0001.jpg: WhatsApp strips EXIF, so its name is the
        // only date): the modification time when it falls on that day (the time it was received), else the
        // day's first second.
        if let day = fileNameDay(fileName, latestYear: latest) {
            if let modifiedWallClock, modifiedWallClock >= day, modifiedWallClock < day + 86_400 {
                return CaptureDate(wallClock: modifiedWallClock, origin: .fileName)
            }
            return CaptureDate(wallClock: day, origin: .fileName)
        }
        if let modifiedWallClock, let seconds = MomentRange.valid(modifiedWallClock) {
            return CaptureDate(wallClock: seconds, origin: .fileModified)
        }
        return nil
    }

    /// EXIF's "YYYY:MM:DD HH:MM:SS" (also with "-" in the date, as some phones write, and a "T"), optionally
    /// followed by fractions or a zone, which are ignored here. Blank, "0000:00:00 00:00:00", impossible
    /// fields and implausible years give nil.
    public static func exifDate(_ text: String, latestYear: Int) -> Int64? {
        let bytes = Array(text.utf8.prefix(64))
        guard bytes.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let dateSeparators: Set<UInt8> = [UInt8(ascii: ":"), UInt8(ascii: "-")]
        guard dateSeparators.contains(bytes[4]), bytes[7] == bytes[4],
              bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (earliestYear...max(earliestYear, latestYear)).contains(year) else { return nil }
        return MomentRange.seconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// EXIF 2.31's "+HH:MM" / "-HH:MM" in minutes; nil for anything else, including offsets no zone has
    /// (beyond -12:00…+14:00, like "+99:00") and minutes past 59.
    public static func offsetMinutes(_ text: String) -> Int? {
        let bytes = Array(text.utf8.prefix(16))
        guard bytes.count >= 6, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"),
              bytes[3] == UInt8(ascii: ":") else { return nil }
        let digits = [bytes[1], bytes[2], bytes[4], bytes[5]]
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let values = digits.map { Int($0 - UInt8(ascii: "0")) }
        let hours = values[0] * 10 + values[1]
        let minutes = values[2] * 10 + values[3]
        guard minutes < 60 else { return nil }
        let total = (hours * 60 + minutes) * (bytes[0] == UInt8(ascii: "-") ? -1 : 1)
        guard (-12 * 60...14 * 60).contains(total) else { return nil }
        return total
    }

    /// A date and time in a file name, as cameras and phones write them: `IMG_20240714_093012.jpg`,
    /// `PXL_20240714_093012345.jpg` (milliseconds ignored), `20240714_093012.jpg`, `2024-07-14 09.30.12.jpg`
    /// (also with "_", "-" or ":" between the parts), macOS's `Screenshot 2024-07-14 at 09.30.12.png`,
    /// Signal's `signal-2024-07-14-093012.jpg`, Windows Camera's `WIN_20240714_09_30_12_Pro.jpg`, and 14 digits
    /// in a row (DJI's `DJI_20240714093012_0001_D.JPG`, Android's `…_BURST20240714093012_COVER.jpg`). The digits
    /// must not continue a longer number.
    public static func fileNameDate(_ name: String, latestYear: Int) -> Int64? {
        let scanned = NameDigits(name)
        let bytes = scanned.bytes
        func isDigit(_ index: Int) -> Bool { scanned.isDigit(index) }
        func number(_ start: Int, _ count: Int) -> Int? { scanned.number(start, count) }
        func byte(_ index: Int, in set: String) -> Bool { scanned.byte(index, in: set) }
        /// The hour, made 24-hour when " AM" or " PM" follows at `index` (macOS writes screenshot names in the
        /// user's clock format: "… at 10.30.12 PM", with a space or a narrow no-break space); nil for an hour
        /// a 12-hour clock cannot show.
        func twentyFourHour(_ hour: Int, after index: Int) -> Int? {
            var at = index
            if byte(at, in: " ") { at += 1 } else if bytes.count >= at + 3, bytes[at..<at + 3].elementsEqual([0xE2, 0x80, 0xAF]) { at += 3 }
            guard at + 2 <= bytes.count, bytes[at + 1] | 0x20 == UInt8(ascii: "m"), !byte(at + 2, in: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") else { return hour }
            switch bytes[at] | 0x20 {
            case UInt8(ascii: "a"): return (1...12).contains(hour) ? hour % 12 : nil
            case UInt8(ascii: "p"): return (1...12).contains(hour) ? hour % 12 + 12 : nil
            default: return hour
            }
        }
        func plausible(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int) -> Int64? {
            guard (earliestYear...max(earliestYear, latestYear)).contains(y) else { return nil }
            return MomentRange.seconds(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
        }
        for start in bytes.indices where isDigit(start) && !isDigit(start - 1) {
            // YYYYMMDD[_-]HHMMSS
            if let y = number(start, 4), let mo = number(start + 4, 2), let d = number(start + 6, 2),
               byte(start + 8, in: "_-"), let h = number(start + 9, 2), let mi = number(start + 11, 2),
               let s = number(start + 13, 2), let seconds = plausible(y, mo, d, h, mi, s) {
                return seconds
            }
            // YYYYMMDD_HH_MM_SS (Windows Camera)
            if let y = number(start, 4), let mo = number(start + 4, 2), let d = number(start + 6, 2),
               byte(start + 8, in: "_"), let h = number(start + 9, 2), byte(start + 11, in: "_"),
               let mi = number(start + 12, 2), byte(start + 14, in: "_"), let s = number(start + 15, 2),
               !isDigit(start + 17), let seconds = plausible(y, mo, d, h, mi, s) {
                return seconds
            }
            // YYYYMMDDHHMMSS, then a non-digit or three digits of milliseconds
            if let y = number(start, 4), let mo = number(start + 4, 2), let d = number(start + 6, 2),
               let h = number(start + 8, 2), let mi = number(start + 10, 2), let s = number(start + 12, 2),
               !isDigit(start + 14) || (number(start + 14, 3) != nil && !isDigit(start + 17)),
               let seconds = plausible(y, mo, d, h, mi, s) {
                return seconds
            }
            guard let y = number(start, 4), byte(start + 4, in: "-"), let mo = number(start + 5, 2),
                  byte(start + 7, in: "-"), let d = number(start + 8, 2) else { continue }
            // YYYY-MM-DD-HHMMSS (Signal)
            if byte(start + 10, in: "-"), let h = number(start + 11, 2), let mi = number(start + 13, 2),
               let s = number(start + 15, 2), !isDigit(start + 17), let seconds = plausible(y, mo, d, h, mi, s) {
                return seconds
            }
            // YYYY-MM-DD[ _-T]HH.MM.SS (or with ":" or "-" in the time), or YYYY-MM-DD at HH.MM.SS (macOS)
            let macOS = bytes.count > start + 14 && bytes[(start + 10)..<(start + 14)].elementsEqual(" at ".utf8)
            let time = macOS ? start + 14 : byte(start + 10, in: " _-T") ? start + 11 : nil
            // macOS writes the hour as the clock shows it: one digit before 10 ("at 9.05.01 AM").
            let hourDigits = macOS && isDigit(start + 14) && byte(start + 15, in: ".:") ? 1 : 2
            if let time, let h = number(time, hourDigits), byte(time + hourDigits, in: ".:-"),
               let mi = number(time + hourDigits + 1, 2), byte(time + hourDigits + 3, in: ".:-"),
               let s = number(time + hourDigits + 4, 2), !isDigit(time + hourDigits + 6),
               let hour = twentyFourHour(h, after: time + hourDigits + 6), let seconds = plausible(y, mo, d, hour, mi, s) {
                return seconds
            }
        }
        return nil
    }

    /// The day of a name that has a date and no time: WhatsApp's `IMG-20240714-WA0001.jpg` (and `VID-`,
    /// `PTT-`…: `YYYYMMDD-WA` and digits). The day's first second, or nil.
    public static func fileNameDay(_ name: String, latestYear: Int) -> Int64? {
        let scanned = NameDigits(name)
        for start in scanned.bytes.indices where scanned.isDigit(start) && !scanned.isDigit(start - 1) {
            guard let y = scanned.number(start, 4), let mo = scanned.number(start + 4, 2), let d = scanned.number(start + 6, 2),
                  scanned.byte(start + 8, in: "-"), scanned.byte(start + 9, in: "W"), scanned.byte(start + 10, in: "A")
            else { continue }
            guard (earliestYear...max(earliestYear, latestYear)).contains(y) else { return nil }
            return MomentRange.seconds(year: y, month: mo, day: d, hour: 0, minute: 0, second: 0)
        }
        return nil
    }

    /// A file's modification time as the wall clock of this machine's time zone showed it, read as UTC
    /// (the same convention as a camera's clock). nil when the C library cannot convert it.
    public static func localWallClock(ofUnixTime seconds: Int64) -> Int64? {
        var time = time_t(clamping: seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return nil }
        return MomentRange.seconds(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                                   hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }
}

/// A file name's first 1,024 bytes, read for the dates in it: digits and separators by position, any position
/// safe to ask (out of range is neither).
private struct NameDigits {
    let bytes: [UInt8]
    init(_ name: String) { bytes = Array(name.utf8.prefix(1024)) }

    func isDigit(_ index: Int) -> Bool {
        index >= 0 && index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
    }

    /// The `count` digits at `start` as a number, or nil when any is not a digit.
    func number(_ start: Int, _ count: Int) -> Int? {
        guard start >= 0, start + count <= bytes.count else { return nil }
        var value = 0
        for index in start..<start + count {
            guard isDigit(index) else { return nil }
            value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
        }
        return value
    }

    func byte(_ index: Int, in set: String) -> Bool {
        index >= 0 && index < bytes.count && set.utf8.contains(bytes[index])
    }
}
