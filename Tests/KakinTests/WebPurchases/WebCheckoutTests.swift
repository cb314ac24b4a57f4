import Foundation
import KakinCore
import KakinWire
import Testing

@testable import Kakin

/// Web purchases as the SDK offers them, against the in-memory server: a link only where the
/// storefront allows it, the server's refusals as typed errors, and the customer read again on
/// the return.
@MainActor @Suite struct WebCheckoutTests {
    static let returnURL = URL(string: "myapp://checkout")!

    static func store(
        _ server: FakeServer, _ backend: FakeStore, directory: URL, storefronts: Set<String> = ["USA"]
    ) async throws -> KakinStore {
        var configuration = KakinStoreTests.configuration(server, directory: directory, user: "mia")
        configuration.webPurchaseStorefronts = storefronts
        return try await KakinStore.configure(configuration, backend: backend)
    }

    @Test func aUSStorefrontGetsTheServersLinkForTheCustomer() async throws {
        let directory = temporaryDirectory("kakin-web-link")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = FakeServer()
        let store = try await Self.store(server, FakeStore(), directory: directory)
        #expect(store.webPurchaseStorefronts == ["USA"], "the United States by default")
        #expect(await store.webPurchasesAvailable())

        let link = try await store.webCheckoutLink(for: FakeStore.premium, returnURL: Self.returnURL)
        #expect(link.url.host == "kakin.invalid")
        #expect(link.url.query?.contains("productId=\(FakeStore.premium)") == true)
        #expect(link.expiresAt == Date(timeIntervalSince1970: 1_790_000_900))
        #expect(
            server.checkoutRequests == [
                CheckoutLinkRequest(appUserId: "mia", productId: FakeStore.premium, returnUrl: "myapp://checkout")
            ])
        let request = try #require(server.requests.last)
        #expect(request.method == "POST")
        #expect(request.headers[KakinHeader.publishableKey] == "pk_test")
        await store.shutdown()
    }

    @Test(arguments: [String?.some("FRA"), "JPN", nil])
    func anotherStorefrontOrNoneIsRefusedWithoutAsking(storefront: String?) async throws {
        let directory = temporaryDirectory("kakin-web-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = FakeServer()
        let backend = FakeStore()
        backend.setStorefront(storefront)
        let store = try await Self.store(server, backend, directory: directory)
        #expect(await store.webPurchasesAvailable() == false)
        let error = await #expect(throws: KakinError.self) {
            try await store.webCheckoutLink(for: FakeStore.premium, returnURL: Self.returnURL)
        }
        #expect(error?.code == .webPurchasesUnavailable)
        #expect(error?.isRetryable == false)
        #expect(server.checkoutRequests.isEmpty, "nothing was sent")
        await store.shutdown()
    }

    @Test func theAppChoosesItsStorefrontsInAnyCase() async throws {
        let directory = temporaryDirectory("kakin-web-storefronts")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = FakeServer()
        let backend = FakeStore()
        backend.setStorefront("fra")
        let store = try await Self.store(server, backend, directory: directory, storefronts: ["USA", "FRA"])
        #expect(store.allowsWebPurchases(onStorefront: "usa"))
        #expect(!store.allowsWebPurchases(onStorefront: "DEU"))
        #expect(!store.allowsWebPurchases(onStorefront: nil))
        _ = try await store.webCheckoutLink(for: FakeStore.removeAd, returnURL: Self.returnURL)
        #expect(server.checkoutRequests.count == 1)
        await store.shutdown()

        // No storefront at all: web purchases are off.
        let off = try await Self.store(
            server, FakeStore(), directory: directory.appendingPathComponent("off"), storefronts: [])
        #expect(await off.webPurchasesAvailable() == false)
        await off.shutdown()
    }

    @Test(arguments: [
        (409, "conflict", "alreadySubscribed", KakinError.Code.alreadySubscribed),
        (404, "notFound", "unknownProduct", .productUnavailable),
        (404, "notFound", "priceNotFound", .productUnavailable),
        (404, "notConfigured", "checkoutNotConfigured", .webPurchasesUnavailable),
        (400, "invalidRequest", "returnURLNotAllowed", .notConfigured),
        (503, "appleUnavailable", "stripeUnavailable", .network),
    ])
    func theServersRefusalsAreTypedErrors(
        status: Int, serverCode: String, cause: String, expected: KakinError.Code
    ) async throws {
        let server = FakeServer()
        server.refuseCheckout(
            status, .init(code: serverCode, message: "refused", retryable: status >= 500, cause: cause))
        let error = await #expect(throws: KakinError.self) {
            try await server.client.checkoutLink(
                productID: FakeStore.premium, returnURL: Self.returnURL, appUserID: "mia")
        }
        #expect(error?.code == expected)
        #expect(error?.serverCode == serverCode)
        #expect(error?.cause == cause)
        #expect(error?.isRetryable == (status >= 500))
    }

    @Test func theReturnReadsTheCustomerWhoPaidOnTheWeb() async throws {
        let directory = temporaryDirectory("kakin-web-return")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = FakeServer()
        let store = try await Self.store(server, FakeStore(), directory: directory)
        #expect(store.customerInfo?.isEntitled(to: "premium") == false)

        // The page took the payment; the server granted it when Stripe's event arrived.
        server.sellOnWeb(FakeStore.premium, to: "mia")
        let customer = try await store.handleWebCheckoutReturn(
            URL(string: "myapp://checkout?status=succeeded&product=\(FakeStore.premium)")!)
        #expect(customer.isEntitled(to: "premium"))
        #expect(store.customerInfo == customer)
        let premium = try #require(customer.entitlements.first { $0.identifier == "premium" })
        #expect(premium.store == .stripe && premium.isWebPurchase)
        #expect(premium.management == .web(nil))

        // While the server cannot be reached, the return says so rather than guessing.
        server.setReachable(false)
        let error = await #expect(throws: KakinError.self) {
            try await store.handleWebCheckoutReturn(Self.returnURL)
        }
        #expect(error?.code == .network)
        await store.shutdown()
    }
}
