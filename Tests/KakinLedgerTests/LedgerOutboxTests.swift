import Crypto
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

    @Test("deliveries are tracked per endpoint with retry times", arguments: StoreKind.backends)
    func deliveries(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            for index in 0..<3 {
                _ = try await store.record(Fixture.transaction("t\(index)", user: "alice"), grants: [])
            }
            let a = "https://a.example/hook"
            let b = "https://b.example/hook"
            let all = try await store.dueEvents(endpoint: a, now: Fixture.at(0), limit: 10)
            #expect(all.count == 3)
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(0.01), limit: 2) == Array(all.prefix(2)))
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(0.02), limit: 0).isEmpty)

            try await store.markDelivery(
                eventID: all[0].id, endpoint: a, delivered: true, at: Fixture.at(1), retryAt: nil)
            try await store.markDelivery(
                eventID: all[1].id, endpoint: a, delivered: false, at: Fixture.at(1), retryAt: Fixture.at(61))
            try await store.markDelivery(
                eventID: all[2].id, endpoint: a, delivered: false, at: Fixture.at(1), retryAt: nil)
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(60), limit: 10).isEmpty)
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(61), limit: 10) == [all[1]])
            #expect(try await store.dueEvents(endpoint: b, now: Fixture.at(0), limit: 10) == all)

            // A second failure moves the retry; a success ends it; a late failure report changes nothing.
            try await store.markDelivery(
                eventID: all[1].id, endpoint: a, delivered: false, at: Fixture.at(61), retryAt: Fixture.at(181))
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(120), limit: 10).isEmpty)
            try await store.markDelivery(
                eventID: all[1].id, endpoint: a, delivered: true, at: Fixture.at(181), retryAt: nil)
            try await store.markDelivery(
                eventID: all[1].id, endpoint: a, delivered: false, at: Fixture.at(182), retryAt: Fixture.at(183))
            #expect(try await store.dueEvents(endpoint: a, now: Fixture.at(1000), limit: 10).isEmpty)

            await #expect(throws: (any Error).self) {
                try await store.markDelivery(
                    eventID: 999, endpoint: a, delivered: true, at: Fixture.at(1), retryAt: nil)
            }
        }
    }

    @Test("an event that keeps failing holds back no other, and the backlog counts what is left", arguments: StoreKind.backends)
    func failingEventHoldsNothingBack(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let endpoint = "https://a.example/hook"
            func record(_ range: Range<Int>) async throws {
                for index in range {
                    _ = try await store.record(Fixture.transaction("t\(index)", user: "alice"), grants: [])
                }
            }
            func deliver(_ events: [LedgerEvent], at seconds: TimeInterval) async throws {
                try await store.markDeliveries(
                    events.map { DeliveryAttempt(eventID: $0.id, delivered: true, at: Fixture.at(seconds), retryAt: nil) },
                    endpoint: endpoint)
            }
            try await record(0..<5)
            let first = try await store.dueEvents(endpoint: endpoint, now: Fixture.at(0), limit: 10)
            #expect(first.count == 5)
            try await store.markDelivery(
                eventID: first[0].id, endpoint: endpoint, delivered: false, at: Fixture.at(1), retryAt: Fixture.at(1000))
            try await deliver(Array(first.dropFirst()), at: 1)
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 1)

            // Events written after the failure are taken oldest first, a batch at a time.
            try await record(5..<8)
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 4)
            let next = try await store.dueEvents(endpoint: endpoint, now: Fixture.at(10), limit: 2)
            #expect(next.count == 2)
            #expect(next.allSatisfy { $0.id > first[4].id })
            #expect(next.map(\.id) == next.map(\.id).sorted())
            try await deliver(next, at: 11)
            let last = try await store.dueEvents(endpoint: endpoint, now: Fixture.at(20), limit: 10)
            #expect(last.count == 1)
            #expect(last.allSatisfy { $0.id > next[1].id })
            try await deliver(last, at: 21)
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 1)
            #expect(try await store.dueEvents(endpoint: endpoint, now: Fixture.at(999), limit: 10).isEmpty)

            // The failed event comes back at its retry time, alone.
            #expect(try await store.dueEvents(endpoint: endpoint, now: Fixture.at(1000), limit: 10) == [first[0]])
            try await deliver([first[0]], at: 1001)
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 0)
            #expect(try await store.dueEvents(endpoint: endpoint, now: Fixture.at(2000), limit: 10).isEmpty)
            // Another endpoint still gets every event.
            #expect(try await store.dueEvents(endpoint: "https://b.example/hook", now: Fixture.at(0), limit: 20).count == 8)
        }
    }

    @Test(
        "a notification is recorded once per UUID, also when it arrives many times at once",
        arguments: StoreKind.allCases)
    func notificationsOnce(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let results = try await concurrently(50) { index in
                try await store.recordNotification(
                    uuid: "n-\(index % 5)", type: "DID_RENEW", subtype: nil, bundleID: Fixture.bundleID,
                    transactionID: "t1", signedPayload: "jws", receivedAt: Fixture.at(Double(index)))
            }
            #expect(results.filter { $0 }.count == 5)
            #expect(
                try await store.recordNotification(
                    uuid: "n-0", type: "REFUND", subtype: "x", bundleID: Fixture.bundleID, transactionID: nil,
                    signedPayload: "jws", receivedAt: Fixture.at(99)) == false)
        }
    }

    @Test("content versions are kept and the last upload is the latest", arguments: StoreKind.backends)
    func contentPackages(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            func package(_ version: String, _ bytes: Data, at seconds: TimeInterval) -> ContentPackage {
                ContentPackage(
                    bundleID: Fixture.bundleID, productID: "level-pack", version: version,
                    sha256: SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined(),
                    size: Int64(bytes.count), uploadedAt: Fixture.at(seconds))
            }
            #expect(try await store.latestContent(bundleID: Fixture.bundleID, productID: "level-pack") == nil)
            let v1 = Data("version one".utf8)
            let v2 = Data(repeating: 7, count: 100_000)
            try await store.putContent(package("1.0", v1, at: 0), bytes: v1)
            try await store.putContent(package("1.1", v2, at: 10), bytes: v2)
            try await store.putContent(package("1.0", v1, at: 20), bytes: v1)
            let latest = try #require(
                try await store.latestContent(bundleID: Fixture.bundleID, productID: "level-pack"))
            #expect(latest.0 == package("1.1", v2, at: 10))
            #expect(latest.1 == v2)

            await #expect(throws: LedgerStoreError(.contentVersionConflict)) {
                try await store.putContent(package("1.0", v2, at: 30), bytes: v2)
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.putContent(package("2.0", v1, at: 30), bytes: v2)
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.putContent(package("2.0", Data(), at: 30), bytes: Data())
            }
            #expect(
                try await store.latestContent(bundleID: Fixture.bundleID, productID: "level-pack")?.0.version == "1.1")
            #expect(try await store.latestContent(bundleID: Fixture.bundleID, productID: "other") == nil)
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

    @Test("the notification history checkpoint of each app and environment only moves forward", arguments: StoreKind.backends)
    func notificationCheckpoints(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            #expect(try await store.notificationCheckpoint(bundleID: Fixture.bundleID, environment: .sandbox) == nil)
            try await store.advanceNotificationCheckpoint(
                bundleID: Fixture.bundleID, environment: .sandbox, to: Fixture.at(100), at: Fixture.at(101))
            try await store.advanceNotificationCheckpoint(
                bundleID: Fixture.bundleID, environment: .sandbox, to: Fixture.at(50), at: Fixture.at(102))
            #expect(try await store.notificationCheckpoint(bundleID: Fixture.bundleID, environment: .sandbox) == Fixture.at(100))
            try await store.advanceNotificationCheckpoint(
                bundleID: Fixture.bundleID, environment: .sandbox, to: Fixture.at(200), at: Fixture.at(201))
            #expect(try await store.notificationCheckpoint(bundleID: Fixture.bundleID, environment: .sandbox) == Fixture.at(200))
            #expect(try await store.notificationCheckpoint(bundleID: Fixture.bundleID, environment: .production) == nil)
            #expect(try await store.notificationCheckpoint(bundleID: "com.example.other", environment: .sandbox) == nil)
        }
    }
}
