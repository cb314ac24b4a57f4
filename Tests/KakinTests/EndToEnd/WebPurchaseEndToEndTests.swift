import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Kakin
import KakinCore
import KakinServer
import KakinTestSupport
import KakinWire
import Testing

/// A web purchase as an app makes it with the SDK, against a live purchase server whose Stripe
/// account is the emulator: a link for a customer on the United States storefront, none for
/// another storefront, the payment the page makes, Stripe's events applied by the server, and
/// the entitlement the SDK reads on the return, managed on the web; an App Store purchase beside
/// it is managed in the App Store.
@MainActor @Suite(.enabled(if: StripeEmulator.available, StripeEmulator.skipMessage))
struct WebPurchaseEndToEndTests {
    static let monthly = "com.example.kakin.premium.monthly"
    static let removeAd = "com.example.kakin.removeAd"
    static let returnURL = URL(string: "myapp://checkout")!
    static let publishableKey = "pk_test_checkout"

    /// The app's Stripe account on the emulator, selling the monthly subscription at a plan made
    /// for this test (the emulator has no prices of its own).
    static func account() async throws -> StripeAccount {
        let emulator = try #require(StripeEmulator.url)
        let plan = "kakin_sdk_monthly_\(UUID().uuidString.prefix(8).lowercased())"
        _ = try await post(
            emulator.appendingPathComponent("v1/plans"),
            form: "id=\(plan)&amount=499&currency=usd&interval=month&interval_count=1&product[name]=Premium",
            authorization: "Bearer \(StripeEmulator.secretKey)")
        return StripeAccount(
            secretKey: StripeEmulator.secretKey, webhookSecrets: ["whsec_0123456789"],
            products: [.init(productID: monthly, price: plan)], apiBase: emulator, publishableKey: publishableKey,
            returnURLs: [returnURL.absoluteString])
    }

    /// Pays on the page the link opens, as its Stripe.js stand-in does against the emulator: a
    /// card token made with the publishable key, posted with the link's signed fields.
    static func pay(_ link: URL, serverURL: URL) async throws -> CheckoutPayment {
        let emulator = try #require(StripeEmulator.url)
        let token = try await post(
            emulator.appendingPathComponent("v1/tokens"),
            form: "card[number]=4242424242424242&card[exp_month]=12&card[exp_year]=2034&card[cvc]=123&key=\(publishableKey)")
        let tokenID = try #require(
            (try JSONSerialization.jsonObject(with: token) as? [String: Any])?["id"] as? String)
        let items = URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems ?? []
        var fields = Dictionary(items.map { ($0.name, $0.value ?? "") }) { first, _ in first }
        fields["cardToken"] = tokenID
        let bundleID = try #require(link.pathComponents.last)
        var request = URLRequest(url: try #require(KakinRoute.checkoutPay(bundleID).url(relativeTo: serverURL)))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: fields)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: data, as: UTF8.self))")
        return try KakinJSON.decoder().decode(CheckoutPayment.self, from: data)
    }

    static func post(_ url: URL, form: String, authorization: String? = nil) async throws -> Data {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        request.httpBody = Data(form.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: data, as: UTF8.self))")
        return data
    }

    @Test func aCustomerBuysOnTheWebAndTheAppSeesItManagedOnTheWeb() async throws {
        let stack = try await LiveStack(stripe: try await Self.account())
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "us@example.com", id: "us")
            let user = "web-\(UUID().uuidString)"
            func configure(_ device: String, storefront: String) async throws -> KakinStore {
                try await KakinStore.configure(
                    .init(
                        serverURL: serverURL, bundleID: LiveStack.bundleID, publishableKey: "pk_test",
                        serverKey: stack.serverKey.publicKey, appUserID: user,
                        storageDirectory: stack.directory.appendingPathComponent(device)),
                    backend: SandboxBackend(baseURL: sandboxURL, testerID: "us", pollSeconds: 1, storefront: storefront))
            }

            // Another storefront: refused on the device, before the server is asked.
            let abroad = try await configure("abroad", storefront: "FRA")
            let refused = await #expect(throws: KakinError.self) {
                try await abroad.webCheckoutLink(for: Self.monthly, returnURL: Self.returnURL)
            }
            #expect(refused?.code == .webPurchasesUnavailable && refused?.serverCode == nil)
            await abroad.shutdown()

            let phone = try await configure("phone", storefront: "USA")
            #expect(phone.customerInfo?.isEntitled(to: "premium") == false)
            let link = try await phone.webCheckoutLink(for: Self.monthly, returnURL: Self.returnURL)
            #expect(link.url.host == serverURL.host && link.url.port == serverURL.port)
            #expect(link.expiresAt > Date())

            let payment = try await Self.pay(link.url, serverURL: serverURL)
            #expect(payment.kind == "subscription" && payment.status == "active")
            // No webhook reaches this server: it reads what Stripe made, then applies it (the
            // emulator is shared, so other tests' events may be among them and fail here).
            let service = stack.server.service
            _ = try await service.reconcileStripeEvents(bundleID: LiveStack.bundleID)
            _ = try await service.applyStripeEvents(bundleID: LiveStack.bundleID)

            let customer = try await phone.handleWebCheckoutReturn(
                URL(string: "myapp://checkout?status=succeeded&product=\(Self.monthly)")!)
            #expect(customer.isEntitled(to: "premium"))
            #expect(phone.customerInfo == customer)
            let premium = try #require(customer.entitlements.first { $0.identifier == "premium" })
            #expect(premium.store == .stripe)
            #expect(premium.management == .web(nil))

            // The server never sells the same subscription twice.
            let again = await #expect(throws: KakinError.self) {
                try await phone.webCheckoutLink(for: Self.monthly, returnURL: Self.returnURL)
            }
            #expect(again?.code == .alreadySubscribed && again?.cause == "alreadySubscribed")
            // A product the app does not sell on the web.
            let notSold = await #expect(throws: KakinError.self) {
                try await phone.webCheckoutLink(for: Self.removeAd, returnURL: Self.returnURL)
            }
            #expect(notSold?.code == .productUnavailable)

            // Bought in the App Store (the sandbox), managed there.
            await phone.loadProducts([Self.removeAd])
            let outcome = try await phone.purchase(try #require(phone.products.first))
            guard case .purchased(_, let after?) = outcome else {
                Issue.record("expected a delivered purchase, got \(outcome)")
                return
            }
            let removeAds = try #require(after.entitlements.first { $0.identifier == "removeAds" })
            #expect(removeAds.store == .appStore)
            #expect(removeAds.management == .appStore)
            #expect(after.entitlements.first { $0.identifier == "premium" }?.management == .web(nil))
            await phone.shutdown()
        }
    }
}
