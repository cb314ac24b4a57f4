import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The customers page reads through indexes and stops once it has what it shows.
@Suite("Ledger: the customers page, bounded")
struct CustomerSearchTests {
    @Test("recent customers are found past a page of one customer's purchases", arguments: StoreKind.backends)
    func recentCustomersPastAPage(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("d1", user: "dave", purchasedAt: 10), grants: [])
            _ = try await store.record(Fixture.transaction("c1", user: "carol", purchasedAt: 20), grants: [])
            _ = try await store.record(Fixture.transaction("n1", user: nil, purchasedAt: 25), grants: [])
            _ = try await store.record(Fixture.transaction("c2", user: "carol", purchasedAt: 30), grants: [])
            // More of one customer's purchases, all newer, than the walk reads at a time.
            let many = CustomerSearch.page + 20
            for index in 0..<many {
                _ = try await store.record(
                    Fixture.transaction("w\(index)", user: "whale", purchasedAt: 100 + Double(index)), grants: [])
            }
            let recent = try await store.findCustomers(matching: "", limit: 3)
            #expect(recent.map(\.appUserID) == ["whale", "carol", "dave"])
            #expect(recent.map(\.transactionCount) == [many, 2, 1])
            #expect(recent.first?.lastPurchaseDate == Fixture.at(100 + Double(many - 1)))
            #expect(try await store.findCustomers(matching: "", limit: 2).map(\.appUserID) == ["whale", "carol"])
            #expect(try await store.findCustomers(matching: "", limit: 0).isEmpty)
        }
    }

    @Test("a prefix search takes the first IDs in order, shown newest purchase first", arguments: StoreKind.backends)
    func prefixSearch(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            for (index, user) in ["User-03", "user-01", "user-02", "user-00", "users", "other"].enumerated() {
                _ = try await store.record(
                    Fixture.transaction("t\(index)", user: user, purchasedAt: Double(index)), grants: [])
            }
            let first = try await store.findCustomers(matching: "USER-", limit: 3)
            #expect(first.map(\.appUserID) == ["user-00", "user-02", "user-01"])
            let all = try await store.findCustomers(matching: "user", limit: 10)
            #expect(all.map(\.appUserID) == ["users", "user-00", "user-02", "user-01", "User-03"])
            // An exact transaction ID finds its owner even when their ID does not match.
            #expect(try await store.findCustomers(matching: "t5", limit: 10).map(\.appUserID) == ["other"])
        }
    }
}
