import Foundation
import KakinLedger
import Testing

/// The roles that share purchases, customers and balances: what one records, the others read,
/// move and spend (``LedgerStore`` on an engine, ``InMemoryLedger`` in memory).
public typealias PurchaseRoles = PurchaseLedger & CustomerLedger & BalanceLedger

/// Which implementation of one of the ledger's roles a contract test runs against: an engine's
/// ledger of a ``StoreKind`` (migrated, removed afterwards), or the role's in-memory
/// implementation. A role's contract suite runs against every implementation of the role.
public enum RoleImplementation: Sendable, CustomTestStringConvertible {
    case engine(StoreKind)
    case inMemory

    public var testDescription: String {
        switch self {
        case .engine(let kind): kind.testDescription
        case .inMemory: "in-memory"
        }
    }

    /// Every engine this machine runs (``StoreKind/allCases``), and the in-memory implementation.
    public static var all: [RoleImplementation] { StoreKind.allCases.map { .engine($0) } + [.inMemory] }

    /// One SQLite kind and PostgreSQL when available (``StoreKind/backends``), and the in-memory
    /// implementation.
    public static var backends: [RoleImplementation] { StoreKind.backends.map { .engine($0) } + [.inMemory] }

    /// Runs `body` with a fresh ledger playing ``SessionLedger``.
    public func withSessions(_ body: (any SessionLedger) async throws -> Void) async throws {
        try await run({ InMemorySessionLedger() }, { $0 }, body)
    }

    /// Runs `body` with a fresh ledger playing ``AppleCallLedger``.
    public func withAppleCalls(_ body: (any AppleCallLedger) async throws -> Void) async throws {
        try await run({ InMemoryAppleCallLedger() }, { $0 }, body)
    }

    /// Runs `body` with a fresh ledger playing ``StripeEventLedger``.
    public func withStripeEvents(_ body: (any StripeEventLedger) async throws -> Void) async throws {
        try await run({ InMemoryStripeEventLedger() }, { $0 }, body)
    }

    /// Runs `body` with a fresh ledger playing ``LedgerOperations`` (migrated).
    public func withOperations(_ body: (any LedgerOperations) async throws -> Void) async throws {
        try await run({ InMemoryLedgerOperations() }, { $0 }, body)
    }

    /// Runs `body` with a fresh ledger playing ``PurchaseLedger``, with the roles that read and
    /// spend what it records (``PurchaseRoles``).
    public func withPurchases(_ body: (any PurchaseRoles) async throws -> Void) async throws {
        try await run({ InMemoryLedger() }, { $0 }, body)
    }

    /// Runs `body` with a fresh ledger playing ``CustomerLedger``, with the roles that record and
    /// spend what its customers hold (``PurchaseRoles``).
    public func withCustomers(_ body: (any PurchaseRoles) async throws -> Void) async throws {
        try await withPurchases(body)
    }

    /// Runs `body` with a fresh ledger playing ``RetentionLedger``, with the roles that record the
    /// subscriptions and renewal states its outcomes are read from (``PurchaseRoles``).
    public func withRetention(_ body: (any PurchaseRoles & RetentionLedger) async throws -> Void) async throws {
        try await run({ InMemoryLedger() }, { $0 }, body)
    }

    /// Runs `body` with a fresh ledger playing ``MetricsLedger``, with the roles that record the
    /// purchases its figures and metrics are read from (``PurchaseRoles``).
    public func withMetrics(_ body: (any PurchaseRoles & MetricsLedger) async throws -> Void) async throws {
        try await run({ InMemoryLedger() }, { $0 }, body)
    }

    /// Runs `body` with a fresh ledger playing ``BalanceLedger``, and a way to credit a customer
    /// `amount` of a currency: a purchase that grants it.
    public func withBalances(
        _ body: (
            any BalanceLedger,
            _ credit: @Sendable (_ appUserID: String, _ currency: String, _ amount: Int64) async throws -> Void
        ) async throws -> Void
    ) async throws {
        try await withPurchases { ledger in
            try await body(ledger) { appUserID, currency, amount in
                _ = try await ledger.record(
                    Fixture.transaction("credit-\(UUID().uuidString)", user: appUserID),
                    grants: [.currency(currency, amount: amount)])
            }
        }
    }

    /// Runs `body` with a fresh ledger playing ``OutboxLedger``, and a way to write `count` new
    /// events (one each) for a customer into its outbox: through changes that write events on an engine, or
    /// directly in memory.
    public func withOutbox(
        _ body: (any OutboxLedger, _ writeEvents: @Sendable (_ count: Int, _ appUserID: String) async throws -> Void)
            async throws -> Void
    ) async throws {
        switch self {
        case .engine(let kind):
            try await withLedgerStore(kind) { store in
                try await body(store) { count, appUserID in
                    for _ in 0..<count {
                        // A purchase that grants nothing writes one event.
                        _ = try await store.record(
                            Fixture.transaction("event-\(UUID().uuidString)", user: appUserID), grants: [])
                    }
                }
            }
        case .inMemory:
            let outbox = InMemoryOutboxLedger()
            try await body(outbox) { count, appUserID in
                for _ in 0..<count {
                    await outbox.append(
                        type: "transaction.recorded", bundleID: Fixture.bundleID, appUserID: appUserID,
                        at: Fixture.at(10))
                }
            }
        }
    }

    private func run<Role>(
        _ memory: () -> Role, _ engine: (any LedgerStore) -> Role, _ body: (Role) async throws -> Void
    ) async throws {
        switch self {
        case .engine(let kind): try await withLedgerStore(kind) { try await body(engine($0)) }
        case .inMemory: try await body(memory())
        }
    }
}
