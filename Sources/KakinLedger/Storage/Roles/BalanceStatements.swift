import Foundation

/// A row of `ledger_entries`: one currency movement (a credit, a spend or a clawback).
struct LedgerEntryRow: LedgerRecord {
    static let table = "ledger_entries"
    static let generatedColumns: Set<String> = ["id"]
    typealias Columns = CodingKeys

    var id: Int64?
    var idempotencyKey: String
    var kind: String
    var bundleID: String
    var appUserID: String
    var currency: String
    var amount: Int64
    var transactionID: String?
    var shortfall: Int64
    var createdAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case idempotencyKey = "idempotency_key"
        case kind
        case bundleID = "bundle_id"
        case appUserID = "app_user_id"
        case currency, amount
        case transactionID = "transaction_id"
        case shortfall
        case createdAt = "created_at"
    }

    func entry() throws -> LedgerEntry {
        guard let kind = LedgerEntry.Kind(rawValue: kind) else {
            throw LedgerStoreError(.inconsistentState, "unknown ledger entry kind '\(kind)'")
        }
        return LedgerEntry(
            kind: kind, bundleID: bundleID, appUserID: appUserID, currency: currency, amount: amount,
            transactionID: transactionID, idempotencyKey: idempotencyKey, shortfall: shortfall,
            createdAt: LedgerTime.date(createdAt))
    }
}

/// A row of `balances`: what a customer holds of one currency. The credits of every purchase
/// raise these rows by hand (``boundValues``).
struct BalanceRow: BoundRecord {
    static let table = "balances"
    static let boundColumns = insertedColumns
    typealias Columns = CodingKeys

    var bundleID: String
    var appUserID: String
    var currency: String
    var amount: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case appUserID = "app_user_id"
        case currency, amount
    }

    var boundValues: [LedgerValue] { [.text(bundleID), .text(appUserID), .text(currency), .integer(amount)] }

    /// A customer's balances, every currency.
    static func all(bundleID: String, appUserID: String) -> LedgerSQL {
        "SELECT \(unescaped: selection()) FROM balances WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID)"
    }

    /// The balances `all(bundleID:appUserID:)` read, by currency.
    static func byCurrency(_ rows: any LedgerRowSet) throws -> [String: Int64] {
        Dictionary(try rows.decode(BalanceRow.self).map { ($0.currency, $0.amount) }, uniquingKeysWith: +)
    }

    /// The balance of one currency, as `value`.
    static func amount(bundleID: String, appUserID: String, currency: String) -> LedgerSQL {
        """
        SELECT amount AS value FROM balances
        WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID) AND currency = \(currency)
        """
    }
}

/// A row of `events`: an outbox event, under the id the database gives it (increasing as events
/// are written), naming an anonymous customer redacted. Writes append these rows by hand
/// (``boundValues``). On PostgreSQL the table also holds the transaction that wrote each event
/// (`xid`, filled in by the database), by which the outbox's claims order events.
struct EventRow: BoundRecord {
    static let table = "events"
    static let generatedColumns: Set<String> = ["id"]
    static let boundColumns = insertedColumns
    typealias Columns = CodingKeys

    var id: Int64?
    var type: String
    var bundleID: String
    /// The customer, redacted when anonymous (``CustomerIDRedaction``); `NULL` for an app's event.
    var appUserID: String?
    /// The event's body, JSON.
    var payload: String
    var createdAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, type
        case bundleID = "bundle_id"
        case appUserID = "app_user_id"
        case payload
        case createdAt = "created_at"
    }

    static func engineColumns(on dialect: LedgerSQLDialect) -> Set<String> {
        dialect == .postgresql ? ["xid"] : []
    }

    /// The row a write appends for `event`.
    init(_ event: PendingEvent) {
        (id, type, bundleID, payload, createdAt) = (nil, event.type, event.bundleID, event.payload, event.at)
        appUserID = event.appUserID.map(CustomerIDRedaction.redacted)
    }

    var boundValues: [LedgerValue] {
        [.text(type), .text(bundleID), appUserID.ledgerValue, .text(payload), .integer(createdAt)]
    }
}

/// The outbox's events, as writes append them.
enum EventStatements {
    /// Appends an outbox event (naming an anonymous customer redacted), and marks the purchase it
    /// changes, if any, for the metrics job.
    static func append(
        _ type: String, bundleID: String, appUserID: String?, payload: some EventPayload, at date: Int64
    ) -> [LedgerSQL] {
        append([PendingEvent(type, bundleID: bundleID, appUserID: appUserID, payload: payload, at: date)])
    }

