import Foundation
import Kakin
import KakinShopModel
import Testing

/// An offer code, against a real `kakin serve`: the shop asks for the App Store's redemption
/// sheet; the customer redeems a code there (played here through the sandbox's device API, as
/// the sheet would); the subscription it starts reaches the app through the store's updates, the
/// SDK delivers it to the server, and the shop shows Premium at the code's terms.
@MainActor @Suite(.enabled(if: KakinServe.executable != nil, KakinServe.absent))
struct ShopOfferCodeLiveTests {
    @Test func aCodeRedeemedOnTheStoresSheetReachesTheShop() async throws {
        try await KakinServe.with { serve in
            let sandbox = SandboxControl(serve: serve)
            try await sandbox.addTester("yui")
            try await serve.withShop(tester: "yui", device: "phone") { shop in
                #expect(!shop.isEntitled(to: "premium"))
                shop.redeemOfferCode()
                #expect(shop.isRedeemingOfferCode, "the view shows the App Store's sheet")

                let redeemed = try await sandbox.redeem(KakinServe.offerCode, tester: "yui")
                #expect(redeemed["state"] as? String == "purchased", "\(redeemed)")
                await shop.offerCodeRedemptionFinished(.success(()))
                #expect(!shop.isRedeemingOfferCode && shop.notice == .offerCodeRedeemed)
                try await waitUntil("the redeemed subscription is granted") { shop.isEntitled(to: "premium") }
                #expect(shop.entitlement("premium")?.periodType == .offer, "three months at the code's price")
                if case .renews = shop.banner {} else { Issue.record("expected a renewal date, got \(shop.banner)") }

                // A sheet that fails says so, and the intent is over.
                shop.redeemOfferCode()
                await shop.offerCodeRedemptionFinished(.failure(KakinError(.network, "offline")))
                #expect(!shop.isRedeemingOfferCode && shop.notice == .failed(.network))
            }
        }
    }
}
