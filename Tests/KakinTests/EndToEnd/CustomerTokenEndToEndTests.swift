import AppStoreModels
import Foundation
import Kakin
import KakinServer
import KakinWire
import StoreSandbox
import Synchronization
import Testing

/// Identity and restores with customer tokens required, the SDK against a live purchase server
/// and sandbox: the app's backend signs a token for each identified customer, anonymous customers
/// need none, and a restore moves a purchase only with proof of the Apple Account that bought it.
@MainActor @Suite struct CustomerTokenEndToEndTests {
    func configure(
        _ stack: LiveStack, serverURL: URL, sandboxURL: URL, tester: String, user: String? = nil,
        backend: LiveStack.Backend?, directory: URL? = nil, transport: any KakinTransport = URLSessionTransport()
    ) async throws -> KakinStore {
        try await KakinStore.configure(
            .init(
                serverURL: serverURL, bundleID: LiveStack.bundleID, publishableKey: "pk_test",
                serverKey: stack.serverKey.publicKey, appUserID: user, storageDirectory: directory ?? stack.directory,
                transport: transport, customerToken: backend?.provider),
            backend: SandboxBackend(baseURL: sandboxURL, testerID: tester, pollSeconds: 1))
    }

    @Test func anonymousPurchasesFollowALogInAndIdentifiedCustomersNeedTheirToken() async throws {
        let stack = try await LiveStack(requiringCustomerTokens: true)
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "ren@example.com", storefront: "USA", id: "ren")
            let backend = LiveStack.Backend(stack)
            let transport = SwitchableTransport()
            let store = try await configure(
                stack, serverURL: serverURL, sandboxURL: sandboxURL, tester: "ren", backend: backend,
                transport: transport)
            let anonymous = store.appUserID
            #expect(store.isAnonymous && store.customerInfo?.source == .server)

            await store.loadProducts(["com.example.kakin.removeAd", "com.example.kakin.increasePoints"])
            let removeAd = try #require(store.products.first { $0.id == "com.example.kakin.removeAd" })
            let points = try #require(store.products.first { $0.id == "com.example.kakin.increasePoints" })
            guard case .purchased(_, let bought?) = try await store.purchase(removeAd) else {
                Issue.record("the anonymous purchase was not delivered")
                return
            }
            #expect(bought.appUserID == anonymous && bought.isEntitled(to: "removeAds"))
            #expect(backend.signed.withLock { $0 }.isEmpty, "anonymous customers need no token")

            // The log-in carries the token of the user the anonymous customer becomes.
            let customer = try await store.logIn("ren-account")
            #expect(customer.appUserID == "ren-account" && customer.isEntitled(to: "removeAds"))
            let entitlement = try #require(customer.entitlements.first { $0.identifier == "removeAds" })
            #expect(entitlement.environment == .sandbox)
            guard case .purchased(_, let after?) = try await store.purchase(points) else {
                Issue.record("the purchase after the log-in was not delivered")
                return
            }
            #expect(after.appUserID == "ren-account" && after.balances == ["points": 100])
            await store.refreshCustomerInfo()
            #expect(store.customerInfo?.source == .server && store.lastError == nil)
            #expect(backend.signed.withLock { $0 } == ["ren-account"], "one token, kept while it is good")

            // Offline, the device's answer keeps the environment the server gave.
            transport.isOffline.withLock { $0 = true }
            await store.refreshCustomerInfo()
            let offline = try #require(store.customerInfo)
            #expect(offline.isProvisional && offline.entitlements.first { $0.identifier == "removeAds" }?.environment == .sandbox)
            transport.isOffline.withLock { $0 = false }

