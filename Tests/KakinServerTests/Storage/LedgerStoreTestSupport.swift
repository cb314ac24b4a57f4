import AppStoreModels
import Foundation
import KakinServer
import Testing

/// Where a test's ledger lives: a private in-memory SQLite database (one connection), or a
/// temporary file in WAL mode with several connections, where only SQLite's locks keep writers
/// apart.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case file

    var testDescription: String { rawValue }
}

/// A fresh, migrated store for one test, removed afterwards.
func withLedgerStore(
    _ kind: StoreKind, _ body: (SQLLedgerStore) async throws -> Void
) async throws {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("kakin-ledger-\(UUID().uuidString)", isDirectory: true)
    let path: String?
    switch kind {
    case .memory:
        path = nil
    case .file:
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("ledger.sqlite").path
    }
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try await SQLLedgerStore.sqlite(path: path)
    do {
        try await store.migrate()
        try await body(store)
    } catch {
        try? await store.shutdown()
        throw error
    }
    try await store.shutdown()
}

/// Test data: one app, fixed instants.
enum Fixture {
    static let bundleID = "com.example.kakin"
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    static func at(_ seconds: TimeInterval) -> Date { epoch.addingTimeInterval(seconds) }

    static let coins: [Grant] = [.currency("coins", amount: 100)]

    static func transaction(
        _ id: String, original: String? = nil, user: String? = nil, product: String = "coins100",
        type: ProductType = .consumable, quantity: Int = 1, purchasedAt: TimeInterval = 0,
        revokedAt: TimeInterval? = nil, source: TransactionSource = .app, recordedAt: TimeInterval = 10
    ) -> RecordedTransaction {
        RecordedTransaction(
            transactionID: id, originalTransactionID: original ?? id, bundleID: bundleID, appUserID: user,
            productID: product, productType: type, quantity: quantity, purchaseDate: at(purchasedAt),
            expiresDate: type == .autoRenewableSubscription ? at(purchasedAt + 30 * 86_400) : nil,
            revocationDate: revokedAt.map(at), revocationReason: revokedAt == nil ? nil : .appIssue,
            environment: .sandbox, appAccountToken: nil, signedTransaction: "jws.\(id)", source: source,
            recordedAt: at(recordedAt))
    }
}

/// Runs `count` copies of `operation` at once and returns their results.
func concurrently<T: Sendable>(
    _ count: Int, _ operation: @escaping @Sendable (Int) async throws -> T
) async throws -> [T] {
    try await withThrowingTaskGroup(of: T.self) { group in
        for index in 0..<count {
            group.addTask { try await operation(index) }
        }
        var results: [T] = []
        for try await result in group { results.append(result) }
        return results
    }
}

/// The ledger is the truth: for every currency, its lines add up to the balance.
func expectLedgerMatchesBalances(
    _ store: SQLLedgerStore, user: String, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let customer = try await store.customer(bundleID: Fixture.bundleID, appUserID: user)
    let sums = Dictionary(grouping: customer.ledger, by: \.currency).mapValues { $0.reduce(0) { $0 + $1.amount } }
    #expect(sums == customer.balances, sourceLocation: sourceLocation)
}
