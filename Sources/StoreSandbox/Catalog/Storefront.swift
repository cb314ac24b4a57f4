/// A country's App Store: which currency it charges in and which language it speaks.
///
/// A sandbox tester belongs to one storefront, as a real account does, and the storefront decides
/// the currency of every price and the language of every product name the tester sees: the same
/// product reads "Remove Ads, $0.99" in the United States and 「広告を削除, ¥100」 in Japan.
///
/// The five storefronts below are built in; others can be created with ``init(countryCode:identifier:currencyCode:localeIdentifier:)``
/// and passed to ``SandboxCatalog``. A storefront whose currency is not in the price tier table
/// has no prices (see ``PriceTierTable``).
public struct Storefront: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The country as an ISO 3166-1 alpha-3 code, such as `USA`, as in `SKStorefront.countryCode`
    /// and the `_storefront` setting of a `.storekit` file.
    public var countryCode: String
    /// Apple's numeric storefront ID, such as `143441` for the United States, as in
    /// `SKStorefront.identifier`.
    public var identifier: String
    /// The ISO 4217 code of the currency prices are charged in, such as `USD`.
    public var currencyCode: String
    /// The locale prices are formatted with and product texts are chosen for, such as `en_US`.
    public var localeIdentifier: String

    /// Creates a storefront.
    public init(countryCode: String, identifier: String, currencyCode: String, localeIdentifier: String) {
        self.countryCode = countryCode
        self.identifier = identifier
        self.currencyCode = currencyCode
        self.localeIdentifier = localeIdentifier
    }

    enum CodingKeys: String, CodingKey {
        case countryCode
        case identifier
        case currencyCode
        case localeIdentifier
    }

    /// The language part of ``localeIdentifier``, such as `ja` for `ja_JP`.
    public var languageCode: String {
        String(localeIdentifier.prefix { $0 != "_" && $0 != "-" }).lowercased()
    }

    /// The country code and storefront ID, such as `USA (143441)`.
    public var description: String { "\(countryCode) (\(identifier))" }

    /// The United States: US dollars, American English.
    public static let usa = Storefront(
        countryCode: "USA", identifier: "143441", currencyCode: "USD", localeIdentifier: "en_US")
    /// Japan: yen, Japanese.
    public static let japan = Storefront(
        countryCode: "JPN", identifier: "143462", currencyCode: "JPY", localeIdentifier: "ja_JP")
    /// The United Kingdom: pounds sterling, British English.
    public static let unitedKingdom = Storefront(
        countryCode: "GBR", identifier: "143444", currencyCode: "GBP", localeIdentifier: "en_GB")
    /// Germany: euros, German.
    public static let germany = Storefront(
        countryCode: "DEU", identifier: "143443", currencyCode: "EUR", localeIdentifier: "de_DE")
    /// China mainland: yuan, Simplified Chinese.
    public static let china = Storefront(
        countryCode: "CHN", identifier: "143465", currencyCode: "CNY", localeIdentifier: "zh_CN")

    /// Every built-in storefront, the United States first.
    public static let all: [Storefront] = [.usa, .japan, .unitedKingdom, .germany, .china]

    /// The built-in storefront with this alpha-3 country code, ignoring case, such as `jpn`.
    public static func lookup(countryCode: String) -> Storefront? {
        lookup(countryCode: countryCode, in: all)
    }

    /// The built-in storefront with this numeric storefront ID, such as `143462`.
    public static func lookup(identifier: String) -> Storefront? {
        all.first { $0.identifier == identifier }
    }

    /// The storefront with this alpha-3 country code among `storefronts`, ignoring case.
    public static func lookup(countryCode: String, in storefronts: [Storefront]) -> Storefront? {
        let wanted = countryCode.uppercased()
        return storefronts.first { $0.countryCode.uppercased() == wanted }
    }

    /// Like ``lookup(countryCode:)`` but throws ``SandboxError/Code/unknownStorefront`` when
    /// there is no such storefront, for callers that take a country code from a request.
    public static func named(_ countryCode: String) throws(SandboxError) -> Storefront {
        guard let storefront = lookup(countryCode: countryCode) else {
            throw SandboxError(.unknownStorefront, "No storefront has the country code \(countryCode).")
        }
        return storefront
    }
}
