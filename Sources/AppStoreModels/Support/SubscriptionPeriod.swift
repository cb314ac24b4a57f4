/// A length of time written as an ISO 8601 duration with a single unit, such as `P1M` or `P3D`.
///
/// Apple writes subscription and offer periods this way: `recurringSubscriptionPeriod` and offer
/// `subscriptionPeriod` in a `.storekit` file, `offerPeriod` in transactions and renewal info.
/// Apple only ever uses one unit, so combined durations such as `P1Y2M` are not accepted; models keep
/// the original string, and this type is what their accessors parse it into.
public struct SubscriptionPeriod: Hashable, Sendable, CustomStringConvertible {
    /// The calendar unit of a period.
    public enum Unit: String, CaseIterable, Hashable, Sendable {
        /// Days, written `D`.
        case day = "D"
        /// Weeks of seven days, written `W`.
        case week = "W"
        /// Calendar months, written `M`.
        case month = "M"
        /// Calendar years, written `Y`.
        case year = "Y"
    }

    /// How many units the period lasts; at least 1.
    public var value: Int
    /// The unit the period is counted in.
    public var unit: Unit

    /// A period of `value` units; `value` should be at least 1.
    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses `P<n><unit>`, for example `P1W`, `P6M` or `P1Y`; returns `nil` for anything else.
    public init?(iso8601 text: String) {
        guard text.count >= 3, text.first == "P", let unit = text.last.flatMap({ Unit(rawValue: String($0)) })
        else { return nil }
        let digits = text.dropFirst().dropLast()
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits), value > 0 else {
            return nil
        }
        self.init(value: value, unit: unit)
    }

    /// The ISO 8601 spelling, for example `P1M`.
    public var iso8601: String { "P\(value)\(unit.rawValue)" }

    public var description: String { iso8601 }

    /// One day.
    public static let oneDay = Self(value: 1, unit: .day)
    /// One week.
    public static let oneWeek = Self(value: 1, unit: .week)
    /// One month.
    public static let oneMonth = Self(value: 1, unit: .month)
    /// One year.
    public static let oneYear = Self(value: 1, unit: .year)
}
