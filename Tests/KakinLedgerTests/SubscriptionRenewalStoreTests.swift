import AppStoreModels
import Foundation
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The ledger's subscription state on every engine: each transaction's period type, written with
/// the row by every path that records one (SQLite one by one, PostgreSQL's single statements and
/// its group batch), and the latest renewal state of each subscription, ordered by Apple's
/// signing dates.
@Suite("Ledger: subscription status")
struct SubscriptionRenewalStoreTests {
    static func subscription(
        _ id: String, original: String? = nil, user: String? = "ann", periodType: SubscriptionPeriodType?
    ) -> RecordedTransaction {
        var transaction = Fixture.transaction(
            id, original: original, user: user, product: "monthly", type: .autoRenewableSubscription)
        transaction.periodType = periodType
        return transaction
    }

    static func renewal(
        _ original: String = "o1", bundleID: String = Fixture.bundleID, autoRenew: AutoRenewStatus? = .on,
        intent: ExpirationIntent? = nil, issue: TimeInterval? = nil, graceEnd: TimeInterval? = nil,
        signed: TimeInterval, uuid: String = "n"
    ) -> SubscriptionRenewal {
        SubscriptionRenewal(
            bundleID: bundleID, originalTransactionID: original, autoRenewStatus: autoRenew, expirationIntent: intent,
            billingIssueDetectedAt: issue.map(Fixture.at), gracePeriodExpiresAt: graceEnd.map(Fixture.at),
            signedDate: Fixture.at(signed), notificationUUID: uuid, updatedAt: Fixture.at(signed + 1))
    }

    @Test("the period type is stored with the transaction and read back by every query", arguments: StoreKind.allCases)
    func periodTypeRoundTrips(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let types: [SubscriptionPeriodType?] = [.trial, .intro, .offer, .normal, nil]
            for (index, type) in types.enumerated() {
                let grants: [Grant] = index == 2 ? [.currency("coins", amount: 5)] : []
                // With a summary (the upload path) for some, without for others.
                let change = try await store.ingest(
                    LedgerIngest(
                        Self.subscription("s\(index)", periodType: type), grants: grants,
                        summary: index % 2 == 0 ? (1, false) : nil))
                #expect(change.recorded == .recorded)
                if let summary = change.summary {
                    #expect(summary.accessTransactions.first { $0.transactionID == "s\(index)" }?.periodType == type)
                }
            }
            // A transaction without owner, then one the notification path records (no summary).
            #expect(
                try await store.record(Self.subscription("x1", user: nil, periodType: .intro), grants: []) == .recorded)
            #expect(try await store.transaction(id: "x1")?.periodType == .intro)

            for (index, type) in types.enumerated() {
                #expect(try await store.transaction(id: "s\(index)")?.periodType == type)
            }
            let summary = try await store.customerSummary(
                bundleID: Fixture.bundleID, appUserID: "ann", recent: 10, withJWS: false)
            #expect(summary.accessTransactions.map(\.periodType) == types)
            #expect(Set(summary.recentTransactions.map(\.periodType)) == Set(types))
            let customer = try await store.customer(bundleID: Fixture.bundleID, appUserID: "ann")
            #expect(customer.transactions.map(\.periodType) == types)
            let page = try await store.transactions(bundleID: Fixture.bundleID, appUserID: "ann", limit: 10, after: nil)
            #expect(Set(page.map(\.periodType)) == Set(types))
        }
    }

    @Test(
        "renewal state: newer replaces older, late and repeated reports change nothing", arguments: StoreKind.allCases)
    func renewalOrdering(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            #expect(try await store.recordRenewal(Self.renewal(signed: 100, uuid: "subscribed")))
            #expect(!(try await store.recordRenewal(Self.renewal(signed: 100, uuid: "subscribed"))), "delivered again")
            #expect(try await store.recordRenewal(Self.renewal(autoRenew: .off, signed: 200, uuid: "off")))
            // A report signed before the stored one arrives late: ignored.
            #expect(!(try await store.recordRenewal(Self.renewal(autoRenew: .on, signed: 150, uuid: "late"))))
            var stored = try #require(
                try await store.subscriptionRenewals(bundleID: Fixture.bundleID, originalTransactionIDs: ["o1"])["o1"])
            #expect(stored == Self.renewal(autoRenew: .off, signed: 200, uuid: "off"))
            #expect(stored.willRenew == false)

            // A billing problem keeps the date it was first seen while it lasts.
            #expect(try await store.recordRenewal(Self.renewal(issue: 300, graceEnd: 900, signed: 300, uuid: "fail")))
            #expect(try await store.recordRenewal(Self.renewal(issue: 400, graceEnd: 900, signed: 400, uuid: "retry")))
            stored = try #require(
                try await store.subscriptionRenewals(bundleID: Fixture.bundleID, originalTransactionIDs: ["o1"])["o1"])
            #expect(stored.billingIssueDetectedAt == Fixture.at(300))
            #expect(stored.gracePeriodExpiresAt == Fixture.at(900))
            #expect(stored.signedDate == Fixture.at(400) && stored.notificationUUID == "retry")
            // Recovery clears it; a later problem starts from its own date.
            #expect(try await store.recordRenewal(Self.renewal(signed: 500, uuid: "recovered")))
            #expect(!(try await store.recordRenewal(Self.renewal(issue: 450, graceEnd: 900, signed: 450, uuid: "old"))))
            stored = try #require(
                try await store.subscriptionRenewals(bundleID: Fixture.bundleID, originalTransactionIDs: ["o1"])["o1"])
            #expect(stored.billingIssueDetectedAt == nil && stored.gracePeriodExpiresAt == nil)
            #expect(try await store.recordRenewal(Self.renewal(issue: 600, signed: 600, uuid: "again")))
            stored = try #require(
                try await store.subscriptionRenewals(bundleID: Fixture.bundleID, originalTransactionIDs: ["o1"])["o1"])
            #expect(stored.billingIssueDetectedAt == Fixture.at(600) && stored.gracePeriodExpiresAt == nil)
        }
    }

    @Test("renewal states are read by app and original transaction", arguments: StoreKind.allCases)
    func renewalLookup(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            #expect(try await store.recordRenewal(Self.renewal("o1", signed: 100)))
            #expect(
                try await store.recordRenewal(Self.renewal("o2", autoRenew: nil, intent: .billingError, signed: 100)))
            #expect(try await store.recordRenewal(Self.renewal("o1", bundleID: "com.example.other", signed: 100)))
            let found = try await store.subscriptionRenewals(
                bundleID: Fixture.bundleID, originalTransactionIDs: ["o1", "o2", "o3", "o1"])
            #expect(Set(found.keys) == ["o1", "o2"])
            #expect(found["o2"]?.autoRenewStatus == nil && found["o2"]?.expirationIntent == .billingError)
            #expect(found["o1"]?.bundleID == Fixture.bundleID)
            #expect(
                try await store.subscriptionRenewals(bundleID: Fixture.bundleID, originalTransactionIDs: []).isEmpty)
        }
    }

    @Test("concurrent reports of one subscription leave the latest", arguments: StoreKind.allCases)
    func concurrentReports(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await concurrently(40) { index in
                try await store.recordRenewal(
                    Self.renewal(
                        autoRenew: index % 2 == 0 ? .on : .off, signed: TimeInterval(100 + index), uuid: "n\(index)"))
            }
            let stored = try await store.subscriptionRenewals(
                bundleID: Fixture.bundleID, originalTransactionIDs: ["o1"])
            #expect(stored["o1"]?.notificationUUID == "n39" && stored["o1"]?.autoRenewStatus == .off)
        }
    }
}