    /// Appends outbox events, in the order given (their IDs increase in that order), and marks the
    /// purchases they change for the metrics job; as one statement where the engine can.
    static func append(_ events: [PendingEvent]) -> [LedgerSQL] {
        let inserts: [LedgerSQL] = events.chunked(MetricStatements.rowsPerStatement).map { events in
            """
            INSERT INTO events (\(unescaped: EventRow.boundColumns))
            \(values: events.map { EventRow($0).boundValues })
            """
        }
        let marked = events.compactMap { event in
            event.purchase.map { MetricsUpdate.UnitKey(bundleID: event.bundleID, originalTransactionID: $0) }
        }
        return LedgerSQL.writes(inserts + (marked.isEmpty ? [] : MetricStatements.mark(marked)))
    }
}

/// An outbox event a write appends (``EventStatements/append(_:)-([PendingEvent])``): its body as
/// the outbox stores it, and the purchase whose metrics it changes, if any.
struct PendingEvent: Sendable {
    var type: String
    var bundleID: String
    var appUserID: String?
    var payload: String
    var purchase: String?
    var at: Int64

    init(_ type: String, bundleID: String, appUserID: String?, payload: some EventPayload, at: Int64) {
        self.type = type
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.payload = payload.json
        self.purchase = payload.changedPurchase
        self.at = at
    }
}

/// Spends, the same statements on both engines.
extension StatementEngine {
    /// Spends in one write: the `spend` line is inserted under the app's spend key first (`ON
    /// CONFLICT DO NOTHING`: a key seen before answers `alreadySpent`, or is refused when it named
    /// another spend), then `UPDATE balances … WHERE amount >= …` lowers the balance only if it
    /// covers the amount; otherwise the write is rolled back, line included, and the key stays free.
    public func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String, at date: Date
    ) async throws -> SpendOutcome {
        try LedgerRules.validateSpend(amount: amount, idempotencyKey: idempotencyKey)
        let key = LedgerRules.spendKey(bundleID: bundleID, idempotencyKey: idempotencyKey)
        let now = LedgerTime.milliseconds(date)
        let line = LedgerEntryRow(
            id: nil, idempotencyKey: key, kind: LedgerEntry.Kind.spend.rawValue, bundleID: bundleID,
            appUserID: appUserID, currency: currency, amount: -amount, transactionID: nil, shortfall: 0, createdAt: now)
        let balance = BalanceRow.amount(bundleID: bundleID, appUserID: appUserID, currency: currency)
        do {
            return try await perform(
                for: appUserID,
                .run([try "INSERT INTO \(insert: line) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id"]) { rows in
                    guard !rows[0].isEmpty else {
                        return .run([
                            """
                            SELECT \(unescaped: LedgerEntryRow.selection()) FROM ledger_entries
                            WHERE idempotency_key = \(key)
                            """,
                            balance,
                        ]) { rows in
                            let earlier = try rows[0].first(LedgerEntryRow.self)
                            guard let earlier, earlier.kind == line.kind, earlier.bundleID == bundleID,
                                earlier.appUserID == appUserID, earlier.currency == currency, earlier.amount == -amount
                            else {
                                throw LedgerStoreError(
                                    .idempotencyKeyReused,
                                    "the key '\(idempotencyKey)' was used for another spend of this app")
                            }
                            return .done(.alreadySpent(balance: try rows[1].first(LedgerColumn<Int64>.self)?.value ?? 0))
                        }
                    }
                    return .run([
                        """
                        UPDATE balances SET amount = amount - \(amount)
                        WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID) AND currency = \(currency)
                          AND amount >= \(amount)
                        RETURNING amount AS value
                        """,
                        balance,
                    ]) { rows in
                        guard let left = try rows[0].first(LedgerColumn<Int64>.self)?.value else {
                            throw InsufficientBalance(balance: try rows[1].first(LedgerColumn<Int64>.self)?.value ?? 0)
                        }
                        let event = EventStatements.append(
                            LedgerEventType.balanceSpent, bundleID: bundleID, appUserID: appUserID,
                            payload: BalanceEventPayload(
                                currency: currency, amount: -amount, balance: left, idempotencyKey: key),
                            at: now)
                        return .run(event) { _ in .done(.spent(balance: left)) }
                    }
                })
        } catch let refused as InsufficientBalance {
            return .insufficientBalance(balance: refused.balance)
        }
    }
}

/// Thrown inside a spend's write to roll it back when the balance does not cover it.
private struct InsufficientBalance: Error {
    let balance: Int64
}
