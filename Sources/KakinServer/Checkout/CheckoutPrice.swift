import Foundation

/// A Stripe amount as a customer reads it: in major units, in their language's currency format.
enum CheckoutPrice {
    /// How many digits of `currency`'s Stripe amounts are after the decimal point.
    static func decimals(_ currency: String) -> Int { StripeAmount.minorDigits(currency) }

    /// `amount` (Stripe's minor units) of `currency`, formatted for `locale`: `$9.99` in en-US,
    /// `￥1,200` for 1200 JPY in ja-JP.
    static func format(amount: Int, currency: String, locale: Locale) -> String {
        let digits = decimals(currency)
        var value = Decimal(amount)
        for _ in 0..<digits { value /= 10 }
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.numberStyle = .currency
        formatter.currencyCode = currency.uppercased()
        formatter.minimumFractionDigits = digits
        formatter.maximumFractionDigits = digits
        return formatter.string(from: value as NSDecimalNumber) ?? "\(value) \(currency.uppercased())"
    }

    /// The locale of the first language of an `Accept-Language` header (`ja-JP,ja;q=0.9` is
    /// `ja_JP`); en-US without one.
    static func locale(acceptLanguage: String?) -> Locale {
        let first = acceptLanguage?.split(separator: ",").first?.split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !first.isEmpty, first != "*", first.count <= 35,
            first.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return Locale(identifier: "en_US") }
        return Locale(identifier: first.replacingOccurrences(of: "-", with: "_"))
    }

    /// How often a recurring price charges, in words: `month`, `3 months`.
    static func period(_ recurring: StripePrice.Recurring) -> String {
        recurring.intervalCount == 1 ? recurring.interval : "\(recurring.intervalCount) \(recurring.interval)s"
    }
}
