import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The `transactions` row is declared once (``TransactionRow``; its columns are checked against
/// the table with every other record's, in `LedgerRecordColumnTests`).
@Suite("Ledger: the transactions row, declared once")
struct TransactionRowTests {
    @Test("selections list the declaration's columns, with or without the signed JWS")
    func selections() {
        let all = TransactionRow.selection().components(separatedBy: ", ")
        #expect(all == TransactionRow.columns)
        let withoutJWS = TransactionRow.selection(withJWS: false, table: "t.").components(separatedBy: ", ")
        #expect(withoutJWS.count == TransactionRow.columns.count)
        #expect(withoutJWS.contains("NULL AS signed_transaction"))
        #expect(withoutJWS.filter { $0 != "NULL AS signed_transaction" }.allSatisfy { $0.hasPrefix("t.") })
    }

    @Test("every field a transaction carries is written and read back", arguments: StoreKind.allCases)
    func everyFieldRoundTrips(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            var transaction = Fixture.transaction("t1", user: "alice", type: .autoRenewableSubscription)
            transaction.appAccountToken = "0e2c3f4a-0000-4000-8000-000000000001"
            transaction.periodType = .intro
            transaction.price = 4990
            transaction.currency = "EUR"
            _ = try await store.record(transaction, grants: [])
            #expect(try await store.transaction(id: "t1") == transaction)
        }
    }
}
