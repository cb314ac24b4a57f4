public import Foundation

/// A date as verifyReceipt spells it: three strings for one moment.
///
/// Every date in a verifyReceipt response comes under three keys: `x` in UTC
/// (`"2023-07-27 02:41:06 Etc/GMT"`), `x_ms` as a string of milliseconds since 1970
/// (`"1690425666000"`), and `x_pst` in Cupertino's local time, daylight saving included
/// (`"2023-07-26 19:41:06 America/Los_Angeles"`). This type builds the three for a response and
/// reads a date back from them.
public struct VerifyReceiptDate: Hashable, Sendable {
    /// The UTC spelling, as in `purchase_date`.
    public var gmt: String
    /// Milliseconds since 1970 as a string, as in `purchase_date_ms`.
    public var milliseconds: String
    /// The Los Angeles spelling, as in `purchase_date_pst`.
    public var pacific: String

    /// Wraps three strings as they are.
    public init(gmt: String, milliseconds: String, pacific: String) {
        self.gmt = gmt
        self.milliseconds = milliseconds
        self.pacific = pacific
    }

    /// The three spellings of `date`; seconds are truncated in the two readable ones, as Apple does.
    public init(_ date: Date) {
        self.init(
            gmt: Self.format(date, in: Self.utc) + " Etc/GMT",
            milliseconds: String(date.epochMilliseconds),
            pacific: Self.format(date, in: Self.losAngeles) + " America/Los_Angeles")
    }

    /// The three spellings of `date`, for filling the `x`, `x_ms` and `x_pst` keys of a response.
    public static func strings(for date: Date) -> VerifyReceiptDate {
        VerifyReceiptDate(date)
    }

    /// The date the strings describe: from the milliseconds when they parse, otherwise from the UTC
    /// spelling; `nil` when neither does. Apple leaves some dates as empty strings; those mean
    /// "no date", not a malformed response.
    public static func date(milliseconds: String?, gmt: String?) -> Date? {
        if let milliseconds, let value = Int64(milliseconds) {
            return Date(epochMilliseconds: value)
        }
        if let gmt { return parseGMT(gmt) }
        return nil
    }

    /// The date this triple describes; see ``date(milliseconds:gmt:)``.
    public var date: Date? { Self.date(milliseconds: milliseconds, gmt: gmt) }

    private static let utc = TimeZone(secondsFromGMT: 0)!
    private static let losAngeles = TimeZone(identifier: "America/Los_Angeles") ?? TimeZone(secondsFromGMT: -8 * 3600)!

    private static func calendar(in timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    private static func format(_ date: Date, in timeZone: TimeZone) -> String {
        let wholeSeconds = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let parts = calendar(in: timeZone).dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: wholeSeconds)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2)) "
            + "\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))"
    }

    /// Reads `yyyy-MM-dd HH:mm:ss Etc/GMT`, checking every field's range (no rolling over of a
    /// 13th month into the next year).
    private static func parseGMT(_ text: String) -> Date? {
        let pieces = text.split(separator: " ", omittingEmptySubsequences: false)
        guard pieces.count == 3, pieces[2] == "Etc/GMT" else { return nil }
        return ReceiptDate.parse("\(pieces[0])T\(pieces[1])Z")
    }
}
