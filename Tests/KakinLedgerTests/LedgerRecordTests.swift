import AppStoreModels
import Foundation
import KakinLedger
import KakinTestSupport
import Testing

@Suite("Ledger: recording transactions")
struct LedgerRecordTests {
    @Test(
        "the same transaction recorded 100 times at once is recorded and credited once", arguments: StoreKind.allCases)
    func recordOnceConcurrently(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let transaction = Fixture.transaction("t1", user: "alice", quantity: 3)
            let outcomes = try await concurrently(100) { _ in
                try await store.record(transaction, grants: Fixture.coins)
            }
            #expect(outcomes.filter { $0 == .recorded }.count == 1)
            #expect(outcomes.filter { $0 == .duplicate(ownerAssigned: false) }.count == 99)

            let customer = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(customer.transactions == [transaction])
            #expect(customer.ledger.count == 1)
            #expect(customer.ledger.first?.kind == .credit)
            #expect(customer.ledger.first?.amount == 300)
            #expect(customer.ledger.first?.idempotencyKey == "grant:t1:coins")
            #expect(customer.balances == ["coins": 300])
            #expect(try await store.transaction(id: "t1") == transaction)
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }

    @Test(
        "an owner learned later gets the grants then, once; another customer is refused", arguments: StoreKind.allCases)
    func ownerFilledInLater(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let fromNotification = Fixture.transaction("t1", source: .notification)
            #expect(try await store.record(fromNotification, grants: Fixture.coins) == .recorded)
            #expect(try await store.transaction(id: "t1")?.appUserID == nil)
            #expect(try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice").ledger.isEmpty)

            let fromApp = Fixture.transaction("t1", user: "alice", recordedAt: 20)
            #expect(try await store.record(fromApp, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            #expect(try await store.record(fromApp, grants: Fixture.coins) == .duplicate(ownerAssigned: false))
            let alice = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.balances == ["coins": 100])
            #expect(alice.ledger.map(\.amount) == [100])
            #expect(alice.ledger.first?.createdAt == Fixture.at(20))
            // The first record wins: the row still says it came from the notification.
            #expect(alice.transactions.first?.source == .notification)
            #expect(alice.transactions.first?.recordedAt == Fixture.at(10))

