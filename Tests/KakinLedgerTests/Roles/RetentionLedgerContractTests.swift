import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The contract of ``RetentionLedger``, run against every engine and the in-memory
/// implementation: a decision recorded once per request, the outcome rule's every branch, and
/// the saves by message over a range.
@Suite("Ledger role: retention decisions")
struct RetentionLedgerContractTests {
    private static let day: TimeInterval = 86_400

    /// A decision about `original` made at `seconds`, the period then in effect ending at `periodEnd`.
    private func decision(
        _ request: String, original: String, at seconds: TimeInterval, periodEnd: TimeInterval? = 30 * day,
        message: String? = "m-1", bundleID: String = Fixture.bundleID, environment: AppStoreEnvironment = .sandbox
    ) -> RetentionDecision {
        RetentionDecision(
            id: "d-\(bundleID)-\(request)", bundleID: bundleID, environment: environment, requestIdentifier: request,
            originalTransactionID: original, productID: "pro", locale: "en-US", subscriberState: "paid",
            ruleName: message == nil ? nil : "rule-\(message!)", choice: message == nil ? .none : .message,
            messageID: message, decidedAt: Fixture.at(seconds), periodExpiresAt: periodEnd.map(Fixture.at))
    }

    /// A subscription bought at 0 (its period ends at 30 days), of `user`.
    private func subscribe(_ ledger: any PurchaseRoles, _ original: String, user: String? = "alice") async throws {
        _ = try await ledger.record(
            Fixture.transaction(original, user: user, product: "pro", type: .autoRenewableSubscription), grants: [])
    }

    /// A transaction of the subscription `original` bought at `seconds`.
    private func renew(
        _ ledger: any PurchaseRoles, _ original: String, _ id: String, at seconds: TimeInterval,
        revokedAt: TimeInterval? = nil
    ) async throws {
        _ = try await ledger.record(
            Fixture.transaction(
                id, original: original, product: "pro", type: .autoRenewableSubscription, purchasedAt: seconds,
                revokedAt: revokedAt),
            grants: [])
    }

    private func renewal(
        _ original: String, autoRenew: AutoRenewStatus?, intent: ExpirationIntent? = nil
    ) -> SubscriptionRenewal {
        SubscriptionRenewal(
            bundleID: Fixture.bundleID, originalTransactionID: original, autoRenewStatus: autoRenew,
            expirationIntent: intent, signedDate: Fixture.at(2 * Self.day), notificationUUID: "n-\(original)",
            updatedAt: Fixture.at(2 * Self.day))
    }

    private func outcome(
        _ ledger: any RetentionLedger, _ original: String, now: TimeInterval
    ) async throws -> RetentionOutcome? {
        try await ledger.retentionDecisions(
            bundleID: Fixture.bundleID, originalTransactionID: original, limit: 1, now: Fixture.at(now)
        ).first?.outcome
    }

