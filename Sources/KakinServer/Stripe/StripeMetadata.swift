import Foundation

/// The metadata keys a checkout puts on what it makes in Stripe, and the applier of Stripe's
/// events reads: how a web purchase names the app's customer and the App Store product it shares
/// grants with.
enum StripeMetadata {
    /// The app's customer (on customers, payment intents and subscriptions).
    static let appUserID = "kakin_app_user_id"
    /// The App Store product whose grants the purchase shares.
    static let productID = "kakin_product_id"
    /// The price the checkout charged.
    static let price = "kakin_price"
    /// How many units a payment intent pays for.
    static let quantity = "kakin_quantity"
    /// The app (on customers).
    static let bundleID = "kakin_bundle_id"
}

/// Stripe's amounts in the ledger's units.
enum StripeAmount {
    /// Currencies Stripe counts in whole units (no minor unit).
    static let zeroDecimal: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF",
        "XPF",
    ]
    /// Currencies Stripe counts in thousandths.
    static let threeDecimal: Set<String> = ["BHD", "JOD", "KWD", "OMR", "TND"]

    /// How many digits of `currency` (ISO 4217) Stripe's amounts have after the decimal point.
    static func minorDigits(_ currency: String) -> Int {
        let code = currency.uppercased()
        if zeroDecimal.contains(code) { return 0 }
        return threeDecimal.contains(code) ? 3 : 2
    }

    /// `amount` (Stripe's minor units of `currency`) in milliunits of the currency, as the ledger
    /// keeps prices (Apple's unit): 199 US cents are 1990.
    static func milliunits(_ amount: Int, currency: String) -> Int64 {
        var value = Int64(amount)
        for _ in minorDigits(currency)..<3 { value *= 10 }
        return value
    }

    /// The price of one unit of a payment of `amount` for `quantity` units, in milliunits, and the
    /// currency as the ledger keeps it (uppercase).
    static func unitPrice(amount: Int, quantity: Int, currency: String) -> (Int64?, String?) {
        (milliunits(amount, currency: currency) / Int64(max(quantity, 1)), currency.uppercased())
    }
}
