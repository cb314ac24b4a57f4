public import Foundation

/// Price points per currency, so one price in a `.storekit` file can be shown in every storefront.
///
/// App Store Connect prices a product by choosing a tier (later, a price point) and lets Apple set
/// the matching price in every other currency: Tier 1 is $0.99 in the United States and ¥100 in
/// Japan. A `.storekit` file keeps only one `displayPrice`, in the currency of its `_storefront`,
/// so the sandbox needs such a table to price the product anywhere else.
///
/// ## Basis of ``standard``
///
/// ``standard`` is Kakin's own small table, not Apple's current price schedule (which changes with
/// exchange rates and taxes). It has the nine tiers developers use most, numbered as in the classic
/// App Store Connect matrix (1, 2, 3, 5, 10, 20, 30, 50, 60):
///
/// | tier | USD | JPY | GBP | EUR | CNY |
/// | --- | --- | --- | --- | --- | --- |
/// | 1 | 0.99 | 100 | 0.99 | 0.99 | 6 |
/// | 2 | 1.99 | 200 | 1.99 | 1.99 | 12 |
/// | 3 | 2.99 | 300 | 2.99 | 2.99 | 18 |
/// | 5 | 4.99 | 500 | 4.99 | 4.99 | 30 |
/// | 10 | 9.99 | 1,000 | 9.99 | 9.99 | 68 |
/// | 20 | 19.99 | 2,000 | 19.99 | 19.99 | 128 |
/// | 30 | 29.99 | 3,000 | 29.99 | 29.99 | 198 |
/// | 50 | 49.99 | 5,000 | 49.99 | 49.99 | 328 |
/// | 60 | 99.99 | 10,000 | 99.99 | 99.99 | 648 |
///
/// - USD is the reference column.
/// - JPY follows the long-standing rule that Tier 1 is ¥100: ¥100 per dollar of the tier.
/// - GBP and EUR repeat the US figures, as the App Store has long done for these tiers.
/// - CNY uses the well-known China price points (¥6, ¥30, ¥68, ¥128, ¥198, ¥328, ¥648).
///
/// ## Prices that are not in the table
///
/// ``convert(_:from:to:)`` converts a price that matches no tier with the exchange ratio of the
/// nearest tier in the source currency, then rounds to the target currency's usual ending
/// (``endings``): `.99` for USD, GBP and EUR, tens of yen for JPY, whole yuan for CNY. A price in
/// the same currency is never changed, and zero stays zero.
public struct PriceTierTable: Hashable, Sendable {
    /// One row of the table: the same price point in several currencies.
    public struct Tier: Hashable, Sendable {
        /// The tier's number, as in App Store Connect's matrix (Tier 1, Tier 2, …).
        public var number: Int
        /// The price per ISO 4217 currency code, such as `["USD": 0.99, "JPY": 100]`.
        public var prices: [String: Decimal]

        /// Creates a tier.
        public init(number: Int, prices: [String: Decimal]) {
            self.number = number
            self.prices = prices
        }
    }

    /// How a converted price is rounded so that it looks like a price of its currency.
    public enum Ending: String, Hashable, Sendable, CaseIterable {
        /// A whole number of units minus one cent, and at least 0.99: 7.49 becomes 6.99.
        case ninetyNine
        /// A multiple of ten units, and at least ten: ¥743 becomes ¥740.
        case tens
        /// A whole number of units, and at least one: ¥43.4 becomes ¥43.
        case wholeUnits
        /// Two decimal places, no other rule.
        case cents
    }

    /// The rows, in any order.
    public var tiers: [Tier]
    /// The rounding of converted prices per currency code; currencies not listed use ``Ending/cents``.
    public var endings: [String: Ending]

    /// Creates a table.
    public init(tiers: [Tier], endings: [String: Ending] = [:]) {
        self.tiers = tiers
        self.endings = endings
    }

    /// Every currency code that at least one tier prices.
    public var currencyCodes: Set<String> {
        Set(tiers.flatMap(\.prices.keys))
    }

    /// The tier whose price in `currencyCode` is exactly `price`, if any.
    public func tier(matching price: Decimal, currencyCode: String) -> Tier? {
        tiers.first { $0.prices[currencyCode] == price }
    }

    /// The tier with this number, if any.
    public func tier(number: Int) -> Tier? {
        tiers.first { $0.number == number }
    }

    /// Kakin's default table; see the type's documentation for its basis.
    public static let standard = PriceTierTable(
        tiers: [
            standardTier(1, usd: "0.99", jpy: "100", cny: "6"),
            standardTier(2, usd: "1.99", jpy: "200", cny: "12"),
            standardTier(3, usd: "2.99", jpy: "300", cny: "18"),
            standardTier(5, usd: "4.99", jpy: "500", cny: "30"),
            standardTier(10, usd: "9.99", jpy: "1000", cny: "68"),
            standardTier(20, usd: "19.99", jpy: "2000", cny: "128"),
            standardTier(30, usd: "29.99", jpy: "3000", cny: "198"),
            standardTier(50, usd: "49.99", jpy: "5000", cny: "328"),
            standardTier(60, usd: "99.99", jpy: "10000", cny: "648"),
        ],
        endings: ["USD": .ninetyNine, "GBP": .ninetyNine, "EUR": .ninetyNine, "JPY": .tens, "CNY": .wholeUnits]
    )

    /// A row of ``standard``: GBP and EUR repeat the US figure.
    private static func standardTier(_ number: Int, usd: String, jpy: String, cny: String) -> Tier {
        let dollars = exactDecimal(usd)
        return Tier(
            number: number,
            prices: [
                "USD": dollars, "GBP": dollars, "EUR": dollars, "JPY": exactDecimal(jpy), "CNY": exactDecimal(cny),
            ]
        )
    }

    /// Parses a literal of the built-in table; the literals are plain decimals.
    static func exactDecimal(_ text: String) -> Decimal {
        Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? 0
    }
}
