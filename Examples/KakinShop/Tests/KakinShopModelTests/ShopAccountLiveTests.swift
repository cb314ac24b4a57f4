import Foundation
import Kakin
import KakinShopModel
import Testing

/// Buying before signing up, signing in, signing out and restoring, against a real `kakin serve`.
@MainActor @Suite(.enabled(if: KakinServe.executable != nil, KakinServe.absent))
struct ShopAccountLiveTests {
    /// An anonymous customer buys an unlock and points; logging in moves both to the account,
    /// logging out starts a new anonymous customer with nothing, and logging in again finds them.
    @Test func logInMovesThePurchasesAndLogOutStartsAnew() async throws {
        try await KakinServe.with { serve in
            try await SandboxControl(serve: serve).addTester("mio")
            try await serve.withShop(tester: "mio", device: "phone") { shop in
                #expect(shop.isAnonymous)
                let anonymous = try #require(shop.appUserID)
                #expect(anonymous.hasPrefix("$kakin_anon_"))
                #expect(await shop.logOut() == false && shop.notice == .failed(.notLoggedIn), "nobody is signed in")

                // A non-consumable: owned, and not for sale again.
                guard case .purchased(_, _?) = await shop.purchase(try shop.product(Catalog.removeAd)) else {
                    Issue.record("removeAd was not granted: \(shop.notice?.message ?? "")")
                    return
                }
                #expect(shop.isEntitled(to: "removeAds"))
                let removeAd = try shop.item(Catalog.removeAd)
                #expect(removeAd.isOwned && !removeAd.canBuy)
                // A consumable, twice: 100 points each, and still for sale.
                for _ in 0..<2 {
                    guard case .purchased(_, _?) = await shop.purchase(try shop.product(Catalog.increasePoints)) else {
                        Issue.record("the points were not granted: \(shop.notice?.message ?? "")")
                        return
                    }
                }
                #expect(try shop.item(Catalog.increasePoints).canBuy && shop.balances["points"] == 200)

                // Signing in moves what the anonymous customer bought to the account.
                #expect(await shop.logIn("mio-account"))
                #expect(shop.notice == .loggedIn("mio-account"))
                #expect(shop.appUserID == "mio-account" && !shop.isAnonymous)
                #expect(shop.isEntitled(to: "removeAds") && shop.balances["points"] == 200)
                #expect(shop.customer?.appUserID == "mio-account")

                // Signing out: a new anonymous customer, who owns nothing.
                #expect(await shop.logOut())
                #expect(shop.notice == .loggedOut && shop.isAnonymous)
                #expect(shop.appUserID != anonymous && shop.appUserID != "mio-account")
                #expect(!shop.isEntitled(to: "removeAds") && (shop.balances["points"] ?? 0) == 0)

                // The account keeps what it had.
                #expect(await shop.logIn("mio-account"))
                #expect(shop.isEntitled(to: "removeAds") && shop.balances["points"] == 200)
                #expect(await shop.logIn("$kakin_anon_0123") == false)
                #expect(shop.notice == .failed(.invalidAppUserID("$kakin_anon_0123")))
                #expect(shop.appUserID == "mio-account", "a refused log-in changes nothing")
            }
        }
    }

    /// A new phone, signed in to the same Apple Account, restores what the old one bought; with the
    /// server's `transferToNewUser` policy the purchase moves to the new phone's customer, who
    /// proves the Apple Account with the store's app transaction.
    @Test func restoreBringsThePurchasesToANewDevice() async throws {
        try await KakinServe.with(["--transfer-policy", "transferToNewUser"]) { serve in
            try await SandboxControl(serve: serve).addTester("kai")
            try await serve.withShop(tester: "kai", device: "old-phone") { old in
                guard case .purchased(_, _?) = await old.purchase(try old.product(Catalog.removeAd)) else {
                    Issue.record("removeAd was not granted: \(old.notice?.message ?? "")")
                    return
                }
                #expect(old.isEntitled(to: "removeAds"))
            }
            try await serve.withShop(tester: "kai", device: "new-phone") { new in
                #expect(!new.isEntitled(to: "removeAds"), "a new anonymous customer owns nothing yet")
                #expect(await new.restore())
                #expect(new.notice == .restored)
                #expect(new.isEntitled(to: "removeAds"))
                let removeAd = try new.item(Catalog.removeAd)
                #expect(removeAd.isOwned)
            }
        }
    }
}
