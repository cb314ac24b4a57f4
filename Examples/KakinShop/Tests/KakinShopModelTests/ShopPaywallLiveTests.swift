import Foundation
import Kakin
import KakinShopModel
import Testing

/// The shop against a real `kakin serve`, as a customer in Japan sees it: the server's catalog,
/// the store's prices in yen and the product names in Japanese, the subscriptions' offers, and a
/// purchase at a promotional offer's price that the purchase server signed.
@MainActor @Suite(.enabled(if: KakinServe.executable != nil, KakinServe.absent))
struct ShopPaywallLiveTests {
    @Test func thePaywallShowsLocalizedPricesAndOffers() async throws {
        try await KakinServe.with { serve in
            try await SandboxControl(serve: serve).addTester("hana", storefront: "JPN")
            try await serve.withShop(tester: "hana", device: "phone") { shop in
            let paywall = shop.paywall

            // Every product of the server's catalog, in its section.
            #expect(paywall.subscriptions.map(\.id) == [Catalog.yearly, Catalog.monthly], "level 1 first")
            #expect(Set(paywall.unlocks.map(\.id)) == [Catalog.removeAd, Catalog.soundPack, Catalog.seasonPass, "com.example.kakin.unlock"])
            #expect(paywall.consumables.map(\.id).contains(Catalog.increasePoints))
            #expect(shop.contentProductIDs == [Catalog.soundPack], "what the server's catalog says has content")
            #expect(try shop.item(Catalog.soundPack).hasContent)
            #expect(shop.invalidProducts.isEmpty)

            // Localized for the tester's storefront: yen, Japanese names.
            let removeAd = try shop.item(Catalog.removeAd)
            #expect(removeAd.product.currencyCode == "JPY")
            #expect(removeAd.priceText.contains("100"), "\(removeAd.priceText)")
            #expect(removeAd.product.displayName == "広告削除")
            #expect(removeAd.canBuy && !removeAd.isOwned)

            // The monthly plan's offers, as the SDK exposes them.
            let monthly = try shop.item(Catalog.monthly)
            #expect(monthly.priceText.hasSuffix(" / month"), "\(monthly.priceText)")
            let trial = try #require(monthly.introductoryOffer, "a new customer may take the free week")
            #expect(trial.paymentMode == .freeTrial && OfferText.describe(trial) == "1 week free")
            #expect(monthly.promotionalOffers.compactMap(\.id).contains("comeback50"))
            #expect(monthly.winBackOffers.compactMap(\.id) == ["winback1"])
            #expect(shop.banner == .none && shop.isAnonymous)

            // A promotional offer: the purchase server signs it, the store sells at its price.
            let comeback = try #require(monthly.promotionalOffers.first { $0.id == "comeback50" })
            #expect(OfferText.describe(comeback).hasSuffix(" a month for 3 months"))
            let outcome = await shop.purchase(monthly.product, offer: comeback)
            guard case .purchased(_, let customer?) = outcome else {
                Issue.record("expected a purchase the server granted, got \(String(describing: outcome)); \(shop.notice?.message ?? "")")
                return
            }
            #expect(shop.notice == .purchased(productName: monthly.product.displayName))
            let premium = try #require(customer.entitlements.first { $0.identifier == "premium" })
            #expect(premium.periodType == .offer && premium.willRenew == true)
            #expect(shop.banner == .renews(on: try #require(premium.expiresDate)))
            #expect(try shop.item(Catalog.monthly).isOwned && shop.isEntitled(to: "premium"))
            }
        }
    }
}
