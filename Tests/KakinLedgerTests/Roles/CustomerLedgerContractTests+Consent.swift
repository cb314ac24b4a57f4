import AppStoreModels
import Foundation
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The contract of ``CustomerLedger`` for rescinded consent, run against every engine and the
/// in-memory implementation.
@Suite("Ledger role: rescinded consent")
struct ConsentLedgerContractTests {
    private let anonymous = AnonymousAppUserID.prefix + "fedcba9876543210fedcba9876543210"

    private func rescission(
        _ download: String, of customer: String?, at seconds: TimeInterval, uuid: String = "n-1"
    ) -> ConsentRescission {
        ConsentRescission(
            bundleID: Fixture.bundleID, appTransactionID: download, appUserID: customer, environment: .sandbox,
            rescindedAt: Fixture.at(seconds), notificationUUID: uuid, recordedAt: Fixture.at(seconds + 1))
    }

    @Test("a rescission is recorded once, erases what is named, and a later one replaces it", arguments: RoleImplementation.all)
    func recordedOnceAndErases(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            // Alice's download, reported before she signed in, and Bob's.
            for (download, user) in [("download-1", anonymous), ("download-2", "bob")] {
                try await ledger.linkAppTransaction(
                    bundleID: Fixture.bundleID, appTransactionID: download, appUserID: user, environment: .sandbox,
                    at: Fixture.at(1))
            }
            _ = try await ledger.alias(
                bundleID: Fixture.bundleID, anonymousID: anonymous, to: "alice", transfersOwnership: false,
                at: Fixture.at(2))

            let first = try await ledger.recordConsentRescission(
                rescission("download-1", of: "alice", at: 100), erasing: [.aliases, .appTransactions])
            #expect(first == ConsentRescissionOutcome(recorded: true, erasedCounts: [.aliases: 1, .appTransactions: 1]))
            #expect(try await ledger.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == nil)
            #expect(try await ledger.appTransactions(bundleID: Fixture.bundleID, appUserID: "alice").isEmpty)
            #expect(
                try await ledger.appTransactionCustomer(bundleID: Fixture.bundleID, appTransactionID: "download-2")
                    == "bob", "another customer's data stays")

            let stored = try #require(try await ledger.consentRescission(bundleID: Fixture.bundleID, appUserID: "alice"))
            #expect(stored.appTransactionID == "download-1")
            #expect(stored.rescindedAt == Fixture.at(100))
            #expect(stored.recordedAt == Fixture.at(101))
            #expect(stored.erased == [.aliases, .appTransactions])
            #expect(stored.environment == .sandbox)
            #expect(try await ledger.consentRescission(bundleID: Fixture.bundleID, appUserID: "bob") == nil)
            #expect(try await ledger.consentRescission(bundleID: "other.app", appUserID: "alice") == nil)

            // The same notification again, or an earlier one arriving late, changes nothing.
            #expect(
                try await ledger.recordConsentRescission(rescission("download-1", of: "alice", at: 100), erasing: [])
                    == ConsentRescissionOutcome(recorded: false))
            #expect(
                try await !ledger.recordConsentRescission(
                    rescission("download-1", of: "alice", at: 50, uuid: "n-0"), erasing: []
                ).recorded)
            #expect(try await ledger.consentRescission(bundleID: Fixture.bundleID, appUserID: "alice") == stored)

            // Withdrawn again later: the later one stands, erasing only what is named now.
            let again = try await ledger.recordConsentRescission(
                rescission("download-1", of: "alice", at: 200, uuid: "n-2"), erasing: [.aliases])
            #expect(again == ConsentRescissionOutcome(recorded: true, erasedCounts: [.aliases: 0]))
            let latest = try await ledger.consentRescission(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(latest?.rescindedAt == Fixture.at(200))
            #expect(latest?.notificationUUID == "n-2")
            #expect(latest?.erased == [.aliases])

            // Its link erased, the download is still known as Alice's when it is withdrawn again.
            let third = try await ledger.recordConsentRescission(
                rescission("download-1", of: nil, at: 300, uuid: "n-3"), erasing: [.appTransactions])
            #expect(third == ConsentRescissionOutcome(recorded: true, erasedCounts: [.appTransactions: 0]))
            let kept = try await ledger.consentRescission(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(kept?.notificationUUID == "n-3" && kept?.appUserID == "alice")
        }
    }

    @Test("a rescission for a download no customer is linked to is kept and erases nothing", arguments: RoleImplementation.all)
    func unknownCustomer(_ implementation: RoleImplementation) async throws {
        try await implementation.withCustomers { ledger in
            let outcome = try await ledger.recordConsentRescission(
                rescission("download-9", of: nil, at: 10), erasing: [.aliases, .appTransactions])
            #expect(outcome == ConsentRescissionOutcome(recorded: true))
            #expect(try await !ledger.recordConsentRescission(rescission("download-9", of: nil, at: 10), erasing: []).recorded)
        }
    }

    @Test("a new purchase after the rescission lifts it; a renewal does not")
    func liftedByANewPurchase() {
        let rescinded = rescission("download-1", of: "alice", at: 100)
        let before = Fixture.transaction("a", user: "alice", purchasedAt: 50)
        let renewal = Fixture.transaction(
            "s2", original: "s1", user: "alice", type: .autoRenewableSubscription, purchasedAt: 150)
        let after = Fixture.transaction("b", user: "alice", purchasedAt: 150)
        #expect(!rescinded.isLifted(by: [before, renewal]))
        #expect(rescinded.isLifted(by: [before, after]))
    }
}