            let fromBob = Fixture.transaction("t1", user: "bob")
            #expect(try await store.record(fromBob, grants: Fixture.coins) == .ownedByAnotherCustomer("alice"))
            let bob = try await store.customer(bundleID: Fixture.bundleID, appUserID: "bob")
            #expect(bob.transactions.isEmpty && bob.ledger.isEmpty && bob.balances.isEmpty)
            #expect(try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice").balances == ["coins": 100])
        }
    }

    @Test(
        "uploads looked up by their signed bytes at once each find their own transaction and owner",
        arguments: StoreKind.allCases)
    func lookupsAtOnce(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            for (id, user) in [("k1", "alice"), ("k2", "alice"), ("k3", "bob"), ("k4", nil)] {
                _ = try await store.record(
                    Fixture.transaction(id, user: user, source: user == nil ? .notification : .app),
                    grants: Fixture.coins)
            }
            let ids = (0..<40).map { ["k1", "k2", "k3", "k4", "unknown\($0)"][$0 % 5] }
            let found = try await concurrently(ids.count) { index in
                (ids[index], try await store.signedTransactionAndSummary(digest: SignedDigest("jws.\(ids[index])")))
            }
            #expect(found.count == ids.count)
            for (id, answer) in found {
                guard id.hasPrefix("k") else {
                    #expect(answer == nil, "\(id) is not in the ledger")
                    continue
                }
                let (known, summary) = try #require(answer, "\(id) is in the ledger")
                #expect(known.transactionID == id)
                switch id {
                case "k4":
                    #expect(known.appUserID == nil)
                    #expect(summary == nil, "a transaction without an owner has no summary")
                case "k3":
                    #expect(known.appUserID == "bob")
                    #expect(summary?.appUserID == "bob")
                    #expect(summary?.balances == ["coins": 100])
                    #expect(summary?.transactionCount == 1)
                default:
                    #expect(known.appUserID == "alice")
                    #expect(summary?.balances == ["coins": 200])
                    #expect(summary?.transactionCount == 2)
                }
            }
        }
    }

    @Test("many uploads racing to name the owner assign it and credit once", arguments: StoreKind.allCases)
    func ownerAssignedOnceConcurrently(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", source: .notification), grants: Fixture.coins)
            let outcomes = try await concurrently(40) { index in
                try await store.record(
                    Fixture.transaction("t1", user: index.isMultiple(of: 2) ? "alice" : "bob"), grants: Fixture.coins)
            }
            #expect(outcomes.filter { $0 == .duplicate(ownerAssigned: true) }.count == 1)
            let owner = try #require(try await store.transaction(id: "t1")?.appUserID)
            let other = owner == "alice" ? "bob" : "alice"
            #expect(outcomes.filter { $0 == .ownedByAnotherCustomer(owner) }.count == 20)
            #expect(try await store.customer(bundleID: Fixture.bundleID, appUserID: owner).balances == ["coins": 100])
            #expect(try await store.customer(bundleID: Fixture.bundleID, appUserID: other).balances.isEmpty)
        }
    }

    @Test("a notification and the app racing to record a purchase credit it once", arguments: StoreKind.allCases)
    func notificationAndAppRace(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let outcomes = try await concurrently(60) { index in
                let fromApp = index.isMultiple(of: 2)
                return try await store.record(
                    Fixture.transaction(
                        "t1", user: fromApp ? "alice" : nil, source: fromApp ? .app : .notification),
                    grants: Fixture.coins)
            }
            #expect(outcomes.filter { $0 == .recorded }.count == 1)
            #expect(outcomes.filter { $0 == .duplicate(ownerAssigned: true) }.count <= 1)
            let alice = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.transactions.map(\.transactionID) == ["t1"])
            #expect(alice.ledger.count == 1)
            #expect(alice.balances == ["coins": 100])
        }
    }

    @Test("a renewal inherits the owner of its original transaction", arguments: StoreKind.allCases)
    func renewalInheritsOwner(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let original = Fixture.transaction(
                "o1", user: "alice", product: "monthly", type: .autoRenewableSubscription)
            let renewal = Fixture.transaction(
                "o1-r1", original: "o1", product: "monthly", type: .autoRenewableSubscription,
                purchasedAt: 30 * 86_400, source: .notification)
            #expect(try await store.record(original, grants: [.entitlement("premium")]) == .recorded)
            #expect(try await store.record(renewal, grants: [.entitlement("premium")]) == .recorded)
            #expect(try await store.transaction(id: "o1-r1")?.appUserID == "alice")
            let alice = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.transactions.map(\.transactionID) == ["o1", "o1-r1"])
            #expect(alice.ledger.isEmpty)
        }
    }

    @Test("a renewal seen before its owner was known gets the owner when seen again", arguments: StoreKind.backends)
    func renewalOwnerFilledInFromLineage(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let original = Fixture.transaction("o1", product: "bonus", source: .notification)
            let renewal = Fixture.transaction("o1-r1", original: "o1", product: "bonus", source: .notification)
            #expect(try await store.record(original, grants: Fixture.coins) == .recorded)
            #expect(try await store.record(renewal, grants: Fixture.coins) == .recorded)
            let originalFromApp = Fixture.transaction("o1", user: "alice", product: "bonus")
            #expect(try await store.record(originalFromApp, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            #expect(try await store.transaction(id: "o1-r1")?.appUserID == nil)
            // Reconciliation sees the renewal again, without owner: the lineage names alice.
            let reconciled = Fixture.transaction("o1-r1", original: "o1", product: "bonus", source: .reconciliation)
            #expect(try await store.record(reconciled, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            let alice = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.balances == ["coins": 200])
            #expect(alice.ledger.map(\.idempotencyKey) == ["grant:o1:coins", "grant:o1-r1:coins"])
        }
    }

    @Test("a transaction recorded already revoked never grants", arguments: StoreKind.allCases)
    func revokedFirstGrantsNothing(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            // The REFUND notification arrives before the app uploads the purchase.
            let refunded = Fixture.transaction("t1", revokedAt: 5, source: .notification)
            #expect(try await store.record(refunded, grants: Fixture.coins) == .recorded)
            // The app's upload still carries the purchase as it was bought.
            let upload = Fixture.transaction("t1", user: "alice", recordedAt: 20)
            #expect(try await store.record(upload, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            let alice = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.ledger.isEmpty && alice.balances.isEmpty)
            #expect(alice.transactions.first?.revocationDate == Fixture.at(5))
            #expect(
                try await store.revoke(
                    transactionID: "t1", at: Fixture.at(30), reason: 1, grants: Fixture.coins, policy: .allowNegative)
                    == false)

            let revokedWithOwner = Fixture.transaction("t2", user: "alice", revokedAt: 5)
            #expect(try await store.record(revokedWithOwner, grants: Fixture.coins) == .recorded)
            #expect(try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice").ledger.isEmpty)
        }
    }

    @Test("grants add up per currency and multiply by quantity; bad input changes nothing", arguments: StoreKind.backends)
    func grantArithmetic(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let grants: [Grant] = [
                .currency("coins", amount: 10), .currency("gems", amount: 2), .currency("coins", amount: 5),
                .entitlement("noAds"), .content, .currency("stars", amount: 0),
            ]
            _ = try await store.record(Fixture.transaction("t1", user: "alice", quantity: 4), grants: grants)
            let alice = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.balances == ["coins": 60, "gems": 8])
            #expect(alice.ledger.map(\.idempotencyKey) == ["grant:t1:coins", "grant:t1:gems"])

            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.record(Fixture.transaction("t2", user: "alice", quantity: 0), grants: grants)
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.record(
                    Fixture.transaction("t3", user: "alice"), grants: [.currency("coins", amount: -1)])
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.record(
                    Fixture.transaction("t4", user: "alice", quantity: 2), grants: [.currency("coins", amount: .max)])
            }
            #expect(try await store.transaction(id: "t2") == nil)
            #expect(try await store.transaction(id: "t4") == nil)
            #expect(try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice").balances["coins"] == 60)
        }
    }

    @Test(
        "subscriptions whose period ended with nothing recorded since are read a page at a time",
        arguments: StoreKind.backends)
    func lapsedSubscriptionsByPage(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let month: TimeInterval = 30 * 86_400
            func subscription(_ id: String, original: String? = nil, at start: TimeInterval, revokedAt: TimeInterval? = nil)
                async throws
            {
                _ = try await store.record(
                    Fixture.transaction(
                        id, original: original, user: "alice", product: "monthly", type: .autoRenewableSubscription,
                        purchasedAt: start, revokedAt: revokedAt),
                    grants: [])
            }
            // Ended with nothing since: s1, s2, s3 (period ends at one month).
            for id in ["s1", "s2", "s3"] { try await subscription(id, at: 0) }
            // Renewed: its first period ended, a later one did not.
            try await subscription("s4", at: 0)
            try await subscription("s4b", original: "s4", at: month)
            // Refunded: nothing to ask.
            try await subscription("s5", at: 0, revokedAt: 100)
            // An expiry Apple signed after the end was recorded.
            try await subscription("s6", at: 0)
            _ = try await store.recordRenewal(
                SubscriptionRenewal(
                    bundleID: Fixture.bundleID, originalTransactionID: "s6", autoRenewStatus: .off,
                    expirationIntent: .customerCancelled, signedDate: Fixture.at(month + 5), updatedAt: Fixture.at(month + 5)))
            // Ends after the window.
            try await subscription("s7", at: month)
            // Consumables have no period.
            _ = try await store.record(Fixture.transaction("c1", user: "alice"), grants: [])

            var seen: [LapsedSubscription] = []
            var cursor: LapsedSubscription?
            while true {
                let page = try await store.lapsedSubscriptions(
                    bundleID: Fixture.bundleID, environment: .sandbox, endedFrom: Fixture.at(month - 60),
                    before: Fixture.at(month + 60), after: cursor, limit: 2)
                guard let last = page.last else { break }
                #expect(page.count <= 2)
                seen += page
                cursor = last
            }
            #expect(seen.map(\.transactionID) == ["s1", "s2", "s3"])
            #expect(seen.allSatisfy { $0.expiresDate == Fixture.at(month) && $0.originalTransactionID == $0.transactionID })
            #expect(
                try await store.lapsedSubscriptions(
                    bundleID: Fixture.bundleID, environment: .production, endedFrom: Fixture.at(0),
                    before: Fixture.at(3 * month), after: nil, limit: 10
                ).isEmpty, "another environment")
            #expect(
                try await store.lapsedSubscriptions(
                    bundleID: Fixture.bundleID, environment: .sandbox, endedFrom: Fixture.at(month + 1),
                    before: Fixture.at(month + 60), after: nil, limit: 10
                ).isEmpty, "ended before the window")
        }
    }
}

