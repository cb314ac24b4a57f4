import Foundation
import StoreSandbox
import Testing

@Suite struct StorefrontTests {
    @Test(arguments: [
        (Storefront.usa, "USA", "143441", "USD", "en_US"),
        (Storefront.japan, "JPN", "143462", "JPY", "ja_JP"),
        (Storefront.unitedKingdom, "GBR", "143444", "GBP", "en_GB"),
        (Storefront.germany, "DEU", "143443", "EUR", "de_DE"),
        (Storefront.china, "CHN", "143465", "CNY", "zh_CN"),
    ])
    func builtInStorefronts(storefront: Storefront, country: String, id: String, currency: String, locale: String) {
        #expect(storefront.countryCode == country)
        #expect(storefront.identifier == id)
        #expect(storefront.currencyCode == currency)
        #expect(storefront.localeIdentifier == locale)
        #expect(Storefront.lookup(countryCode: country) == storefront)
        #expect(Storefront.lookup(countryCode: country.lowercased()) == storefront)
        #expect(Storefront.lookup(identifier: id) == storefront)
        #expect(Storefront.all.contains(storefront))
    }

    @Test func allHasFiveDistinctStorefronts() {
        #expect(Storefront.all.count == 5)
        #expect(Set(Storefront.all.map(\.countryCode)).count == 5)
        #expect(Set(Storefront.all.map(\.identifier)).count == 5)
        #expect(Storefront.all.first == .usa)
    }

    @Test func unknownStorefronts() {
        #expect(Storefront.lookup(countryCode: "FRA") == nil)
        #expect(Storefront.lookup(identifier: "1") == nil)
        #expect(throws: SandboxError(.unknownStorefront)) { try Storefront.named("ATL") }
        #expect((try? Storefront.named("jpn")) == .japan)
    }

    @Test func languageCode() {
        #expect(Storefront.japan.languageCode == "ja")
        #expect(Storefront.germany.languageCode == "de")
    }

    @Test func customStorefrontLookupAmongGivenOnes() {
        let france = Storefront(
            countryCode: "FRA", identifier: "143442", currencyCode: "EUR", localeIdentifier: "fr_FR")
        #expect(Storefront.lookup(countryCode: "fra", in: Storefront.all + [france]) == france)
        #expect(france.description == "FRA (143442)")
    }

    @Test func codableRoundTrip() throws {
        let data = try JSONEncoder().encode(Storefront.japan)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: String]
        #expect(
            object == [
                "countryCode": "JPN", "identifier": "143462", "currencyCode": "JPY", "localeIdentifier": "ja_JP",
            ])
        #expect(try JSONDecoder().decode(Storefront.self, from: data) == .japan)
    }
}
