import AppStoreModels
import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// Notifications, recorded once and listed, and what they leave of subscriptions: the latest
/// renewal state of each, ordered by Apple's signing dates, and the periods that ended with
/// nothing recorded since.
extension PurchaseLedgerContractTests {
    @Test(
        "a notification is recorded once per UUID, also when it arrives many times at once",
        arguments: RoleImplementation.all)
    func notificationsOnce(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let results = try await concurrently(50) { index in
                try await ledger.recordNotification(
                    uuid: "n-\(index % 5)", type: "DID_RENEW", subtype: nil, bundleID: Fixture.bundleID,
                    transactionID: "t1", signedPayload: "jws", receivedAt: Fixture.at(Double(index)))
            }
            #expect(results.filter { $0 }.count == 5)
            #expect(
                try await ledger.recordNotification(
                    uuid: "n-0", type: "REFUND", subtype: "x", bundleID: Fixture.bundleID, transactionID: nil,
                    signedPayload: "jws", receivedAt: Fixture.at(99)) == false)
        }
    }

    @Test(
        "notifications are listed newest first with their transaction's owner and revocation, of an app or a customer",
        arguments: RoleImplementation.all)
    func notificationsListed(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await ledger.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            _ = try await ledger.record(Fixture.transaction("t2", user: "bob"), grants: [])
            _ = try await ledger.revoke(
                transactionID: "t1", at: Fixture.at(5), reason: 1, grants: [], policy: .clampAtZero)
            for (uuid, type, bundleID, transactionID, at) in [
                ("n1", "ONE_TIME_CHARGE", Fixture.bundleID, "t2", 1.0), ("n2", "REFUND", Fixture.bundleID, "t1", 6),
                ("n3", "TEST", "com.example.other", nil, 3), ("n0", "DID_RENEW", Fixture.bundleID, "t9", 6),
            ] {
                #expect(
                    try await ledger.recordNotification(
                        uuid: uuid, type: type, subtype: nil, bundleID: bundleID, transactionID: transactionID,
                        signedPayload: "jws", receivedAt: Fixture.at(at)))
            }
            let all = try await ledger.receivedNotifications(bundleID: nil, appUserID: nil, limit: 10)
            #expect(all.map(\.notificationUUID) == ["n0", "n2", "n3", "n1"], "received at the same time: by UUID")
            #expect(all[1].transactionRevocationDate == Fixture.at(5))
            #expect(all[1].appUserID == "alice")
            #expect(all[0].appUserID == nil && all[3].appUserID == "bob" && all[3].transactionRevocationDate == nil)
            #expect(
                try await ledger.receivedNotifications(bundleID: Fixture.bundleID, appUserID: nil, limit: 2)
                    .map(\.notificationUUID) == ["n0", "n2"])
            let alices = try await ledger.receivedNotifications(
                bundleID: Fixture.bundleID, appUserID: "alice", limit: 10)
            #expect(alices.map(\.type) == ["REFUND"])
            #expect(
                try await ledger.receivedNotifications(bundleID: "com.example.other", appUserID: "alice", limit: 10)
                    .isEmpty)
        }
    }

    // MARK: Subscriptions

    private static func renewal(
        _ original: String = "o1", bundleID: String = Fixture.bundleID, autoRenew: AutoRenewStatus? = .on,
        intent: ExpirationIntent? = nil, issue: TimeInterval? = nil, graceEnd: TimeInterval? = nil,
        signed: TimeInterval, uuid: String = "n"
    ) -> SubscriptionRenewal {
        SubscriptionRenewal(
            bundleID: bundleID, originalTransactionID: original, autoRenewStatus: autoRenew, expirationIntent: intent,
            billingIssueDetectedAt: issue.map(Fixture.at), gracePeriodExpiresAt: graceEnd.map(Fixture.at),
            signedDate: Fixture.at(signed), notificationUUID: uuid, updatedAt: Fixture.at(signed + 1))
    }

    @Test(
        "renewal state: newer replaces older, late and repeated reports change nothing",
        arguments: RoleImplementation.all)
    func renewalOrdering(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            func stored() async throws -> SubscriptionRenewal {
                try #require(
                    try await ledger.subscriptionRenewals(bundleID: Fixture.bundleID, originalTransactionIDs: ["o1"])[
                        "o1"])
            }
            #expect(try await ledger.recordRenewal(Self.renewal(signed: 100, uuid: "subscribed")))
            #expect(!(try await ledger.recordRenewal(Self.renewal(signed: 100, uuid: "subscribed"))), "delivered again")
            #expect(try await ledger.recordRenewal(Self.renewal(autoRenew: .off, signed: 200, uuid: "off")))
            // A report signed before the stored one arrives late: ignored.
            #expect(!(try await ledger.recordRenewal(Self.renewal(autoRenew: .on, signed: 150, uuid: "late"))))
            #expect(try await stored() == Self.renewal(autoRenew: .off, signed: 200, uuid: "off"))
            #expect(try await stored().willRenew == false)

            // A billing problem keeps the date it was first seen while it lasts.
            #expect(try await ledger.recordRenewal(Self.renewal(issue: 300, graceEnd: 900, signed: 300, uuid: "fail")))
            #expect(try await ledger.recordRenewal(Self.renewal(issue: 400, graceEnd: 900, signed: 400, uuid: "retry")))
            var renewal = try await stored()
            #expect(renewal.billingIssueDetectedAt == Fixture.at(300))
            #expect(renewal.gracePeriodExpiresAt == Fixture.at(900))
            #expect(renewal.signedDate == Fixture.at(400) && renewal.notificationUUID == "retry")
            // Recovery clears it; a later problem starts from its own date.
            #expect(try await ledger.recordRenewal(Self.renewal(signed: 500, uuid: "recovered")))
            #expect(
                !(try await ledger.recordRenewal(Self.renewal(issue: 450, graceEnd: 900, signed: 450, uuid: "old"))))
            renewal = try await stored()
            #expect(renewal.billingIssueDetectedAt == nil && renewal.gracePeriodExpiresAt == nil)
            #expect(try await ledger.recordRenewal(Self.renewal(issue: 600, signed: 600, uuid: "again")))
            renewal = try await stored()
            #expect(renewal.billingIssueDetectedAt == Fixture.at(600) && renewal.gracePeriodExpiresAt == nil)
        }
    }

    @Test("renewal states are read by app and original transaction", arguments: RoleImplementation.all)
    func renewalLookup(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            #expect(try await ledger.recordRenewal(Self.renewal("o1", signed: 100)))
            #expect(
                try await ledger.recordRenewal(Self.renewal("o2", autoRenew: nil, intent: .billingError, signed: 100)))
            #expect(try await ledger.recordRenewal(Self.renewal("o1", bundleID: "com.example.other", signed: 100)))
            let found = try await ledger.subscriptionRenewals(
                bundleID: Fixture.bundleID, originalTransactionIDs: ["o1", "o2", "o3", "o1"])
            #expect(Set(found.keys) == ["o1", "o2"])
            #expect(found["o2"]?.autoRenewStatus == nil && found["o2"]?.expirationIntent == .billingError)
            #expect(found["o1"]?.bundleID == Fixture.bundleID)
            #expect(
                try await ledger.subscriptionRenewals(bundleID: Fixture.bundleID, originalTransactionIDs: []).isEmpty)
        }
    }

    @Test("concurrent reports of one subscription leave the latest", arguments: RoleImplementation.all)
    func concurrentReports(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            _ = try await concurrently(40) { index in
                try await ledger.recordRenewal(
                    Self.renewal(
                        autoRenew: index % 2 == 0 ? .on : .off, signed: TimeInterval(100 + index), uuid: "n\(index)"))
            }
            let stored = try await ledger.subscriptionRenewals(
                bundleID: Fixture.bundleID, originalTransactionIDs: ["o1"])
            #expect(stored["o1"]?.notificationUUID == "n39" && stored["o1"]?.autoRenewStatus == .off)
        }
    }

    @Test(
        "subscriptions whose period ended with nothing recorded since are read a page at a time",
        arguments: RoleImplementation.all)
    func lapsedSubscriptionsByPage(_ implementation: RoleImplementation) async throws {
        try await implementation.withPurchases { ledger in
            let month: TimeInterval = 30 * 86_400
            func subscription(
                _ id: String, original: String? = nil, at start: TimeInterval, revokedAt: TimeInterval? = nil
            )
                async throws
            {
                _ = try await ledger.record(
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
            _ = try await ledger.recordRenewal(
                SubscriptionRenewal(
                    bundleID: Fixture.bundleID, originalTransactionID: "s6", autoRenewStatus: .off,
                    expirationIntent: .customerCancelled, signedDate: Fixture.at(month + 5),
                    updatedAt: Fixture.at(month + 5)))
            // Ends after the window.
            try await subscription("s7", at: month)
            // Consumables have no period.
            _ = try await ledger.record(Fixture.transaction("c1", user: "alice"), grants: [])

            var seen: [LapsedSubscription] = []
            var cursor: LapsedSubscription?
            while true {
                let page = try await ledger.lapsedSubscriptions(
                    bundleID: Fixture.bundleID, environment: .sandbox, endedFrom: Fixture.at(month - 60),
                    before: Fixture.at(month + 60), after: cursor, limit: 2)
                guard let last = page.last else { break }
                #expect(page.count <= 2)
                seen += page
                cursor = last
            }
            #expect(seen.map(\.transactionID) == ["s1", "s2", "s3"])
            #expect(
                seen.allSatisfy { $0.expiresDate == Fixture.at(month) && $0.originalTransactionID == $0.transactionID })
            #expect(
                try await ledger.lapsedSubscriptions(
                    bundleID: Fixture.bundleID, environment: .production, endedFrom: Fixture.at(0),
                    before: Fixture.at(3 * month), after: nil, limit: 10
                ).isEmpty, "another environment")
            #expect(
                try await ledger.lapsedSubscriptions(
                    bundleID: Fixture.bundleID, environment: .sandbox, endedFrom: Fixture.at(month + 1),
                    before: Fixture.at(month + 60), after: nil, limit: 10
                ).isEmpty, "ended before the window")
        }
    }
}
