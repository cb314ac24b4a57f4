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
        func named(_ item: String) -> String {
            let name = item.components(separatedBy: " AS ").last ?? item
            return name.hasPrefix("t.") ? String(name.dropFirst(2)) : name
        }
        let all = TransactionRow.selection().components(separatedBy: ", ")
        #expect(all.map(named) == TransactionRow.columns)
        #expect(all.contains("\(TransactionRow.jws()) AS signed_transaction"))
        #expect(all.contains("NULL AS signed_header"))
        let withoutJWS = TransactionRow.selection(withJWS: false, table: "t.").components(separatedBy: ", ")
        #expect(withoutJWS.map(named) == TransactionRow.columns)
        #expect(withoutJWS.contains("NULL AS signed_transaction"))
        #expect(withoutJWS.filter { !$0.hasPrefix("NULL AS ") }.allSatisfy { $0.hasPrefix("t.") })
    }

    @Test("rows keep what follows their JWS's header, each header listed once by its digest")
    func rowsStoredApart() {
        let (a, b) = ("eyJhbGciOiJFUzI1NiIsIng1YyI6WyJB", "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJC")
        let rows = ["\(a).p1.s1", "\(b).p2.s2", "\(a).p3.s3", "whole"].enumerated().map { index, jws in
            var transaction = Fixture.transaction("t\(index)")
            transaction.signedTransaction = jws
            return TransactionRow(transaction, owner: nil, signedDigest: nil)
        }
        let (stored, headers) = TransactionRow.storedApart(rows)
        #expect(stored.map(\.signedTransaction) == ["p1.s1", "p2.s2", "p3.s3", "whole"])
        let digests = [a, b].map { SignedDigest($0).bytes }
        #expect(stored.map(\.signedHeader) == [digests[0], digests[1], digests[0], nil])
        #expect(Set(headers.map(\.header)) == [a, b])
        #expect(headers.map(\.digest) == digests.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(headers.allSatisfy { $0.digest == SignedDigest($0.header).bytes })
    }

    @Test("a JWS's header is stored once for the rows it begins, and every JWS is read back whole", arguments: StoreKind.allCases)
    func headersStoredOnce(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let chain = String(repeating: "eyJ4NWMiOlsiTUlJ", count: 200)
            var transactions: [RecordedTransaction] = []
            for (id, header) in [("t1", chain), ("t2", chain), ("t3", "eyJhbGciOiJFUzI1NiJ9"), ("t4", nil)] {
                var transaction = Fixture.transaction(id, user: "alice")
                transaction.signedTransaction = header.map { "\($0).payload-\(id).signature-\(id)" } ?? "not-a-jws"
                transactions.append(transaction)
                #expect(try await store.record(transaction, grants: Fixture.coins) == .recorded)
            }
            // Two headers, each once; the rows keep what follows their header, and its digest.
            #expect(try await RawSQL.texts(store, "SELECT header FROM signed_headers").count == 2)
            let stored = try await RawSQL.texts(
                store, "SELECT signed_transaction FROM transactions ORDER BY transaction_id")
            #expect(stored == ["payload-t1.signature-t1", "payload-t2.signature-t2", "payload-t3.signature-t3", "not-a-jws"])
            // A row written before the headers were kept apart holds its whole JWS and no digest.
            var earlier = Fixture.transaction("t5", user: "alice")
            earlier.signedTransaction = "\(chain).payload-t5.signature-t5"
            #expect(try await store.record(earlier, grants: Fixture.coins) == .recorded)
            try await RawSQL.execute(
                store,
                """
                UPDATE transactions SET signed_transaction = '\(earlier.signedTransaction!)', signed_header = NULL
                WHERE transaction_id = 't5'
                """)
            transactions.append(earlier)
            for transaction in transactions {
                #expect(try await store.transaction(id: transaction.transactionID) == transaction)
            }
            let summary = try await store.customerSummary(
                bundleID: Fixture.bundleID, appUserID: "alice", recent: 10, withJWS: true)
            #expect(
                Set(summary.recentTransactions.map(\.signedTransaction)) == Set(transactions.map(\.signedTransaction)))
            let bare = try await store.customerSummary(
                bundleID: Fixture.bundleID, appUserID: "alice", recent: 10, withJWS: false)
            #expect(bare.recentTransactions.count == 5)
            #expect(bare.recentTransactions.allSatisfy { $0.signedTransaction == nil })
        }
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
