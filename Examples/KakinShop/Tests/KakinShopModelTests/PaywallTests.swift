import AppStoreModels
import Foundation
import Kakin
import KakinShopModel
import Testing

/// The paywall's sections and words, from products and a customer made by hand.
@Suite struct PaywallTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func product(
        _ id: String, _ type: ProductType, price: String = "$0.99", period: String? = nil, level: Int? = nil,
        intro: SubscriptionOffer? = nil, eligible: Bool? = nil
    ) -> StoreProduct {
        var product = StoreProduct(
            id: id, type: type, displayName: id, description: "", price: 0.99, displayPrice: price,
            currencyCode: "USD", priceLocaleIdentifier: "en_US", subscriptionPeriod: period)
        product.subscriptionGroupLevel = level
        product.introductoryOffer = intro
        product.isEligibleForIntroductoryOffer = eligible
        return product
    }

    static let freeWeek = SubscriptionOffer(
        id: nil, kind: .introductory, price: 0, displayPrice: "$0.00", period: .init(value: 1, unit: .week),
        periodCount: 1, paymentMode: .freeTrial)

    @Test func productsAreSortedIntoSectionsWithWhatTheCustomerOwns() throws {
        let products = [
            Self.product("points", .consumable),
            Self.product("monthly", .autoRenewableSubscription, price: "$4.99", period: "P1M", level: 2, intro: Self.freeWeek, eligible: true),
            Self.product("removeAd", .nonConsumable),
            Self.product("yearly", .autoRenewableSubscription, price: "$49.99", period: "P1Y", level: 1, intro: Self.freeWeek, eligible: false),
            Self.product("sounds", .nonConsumable),
            Self.product("season", .nonRenewingSubscription),
        ]
        let customer = CustomerInfo(
            appUserID: "mio",
            entitlements: [
                .init(identifier: "removeAds", productID: "removeAd", isActive: true, transactionID: "1", originalTransactionID: "1"),
                .init(
                    identifier: "premium", productID: "monthly", isActive: true,
                    expiresDate: Self.now.addingTimeInterval(-60), transactionID: "2", originalTransactionID: "2"),
            ], balances: ["points": 100])
        let paywall = Paywall(products: products, customer: customer, contentProductIDs: ["sounds"], at: Self.now)

        #expect(paywall.subscriptions.map(\.id) == ["yearly", "monthly"], "the group's highest level first")
        #expect(paywall.unlocks.map(\.id) == ["removeAd", "sounds", "season"])
        #expect(paywall.consumables.map(\.id) == ["points"])
        let removeAd = try #require(paywall.unlocks.first)
        #expect(removeAd.isOwned && !removeAd.canBuy)
        let monthly = try #require(paywall.subscriptions.last)
        #expect(!monthly.isOwned, "an answer kept past the subscription's end no longer owns it")
        #expect(monthly.priceText == "$4.99 / month" && monthly.introductoryOffer == Self.freeWeek)
        #expect(paywall.subscriptions.first?.introductoryOffer == nil, "the store says the customer had it")
        #expect(paywall.subscriptions.first?.priceText == "$49.99 / year")
        #expect(paywall.unlocks[1].hasContent && !removeAd.hasContent)
        #expect(paywall.consumables[0].canBuy && paywall.consumables[0].priceText == "$0.99")
        #expect(Paywall(products: [], customer: nil, contentProductIDs: [], at: Self.now).isEmpty)
    }

    @Test func offersInWords() {
        #expect(OfferText.describe(Self.freeWeek) == "1 week free")
        let comeback = SubscriptionOffer(
            id: "comeback50", kind: .promotional, price: 2.49, displayPrice: "$2.49",
            period: .init(value: 1, unit: .month), periodCount: 3, paymentMode: .payAsYouGo)
        #expect(OfferText.describe(comeback) == "$2.49 a month for 3 months")
        let winBack = SubscriptionOffer(
            id: "winback1", kind: .winBack, price: 0.99, displayPrice: "$0.99", period: .init(value: 1, unit: .month),
            periodCount: 1, paymentMode: .payUpFront)
        #expect(OfferText.describe(winBack) == "$0.99 for 1 month")
        let twoWeeks = SubscriptionOffer(
            id: nil, kind: .introductory, price: 0, displayPrice: "$0.00", period: .init(value: 2, unit: .week),
            periodCount: 1, paymentMode: .freeTrial)
        #expect(OfferText.describe(twoWeeks) == "2 weeks free")
    }
}

/// The launch settings: defaults for `kakin serve`, the publishable key required, URLs checked.
@Suite struct ShopSettingsTests {
    @Test func defaultsSuitKakinServe() throws {
        let settings = try ShopSettings(["KAKIN_PUBLISHABLE_KEY": "pk_test"])
        #expect(settings.serverURL.absoluteString == "http://127.0.0.1:8080")
        #expect(settings.bundleID == "com.example.kakin" && settings.publishableKey == "pk_test")
        #expect(settings.serverKeyPEM == nil && settings.sandboxURL == nil && settings.sandboxTester == "shop")
    }

    @Test func everySettingIsRead() throws {
        let settings = try ShopSettings([
            "KAKIN_SERVER_URL": "https://iap.example.com", "KAKIN_BUNDLE_ID": "com.example.other",
            "KAKIN_PUBLISHABLE_KEY": " pk_live \n", "KAKIN_SERVER_KEY_PEM": "-----BEGIN PUBLIC KEY-----\\nAAAA\\n-----END PUBLIC KEY-----",
            "KAKIN_SANDBOX_URL": "http://127.0.0.1:8081", "KAKIN_SANDBOX_TESTER": "jp",
        ])
        #expect(settings.serverURL.host == "iap.example.com" && settings.bundleID == "com.example.other")
        #expect(settings.publishableKey == "pk_live")
        #expect(settings.serverKeyPEM == "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----")
        #expect(settings.sandboxURL?.port == 8081 && settings.sandboxTester == "jp")
    }

    @Test func unusableSettingsAreRefusedWithWhatToDo() {
        #expect(throws: ShopSettings.Problem.missing("KAKIN_PUBLISHABLE_KEY")) { try ShopSettings([:]) }
        #expect(throws: ShopSettings.Problem.missing("KAKIN_PUBLISHABLE_KEY")) {
            try ShopSettings(["KAKIN_PUBLISHABLE_KEY": "  "])
        }
        #expect(ShopSettings.Problem.missing("KAKIN_PUBLISHABLE_KEY").description.contains("kakin-data/keys.json"))
        #expect(throws: ShopSettings.Problem.notAURL(key: "KAKIN_SANDBOX_URL", value: "127.0.0.1:8081")) {
            try ShopSettings(["KAKIN_PUBLISHABLE_KEY": "pk", "KAKIN_SANDBOX_URL": "127.0.0.1:8081"])
        }
        #expect(throws: ShopSettings.Problem.notAURL(key: "KAKIN_SERVER_URL", value: "ftp://x")) {
            try ShopSettings(["KAKIN_PUBLISHABLE_KEY": "pk", "KAKIN_SERVER_URL": "ftp://x"])
        }
    }
}