    @Test(
        "a decision is recorded once per app and request identifier, and read back whole",
        arguments: RoleImplementation.all)
    func recordedOncePerRequest(_ implementation: RoleImplementation) async throws {
        try await implementation.withRetention { ledger in
            try await subscribe(ledger, "o1")
            var offered = decision("r-1", original: "o1", at: Self.day)
            (offered.choice, offered.offerID, offered.locale, offered.subscriberState) =
                (.promotionalOffer, "winback", "fr-FR", "billingIssue")
            #expect(try await ledger.recordRetentionDecision(offered))
            var again = offered
            again.id = "d-again"
            again.messageID = "m-2"
            #expect(try await !ledger.recordRetentionDecision(again), "Apple's request sent again is recorded once")
            #expect(
                try await ledger.recordRetentionDecision(
                    decision("r-1", original: "o1", at: Self.day, bundleID: "other.app")))

            let read = try await ledger.retentionDecisions(
                bundleID: Fixture.bundleID, environment: .sandbox, limit: 10, after: nil, now: Fixture.at(Self.day))
            #expect(read == [RetentionDecisionRead(decision: offered, outcome: .pending, appUserID: "alice")])
            let unknown = decision("r-2", original: "nobody", at: 2 * Self.day, periodEnd: nil, message: nil)
            #expect(try await ledger.recordRetentionDecision(unknown))
            let both = try await ledger.retentionDecisions(
                bundleID: Fixture.bundleID, environment: .sandbox, limit: 10, after: nil, now: Fixture.at(Self.day))
            #expect(both.map(\.decision) == [unknown, offered], "newest first")
            #expect(both.first?.appUserID == nil, "no owner for a subscription the ledger does not know")
            let production = try await ledger.retentionDecisions(
                bundleID: Fixture.bundleID, environment: .production, limit: 10, after: nil, now: Fixture.at(Self.day))
            #expect(production.isEmpty)
        }
    }

    @Test("a page of decisions starts strictly after its cursor", arguments: RoleImplementation.all)
    func pages(_ implementation: RoleImplementation) async throws {
        try await implementation.withRetention { ledger in
            for index in 0..<5 {
                // Two decisions share each instant: the ID orders them.
                let at = Double(index / 2) * 60
                #expect(try await ledger.recordRetentionDecision(decision("r-\(index)", original: "o\(index)", at: at)))
            }
            var seen: [String] = []
            var cursor: RetentionDecisionCursor?
            while true {
                let page = try await ledger.retentionDecisions(
                    bundleID: Fixture.bundleID, environment: .sandbox, limit: 2, after: cursor, now: Fixture.at(0))
                guard let last = page.last else { break }
                seen += page.map(\.decision.requestIdentifier)
                cursor = RetentionDecisionCursor(after: last.decision)
            }
            #expect(seen == ["r-4", "r-3", "r-2", "r-1", "r-0"])
        }
    }

    @Test(
        "stayed: a later unrevoked transaction of the subscription, even after the period ended",
        arguments: RoleImplementation.all)
    func stayed(_ implementation: RoleImplementation) async throws {
        try await implementation.withRetention { ledger in
            try await subscribe(ledger, "o1")
            #expect(try await ledger.recordRetentionDecision(decision("r-1", original: "o1", at: Self.day)))
            // A transaction bought before the decision is not a stay.
            try await renew(ledger, "o1", "o1-early", at: Self.day - 1)
            #expect(try await outcome(ledger, "o1", now: 10 * Self.day) == .pending)
            // A renewal after it is, with automatic renewal turned off since and the period over.
            try await renew(ledger, "o1", "o1-renewal", at: 30 * Self.day)
            #expect(try await ledger.recordRenewal(renewal("o1", autoRenew: .off)))
            #expect(try await outcome(ledger, "o1", now: 90 * Self.day) == .stayed)
        }
    }

    @Test(
        "left: the period ended, or the renewal state says it will not renew, with no later transaction",
        arguments: RoleImplementation.all)
    func left(_ implementation: RoleImplementation) async throws {
        try await implementation.withRetention { ledger in
            for original in ["ended", "refunded", "off", "expired", "on", "unknown-state"] {
                try await subscribe(ledger, original)
                #expect(
                    try await ledger.recordRetentionDecision(
                        decision("r-\(original)", original: original, at: Self.day)))
            }
            // The period in effect at the decision ends at 30 days.
            #expect(try await outcome(ledger, "ended", now: 30 * Self.day - 1) == .pending)
            #expect(try await outcome(ledger, "ended", now: 30 * Self.day) == .left)
            // A refunded transaction is no stay.
            try await renew(ledger, "refunded", "refunded-upgrade", at: 20 * Self.day, revokedAt: 21 * Self.day)
            #expect(try await outcome(ledger, "refunded", now: 25 * Self.day) == .pending)
            #expect(try await outcome(ledger, "refunded", now: 30 * Self.day) == .left)
            // Before the period ends: the renewal state decides.
            #expect(try await ledger.recordRenewal(renewal("off", autoRenew: .off)))
            #expect(try await ledger.recordRenewal(renewal("expired", autoRenew: .on, intent: .customerCancelled)))
            #expect(try await ledger.recordRenewal(renewal("on", autoRenew: .on)))
            #expect(try await ledger.recordRenewal(renewal("unknown-state", autoRenew: nil)))
            #expect(try await outcome(ledger, "off", now: 2 * Self.day) == .left)
            #expect(try await outcome(ledger, "expired", now: 2 * Self.day) == .left)
            #expect(try await outcome(ledger, "on", now: 2 * Self.day) == .pending)
            #expect(try await outcome(ledger, "unknown-state", now: 2 * Self.day) == .pending)
        }
    }

    @Test(
        "pending: a subscription the ledger does not know, with no period and no renewal state",
        arguments: RoleImplementation.all)
    func pendingWithoutPeriod(_ implementation: RoleImplementation) async throws {
        try await implementation.withRetention { ledger in
            #expect(try await ledger.recordRetentionDecision(decision("r-1", original: "o9", at: 0, periodEnd: nil)))
            #expect(try await outcome(ledger, "o9", now: 365 * Self.day) == .pending)
            // Its purchase recorded later, after the decision, is a stay.
            try await renew(ledger, "o9", "o9", at: Self.day)
            #expect(try await outcome(ledger, "o9", now: 365 * Self.day) == .stayed)
        }
    }

    @Test(
        "saves by message count the decisions of the range and environment, by outcome",
        arguments: RoleImplementation.all)
    func savesByMessage(_ implementation: RoleImplementation) async throws {
        try await implementation.withRetention { ledger in
            for original in ["a", "b", "c", "d", "e", "f"] { try await subscribe(ledger, original) }
            let decisions = [
                decision("r-a", original: "a", at: Self.day, message: "m-1"),  // stays
                decision("r-b", original: "b", at: Self.day, message: "m-1"),  // leaves: auto-renew off
                decision("r-c", original: "c", at: 2 * Self.day, message: nil),  // pending
                decision("r-d", original: "d", at: 2 * Self.day, message: "m-2"),  // pending
                decision("r-e", original: "e", at: 9 * Self.day, message: "m-1"),  // after the range
                decision("r-f", original: "f", at: Self.day, message: "m-1", environment: .production),
            ]
            for decision in decisions { #expect(try await ledger.recordRetentionDecision(decision)) }
            try await renew(ledger, "a", "a-renewal", at: 3 * Self.day)
            #expect(try await ledger.recordRenewal(renewal("b", autoRenew: .off)))

            let saves = try await ledger.retentionSaves(
                bundleID: Fixture.bundleID, environment: .sandbox, from: Fixture.at(Self.day),
                before: Fixture.at(9 * Self.day), now: Fixture.at(4 * Self.day))
            #expect(
                saves == [
                    RetentionSaves(messageID: "default", shown: 1, stayed: 0, left: 0, pending: 1),
                    RetentionSaves(messageID: "m-1", shown: 2, stayed: 1, left: 1, pending: 0),
                    RetentionSaves(messageID: "m-2", shown: 1, stayed: 0, left: 0, pending: 1),
                ])
            #expect(saves[1].saveRate == 0.5)
            #expect(saves[0].saveRate == nil)
            // Once the periods end, the pending ones have left.
            let later = try await ledger.retentionSaves(
                bundleID: Fixture.bundleID, environment: .sandbox, from: Fixture.at(0),
                before: Fixture.at(10 * Self.day), now: Fixture.at(40 * Self.day))
            #expect(later.map(\.left) == [1, 2, 1])
            #expect(later.map(\.shown) == [1, 3, 1])
            #expect(
                try await ledger.retentionSaves(
                    bundleID: "other.app", environment: .sandbox, from: Fixture.at(0), before: Fixture.at(10 * Self.day),
                    now: Fixture.at(4 * Self.day)
                ).isEmpty)
        }
    }
}
