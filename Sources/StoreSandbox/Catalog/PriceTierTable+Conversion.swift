public import Foundation

extension PriceTierTable {
    /// The price `price` in `sourceCurrency` becomes in `targetCurrency`, or `nil` when no tier
    /// prices both currencies.
    ///
    /// - A price in the same currency is returned unchanged, whether it is a tier or not.
    /// - Zero is zero in every currency (free offers).
    /// - A price equal to a tier's price in `sourceCurrency` gives that tier's price in `targetCurrency`.
    /// - Any other price is multiplied by the ratio of the nearest tier (by distance in the source
    ///   currency; the cheaper one on a tie) and rounded to the target currency's ``Ending``.
    public func convert(_ price: Decimal, from sourceCurrency: String, to targetCurrency: String) -> Decimal? {
        if sourceCurrency == targetCurrency { return price }
        if price == 0 { return 0 }
        let usable = tiers.filter { $0.prices[sourceCurrency] != nil && $0.prices[targetCurrency] != nil }
        if let exact = usable.first(where: { $0.prices[sourceCurrency] == price }) {
            return exact.prices[targetCurrency]
        }
        let nearest = usable.min { lhs, rhs in
            let left = distance(lhs.prices[sourceCurrency]!, price)
            let right = distance(rhs.prices[sourceCurrency]!, price)
            return left == right ? lhs.prices[sourceCurrency]! < rhs.prices[sourceCurrency]! : left < right
        }
        guard let nearest, let from = nearest.prices[sourceCurrency], let to = nearest.prices[targetCurrency],
            from > 0
        else { return nil }
        return Self.round(price * to / from, to: endings[targetCurrency] ?? .cents)
    }

    private func distance(_ lhs: Decimal, _ rhs: Decimal) -> Decimal {
        lhs > rhs ? lhs - rhs : rhs - lhs
    }

    /// Rounds a converted amount to one of the usual endings.
    static func round(_ amount: Decimal, to ending: Ending) -> Decimal {
        switch ending {
        case .ninetyNine:
            let units = max(rounded(amount, scale: 0), 1)
            return units - Decimal(sign: .plus, exponent: -2, significand: 1)
        case .tens:
            let tens = max(rounded(amount / 10, scale: 0), 1)
            return tens * 10
        case .wholeUnits:
            return max(rounded(amount, scale: 0), 1)
        case .cents:
            return rounded(amount, scale: 2)
        }
    }

    /// `amount` rounded half up to `scale` decimal places.
    static func rounded(_ amount: Decimal, scale: Int) -> Decimal {
        var input = amount
        var output = Decimal()
        NSDecimalRound(&output, &input, scale, .plain)
        return output
    }
}
