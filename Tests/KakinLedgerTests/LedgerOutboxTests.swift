import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

@Suite("Ledger: outbox, notifications, content, persistence")
struct LedgerOutboxTests {
    private func payload(_ event: LedgerEvent) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: event.payload) as? [String: Any])
    }

    @Test("every change appends its event in the same transaction", arguments: StoreKind.allCases)
    func eventsFollowChanges(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t0", source: .notification), grants: Fixture.coins)
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            _ = try await store.spend(
                bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 40, idempotencyKey: "s1",
                at: Fixture.at(50))
            // Refused or repeated operations leave no event.
            _ = try await store.spend(
                bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 400, idempotencyKey: "s2",
                at: Fixture.at(51))
            _ = try await store.spend(
                bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 40, idempotencyKey: "s1",
                at: Fixture.at(52))
            _ = try await store.revoke(
                transactionID: "t1", at: Fixture.at(60), reason: 1, grants: Fixture.coins, policy: .clampAtZero)

            let events = try await store.dueEvents(endpoint: "https://hooks.example/a", now: Fixture.at(0), limit: 100)
            #expect(
                events.map(\.type) == [
                    "transaction.recorded", "transaction.recorded", "balance.credited", "balance.spent",
                    "transaction.revoked", "balance.clawed_back",
                ])
            #expect(events.map(\.id) == events.map(\.id).sorted())
            #expect(events.first?.appUserID == nil)
            #expect(events.dropFirst().allSatisfy { $0.appUserID == "alice" && $0.bundleID == Fixture.bundleID })

            let recorded = try payload(events[1])
            #expect(recorded["transactionId"] as? String == "t1")
            #expect(recorded["productId"] as? String == "coins100")
            #expect(recorded["quantity"] as? Int == 1)
            #expect(recorded["ownerAssigned"] as? Bool == false)
            #expect(recorded["revoked"] as? Bool == false)
            let credited = try payload(events[2])
            #expect(credited["currency"] as? String == "coins")
            #expect(credited["amount"] as? Int == 100)
            #expect(credited["balance"] as? Int == 100)
            #expect(credited["idempotencyKey"] as? String == "grant:t1:coins")
            let spent = try payload(events[3])
            #expect(spent["amount"] as? Int == -40)
            #expect(spent["balance"] as? Int == 60)
            #expect(events[3].createdAt == Fixture.at(50))
            let revoked = try payload(events[4])
            #expect(revoked["revocationDate"] as? Int == Int(Fixture.at(60).timeIntervalSince1970 * 1000))
            #expect(revoked["revocationReason"] as? Int == 1)
            let clawedBack = try payload(events[5])
            #expect(clawedBack["amount"] as? Int == -60)
            #expect(clawedBack["shortfall"] as? Int == 40)
            #expect(clawedBack["balance"] as? Int == 0)
        }
    }

    @Test(
        "purchases recorded together each announce the balance after their own credit, in order",
        arguments: StoreKind.allCases)
    func creditEventsInOneGroup(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            // Recorded at once, most of them share a group commit; some go to another customer, one
            // is uploaded twice, and every other one asks for its customer's summary (read with
            // the group's events on PostgreSQL), which holds its own credit.
            let outcomes = try await concurrently(42) { index in
                let user = index % 4 == 3 ? "bob" : "alice"
                let outcome = try await store.ingest(
                    LedgerIngest(
                        Fixture.transaction("g\(index == 41 ? 0 : index)", user: user), grants: Fixture.coins,
                        summary: index.isMultiple(of: 2) ? (recent: 1, withJWS: false) : nil))
                return (index, outcome)
            }
            for (index, outcome) in outcomes {
                #expect((outcome.summary != nil) == index.isMultiple(of: 2))
                guard let summary = outcome.summary else { continue }
                #expect(summary.balances["coins", default: 0] >= 100)
                #expect(summary.recentTransactions.count == 1)
            }
            let events = try await store.dueEvents(endpoint: "https://hooks.example/a", now: Fixture.at(0), limit: 500)
            for user in ["alice", "bob"] {
                let credits = try events.filter { $0.appUserID == user && $0.type == "balance.credited" }.map(payload)
                #expect(credits.map { $0["balance"] as? Int } == (1...credits.count).map { $0 * 100 })
                let customer = try await store.customer(bundleID: Fixture.bundleID, appUserID: user)
                #expect(customer.balances["coins"] == Int64(credits.count * 100))
                #expect(customer.ledger.count == credits.count)
                // Each purchase's record comes before its credit.
                for credit in credits {
                    let key = try #require(credit["transactionId"] as? String)
                    let recorded = try #require(
                        events.firstIndex { event in
                            event.type == "transaction.recorded"
                                && (try? payload(event)["transactionId"] as? String) == key
                        })
                    let credited = try #require(
                        events.firstIndex { event in
                            event.type == "balance.credited"
                                && (try? payload(event)["transactionId"] as? String) == key
                        })
                    #expect(recorded < credited)
                }
            }
            #expect(events.filter { $0.type == "balance.credited" }.count == 41, "g0 was credited once")
        }
    }

    @Test("a file store closed and reopened keeps everything; migrating again changes nothing")
    func restart() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-ledger-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path

        let first = try await openLedger(.file, path: path)
        try await first.migrate()
        try await first.migrate()
        _ = try await first.record(Fixture.transaction("t1", user: "alice", quantity: 2), grants: Fixture.coins)
        _ = try await first.spend(
            bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 30, idempotencyKey: "s1",
            at: Fixture.at(20))
        _ = try await first.recordNotification(
            uuid: "n1", type: "ONE_TIME_CHARGE", subtype: nil, bundleID: Fixture.bundleID, transactionID: "t1",
            signedPayload: "jws", receivedAt: Fixture.at(5))
        let before = try await first.customer(bundleID: Fixture.bundleID, appUserID: "alice")
        let eventsBefore = try await first.dueEvents(endpoint: "e", now: Fixture.at(0), limit: 100)
        try await first.shutdown()
        try await first.shutdown()
        await #expect(throws: LedgerStoreError(.unavailable)) { try await first.transaction(id: "t1") }

        let second = try await openLedger(.file, path: path)
        try await second.migrate()
        let after = try await second.customer(bundleID: Fixture.bundleID, appUserID: "alice")
        #expect(after == before)
        #expect(after.balances == ["coins": 170])
        #expect(try await second.dueEvents(endpoint: "e", now: Fixture.at(1), limit: 100) == eventsBefore)
        #expect(
            try await second.recordNotification(
                uuid: "n1", type: "ONE_TIME_CHARGE", subtype: nil, bundleID: Fixture.bundleID, transactionID: "t1",
                signedPayload: "jws", receivedAt: Fixture.at(5)) == false)
        #expect(
            try await second.spend(
                bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 30, idempotencyKey: "s1",
                at: Fixture.at(20)) == .alreadySpent(balance: 170))
        try await second.shutdown()
    }

    @Test("an in-memory store starts empty and migrates idempotently")
    func migrateTwiceInMemory() async throws {
        try await withLedgerStore(.memory) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            try await store.migrate()
            #expect(try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice").balances == ["coins": 100])
        }
        try await withLedgerStore(.memory) { store async throws in
            #expect(try await store.transaction(id: "t1") == nil)
        }
    }
}
