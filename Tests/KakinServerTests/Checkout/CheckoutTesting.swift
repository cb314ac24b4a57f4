import AppStoreModels
import Crypto
import Foundation
import KakinLedger
import KakinTestSupport
import StoreSandbox
import Synchronization
import Testing

@testable import KakinServer

/// A price object in the shape Stripe's API (version 2024-06-20) answers `GET /v1/prices/{id}`
/// with: every field Stripe documents for a price, as its reference shows them.
enum StripePriceFixture {
    static func json(id: String, amount: Int, currency: String, interval: String?) -> Data {
        let recurring =
            interval.map {
                #"{"aggregate_usage": null, "interval": "\#($0)", "interval_count": 1, "meter": null, "trial_period_days": null, "usage_type": "licensed"}"#
            } ?? "null"
        return Data(
            """
            {
              "id": "\(id)",
              "object": "price",
              "active": true,
              "billing_scheme": "per_unit",
              "created": 1721920634,
              "currency": "\(currency)",
              "custom_unit_amount": null,
              "livemode": false,
              "lookup_key": null,
              "metadata": {},
              "nickname": null,
              "product": "prod_QXgBRqzTbNC2Ja",
              "recurring": \(recurring),
              "tax_behavior": "unspecified",
              "tiers_mode": null,
              "transform_quantity": null,
              "type": "\(interval == nil ? "one_time" : "recurring")",
              "unit_amount": \(amount),
              "unit_amount_decimal": "\(amount)"
            }
            """.utf8)
    }
}

/// Answers the Stripe prices the checkout reads, records every request, and refuses every
/// write: the route tests never reach a payment.
final class StripePriceStub: HTTPExchange {
    let prices: [String: Data]
    private let sent = Mutex<[String]>([])

    init(prices: [String: Data]) { self.prices = prices }

    var requests: [String] { sent.withLock { $0 } }

    func send(method: String, url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        let answer = try await answer(method: method, url: url, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer {
        sent.withLock { $0.append("\(method) \(url.path)") }
        if method == "GET", url.path.hasPrefix("/v1/prices/"), let price = prices[url.lastPathComponent] {
            return HTTPAnswer(status: 200, body: price, headers: [:])
        }
        let missing = #"{"error": {"type": "invalid_request_error", "code": "resource_missing", "message": "No such price"}}"#
        return HTTPAnswer(status: 404, body: Data(missing.utf8), headers: [:])
    }
}

/// A clock the tests move by hand.
final class CheckoutClock: Sendable {
    private let time: Mutex<Date>
    init(_ start: Date) { time = Mutex(start) }
    func now() -> Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

/// A server with two apps that sell on the web (the example app, and `com.example.other`),
/// reaching Stripe through `exchange`.
struct CheckoutServer {
    static let bundleID = ServerFixture.bundleID
    static let otherBundleID = "com.example.other"
    static let tokenSecret = "0123456789abcdef0123456789abcdef"
    static let unlock = "com.example.kakin.unlock"
    static let monthly = "com.example.kakin.premium.monthly"

    let service: PurchaseService
    let http: KakinServerHTTP
    let clock: CheckoutClock
    let engine: SandboxEngine
    let sandboxClock: SandboxClock

    /// The example app's Stripe account: `apiBase` for its API.
    static func account(apiBase: URL = URL(string: "https://api.stripe.com")!, secretKey: String = "sk_test_checkout")
        -> StripeAccount
    {
        StripeAccount(
            secretKey: secretKey, webhookSecrets: ["whsec_0123456789"],
            products: [
                .init(productID: unlock, price: "price_unlock"),
                .init(productID: "com.example.kakin.credits5", price: "price_credits"),
                .init(productID: monthly, price: "price_monthly", trialDays: nil),
                .init(productID: "com.example.kakin.premium.yearly", price: "price_yearly", trialDays: 7),
            ],
            apiBase: apiBase, publishableKey: "pk_test_checkout",
            returnURLs: ["myapp://checkout", "https://example.com/done", "http://127.0.0.1"])
    }

    init(
        exchange: any HTTPExchange = StripePriceStub(prices: [
            "price_unlock": StripePriceFixture.json(id: "price_unlock", amount: 999, currency: "usd", interval: nil),
            "price_credits": StripePriceFixture.json(id: "price_credits", amount: 1200, currency: "jpy", interval: nil),
            "price_monthly": StripePriceFixture.json(id: "price_monthly", amount: 499, currency: "usd", interval: "month"),
            "price_yearly": StripePriceFixture.json(id: "price_yearly", amount: 4999, currency: "usd", interval: "year"),
        ]),
        account: StripeAccount = CheckoutServer.account(), tokensRequired: Bool = false
    ) async throws {
        let clock = CheckoutClock(ServerFixture.start)
        let store = try SQLiteLedger(path: nil)
        try await store.migrate()
        var app = ExampleApp.configuration(root: ServerFixture.authority.root, environments: [.sandbox])
        app.stripe = account
        app.productTypes = [
            Self.unlock: .nonConsumable, "com.example.kakin.credits5": .consumable, Self.monthly: .autoRenewableSubscription,
            "com.example.kakin.premium.yearly": .autoRenewableSubscription,
        ]
        app.catalog = try StoreKitConfiguration.load(from: Data(contentsOf: ExampleApp.storeKitFile))
        if tokensRequired { app.customerTokens = CustomerTokenPolicy(secret: Self.tokenSecret, required: true) }
        var other = ExampleApp.configuration(root: ServerFixture.authority.root, environments: [.sandbox])
        other.bundleID = Self.otherBundleID
        other.publicKey = "pk_test_other_app"
        other.secretKey = "sk_test_other_app"
        other.stripe = Self.account(secretKey: "sk_test_other")
        service = PurchaseService(
            store: store, apps: [app, other], grants: try ExampleApp.grants(), exchange: exchange,
            now: { clock.now() })
        http = KakinServerHTTP(service: service, signingKey: P256.Signing.PrivateKey())
        self.clock = clock
        sandboxClock = SandboxClock.manual(at: ServerFixture.start)
        engine = try ExampleSandbox.engine(
            catalog: ExampleApp.catalog(), authority: ServerFixture.authority, clock: sandboxClock)
    }

    /// A token for `appUserID`, signed by the app's backend.
    func token(_ appUserID: String) -> String {
        CustomerToken.mint(
            appUserID: appUserID, bundleID: Self.bundleID, secret: SymmetricKey(data: Data(Self.tokenSecret.utf8)),
            now: clock.now())
    }
}
