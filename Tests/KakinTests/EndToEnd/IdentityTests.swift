import Foundation
import Kakin
import KakinCore
import KakinWire
import Synchronization
import Testing

/// Reaches the server through URLSession unless switched off, when every request fails as an
/// unreachable server does.
final class SwitchableTransport: KakinTransport {
    let isOffline = Mutex(false)
    private let online = URLSessionTransport()

    func send(_ request: KakinHTTPRequest) async throws(KakinError) -> KakinHTTPReply {
        if isOffline.withLock({ $0 }) { throw KakinError(.network, "the server cannot be reached") }
        return try await online.send(request)
    }
}

/// Anonymous customers and logging in, with the SDK against a live purchase server and sandbox.
@MainActor @Suite struct IdentityTests {
    @Test func aPurchaseQueuedWhileOfflineFollowsTheLogIn() async throws {
        let stack = try await LiveStack()
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "ren@example.com", storefront: "USA", id: "ren")
            let transport = SwitchableTransport()
            let store = try await KakinStore.configure(
                .init(
                    serverURL: serverURL, bundleID: LiveStack.bundleID, publishableKey: "pk_test",
                    serverKey: stack.serverKey.publicKey, storageDirectory: stack.directory, transport: transport),
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "ren", pollSeconds: 1))
            let anonymous = store.appUserID
            #expect(store.isAnonymous)
            #expect(DeviceIdentity(directory: stack.directory).stored() == anonymous)

            await store.loadProducts(["com.example.kakin.removeAd"])
            let removeAd = try #require(store.products.first)
            transport.isOffline.withLock { $0 = true }
            guard case .purchased(let transaction, nil) = try await store.purchase(removeAd) else {
                Issue.record("expected a purchase awaiting the server")
                return
            }
            #expect(await store.payments.pendingDeliveries().map(\.id) == [transaction.id])

            // Offline, logging in changes nothing.
            await #expect(throws: PaymentError.network) { try await store.logIn("ren-account") }
            #expect(store.appUserID == anonymous && store.isAnonymous)
            #expect(DeviceIdentity(directory: stack.directory).stored() == anonymous)

            // Online: the queued purchase is delivered for the anonymous customer, then moves.
            transport.isOffline.withLock { $0 = false }
            let customer = try await store.logIn("ren-account")
            #expect(customer.appUserID == "ren-account" && customer.isEntitled(to: "removeAds"))
            #expect(await store.payments.pendingDeliveries().isEmpty)
            #expect(store.payments.appUserID == "ren-account")
            #expect(DeviceIdentity(directory: stack.directory).stored() == "ren-account")
            let ledger = try await stack.store.customer(bundleID: LiveStack.bundleID, appUserID: "ren-account")
            #expect(ledger.transactions.map(\.transactionID) == [transaction.id])
            #expect(
                try await stack.store.customer(bundleID: LiveStack.bundleID, appUserID: anonymous).transactions.isEmpty)

            // IDs that cannot be logged in are refused on the device, and nothing changes.
            for refused in ["", AnonymousAppUserID.prefix + "0123"] {
                do {
                    try await store.logIn(refused)
                    Issue.record("\(refused) was accepted")
                } catch let error as PaymentError {
                    #expect(error == .invalidAppUserID(refused) && !error.isRetryable)
                }
            }
            #expect(store.appUserID == "ren-account")
            await store.shutdown()
        }
    }

    @Test func anonymousIDsAreNewAndKept() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-id-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let identity = DeviceIdentity(directory: directory)
        #expect(identity.stored() == nil)
        let first = try identity.current()
        #expect(first.wholeMatch(of: /\$kakin_anon_[0-9a-f]{32}/) != nil, "\(first)")
        #expect(try identity.current() == first && DeviceIdentity(directory: directory).stored() == first)
        #expect(AnonymousAppUserID.make() != AnonymousAppUserID.make())
        try identity.save("someone")
        #expect(try identity.current() == "someone" && !AnonymousAppUserID.isAnonymous("someone"))
    }
}
