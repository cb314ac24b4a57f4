import AppStoreModels
import Foundation
import KakinCore
import KakinLedger
import KakinTestSupport
import Testing

/// The contract of ``PurchaseLedger``, run against every engine and the in-memory implementation:
/// a transaction recorded and credited once, its owner found later or from its purchase, the
/// summary read with it; refunds and their reversals (`+Refunds`); the notifications recorded
/// once and what they leave of subscriptions (`+Notifications`).
@Suite("Ledger role: purchases and ingest")
struct PurchaseLedgerContractTests {
    @Test(
        "the same transaction recorded 100 times at once is recorded and credited once",
        arguments: RoleImplementation.all)
    func recordOnceConcurrently(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let transaction = Fixture.transaction("t1", user: "alice", quantity: 3)
            let outcomes = try await concurrently(100) { _ in
                try await ledger.record(transaction, grants: Fixture.coins)
            }
            #expect(outcomes.filter { $0 == .recorded }.count == 1)
            #expect(outcomes.filter { $0 == .duplicate(ownerAssigned: false) }.count == 99)

            let customer = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(customer.transactions == [transaction])
            #expect(customer.ledger.count == 1)
            #expect(customer.ledger.first?.kind == .credit)
            #expect(customer.ledger.first?.amount == 300)
            #expect(customer.ledger.first?.idempotencyKey == "grant:t1:coins")
            #expect(customer.balances == ["coins": 300])
            #expect(try await ledger.transaction(id: "t1") == transaction)
            try await expectLedgerMatchesBalances(ledger, user: "alice")
        }
    }

    @Test(
        "an owner learned later gets the grants then, once; another customer is refused",
        arguments: RoleImplementation.all)
    func ownerFilledInLater(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let fromNotification = Fixture.transaction("t1", source: .notification)
            #expect(try await ledger.record(fromNotification, grants: Fixture.coins) == .recorded)
            #expect(try await ledger.transaction(id: "t1")?.appUserID == nil)
            #expect(try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice").ledger.isEmpty)

            let fromApp = Fixture.transaction("t1", user: "alice", recordedAt: 20)
            #expect(try await ledger.record(fromApp, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            #expect(try await ledger.record(fromApp, grants: Fixture.coins) == .duplicate(ownerAssigned: false))
            let alice = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.balances == ["coins": 100])
            #expect(alice.ledger.map(\.amount) == [100])
            #expect(alice.ledger.first?.createdAt == Fixture.at(20))
            // The first record wins: the row still says it came from the notification.
            #expect(alice.transactions.first?.source == .notification)
            #expect(alice.transactions.first?.recordedAt == Fixture.at(10))

            let fromBob = Fixture.transaction("t1", user: "bob")
            #expect(try await ledger.record(fromBob, grants: Fixture.coins) == .ownedByAnotherCustomer("alice"))
            let bob = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "bob")
            #expect(bob.transactions.isEmpty && bob.ledger.isEmpty && bob.balances.isEmpty)
            #expect(
                try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice").balances == ["coins": 100])
        }
    }

    @Test(
        "uploads looked up by their signed bytes at once each find their own transaction and owner",
        arguments: RoleImplementation.all)
    func lookupsAtOnce(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            for (id, user) in [("k1", "alice"), ("k2", "alice"), ("k3", "bob"), ("k4", nil)] {
                _ = try await ledger.record(
                    Fixture.transaction(id, user: user, source: user == nil ? .notification : .app),
                    grants: Fixture.coins)
            }
            let ids = (0..<40).map { ["k1", "k2", "k3", "k4", "unknown\($0)"][$0 % 5] }
            let found = try await concurrently(ids.count) { index in
                (ids[index], try await ledger.signedTransactionAndSummary(digest: SignedDigest("jws.\(ids[index])")))
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

    @Test(
        "a lookup by signed bytes answers the owner's summary as the summary read answers it",
        arguments: RoleImplementation.all)
    func lookupAnswersTheSummary(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let gems: [Grant] = [.currency("gems", amount: 5)]
            for (transaction, grants) in [
                (Fixture.transaction("n1", user: "alice", product: "pro", type: .nonConsumable, purchasedAt: 20), []),
                (Fixture.transaction("s2", user: "alice", product: "monthly", type: .autoRenewableSubscription), []),
                (Fixture.transaction("s1", user: "alice", product: "yearly", type: .autoRenewableSubscription), []),
                (Fixture.transaction("c1", user: "alice", quantity: 2), Fixture.coins),
                (Fixture.transaction("c2", user: "alice"), gems),
                (Fixture.transaction("c3", user: "bob"), Fixture.coins),
            ] as [(RecordedTransaction, [Grant])] {
                _ = try await ledger.record(transaction, grants: grants)
            }
            let expected = try await ledger.customerSummary(
                bundleID: Fixture.bundleID, appUserID: "alice", recent: 0, withJWS: false)
            #expect(expected.accessTransactions.map(\.transactionID) == ["s1", "s2", "n1"])
            #expect(expected.balances == ["coins": 200, "gems": 5])
            #expect(expected.transactionCount == 5)
            for id in ["c1", "n1", "s2"] {
                let (known, summary) = try #require(
                    try await ledger.signedTransactionAndSummary(digest: SignedDigest("jws.\(id)")))
                #expect(known.transactionID == id && known.appUserID == "alice" && known.environment == .sandbox)
                #expect(summary == expected)
            }
        }
    }

    @Test("many uploads racing to name the owner assign it and credit once", arguments: RoleImplementation.all)
    func ownerAssignedOnceConcurrently(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", source: .notification), grants: Fixture.coins)
            let outcomes = try await concurrently(40) { index in
                try await ledger.record(
                    Fixture.transaction("t1", user: index.isMultiple(of: 2) ? "alice" : "bob"), grants: Fixture.coins)
            }
            #expect(outcomes.filter { $0 == .duplicate(ownerAssigned: true) }.count == 1)
            let owner = try #require(try await ledger.transaction(id: "t1")?.appUserID)
            let other = owner == "alice" ? "bob" : "alice"
            #expect(outcomes.filter { $0 == .ownedByAnotherCustomer(owner) }.count == 20)
            #expect(try await ledger.customer(bundleID: Fixture.bundleID, appUserID: owner).balances == ["coins": 100])
            #expect(try await ledger.customer(bundleID: Fixture.bundleID, appUserID: other).balances.isEmpty)
        }
    }

    @Test("a notification and the app racing to record a purchase credit it once", arguments: RoleImplementation.all)
    func notificationAndAppRace(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let outcomes = try await concurrently(60) { index in
                let fromApp = index.isMultiple(of: 2)
                return try await ledger.record(
                    Fixture.transaction(
                        "t1", user: fromApp ? "alice" : nil, source: fromApp ? .app : .notification),
                    grants: Fixture.coins)
            }
            #expect(outcomes.filter { $0 == .recorded }.count == 1)
            #expect(outcomes.filter { $0 == .duplicate(ownerAssigned: true) }.count <= 1)
            let alice = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.transactions.map(\.transactionID) == ["t1"])
            #expect(alice.ledger.count == 1)
            #expect(alice.balances == ["coins": 100])
        }
    }

    @Test("a renewal inherits the owner of its original transaction", arguments: RoleImplementation.all)
    func renewalInheritsOwner(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let original = Fixture.transaction(
                "o1", user: "alice", product: "monthly", type: .autoRenewableSubscription)
            let renewal = Fixture.transaction(
                "o1-r1", original: "o1", product: "monthly", type: .autoRenewableSubscription,
                purchasedAt: 30 * 86_400, source: .notification)
            #expect(try await ledger.record(original, grants: [.entitlement("premium")]) == .recorded)
            #expect(try await ledger.record(renewal, grants: [.entitlement("premium")]) == .recorded)
            #expect(try await ledger.transaction(id: "o1-r1")?.appUserID == "alice")
            let alice = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.transactions.map(\.transactionID) == ["o1", "o1-r1"])
            #expect(alice.ledger.isEmpty)
        }
    }

    @Test(
        "a transaction without an owner takes the owner of the earliest transaction of its purchase that has one",
        arguments: RoleImplementation.all)
    func earliestOwnerWins(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            func renewal(_ id: String, user: String? = nil, at days: TimeInterval) -> RecordedTransaction {
                Fixture.transaction(id, original: "o1", user: user, product: "bonus", purchasedAt: days * 86_400)
            }
            _ = try await ledger.record(renewal("o1-r1", at: 10), grants: Fixture.coins)
            _ = try await ledger.record(renewal("o1-r2", user: "bob", at: 60), grants: Fixture.coins)
            _ = try await ledger.record(renewal("o1", user: "alice", at: 0), grants: Fixture.coins)
            #expect(try await ledger.record(renewal("o1-r3", at: 90), grants: Fixture.coins) == .recorded)
            #expect(try await ledger.transaction(id: "o1-r3")?.appUserID == "alice")
            #expect(try await ledger.transaction(id: "o1-r1")?.appUserID == nil, "an owner is found when recorded")
            let alice = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.ledger.map(\.idempotencyKey) == ["grant:o1:coins", "grant:o1-r3:coins"])
            // Another purchase's or app's owners are not its own.
            var elsewhere = renewal("o1-x", at: 120)
            elsewhere.bundleID = "com.example.other"
            _ = try await ledger.record(elsewhere, grants: [])
            _ = try await ledger.record(Fixture.transaction("o2-r1", original: "o2"), grants: [])
            #expect(try await ledger.transaction(id: "o1-x")?.appUserID == nil)
            #expect(try await ledger.transaction(id: "o2-r1")?.appUserID == nil)
        }
    }

    @Test(
        "a renewal seen before its owner was known gets the owner when seen again", arguments: RoleImplementation.all)
    func renewalOwnerFilledInFromLineage(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let original = Fixture.transaction("o1", product: "bonus", source: .notification)
            let renewal = Fixture.transaction("o1-r1", original: "o1", product: "bonus", source: .notification)
            #expect(try await ledger.record(original, grants: Fixture.coins) == .recorded)
            #expect(try await ledger.record(renewal, grants: Fixture.coins) == .recorded)
            let originalFromApp = Fixture.transaction("o1", user: "alice", product: "bonus")
            #expect(try await ledger.record(originalFromApp, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            #expect(try await ledger.transaction(id: "o1-r1")?.appUserID == nil)
            // Reconciliation sees the renewal again, without owner: the lineage names alice.
            let reconciled = Fixture.transaction("o1-r1", original: "o1", product: "bonus", source: .reconciliation)
            #expect(try await ledger.record(reconciled, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            let alice = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.balances == ["coins": 200])
            #expect(alice.ledger.map(\.idempotencyKey) == ["grant:o1:coins", "grant:o1-r1:coins"])
        }
    }

    @Test("a transaction recorded already revoked never grants", arguments: RoleImplementation.all)
    func revokedFirstGrantsNothing(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            // The REFUND notification arrives before the app uploads the purchase.
            let refunded = Fixture.transaction("t1", revokedAt: 5, source: .notification)
            #expect(try await ledger.record(refunded, grants: Fixture.coins) == .recorded)
            // The app's upload still carries the purchase as it was bought.
            let upload = Fixture.transaction("t1", user: "alice", recordedAt: 20)
            #expect(try await ledger.record(upload, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            let alice = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.ledger.isEmpty && alice.balances.isEmpty)
            #expect(alice.transactions.first?.revocationDate == Fixture.at(5))
            #expect(
                try await ledger.revoke(
                    transactionID: "t1", at: Fixture.at(30), reason: 1, grants: Fixture.coins, policy: .allowNegative)
                    == false)

            let revokedWithOwner = Fixture.transaction("t2", user: "alice", revokedAt: 5)
            #expect(try await ledger.record(revokedWithOwner, grants: Fixture.coins) == .recorded)
            #expect(try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice").ledger.isEmpty)
        }
    }

    @Test(
        "grants add up per currency and multiply by quantity; bad input changes nothing",
        arguments: RoleImplementation.all)
    func grantArithmetic(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let grants: [Grant] = [
                .currency("coins", amount: 10), .currency("gems", amount: 2), .currency("coins", amount: 5),
                .entitlement("noAds"), .content, .currency("stars", amount: 0),
            ]
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice", quantity: 4), grants: grants)
            let alice = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.balances == ["coins": 60, "gems": 8])
            #expect(alice.ledger.map(\.idempotencyKey) == ["grant:t1:coins", "grant:t1:gems"])

            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await ledger.record(Fixture.transaction("t2", user: "alice", quantity: 0), grants: grants)
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await ledger.record(
                    Fixture.transaction("t3", user: "alice"), grants: [.currency("coins", amount: -1)])
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await ledger.record(
                    Fixture.transaction("t4", user: "alice", quantity: 2), grants: [.currency("coins", amount: .max)])
            }
            #expect(try await ledger.transaction(id: "t2") == nil)
            #expect(try await ledger.transaction(id: "t4") == nil)
            #expect(try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "alice").balances["coins"] == 60)
        }
    }

    // MARK: Summaries

    @Test(
        "the summary read with the record is the one a separate read gives, for every kind of outcome",
        arguments: RoleImplementation.all)
    func summaryMatchesASeparateRead(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let subscription = Fixture.transaction(
                "s1", user: "alice", product: "monthly", type: .autoRenewableSubscription, purchasedAt: 5)
            _ = try await ledger.record(subscription, grants: [])
            for (index, recent) in [0, 1, 10].enumerated() {
                for withJWS in [false, true] {
                    let purchase = Fixture.transaction("c\(index)\(withJWS)", user: "alice", quantity: 2)
                    let (outcome, summary) = try await ledger.recordAndSummarize(
                        purchase, grants: Fixture.coins, recent: recent, withJWS: withJWS)
                    #expect(outcome == .recorded)
                    let separate = try await ledger.customerSummary(
                        bundleID: Fixture.bundleID, appUserID: "alice", recent: recent, withJWS: withJWS)
                    #expect(summary == separate)
                    // The same transaction again (other bytes, same ID): a duplicate, same summary.
                    let again = try await ledger.recordAndSummarize(
                        purchase, grants: Fixture.coins, recent: recent, withJWS: withJWS)
                    #expect(again.outcome == .duplicate(ownerAssigned: false))
                    #expect(again.summary == separate)
                }
            }
            let alice = try #require(
                try await ledger.recordAndSummarize(
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
        arguments: RoleImplementation.all)
    func summaryAfterEverything(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            let bob = try await ledger.recordAndSummarize(
                Fixture.transaction("t1", user: "bob"), grants: Fixture.coins, recent: 1, withJWS: false)
            #expect(bob.outcome == .ownedByAnotherCustomer("alice"))
            #expect(bob.summary == nil)
            let revoked = try await ledger.recordAndSummarize(
                Fixture.transaction("t2", user: "alice", revokedAt: 60), grants: Fixture.coins, recent: 1,
                withJWS: false)
            #expect(revoked.outcome == .recorded)
            #expect(revoked.summary?.balances == ["coins": 100])
            #expect(revoked.summary?.transactionCount == 2)
            let ownerless = try await ledger.recordAndSummarize(
                Fixture.transaction("t3"), grants: Fixture.coins, recent: 1, withJWS: false)
            #expect(ownerless.outcome == .recorded)
            #expect(ownerless.summary == nil)
            await #expect(throws: LedgerStoreError.self) {
                try await ledger.recordAndSummarize(
                    Fixture.transaction("t4", user: "alice"), grants: Fixture.coins, recent: -1, withJWS: false)
            }
            #expect(try await ledger.transaction(id: "t4") == nil, "nothing is recorded when the request is wrong")
        }
    }

    @Test(
        "a purchase another customer owns moves and is revoked by one ingest, and its summary shows both",
        arguments: RoleImplementation.all)
    func transferAndRevokeTogether(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let bought = Fixture.transaction("p1", user: "alice", product: "pro", type: .nonConsumable)
            _ = try await ledger.record(bought, grants: [.entitlement("pro")])
            let refunded = Fixture.transaction(
                "p1", user: "bob", product: "pro", type: .nonConsumable, revokedAt: 90)
            let kept = try await ledger.ingest(
                LedgerIngest(refunded, grants: [.entitlement("pro")], summary: (recent: 1, withJWS: false)))
            #expect(kept == LedgerIngestOutcome(recorded: .ownedByAnotherCustomer("alice")))
            #expect(try await ledger.transaction(id: "p1")?.revocationDate == nil, "nothing changes without a transfer")

            let outcome = try await ledger.ingest(
                LedgerIngest(
                    refunded, grants: [.entitlement("pro")], transfersOwnership: true,
                    summary: (recent: 1, withJWS: false)))
            #expect(outcome.recorded == .ownedByAnotherCustomer("alice"))
            #expect(outcome.transferredFrom == "alice")
            #expect(outcome.revoked)
            let summary = try #require(outcome.summary)
            #expect(summary.appUserID == "bob")
            #expect(summary.accessTransactions.map(\.transactionID) == ["p1"])
            #expect(summary.accessTransactions.first?.revocationDate != nil)
            let stored = try #require(try await ledger.transaction(id: "p1"))
            #expect(stored.appUserID == "bob")
            #expect(stored.revocationDate != nil)

            let again = try await ledger.ingest(
                LedgerIngest(refunded, grants: [.entitlement("pro")], transfersOwnership: true))
            #expect(
                again == LedgerIngestOutcome(recorded: .duplicate(ownerAssigned: false)),
                "the same change twice changes nothing")
        }
    }

    @Test(
        "the period type is stored with the transaction and read back by every query", arguments: RoleImplementation.all
    )
    func periodTypeRoundTrips(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            func subscription(
                _ id: String, user: String? = "ann", periodType: SubscriptionPeriodType?
            )
                -> RecordedTransaction
            {
                var transaction = Fixture.transaction(
                    id, user: user, product: "monthly", type: .autoRenewableSubscription)
                transaction.periodType = periodType
                return transaction
            }
            let types: [SubscriptionPeriodType?] = [.trial, .intro, .offer, .normal, nil]
            for (index, type) in types.enumerated() {
                let grants: [Grant] = index == 2 ? [.currency("coins", amount: 5)] : []
                // With a summary (the upload path) for some, without for others.
                let change = try await ledger.ingest(
                    LedgerIngest(
                        subscription("s\(index)", periodType: type), grants: grants,
                        summary: index % 2 == 0 ? (1, false) : nil))
                #expect(change.recorded == .recorded)
                if let summary = change.summary {
                    #expect(summary.accessTransactions.first { $0.transactionID == "s\(index)" }?.periodType == type)
                }
            }
            // A transaction without owner, then one the notification path records (no summary).
            #expect(try await ledger.record(subscription("x1", user: nil, periodType: .intro), grants: []) == .recorded)
            #expect(try await ledger.transaction(id: "x1")?.periodType == .intro)

            for (index, type) in types.enumerated() {
                #expect(try await ledger.transaction(id: "s\(index)")?.periodType == type)
            }
            let summary = try await ledger.customerSummary(
                bundleID: Fixture.bundleID, appUserID: "ann", recent: 10, withJWS: false)
            #expect(summary.accessTransactions.map(\.periodType) == types)
            #expect(Set(summary.recentTransactions.map(\.periodType)) == Set(types))
            let customer = try await ledger.customer(bundleID: Fixture.bundleID, appUserID: "ann")
            #expect(customer.transactions.map(\.periodType) == types)
            let page = try await ledger.transactions(
                bundleID: Fixture.bundleID, appUserID: "ann", limit: 10, after: nil)
            #expect(Set(page.map(\.periodType)) == Set(types))
        }
    }
}

extension PurchaseLedger {
    /// Records `transaction` and reads its owner's summary in one ``ingest(_:)``, without transfer.
    func recordAndSummarize(
        _ transaction: RecordedTransaction, grants: [Grant], recent: Int, withJWS: Bool
    ) async throws -> (outcome: RecordOutcome, summary: CustomerSummary?) {
        let outcome = try await ingest(LedgerIngest(transaction, grants: grants, summary: (recent, withJWS)))
        return (outcome.recorded, outcome.summary)
    }
}
