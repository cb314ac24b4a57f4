import AppStoreModels
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinServer
import KakinLedger
import KakinTestSupport
import StoreSandbox
import Testing

/// Customer answers stay bounded; restores onto another customer follow the app's policy.
@Suite struct CustomerAnswerTests {
    static let appKey: HTTPFields = [HTTPField.Name("X-Kakin-Key")!: "pk_test"]

    @Test func answersAreBoundedPaginatedAndCarryTheJWSOnlyWhenAsked() async throws {
        let fixture = try await ServerFixture()
        var ids: [String] = []
        for _ in 0..<7 {
            let (transaction, jws) = try await fixture.buy("increasePoints")
            try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "u")
            ids.append(transaction.id)
            fixture.clock.advance(by: 60)
        }
        let (_, removeAd) = try await fixture.buy("removeAd")
        try await fixture.service.submit(removeAd, bundleID: ServerFixture.bundleID, appUserID: "u")
        let expected = Array(ids.reversed())
        try await Application(router: fixture.http.router()).test(.router) { client in
            let answer = try await client.execute(
                uri: "/v1/customers/u?bundleId=\(ServerFixture.bundleID)&transactions=3", method: .get,
                headers: Self.appKey)
            let customer = try #require(ServerHTTPTests.object(answer.body)["customer"] as? [String: Any])
            let recent = try #require(customer["transactions"] as? [[String: Any]])
            #expect(recent.count == 3)
            #expect(customer["transactionCount"] as? Int == 8)
            #expect((customer["balances"] as? [String: Any])?["points"] as? Int == 700)
            #expect((customer["entitlements"] as? [[String: Any]])?.first?["identifier"] as? String == "removeAds")
            #expect(recent.first?["productId"] as? String == "com.example.kakin.removeAd", "newest first")
            #expect(recent.allSatisfy { $0["signedTransaction"] == nil })
            #expect(recent.first?["purchaseDate"] is Int, "dates are integer epoch milliseconds")
            #expect(customer["ledger"] == nil, "the ledger's rows are not the answer")

            // Signed transactions are the backend's: the publishable key is refused them.
            let refused = try await client.execute(
                uri: "/v1/customers/u?bundleId=\(ServerFixture.bundleID)&transactions=1&include=signedTransaction",
                method: .get, headers: Self.appKey)
            #expect(refused.status == .forbidden)
            #expect(String(buffer: refused.body).contains("secretKeyRequired"))
            let withJWS = try await client.execute(
                uri: "/v1/customers/u?bundleId=\(ServerFixture.bundleID)&transactions=1&include=signedTransaction",
                method: .get, headers: [.authorization: "Bearer sk_test"])
            let first =
                (ServerHTTPTests.object(withJWS.body)["customer"] as? [String: Any])?["transactions"]
                as? [[String: Any]]
            #expect((first?.first?["signedTransaction"] as? String)?.split(separator: ".").count == 3)

            // Every transaction once, page by page, newest first.
            var seen: [String] = []
            var cursor: String?
            repeat {
                let query = cursor.map { "&cursor=\($0)" } ?? ""
                let page = try await client.execute(
                    uri: "/v1/customers/u/transactions?bundleId=\(ServerFixture.bundleID)&limit=3\(query)",
                    method: .get, headers: Self.appKey)
                #expect(page.status == .ok)
                #expect(page.headers[HTTPField.Name("X-Kakin-Signature")!] != nil)
                let object = ServerHTTPTests.object(page.body)
                seen += (object["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
                cursor = object["nextCursor"] as? String
            } while cursor != nil && seen.count < 20
            #expect(seen.count == 8 && Set(seen).count == 8)
            #expect(Array(seen.suffix(7)) == expected)

            let badCursor = try await client.execute(
                uri: "/v1/customers/u/transactions?bundleId=\(ServerFixture.bundleID)&cursor=%21%21", method: .get,
                headers: Self.appKey)
            #expect(badCursor.status == .badRequest)
            let tooMany = try await client.execute(
                uri: "/v1/customers/u?bundleId=\(ServerFixture.bundleID)&transactions=1000", method: .get,
                headers: Self.appKey)
            #expect(tooMany.status == .badRequest)
        }
        try await fixture.store.shutdown()
    }

    @Test func keepWithOriginalRefusesARestoreByAnotherCustomer() async throws {
        let fixture = try await ServerFixture(transferPolicy: .keepWithOriginal)
        let (_, jws) = try await fixture.buy("removeAd")
        try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "alice")
        await #expect(throws: ServerError(.conflict, "")) {
            try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "bob")
        }
        let alice = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "alice")
        #expect(alice.entitlements.first?.isActive == true)
        try await fixture.store.shutdown()
    }

    @Test func transferToNewUserMovesTheEntitlementWithALedgerEvent() async throws {
        let fixture = try await ServerFixture(transferPolicy: .transferToNewUser)
        let (_, jws) = try await fixture.buy("premium.monthly")
        try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "alice")
        let outcome = try await fixture.service.submit(
            jws, bundleID: ServerFixture.bundleID, appUserID: "bob",
            signedAppTransaction: try await fixture.engine.signedAppTransaction(for: "tester"))
        #expect(outcome.transferredFrom == "alice")
        let alice = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "alice")
        let bob = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "bob")
        #expect(alice.entitlements.isEmpty)
        #expect(bob.entitlements.first?.identifier == "premium" && bob.entitlements.first?.isActive == true)
        let events = try await fixture.store.dueEvents(endpoint: "https://hooks.example", now: Date(), limit: 50)
        let transfer = try #require(events.first { $0.type == "transaction.transferred" })
        #expect(transfer.appUserID == "bob")
        let payload = try JSONSerialization.jsonObject(with: transfer.payload) as? [String: Any]
        #expect(payload?["from"] as? String == "alice" && payload?["to"] as? String == "bob")
        // Posting it again as bob changes nothing; a consumable is never transferred.
        #expect(
            try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "bob").transferredFrom
                == nil)
        let (_, points) = try await fixture.buy("increasePoints")
        try await fixture.service.submit(points, bundleID: ServerFixture.bundleID, appUserID: "alice")
        await #expect(throws: ServerError(.conflict, "")) {
            try await fixture.service.submit(points, bundleID: ServerFixture.bundleID, appUserID: "bob")
        }
        try await fixture.store.shutdown()
    }
}
