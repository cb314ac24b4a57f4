import AppStoreModels
import AppStoreSecurity
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct UpdateStreamTests {
    @Test func updatesReplayPurchasesApprovalsRenewalsAndRefunds() async throws {
        let fixture = try EngineFixture()
        var tester = try await fixture.engine.createTester(name: "u@example.com")
        tester.asksToBuy = true
        try await fixture.engine.updateTester(tester)
        let pending = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).pending)
        #expect(try await fixture.engine.updates(of: tester.id, after: 0).transactions.isEmpty)
        let approved = try #require(try await fixture.engine.approve(pending.id).transaction)
        let first = try await fixture.engine.updates(of: tester.id, after: 0)
        #expect(first.transactions.map(\.id) == [approved.id])
        try await fixture.engine.refund(approved.id)
        let second = try await fixture.engine.updates(of: tester.id, after: first.lastSequence)
        #expect(second.transactions.first?.revocationDate != nil)
        #expect(try await fixture.engine.updates(of: tester.id, after: second.lastSequence).transactions.isEmpty)
    }

    @Test func aWaitingPollIsWokenByAPurchase() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "u@example.com")
        let engine = fixture.engine
        async let woken: Void = engine.waitForUpdate(timeout: .seconds(600))
        // Let the wait register before the purchase happens.
        while await engine.waitingPollCount == 0 { await Task.yield() }
        _ = try await engine.purchase(.init(testerID: tester.id, productID: "points"))
        await woken
        #expect(try await engine.updates(of: tester.id, after: 0).transactions.count == 1)
    }

    @Test func theUpdatesRouteAndTheAppTransactionRoute() async throws {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: EngineFixture.authority, clock: .manual(at: EngineFixture.start))
        let service = SandboxService(engine: engine, catalog: catalog)
        let tester = try await engine.createTester(name: "u@example.com", id: "u")
        _ = try await engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.unlock"))
        try await Application(router: service.router()).test(.router) { client in
            let response = try await client.execute(uri: "/v1/device/testers/u/updates?after=0", method: .get)
            let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
            #expect((body?["transactions"] as? [Any])?.count == 1)
            let last = try #require(body?["lastSequence"] as? Int)
            let none = try await client.execute(
                uri: "/v1/device/testers/u/updates?after=\(last)&timeout=0", method: .get)
            let empty = try JSONSerialization.jsonObject(with: Data(buffer: none.body)) as? [String: Any]
            #expect((empty?["transactions"] as? [Any])?.isEmpty == true)
            let app = try await client.execute(uri: "/v1/device/testers/u/app-transaction", method: .get)
            let jws = try #require(
                (try JSONSerialization.jsonObject(with: Data(buffer: app.body)) as? [String: Any])?["jwsRepresentation"]
                    as? String)
            await #expect(try engine.signer.makeVerifier().verifyAppTransaction(jws).bundleID == ExampleApp.bundleID)
        }
    }
}
