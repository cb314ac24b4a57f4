import AppStoreModels
import Foundation
import PostgresNIO
import Testing

import KakinServer
@testable import KakinLedger

/// Where a test's ledger lives: a private in-memory SQLite database (one connection), a
/// temporary SQLite file in WAL mode with several connections, where only SQLite's locks keep
/// writers apart, or a schema of its own in the PostgreSQL database named by
/// `KAKIN_TEST_POSTGRES_URL`, reached through a pool of connections.
public enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case file
    case postgres

    public var testDescription: String { rawValue }

    /// Every kind this machine can run: PostgreSQL only when `KAKIN_TEST_POSTGRES_URL` is set
    /// (`scripts/test` starts a cluster and sets it).
    public static var allCases: [StoreKind] {
        PostgresTestDatabase.announceSkip ? [.memory, .file] : [.memory, .file, .postgres]
    }

    /// One SQLite kind and PostgreSQL when available: for tests that do not need the file kind.
    public static var backends: [StoreKind] {
        PostgresTestDatabase.announceSkip ? [.memory] : [.memory, .postgres]
    }
}

/// The PostgreSQL database the tests may use, and a schema of its own for each test.
public enum PostgresTestDatabase {
    public static let url = ProcessInfo.processInfo.environment["KAKIN_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    /// `true` when PostgreSQL is not available; the first time, says so on standard error, so a
    /// run without it cannot pass for a run on both engines.
    static let announceSkip: Bool = {
        guard url == nil else { return false }
        FileHandle.standardError.write(
            Data("\n*** The ledger's tests run on SQLite only: the PostgreSQL engine is SKIPPED. \(skipMessage) ***\n\n".utf8))
        return true
    }()
    public static let skipMessage =
        "KAKIN_TEST_POSTGRES_URL is not set, so the PostgreSQL cases are skipped (scripts/test starts a cluster and sets it)"

    /// Connection settings for `url`, with a small pool. A connection is waited for up to a minute:
    /// on a loaded machine a new schema's first connections can take longer than a server's
    /// default of 10 seconds, and these tests check what the ledger does, not how fast.
    public static func options(schema: String? = nil, maxConnections: Int = 8) throws -> PostgresConnectionOptions {
        guard let url else { throw LedgerStoreError(.unavailable, skipMessage) }
        var options = try PostgresConnectionOptions(url: url)
        options.schema = schema
        options.maxConnections = maxConnections
        options.connectionWait = .seconds(60)
        return options
    }

    /// Runs `body` with the name of a new, empty schema, dropped with everything in it afterwards.
    ///
    /// At most ``TestLedgerSlots/width`` schemas of this process are in use at once: the suite
    /// has a few hundred PostgreSQL cases, and all of them at once, each with a pool of its own,
    /// would exceed the cluster's connections and leave a two-core machine answering none of them
    /// within the tests' waits. A body that opens another schema (in its own task or a child task)
    /// uses the slot it already holds, so no test waits for itself.
    public static func withSchema(_ body: (String) async throws -> Void) async throws {
        if TestLedgerSlots.held { return try await inNewSchema(body) }
        await TestLedgerSlots.shared.take()
        do {
            try await TestLedgerSlots.$held.withValue(true) { try await inNewSchema(body) }
        } catch {
            await TestLedgerSlots.shared.give()
            throw error
        }
        await TestLedgerSlots.shared.give()
    }

    private static func inNewSchema(_ body: (String) async throws -> Void) async throws {
        let schema = "kakin_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let admin = try PostgresLedger(options: options(maxConnections: 1))
        do {
            try await admin.client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"))
            do { try await body(schema) } catch {
                _ = try? await admin.client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"))
                throw error
            }
            try await admin.client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"))
        } catch {
            try? await admin.shutdown()
            throw error
        }
        try await admin.shutdown()
    }
}

/// A number of turns handed out first come, first served: how many PostgreSQL schemas this test
/// process uses at once (``ledgers``), and how many of them it migrates at once (``migrations``).
public actor TestLedgerSlots {
    /// The schemas in use at once.
    public static let width = 12
    static let shared = TestLedgerSlots(width: width)
    /// One migration at a time: a migration is some forty statements of DDL, and a few hundred
    /// cases starting together would otherwise spend the machine's first minute migrating while
    /// the tests already running wait for their connections.
    static let migrations = TestLedgerSlots(width: 1)
    /// Whether the current task (or a task it started) holds one of ``shared``'s slots.
    @TaskLocal static var held = false

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(width: Int) {
        free = width
    }

    func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// Runs `body` holding one turn.
    func turn<R: Sendable>(_ body: @Sendable () async throws -> R) async throws -> R {
        await take()
        do {
            let result = try await body()
            give()
            return result
        } catch {
            give()
            throw error
        }
    }
}

/// Opens a ledger of `kind`, not migrated: the one place the tests choose an engine. `path` is
/// the SQLite file of the `.file` kind; `schema` the PostgreSQL schema of the `.postgres` kind.
public func openLedger(_ kind: StoreKind, path: String? = nil, schema: String? = nil) async throws -> any LedgerStore {
    switch kind {
    case .memory: try SQLiteLedger(path: nil)
    case .file: try SQLiteLedger(path: path)
    case .postgres: try PostgresLedger(options: PostgresTestDatabase.options(schema: schema))
    }
}

/// A fresh, migrated store for one test, removed afterwards.
public func withLedgerStore(
    _ kind: StoreKind, _ body: (any LedgerStore) async throws -> Void
) async throws {
    if kind == .postgres {
        try await PostgresTestDatabase.withSchema { schema in
            try await withMigratedStore(openLedger(.postgres, schema: schema), body)
        }
        return
    }
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("kakin-ledger-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try await withMigratedStore(openLedger(kind, path: directory.appendingPathComponent("ledger.sqlite").path), body)
}

/// Migrates `store`, runs `body`, and shuts the store down whatever happens.
public func withMigratedStore(_ store: any LedgerStore, _ body: (any LedgerStore) async throws -> Void) async throws {
    do {
        if store is PostgresLedger {
            try await TestLedgerSlots.migrations.turn { try await store.migrate() }
        } else {
            try await store.migrate()
        }
        try await body(store)
    } catch {
        try? await store.shutdown()
        throw error
    }
    try await store.shutdown()
}
/// Test data: one app, fixed instants.
public enum Fixture {
    public static let bundleID = "com.example.kakin"
    public static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    public static func at(_ seconds: TimeInterval) -> Date { epoch.addingTimeInterval(seconds) }

    public static let coins: [Grant] = [.currency("coins", amount: 100)]

    public static func transaction(
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
public func concurrently<T: Sendable>(
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
public func expectLedgerMatchesBalances(
    _ store: any CustomerLedger, user: String, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let customer = try await store.customer(bundleID: Fixture.bundleID, appUserID: user)
    let sums = Dictionary(grouping: customer.ledger, by: \.currency).mapValues { $0.reduce(0) { $0 + $1.amount } }
    #expect(sums == customer.balances, sourceLocation: sourceLocation)
}
