import Foundation
import Testing

@testable import Kakin

@Suite struct ProductManagerTests {
    @Test func stateSurvivesARelaunchAndFollowsTheServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakin-products-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let first = ProductManager(productIDs: ["com.example.kakin.removeAd"], storageDirectory: directory)
        #expect(await first.isUnlocked("removeAds") == false)
        let customer = CustomerInfo(
            appUserID: "alice",
            entitlements: [
                .init(
                    identifier: "removeAds", productID: "com.example.kakin.removeAd", isActive: true, expiresDate: nil,
                    revocationDate: nil, transactionID: "1", originalTransactionID: "1"),
                .init(
                    identifier: "premium", productID: "com.example.kakin.premium.monthly", isActive: true,
                    expiresDate: now.addingTimeInterval(86_400), revocationDate: nil, transactionID: "2",
                    originalTransactionID: "2"),
            ], balances: ["points": 250])
        try await first.update(from: customer, at: now)

        let relaunched = ProductManager(productIDs: ["com.example.kakin.removeAd"], storageDirectory: directory)
        #expect(await relaunched.isUnlocked("removeAds"))
        #expect(await relaunched.balance(of: "points") == 250)
        #expect(await relaunched.isUnlocked("premium", at: now))
        #expect(
            await relaunched.isUnlocked("premium", at: now.addingTimeInterval(2 * 86_400)) == false,
            "a lapsed subscription reads as locked")
    }

    @Test func pricesAreFormattedWithTheProductsLocale() {
        #expect(ProductManager.format(100, currencyCode: "JPY", localeIdentifier: "ja_JP") == "¥100")
        #expect(
            ProductManager.format(Decimal(string: "0.99")!, currencyCode: "USD", localeIdentifier: "en_US") == "$0.99")
        #expect(
            ProductManager.format(Decimal(string: "0.99")!, currencyCode: "EUR", localeIdentifier: "de_DE") == "0,99 €")
    }
}
