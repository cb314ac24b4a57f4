import AppStoreModels
import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// What a prorated refund writes to the outbox, and the share read from Apple's fields; what it
/// takes back is the contract of ``PurchaseLedger`` (``PurchaseLedgerContractTests``).
@Suite("Ledger: prorated refunds")
struct LedgerPartialRefundTests {
    private func revoke(_ store: any LedgerStore, _ id: String, share: Int, at seconds: TimeInterval = 200) async throws -> Bool {
        try await store.revoke(
            transactionID: id, at: Fixture.at(seconds), reason: 0, share: share, grants: Fixture.coins, policy: .clampAtZero)
    }

    @Test("the revocation event carries the share", arguments: StoreKind.backends)
    func eventCarriesShare(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(store, "t1", share: 50_000))
            #expect(try await revoke(store, "t1", share: 100_000, at: 300))
            let events = try await store.dueEvents(endpoint: "https://hooks.example/a", now: Fixture.at(0), limit: 100)
            let revoked = events.filter { $0.type == "transaction.revoked" }
            let shares = try revoked.map { event in
                (try JSONSerialization.jsonObject(with: event.payload) as? [String: Any])?["revocationPercentage"]
                    as? Int
            }
            #expect(shares == [50_000, 100_000])
        }
    }

    @Test("the revoked share follows Apple's revocationType and revocationPercentage")
    func revokedShare() {
        func share(_ type: RevocationType, _ percentage: Int) -> Int {
            RecordedTransaction(
                transactionID: "t", originalTransactionID: "t", bundleID: "b", productID: "p", productType: .consumable,
                purchaseDate: Fixture.at(0), revocationType: type, revocationPercentage: percentage,
                environment: .sandbox, source: .app, recordedAt: Fixture.at(0)
            ).revokedShare
        }
        #expect(share(.refundProrated, 50_000) == 50_000)
        #expect(share(.refundFull, 100_000) == 100_000)
        #expect(share(.refundProrated, 0) == 100_000, "a share Apple could not mean is the whole")
    }
}