            // Without a token, or with another customer's, the server answers nothing about ren-account.
            do {
                _ = try await stack.client(serverURL).customer(appUserID: "ren-account")
                Issue.record("read without a token")
            } catch let error as KakinError {
                #expect(error.code == .unauthorized && error.cause == "customerTokenMissing" && error.isRetryable)
            }
            let impostor = LiveStack.Backend(stack)
            let wrong = stack.client(serverURL, customerToken: { _ in try await impostor.provider("mallory") })
            do {
                _ = try await wrong.customer(appUserID: "ren-account")
                Issue.record("read with another customer's token")
            } catch let error as KakinError {
                #expect(error.code == .unauthorized && error.cause == "customerTokenWrongCustomer")
                #expect(PaymentError(error) == .unauthorized(error))
            }
            #expect(impostor.signed.withLock { $0 }.count == 2, "one fresh token, one more try")
            // The anonymous ID became ren-account: it opens nothing without ren-account's token.
            await #expect(throws: KakinError(.unauthorized, "")) {
                try await stack.client(serverURL).customer(appUserID: anonymous)
            }
            await store.shutdown()
        }
    }

    @Test func aPurchaseMadeWhileTheAppsBackendIsDownIsDeliveredWhenItIsBack() async throws {
        let stack = try await LiveStack(requiringCustomerTokens: true)
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "kai@example.com", storefront: "USA", id: "kai")
            let backend = LiveStack.Backend(stack)
            backend.isDown.withLock { $0 = true }
            let store = try await configure(
                stack, serverURL: serverURL, sandboxURL: sandboxURL, tester: "kai", user: "kai", backend: backend)
            // No token: the customer is computed on the device meanwhile.
            #expect(store.customerInfo?.source == .device)

            await store.loadProducts(["com.example.kakin.removeAd"])
            let removeAd = try #require(store.products.first)
            guard case .purchased(let transaction, nil) = try await store.purchase(removeAd) else {
                Issue.record("expected a purchase waiting for a token")
                return
            }
            #expect(await store.payments.pendingDeliveries().map(\.id) == [transaction.id])
            #expect(await store.payments.rejectedDeliveries().isEmpty, "kept, not given up")
            #expect(
                try await stack.store.customer(bundleID: LiveStack.bundleID, appUserID: "kai").transactions.isEmpty)

            backend.isDown.withLock { $0 = false }
            // Sent now (or already, by the session's own retry).
            _ = await store.payments.deliverPending()
            #expect(await store.payments.pendingDeliveries().isEmpty)
            let ledger = try await stack.store.customer(bundleID: LiveStack.bundleID, appUserID: "kai")
            #expect(ledger.transactions.map(\.transactionID) == [transaction.id])
            await store.refreshCustomerInfo()
            #expect(store.customerInfo?.source == .server && store.customerInfo?.isEntitled(to: "removeAds") == true)
            await store.shutdown()
        }
    }

    @Test func aRestoreOnANewDeviceOfTheSameAppleAccountMovesThePurchase() async throws {
        let stack = try await LiveStack(requiringCustomerTokens: true, transferPolicy: .transferToNewUser)
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "ana@example.com", storefront: "USA", id: "ana")
            let backend = LiveStack.Backend(stack)
            let first = try await configure(
                stack, serverURL: serverURL, sandboxURL: sandboxURL, tester: "ana", user: "ana-old", backend: backend,
                directory: stack.directory.appendingPathComponent("first"))
            await first.loadProducts(["com.example.kakin.removeAd"])
            guard case .purchased(let transaction, _?) = try await first.purchase(try #require(first.products.first))
            else {
                Issue.record("the first purchase was not delivered")
                return
            }
            await first.shutdown()

            // The device's app transaction is the one the purchase carries: the same Apple Account.
            let device = SandboxBackend(baseURL: sandboxURL, testerID: "ana")
            let appTransaction = try #require(try await device.appTransaction())
            let downloadID = try #require(Self.claim("appTransactionId", of: appTransaction))
            #expect(Self.claim("appTransactionId", of: transaction.jwsRepresentation) == downloadID)

            // A new device, signed in to the same Apple Account, under another app account.
            let second = try await configure(
                stack, serverURL: serverURL, sandboxURL: sandboxURL, tester: "ana", user: "ana-new", backend: backend,
                directory: stack.directory.appendingPathComponent("second"))
            #expect(second.customerInfo?.isEntitled(to: "removeAds") == false)
            let restored = try await second.restore()
            #expect(restored.appUserID == "ana-new" && restored.isEntitled(to: "removeAds"))
            #expect(await second.payments.rejectedDeliveries().isEmpty)
            let moved = try await stack.store.customer(bundleID: LiveStack.bundleID, appUserID: "ana-new")
            #expect(moved.transactions.map(\.transactionID) == [transaction.id])
            let former = try await stack.client(serverURL, customerToken: backend.provider).customer(appUserID: "ana-old")
            #expect(!former.isEntitled(to: "removeAds"))
            #expect(Set(backend.signed.withLock { $0 }) == ["ana-old", "ana-new"])
            await second.shutdown()
        }
    }

    @Test func anotherAppleAccountsPurchaseIsRefusedWithATypedError() async throws {
        let stack = try await LiveStack(requiringCustomerTokens: true, transferPolicy: .transferToNewUser)
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "owner@example.com", storefront: "USA", id: "owner")
            _ = try await stack.engine.createTester(name: "other@example.com", storefront: "USA", id: "other")
            let backend = LiveStack.Backend(stack)
            let owner = try await configure(
                stack, serverURL: serverURL, sandboxURL: sandboxURL, tester: "owner", user: "alice", backend: backend,
                directory: stack.directory.appendingPathComponent("owner"))
            await owner.loadProducts(["com.example.kakin.removeAd"])
            guard case .purchased(let transaction, _?) = try await owner.purchase(try #require(owner.products.first))
            else {
                Issue.record("the owner's purchase was not delivered")
                return
            }
            await owner.shutdown()

            // A device signed in to another Apple Account holds the owner's signed transaction.
            let leaked = LeakedTransactionsBackend(
                base: SandboxBackend(baseURL: sandboxURL, testerID: "other", pollSeconds: 1), leaked: [transaction])
            let other = try await KakinStore.configure(
                .init(
                    serverURL: serverURL, bundleID: LiveStack.bundleID, publishableKey: "pk_test",
                    serverKey: stack.serverKey.publicKey, appUserID: "mallory",
                    storageDirectory: stack.directory.appendingPathComponent("other"),
                    customerToken: backend.provider),
                backend: leaked)
            let statuses = await other.payments.statusUpdates()
            let customer = try await other.restore()
            #expect(!customer.isEntitled(to: "removeAds"))
            var failed: PaymentStatus?
            for await status in statuses {
                if case .failed = status {
                    failed = status
                    break
                }
            }
            #expect(failed == .failed(productID: "com.example.kakin.removeAd", error: .purchasedByAnotherAccount))
            let rejected = await other.payments.rejectedDeliveries()
            #expect(rejected.map(\.transaction.id) == [transaction.id])
            #expect(rejected.first?.reason.contains("Apple Account that bought it") == true)
            let ledger = try await stack.store.customer(bundleID: LiveStack.bundleID, appUserID: "alice")
            #expect(ledger.transactions.map(\.transactionID) == [transaction.id], "still the owner's")
            await other.shutdown()
        }
    }

    /// A claim of a JWS's payload, read without verifying (the server verifies).
    static func claim(_ name: String, of jws: String) -> String? {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object[name].map { "\($0)" }
    }
}