@Suite("Ledger: recording and summarizing in one transaction")
struct LedgerRecordAndSummarizeTests {
    @Test(
        "the summary read with the record is the one a separate read gives, for every kind of outcome",
        arguments: StoreKind.allCases)
    func summaryMatchesASeparateRead(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let subscription = Fixture.transaction(
                "s1", user: "alice", product: "monthly", type: .autoRenewableSubscription, purchasedAt: 5)
            _ = try await store.record(subscription, grants: [])
            for (index, recent) in [0, 1, 10].enumerated() {
                for withJWS in [false, true] {
                    let purchase = Fixture.transaction("c\(index)\(withJWS)", user: "alice", quantity: 2)
                    let (outcome, summary) = try await store.recordAndSummarize(
                        purchase, grants: Fixture.coins, recent: recent, withJWS: withJWS)
                    #expect(outcome == .recorded)
                    let separate = try await store.customerSummary(
                        bundleID: Fixture.bundleID, appUserID: "alice", recent: recent, withJWS: withJWS)
                    #expect(summary == separate)
                    // The same transaction again (other bytes, same ID): a duplicate, same summary.
                    let again = try await store.recordAndSummarize(
                        purchase, grants: Fixture.coins, recent: recent, withJWS: withJWS)
                    #expect(again.outcome == .duplicate(ownerAssigned: false))
                    #expect(again.summary == separate)
                }
            }
            let alice = try #require(
                try await store.recordAndSummarize(
                    Fixture.transaction("c9", user: "alice"), grants: Fixture.coins, recent: 2, withJWS: false
                ).summary)
            #expect(alice.balances == ["coins": 6 * 200 + 100])
            #expect(alice.transactionCount == 8)
            #expect(alice.accessTransactions.map(\.transactionID) == ["s1"])
            #expect(alice.accessTransactions.first?.signedTransaction == nil)
            #expect(alice.recentTransactions.count == 2)
        }
    }

    @Test(
        "the summary is read after everything the transaction changed; none without an owner or when another keeps it",
        arguments: StoreKind.backends)
    func summaryAfterEverything(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            let bob = try await store.recordAndSummarize(
                Fixture.transaction("t1", user: "bob"), grants: Fixture.coins, recent: 1, withJWS: false)
            #expect(bob.outcome == .ownedByAnotherCustomer("alice"))
            #expect(bob.summary == nil)
            let revoked = try await store.recordAndSummarize(
                Fixture.transaction("t2", user: "alice", revokedAt: 60), grants: Fixture.coins, recent: 1,
                withJWS: false)
            #expect(revoked.outcome == .recorded)
            #expect(revoked.summary?.balances == ["coins": 100])
            #expect(revoked.summary?.transactionCount == 2)
            let ownerless = try await store.recordAndSummarize(
                Fixture.transaction("t3"), grants: Fixture.coins, recent: 1, withJWS: false)
            #expect(ownerless.outcome == .recorded)
            #expect(ownerless.summary == nil)
            await #expect(throws: LedgerStoreError.self) {
                try await store.recordAndSummarize(
                    Fixture.transaction("t4", user: "alice"), grants: Fixture.coins, recent: -1, withJWS: false)
            }
            #expect(try await store.transaction(id: "t4") == nil, "nothing is recorded when the request is wrong")
        }
    }

    @Test(
        "a purchase another customer owns moves and is revoked by one ingest, and its summary shows both",
        arguments: StoreKind.backends)
    func transferAndRevokeTogether(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let bought = Fixture.transaction("p1", user: "alice", product: "pro", type: .nonConsumable)
            _ = try await store.record(bought, grants: [.entitlement("pro")])
            let refunded = Fixture.transaction(
                "p1", user: "bob", product: "pro", type: .nonConsumable, revokedAt: 90)
            let kept = try await store.ingest(
                LedgerIngest(refunded, grants: [.entitlement("pro")], summary: (recent: 1, withJWS: false)))
            #expect(kept == LedgerIngestOutcome(recorded: .ownedByAnotherCustomer("alice")))
            #expect(try await store.transaction(id: "p1")?.revocationDate == nil, "nothing changes without a transfer")

            let outcome = try await store.ingest(
                LedgerIngest(
                    refunded, grants: [.entitlement("pro")], transfersOwnership: true, summary: (recent: 1, withJWS: false)))
            #expect(outcome.recorded == .ownedByAnotherCustomer("alice"))
            #expect(outcome.transferredFrom == "alice")
            #expect(outcome.revoked)
            let summary = try #require(outcome.summary)
            #expect(summary.appUserID == "bob")
            #expect(summary.accessTransactions.map(\.transactionID) == ["p1"])
            #expect(summary.accessTransactions.first?.revocationDate != nil)
            let stored = try #require(try await store.transaction(id: "p1"))
            #expect(stored.appUserID == "bob")
            #expect(stored.revocationDate != nil)

            let again = try await store.ingest(
                LedgerIngest(refunded, grants: [.entitlement("pro")], transfersOwnership: true))
            #expect(again == LedgerIngestOutcome(recorded: .duplicate(ownerAssigned: false)), "the same change twice changes nothing")
        }
    }
}

extension LedgerStore {
    /// Records `transaction` and reads its owner's summary in one ``ingest(_:)``, without transfer.
    func recordAndSummarize(
        _ transaction: RecordedTransaction, grants: [Grant], recent: Int, withJWS: Bool
    ) async throws -> (outcome: RecordOutcome, summary: CustomerSummary?) {
        let outcome = try await ingest(LedgerIngest(transaction, grants: grants, summary: (recent, withJWS)))
        return (outcome.recorded, outcome.summary)
    }


}
