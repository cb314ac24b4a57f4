import Foundation

/// The dates of app receipts: RFC 3339, such as `2023-10-19T01:45:36Z`, and the forms older receipts use.
///
/// Parsing and formatting are done by hand, with proleptic Gregorian arithmetic in UTC, so that
/// they need no formatter state, behave the same on every platform, and accept Xcode's far-future
/// `4001-01-01T00:00:00Z`. Fractional seconds of any length and numeric offsets are accepted, with
/// a colon (`+09:00`, RFC 3339) or without one (`+0900`, as older Xcode versions wrote receipts).
/// An empty string is not a date here; the attribute decoder reads it as "no date" before asking.
/// Dates are written in UTC, with milliseconds only when the date has them.
enum ReceiptDate {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`; `nil` when the text is anything else.
    static func parse(_ text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.skip("-"),
            let month = scanner.number(digits: 2), scanner.skip("-"),
            let day = scanner.number(digits: 2), scanner.skip("T") || scanner.skip("t") || scanner.skip(" "),
            let hour = scanner.number(digits: 2), scanner.skip(":"),
            let minute = scanner.number(digits: 2), scanner.skip(":"),
            let second = scanner.number(digits: 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysInMonth(month, year: year)).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }

        var fractionDigits: [UInt8] = []
        if scanner.skip(".") {
            while let digit = scanner.digit() { fractionDigits.append(digit) }
            guard !fractionDigits.isEmpty else { return nil }
        }

        var offsetSeconds = 0
        if scanner.skip("Z") || scanner.skip("z") {
            offsetSeconds = 0
        } else if let offset = scanner.numericOffset() {
            offsetSeconds = offset
        } else {
            return nil
        }
        guard scanner.isAtEnd else { return nil }

        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        if fractionDigits.isEmpty {
            return Date(timeIntervalSince1970: Double(seconds))
        }
        if fractionDigits.count <= 3 {
            // Whole milliseconds, built the way the other models build millisecond dates.
            var milliseconds = 0
            for index in 0..<3 {
                milliseconds = milliseconds * 10 + Int(index < fractionDigits.count ? fractionDigits[index] : 0)
            }
            return Date(timeIntervalSince1970: Double(seconds * 1000 + Int64(milliseconds)) / 1000)
        }
        var fraction = 0.0
        var scale = 0.1
        for digit in fractionDigits.prefix(15) {
            fraction += Double(digit) * scale
            scale /= 10
        }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Formats `date` in UTC as `YYYY-MM-DDTHH:MM:SSZ`, or `YYYY-MM-DDTHH:MM:SS.sssZ` when it has milliseconds.
    ///
    /// Dates outside the years 0001 to 9999, which RFC 3339 cannot write, are clamped to that range.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let clamped = interval.isNaN ? 0 : min(max(interval, -62_135_596_800), 253_402_300_799.999)
        let totalMilliseconds = Int64((clamped * 1000).rounded())
        let (seconds, milliseconds) = floorDivide(totalMilliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civilFromDays(Int(days))
        let time = Int(secondOfDay)
        var text =
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(time / 3600, 2)):\(pad(time / 60 % 60, 2)):\(pad(time % 60, 2))"
        if milliseconds != 0 {
            text += ".\(pad(Int(milliseconds), 3))"
        }
        return text + "Z"
    }

    // MARK: Calendar arithmetic

    private static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's well-known algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysFromCivil(year:month:day:)``.
    private static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = ((value % divisor) + divisor) % divisor
        return ((value - remainder) / divisor, remainder)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(abs(value))
        let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
        return value < 0 ? "-" + padded : padded
    }

    /// A cursor over ASCII bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Character) -> Bool {
            guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        mutating func digit() -> UInt8? {
            guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { return nil }
            defer { index += 1 }
            return bytes[index] - 0x30
        }

        mutating func number(digits count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }

        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }

        /// `±HH:MM` or `±HHMM` in seconds east of UTC.
        mutating func numericOffset() -> Int? {
            guard let sign = sign(), let hours = number(digits: 2) else { return nil }
            _ = skip(":")
            guard let minutes = number(digits: 2), hours < 24, minutes < 60 else { return nil }
            return sign * (hours * 3600 + minutes * 60)
        }
    }
}
