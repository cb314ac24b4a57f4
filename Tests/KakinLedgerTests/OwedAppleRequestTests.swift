import AppStoreModels
import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// A call owed to Apple because of a purchase (its owner's app account token) is written in the
/// purchase's own database transaction: once the ingest has committed, nothing the server does or
/// fails to do afterwards can lose it, and a retry of the same upload adds nothing.
@Suite("Ledger: calls owed to Apple commit with the purchase")
struct OwedAppleRequestTests {
    static func request(_ id: String, for transaction: RecordedTransaction) -> AppleRequestRecord {
        AppleRequestRecord(
            id: id, kind: .appAccountToken, bundleID: Fixture.bundleID,
            transactionID: transaction.originalTransactionID, environment: .sandbox, detail: "token-\(id)",
            requestedAt: Fixture.at(10), nextAttemptAt: Fixture.at(10))
    }

    @Test("a new purchase's call is committed by the ingest itself, once", arguments: StoreKind.allCases)
    func writtenWithTheFirstRecord(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let purchase = Fixture.transaction("t1", user: "alice", type: .nonConsumable)
            let owed = Self.request("token:t1", for: purchase)
            let first = try await store.ingest(
                LedgerIngest(purchase, grants: [], appleRequestOnRecord: owed, appleRequestOnTransfer: owed))
            #expect(first.recorded == .recorded)
            // The server may stop here, or fail to answer: the call is in the ledger already.
            #expect(try await store.appleRequests(bundleID: nil, limit: 10).map(\.id) == ["token:t1"])

            // The device sends the purchase again (it never got an answer): a duplicate, no new call.
            let retry = try await store.ingest(
                LedgerIngest(purchase, grants: [], appleRequestOnRecord: Self.request("token:again", for: purchase)))
            #expect(retry.recorded == .duplicate(ownerAssigned: false))
            #expect(try await store.appleRequests(bundleID: nil, limit: 10).map(\.id) == ["token:t1"])
            let claimed = try await store.claimDueAppleRequests(now: Fixture.at(20), limit: 10, leaseUntil: Fixture.at(80))
            #expect(claimed.map(\.id) == ["token:t1"], "the call is due for the sender")
        }
    }

    @Test("an ingest that fails writes no call; a move writes the move's call", arguments: StoreKind.allCases)
    func failuresWriteNothingAndMovesWriteTheirs(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            // A credit that overflows fails the ingest after its row was written: nothing of it
            // commits, the call neither.
            let tooMuch = Fixture.transaction("t0", user: "bob", quantity: 3)
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.ingest(
                    LedgerIngest(
                        tooMuch, grants: [.currency("coins", amount: Int64.max / 2)],
                        appleRequestOnRecord: Self.request("token:t0", for: tooMuch)))
            }
            #expect(try await store.transaction(id: "t0") == nil)
            #expect(try await store.appleRequests(bundleID: nil, limit: 10).isEmpty)

            let purchase = Fixture.transaction("t2", user: "bob", type: .nonConsumable)

            _ = try await store.ingest(LedgerIngest(purchase, grants: []))
            var claimedByAlice = purchase
            claimedByAlice.appUserID = "alice"
            let owed = Self.request("token:t2:alice", for: purchase)
            // Not moved (the app keeps purchases with their first owner): no call.
            let kept = try await store.ingest(
                LedgerIngest(claimedByAlice, grants: [], appleRequestOnRecord: owed, appleRequestOnTransfer: owed))
            #expect(kept.recorded == .ownedByAnotherCustomer("bob"))
            #expect(try await store.appleRequests(bundleID: nil, limit: 10).isEmpty)
            // Moved: the move's call commits with it.
            let moved = try await store.ingest(
                LedgerIngest(
                    claimedByAlice, grants: [], transfersOwnership: true, appleRequestOnRecord: owed,
                    appleRequestOnTransfer: owed))
            #expect(moved.transferredFrom == "bob")
            #expect(try await store.appleRequests(bundleID: nil, limit: 10).map(\.id) == ["token:t2:alice"])
        }
    }
}
