import Foundation
import Observation
import Synchronization
import Testing

@testable import Kakin

/// The one-call setup and the observable store an app's views read.
@MainActor @Suite struct KakinStoreTests {
    static func configuration(_ server: FakeServer, directory: URL, user: String) -> KakinStore.Configuration {
        KakinStore.Configuration(
            serverURL: URL(string: "http://kakin.invalid")!, bundleID: FakeServer.bundleID, publishableKey: "pk_test",
            serverKey: server.key.publicKey, appUserID: user, storageDirectory: directory, transport: server)
    }

    @Test func oneCallConfiguresEverythingAndTheStateFollowsPurchases() async throws {
        let directory = temporaryDirectory("kakin-store")
        defer { try? FileManager.default.removeItem(at: directory) }
        let backend = FakeStore()
        let server = FakeServer()
        let store = try await KakinStore.configure(
            Self.configuration(server, directory: directory, user: "mia"), backend: backend)
        // The customer was read once at configuration.
        #expect(store.customerInfo?.appUserID == "mia" && store.customerInfo?.source == .server)
        #expect(store.customerInfo?.entitlements.isEmpty == true)

        var updates = store.customerInfoUpdates().makeAsyncIterator()
        // A listener starts with the customer the store already has.
        #expect(await updates.next() == store.customerInfo)
        await store.loadProducts([FakeStore.premium, FakeStore.removeAd])
        #expect(store.products.map(\.id) == [FakeStore.premium, FakeStore.removeAd], "in the order asked")
        #expect(store.invalidProducts.isEmpty)

        let removeAd = try #require(store.products.last)
        let outcome = try await store.purchase(removeAd)
        guard case .purchased(_, let customer?) = outcome else {
            Issue.record("expected a delivered purchase, got \(outcome)")
            return
        }
        #expect(customer.isEntitled(to: "removeAds"))
        #expect(store.customerInfo == customer && !store.isPurchasing && store.lastError == nil)
        #expect(await updates.next()?.isEntitled(to: "removeAds") == true)
        await store.shutdown()
    }

    @Test func anAnswerForTheCustomerBeforeALogInNeverReplacesTheAccount() async throws {
        let directory = temporaryDirectory("kakin-store-late-answer")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = FakeServer()
        var configuration = Self.configuration(server, directory: directory, user: "unused")
        configuration.appUserID = nil
        let store = try await KakinStore.configure(configuration, backend: FakeStore())
        let anonymous = store.appUserID
        #expect(store.isAnonymous && store.customerInfo?.appUserID == anonymous)

        // A read of the anonymous customer (as after a purchase) is still on its way when the
        // customer logs in; its answer arrives after the log-in published the account.
        server.holdCustomerReads()
        let refreshing = Task { await store.refreshCustomerInfo() }
        while server.heldCustomerReads == 0 { await Task.yield() }
        try await store.logIn("noa")
        #expect(store.customerInfo?.appUserID == "noa")
        server.releaseCustomerReads()
        await refreshing.value
        #expect(store.customerInfo?.appUserID == "noa", "the anonymous customer's late answer is dropped")
        #expect(store.appUserID == "noa" && store.lastError == nil)

        // A read asked for the account is published as before.
        await store.refreshCustomerInfo()
        #expect(store.customerInfo?.appUserID == "noa")
        await store.shutdown()
    }

    @Test func isPurchasingIsObservedAndAFailureIsOneTypedError() async throws {
        let directory = temporaryDirectory("kakin-store-errors")
        defer { try? FileManager.default.removeItem(at: directory) }
        let backend = FakeStore()
        let server = FakeServer()
        let store = try await KakinStore.configure(
            Self.configuration(server, directory: directory, user: "ola"), backend: backend)
        await store.loadProducts([FakeStore.removeAd])
        let product = try #require(store.products.first)

        // A view reading `isPurchasing` is told when it changes.
        let changed = ObservationFlag()
        withObservationTracking { _ = store.isPurchasing } onChange: { changed.set() }
        backend.setPermission(.denied)
        do {
            _ = try await store.purchase(product)
            Issue.record("bought although purchases are not allowed")
        } catch {
            #expect(error == .notAllowed)
        }
        #expect(changed.isSet)
        #expect(store.lastError == .notAllowed && !store.isPurchasing)

        // The next operation clears it.
        backend.setPermission(.allowed)
        await store.refreshCustomerInfo()
        await store.loadProducts([FakeStore.removeAd])
        #expect(store.lastError == nil)
        await store.shutdown()
    }

    @Test func aTransactionDeliveredByTheSessionAloneUpdatesTheCustomer() async throws {
        let directory = temporaryDirectory("kakin-store-updates")
        defer { try? FileManager.default.removeItem(at: directory) }
        let backend = FakeStore()
        let server = FakeServer()
        let store = try await KakinStore.configure(
            Self.configuration(server, directory: directory, user: "ren"), backend: backend)
        var updates = store.customerInfoUpdates().makeAsyncIterator()
        #expect(await updates.next()?.isEntitled(to: "premium") == false, "first the customer as configured")
        // A renewal or an approval arrives through the store's update stream, not a purchase call.
        backend.pushUpdate(backend.makeTransaction(FakeStore.premium, expires: Date.distantFuture))
        let customer = await updates.next()
        #expect(customer?.isEntitled(to: "premium") == true)
        #expect(store.customerInfo?.isEntitled(to: "premium") == true)
        await store.shutdown()
    }
}

/// Set once by an observation callback.
final class ObservationFlag: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}
