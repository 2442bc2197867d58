// Proleptic Gregorian dates of seconds since 1970 read as UTC, by integer arithmetic alone.
import Foundation

/// Calendar dates without `gmtime_r` (and its time-zone lock, taken for each of a mount scan's 100,000 rows) and
/// without `Int32` conversions of untrusted numbers: Howard Hinnant's civil_from_days.
public enum CivilDate {
    /// The day, counted from 1970-01-01, that second `seconds` falls in (rounding down, so second -1 is in day
    /// -1). Written so that no value overflows.
    public static func day(ofSecond seconds: Int64) -> Int64 {
        seconds >= 0 ? seconds / 86_400 : -((-(seconds + 1)) / 86_400) - 1
    }

    /// The (year, month, day) of a day counted from 1970-01-01; `days` within ±2^50 (any second's day is).
    public static func of(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468 // days from 0000-03-01
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }
}
