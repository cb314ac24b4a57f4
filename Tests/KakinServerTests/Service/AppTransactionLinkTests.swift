import AppStoreModels
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

@testable import KakinServer
@testable import KakinLedger

/// A customer's app download, reported by the SDK, gives the customer the purchases of that
/// download that reach the server without an owner: Apple's notification of a purchase the app
/// never uploaded is recorded for them.
@Suite struct AppTransactionLinkTests {
    @Test func aNotifiedPurchaseGoesToTheCustomerOfItsAppDownload() async throws {
        let fixture = try await ServerFixture()
        _ = try await fixture.engine.createTester(name: "tester", id: "tester")
        let linked = try await fixture.service.linkAppTransaction(
            try await fixture.engine.signedAppTransaction(for: "tester"), bundleID: ServerFixture.bundleID,
            appUserID: "user-1")
        #expect(linked.appTransactionID == (try await fixture.engine.appTransactionID(of: "tester")))

        // The purchase is made; the app never uploads it; Apple's ONE_TIME_CHARGE arrives.
        let (unlock, _) = try await fixture.buy("unlock")
        let event = try #require(await fixture.engine.events().last { $0.transactionID == unlock.id })
        _ = try await fixture.service.receiveNotification(try await fixture.engine.signedNotification(for: event))
        let recorded = try #require(try await fixture.store.transaction(id: unlock.id))
        #expect(recorded.appUserID == "user-1")
        let downloads = try await fixture.store.appTransactions(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(downloads.map(\.appTransactionID) == [linked.appTransactionID])

        // A download nobody linked: the purchase waits for its owner, as before.
        _ = try await fixture.engine.createTester(name: "stranger", id: "stranger")
        let (other, _) = try await fixture.buy("unlock", tester: "stranger")
        let otherEvent = try #require(await fixture.engine.events().last { $0.transactionID == other.id })
        _ = try await fixture.service.receiveNotification(try await fixture.engine.signedNotification(for: otherEvent))
        #expect(try await fixture.store.transaction(id: other.id)?.appUserID == nil)
        try await fixture.store.shutdown()
    }

    @Test func aPayloadWithoutItsAppTransactionIDIsLookedUpWithApple() async throws {
        let fixture = try await ServerFixture()
        _ = try await fixture.engine.createTester(name: "tester", id: "tester")
        try await fixture.service.linkAppTransaction(
            try await fixture.engine.signedAppTransaction(for: "tester"), bundleID: ServerFixture.bundleID,
            appUserID: "user-1")
        let (unlock, jws) = try await fixture.buy("unlock")
        var payload = try await fixture.service.verifier(
            try fixture.service.app(ServerFixture.bundleID), .sandbox
        ).verifyTransaction(jws)
        payload.appTransactionID = nil
        let withoutID = payload
        try await fixture.withServerAPI { access in
            let service = PurchaseService.example(
                store: fixture.store, root: ServerFixture.authority.root, now: { fixture.clock.now() }
            ) { $0.serverAPI = access }
            let app = try service.app(ServerFixture.bundleID)
            #expect(await service.customerOfAppDownload(withoutID, app: app, environment: .sandbox) == "user-1")
        }
        #expect(unlock.appTransactionID == (try await fixture.engine.appTransactionID(of: "tester")))
        try await fixture.store.shutdown()
    }

    @Test func aMalformedAppTransactionIsRefused() async throws {
        let fixture = try await ServerFixture()
        await #expect(throws: ServerError.self) {
            try await fixture.service.linkAppTransaction(
                "e30.e30.c2ln", bundleID: ServerFixture.bundleID, appUserID: "user-1")
        }
        await #expect(throws: ServerError.self) {
            try await fixture.service.linkAppTransaction(
                "not a jws", bundleID: ServerFixture.bundleID, appUserID: "user-1")
        }
        try await fixture.store.shutdown()
    }
}
