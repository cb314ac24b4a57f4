import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import KakinTestSupport
import StoreSandbox

/// An engine on a manual clock with a small hand-made catalog.
struct EngineFixture {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    static let authority = try! SandboxCertificateAuthority.generate(now: start)

    static let catalog: [String: SandboxProductInfo] = [
        "removeAd": SandboxProductInfo(
            id: "removeAd", type: .nonConsumable, priceMilliunits: 990, currency: "USD",
            oneTimeCodeOffers: [.init(identifier: "halfOff", priceMilliunits: 490)]),
        "points": SandboxProductInfo(
            id: "points", type: .consumable, priceMilliunits: 1_990, currency: "USD",
            oneTimeCodeOffers: [.init(identifier: "freePoints")]),
        "pass": SandboxProductInfo(id: "pass", type: .nonRenewingSubscription, priceMilliunits: 2_990, currency: "USD"),
        "hidden": SandboxProductInfo(
            id: "hidden", type: .nonConsumable, priceMilliunits: 990, currency: "USD", isAvailable: false),
        "monthly": SandboxProductInfo(
            id: "monthly", type: .autoRenewableSubscription, priceMilliunits: 4_990, currency: "USD",
            subscriptionGroupID: "premium", groupLevel: 2, period: .oneMonth,
            introductoryOffer: .init(discountType: .freeTrial, period: .oneWeek),
            promotionalOffers: [
                .init(
                    identifier: "comeback", discountType: .payAsYouGo, period: .oneMonth, periodCount: 2,
                    priceMilliunits: 1_990)
            ],
            winBackOffers: [
                .init(
                    identifier: "winBack", discountType: .payUpFront, period: .oneMonth, periodCount: 2,
                    priceMilliunits: 2_990)
            ],
            codeOffers: [.init(identifier: "spring", discountType: .freeTrial, period: .oneMonth)]),
        "monthlyPlus": SandboxProductInfo(
            id: "monthlyPlus", type: .autoRenewableSubscription, priceMilliunits: 5_990, currency: "USD",
            subscriptionGroupID: "premium", groupLevel: 2, period: .oneMonth),
        "weekly": SandboxProductInfo(
            id: "weekly", type: .autoRenewableSubscription, priceMilliunits: 1_490, currency: "USD",
            subscriptionGroupID: "premium", groupLevel: 2, period: .oneWeek),
        "yearly": SandboxProductInfo(
            id: "yearly", type: .autoRenewableSubscription, priceMilliunits: 49_990, currency: "USD",
            subscriptionGroupID: "premium", groupLevel: 1, period: .oneYear),
    ]

    /// The app's In-App Purchase key, which signs promotional offers in tests.
    static let offerKey = P256.Signing.PrivateKey()
    static let offerSigner = OfferSigner(
        keyID: "OFFERKEY01", issuerID: "57246542-96fe-1a63-e053-0824d011072a", bundleID: ExampleApp.bundleID,
        privateKey: offerKey)
    /// The key as the sandbox trusts it.
    static let offerKeys: [AppStoreServerAPITokenVerifier.Key] = [
        .init(keyID: offerSigner.keyID, issuerID: offerSigner.issuerID, publicKey: offerKey.publicKey)
    ]

    /// A promotional offer JWS for `offerID` of `productID`, signed now (or at `issuedAt`).
    func signedOffer(
        _ offerID: String, product productID: String = "monthly", nonce: UUID = UUID(), issuedAt: Date? = nil
    ) throws -> PromotionalOfferSignature {
        PromotionalOfferSignature(
            compactJWS: try Self.offerSigner.promotionalOffer(
                productID: productID, offerID: offerID, transactionID: nil, nonce: nonce,
                issuedAt: issuedAt ?? clock.now()))
    }

    let clock = SandboxClock.manual(at: start)
    let store: any SandboxStateStore
    let engine: SandboxEngine

    init(store: any SandboxStateStore = MemoryStateStore()) throws {
        self.store = store
        engine = try ExampleSandbox.engine(
            products: Self.catalog, storefrontIDs: ["USA": "143441", "JPN": "143462"], authority: Self.authority,
            clock: clock, store: store)
    }

    func days(_ count: Double) { clock.advance(by: count * 86_400) }
}

extension PurchaseOutcome {
    var transaction: SandboxTransaction? {
        if case .purchased(let transaction) = self { return transaction }
        return nil
    }
    var pending: PendingPurchase? {
        if case .deferred(let pending) = self { return pending }
        return nil
    }
    var failure: StoreKitErrorCode? {
        if case .failed(let code) = self { return code }
        return nil
    }
}