/// The sandbox as one Apple Account's device, whose restore also returns transactions another
/// Apple Account bought (their signed JWS, leaked): what a thief's device would upload.
struct LeakedTransactionsBackend: StoreBackend {
    let base: SandboxBackend
    let leaked: [StoreTransaction]

    var storeIdentifier: String { base.storeIdentifier + "|leaked" }
    func canMakePayments() async throws -> Bool { try await base.canMakePayments() }
    func products(for identifiers: [String]) async throws -> (products: [StoreProduct], invalid: [InvalidProduct]) {
        try await base.products(for: identifiers)
    }
    func purchase(_ productID: String, quantity: Int, appAccountToken: UUID?) async throws -> StorePurchaseResult {
        try await base.purchase(productID, quantity: quantity, appAccountToken: appAccountToken)
    }
    func unfinishedTransactions() async throws -> [StoreTransaction] { try await base.unfinishedTransactions() }
    func finish(_ transaction: StoreTransaction) async throws { try await base.finish(transaction) }
    func restore() async throws -> [StoreTransaction] { try await base.restore() + leaked }
    func currentEntitlements() async throws -> [StoreTransaction] { try await base.currentEntitlements() }
    func transactionUpdates() -> AsyncStream<StoreTransaction> { base.transactionUpdates() }
    func appReceipt() async throws -> String? { try await base.appReceipt() }
    func appTransaction() async throws -> String? { try await base.appTransaction() }
}
