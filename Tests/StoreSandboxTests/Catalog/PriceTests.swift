import Foundation
import StoreSandbox
import Testing

@Suite struct PriceTests {
    private func decimal(_ text: String) -> Decimal {
        Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))!
    }

    @Test func tierOneIsTheSeedPrice() throws {
        let tier = try #require(PriceTierTable.standard.tier(number: 1))
        #expect(tier.prices["USD"] == decimal("0.99"))
        #expect(tier.prices["JPY"] == 100)
        #expect(tier.prices["GBP"] == decimal("0.99"))
        #expect(tier.prices["EUR"] == decimal("0.99"))
        #expect(tier.prices["CNY"] == 6)
        #expect(PriceTierTable.standard.tier(matching: decimal("0.99"), currencyCode: "USD")?.number == 1)
    }

    @Test(arguments: [
        ("0.99", "100", "0.99", "6"), ("1.99", "200", "1.99", "12"), ("2.99", "300", "2.99", "18"),
        ("4.99", "500", "4.99", "30"), ("9.99", "1000", "9.99", "68"), ("19.99", "2000", "19.99", "128"),
        ("29.99", "3000", "29.99", "198"), ("49.99", "5000", "49.99", "328"), ("99.99", "10000", "99.99", "648"),
    ])
    func everyTierConverts(usd: String, jpy: String, european: String, cny: String) {
        let table = PriceTierTable.standard
        #expect(table.convert(decimal(usd), from: "USD", to: "JPY") == decimal(jpy))
        #expect(table.convert(decimal(usd), from: "USD", to: "GBP") == decimal(european))
        #expect(table.convert(decimal(usd), from: "USD", to: "EUR") == decimal(european))
        #expect(table.convert(decimal(usd), from: "USD", to: "CNY") == decimal(cny))
        #expect(table.convert(decimal(jpy), from: "JPY", to: "USD") == decimal(usd))
    }

    @Test func sameCurrencyAndZeroAreUnchanged() {
        let table = PriceTierTable.standard
        #expect(table.convert(decimal("7.49"), from: "USD", to: "USD") == decimal("7.49"))
        #expect(table.convert(0, from: "USD", to: "JPY") == 0)
        #expect(table.currencyCodes == ["USD", "JPY", "GBP", "EUR", "CNY"])
    }

    @Test func priceWithoutTierUsesNearestTierAndUsualEndings() {
        let table = PriceTierTable.standard
        // Nearest tier of 7.49 is 9.99 (distance 2.50 vs 2.50 to 4.99: the cheaper wins, 4.99).
        #expect(table.convert(decimal("7.49"), from: "USD", to: "JPY") == 750)
        #expect(table.convert(decimal("7.49"), from: "USD", to: "EUR") == decimal("6.99"))
        #expect(table.convert(decimal("7.49"), from: "USD", to: "CNY") == 45)
        // 14.99 is nearest to 9.99 (5.00) rather than 19.99 (5.00): a tie, so 9.99.
        #expect(table.convert(decimal("14.99"), from: "USD", to: "JPY") == 1500)
        #expect(table.convert(decimal("0.10"), from: "USD", to: "GBP") == decimal("0.99"))
        #expect(table.convert(decimal("0.10"), from: "USD", to: "JPY") == 10)
        #expect(table.convert(decimal("1"), from: "USD", to: "KRW") == nil)
    }

    @Test(arguments: [
        (Storefront.usa, "0.99", "$0.99"), (Storefront.japan, "100", "¥100"),
        (Storefront.unitedKingdom, "0.99", "£0.99"), (Storefront.germany, "0.99", "0,99 €"),
        (Storefront.china, "6", "¥6.00"), (Storefront.japan, "10000", "¥10,000"),
        (Storefront.usa, "1234.5", "$1,234.50"), (Storefront.germany, "1234.5", "1.234,50 €"),
        (Storefront.usa, "0", "$0.00"), (Storefront.japan, "0", "¥0"),
    ])
    func displayPrices(storefront: Storefront, price: String, expected: String) {
        #expect(PriceFormatter.string(for: decimal(price), in: storefront) == expected)
    }

    @Test func displayPricesUseNoFullwidthOrNoBreakCharacters() {
        for storefront in Storefront.all {
            let text = PriceFormatter.string(for: decimal("1234.56"), in: storefront)
            #expect(!text.unicodeScalars.contains { [0xFFE5, 0x00A0, 0x202F].contains($0.value) })
        }
    }

    @Test func customTableAndEndings() {
        let table = PriceTierTable(
            tiers: [.init(number: 1, prices: ["USD": decimal("0.99"), "KRW": 1200])], endings: ["KRW": .tens])
        #expect(table.convert(decimal("0.99"), from: "USD", to: "KRW") == 1200)
        #expect(table.convert(decimal("2.49"), from: "USD", to: "KRW") == 3020)
    }
}
