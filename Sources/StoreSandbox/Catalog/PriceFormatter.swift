public import Foundation

/// Formats prices the way a storefront shows them: `$0.99`, `¥100`, `£0.99`, `0,99 €`, `¥6.00`.
///
/// This is what StoreKit 1 apps have to do themselves with an `NSNumberFormatter` in currency style
/// and the product's `priceLocale`; the sandbox does it once so that every product and offer
/// carries a ready `displayPrice`, as StoreKit 2's `Product.displayPrice` does.
///
/// The formatting comes from Foundation's currency format for the locale, with two clean-ups so
/// that the result is the same on every platform and easy to compare in tests:
/// - the fullwidth yen sign `￥` (U+FFE5), which some ICU versions use for `ja_JP`, becomes `¥`;
/// - no-break spaces (U+00A0, U+202F), which ICU puts between a number and a trailing symbol,
///   become plain spaces, so Germany reads `0,99 €` with an ordinary space.
public enum PriceFormatter {
    /// `price` in `currencyCode`, formatted for `localeIdentifier` (such as `de_DE`).
    ///
    /// The number of decimals is the currency's own: none for yen, two for dollars, pounds, euros
    /// and yuan.
    public static func string(for price: Decimal, currencyCode: String, localeIdentifier: String) -> String {
        let style = Decimal.FormatStyle.Currency(code: currencyCode, locale: Locale(identifier: localeIdentifier))
        return normalized(price.formatted(style))
    }

    /// `price` formatted in the storefront's currency and locale.
    public static func string(for price: Decimal, in storefront: Storefront) -> String {
        string(for: price, currencyCode: storefront.currencyCode, localeIdentifier: storefront.localeIdentifier)
    }

    /// Replaces the characters that vary between ICU versions with their plain forms.
    static func normalized(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0xFFE5: result.unicodeScalars.append("\u{00A5}")
            case 0x00A0, 0x202F, 0x2009: result.unicodeScalars.append(" ")
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
