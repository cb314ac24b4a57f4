import AppStoreModels

/// Picks the texts a storefront shows from a product's localizations.
///
/// The storefront decides the language, as it does for a sandbox tester's account: the exact
/// locale first (`ja_JP`), then any of the same language (`ja`), then English (`en_US` first),
/// then the first localization of the product.
enum LocalizationChooser {
    static func choose(
        _ localizations: [StoreKitConfiguration.Localization], for storefront: Storefront
    ) -> StoreKitConfiguration.Localization? {
        let wanted = normalized(storefront.localeIdentifier)
        let language = storefront.languageCode
        return localizations.first { normalized($0.locale) == wanted }
            ?? localizations.first { languageCode(of: $0.locale) == language }
            ?? localizations.first { normalized($0.locale) == "en_us" }
            ?? localizations.first { languageCode(of: $0.locale) == "en" }
            ?? localizations.first
    }

    private static func normalized(_ locale: String?) -> String {
        (locale ?? "").replacingOccurrences(of: "-", with: "_").lowercased()
    }

    private static func languageCode(of locale: String?) -> String {
        String(normalized(locale).prefix { $0 != "_" })
    }
}
