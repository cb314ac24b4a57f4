import Foundation
import KakinCore
import PostgresNIO

/// Recording, moving and revoking purchases, spending, and aliasing customers: the writes that
/// move currency, each in one database transaction.
extension PostgresLedger {
    /// Records, moves, revokes and summarizes as ``LedgerStore/ingest(_:)`` says, in one write
    /// transaction. A purchase already held for the same customer, with no revocation and no
    /// summary asked (a notification or a reconciliation about a known purchase), is answered
    /// from a read: owners never go back to unknown and rows are never deleted.
    public func ingest(_ change: LedgerIngest) async throws -> LedgerIngestOutcome {
        try LedgerRules.validate(change)
        let transaction = change.transaction
        if change.summary == nil, transaction.revocationDate == nil, let owner = transaction.appUserID,
            try await read({
                try await Self.perform(IngestStatements.owner(ofStored: transaction.transactionID), on: $0)
            }) == .known(owner)
        {
            return LedgerIngestOutcome(recorded: .duplicate(ownerAssigned: false))
        }
        return try await submit(for: transaction.appUserID ?? transaction.originalTransactionID, .ingest(change))
    }

    /// Applies consecutive ingests of one group, in order, on `connection`.
    ///
    /// The new rows of all of them are written by one statement (``RecordTransactions``), the
    /// credits of those recorded by it with one more (``CreditBalances``), their events with a
    /// third, in the order the ingests came, which also reads the summaries they ask for
    /// (``AppendEventsAndSummaries``): a group of new purchases takes three statements
    /// however many it holds. A change that meets a row already held (a duplicate, a
    /// purchase without an owner until now, another customer's purchase), or that revokes, runs
    /// its own statements after what came before it was written.
    static func ingest(_ changes: [LedgerIngest], on connection: PostgresConnection) async throws -> [LedgerIngestOutcome] {
        guard !changes.isEmpty else { return [] }
        var owners: [String?] = []
        for change in changes {
            owners.append(try await perform(IngestStatements.owner(of: change.transaction), on: connection))
        }
        // A transaction twice in the group is written by its first ingest.
        var listed = Set<String>()
        let written = changes.indices.filter { listed.insert(changes[$0].transaction.transactionID).inserted }
        let rows = written.map {
            let change = changes[$0]
            return TransactionRow(
                change.transaction, owner: owners[$0],
                signedDigest: change.transaction.signedTransaction.map { (change.signedDigest ?? SignedDigest($0)).bytes })
        }
        var recorded = try await Set(connection.rows(try RecordTransactions(rows)).map { try $0.decode(String.self) })
        var changed = PurchaseChanges()
        for (index, row) in zip(written, rows) where recorded.contains(row.transactionID) {
            changed.figures.record(FigureSource(row))
            if PurchaseMetricChanges.keptInWrite(productType: row.productType) {
                changed.metrics.replace(nil, with: row, signed: SignedMetricFields(changes[index].transaction))
            }
        }
        var writes = DeferredWrites()
        var outcomes: [LedgerIngestOutcome] = []
        var kept = Set<Int>()
        for (change, owner) in zip(changes, owners) {
            let transaction = change.transaction
            var outcome: LedgerIngestOutcome
            if recorded.remove(transaction.transactionID) != nil {
                outcome = LedgerIngestOutcome(recorded: .recorded)
                let now = ms(transaction.recordedAt)
                writes.append(
                    LedgerEventType.transactionRecorded, bundleID: transaction.bundleID, appUserID: owner,
                    payload: LedgerRules.recordedEvent(transaction, ownerAssigned: false), at: now)
                if let owner, transaction.revocationDate == nil {
                    try writes.credit(transaction, grants: change.grants, quantity: transaction.quantity, owner: owner, at: now)
                }
            } else {
                try await writes.flush(on: connection)
                let recorded: RecordOutcome
                (recorded, changed) = try await perform(
                    IngestStatements.held(transaction, owner: owner, grants: change.grants, changes: changed),
                    on: connection)
                outcome = LedgerIngestOutcome(recorded: recorded)
            }
            // A purchase another customer keeps: nothing else happens.
            if IngestStatements.keptByAnother(change, outcome) { kept.insert(outcomes.count) }
            // The events of moves and revocations come after those written before.
            if case .ownedByAnotherCustomer = outcome.recorded {
                try await writes.flush(on: connection)
            } else if transaction.revocationDate != nil {
                try await writes.flush(on: connection)
            }
            (outcome, changed) = try await perform(
                IngestStatements.afterRecord(change, outcome: outcome, changes: changed), on: connection)
            outcomes.append(outcome)
        }
        let events = try await writes.credit(on: connection)
        var summarized: [(index: Int, request: SummaryRequest)] = []
        for (index, change) in changes.enumerated() where !kept.contains(index) {
            guard let summary = change.summary, let owner = change.transaction.appUserID else { continue }
            summarized.append(
                (index, SummaryRequest(
                    bundleID: change.transaction.bundleID, appUserID: owner, recent: summary.recent,
                    withJWS: summary.withJWS)))
        }
        let summaries = try await summaries(summarized.map(\.request), on: connection, appending: events)
        try await apply(changed, on: connection)
        for (summarized, summary) in zip(summarized, summaries) {
            outcomes[summarized.index].summary = summary
        }
        return outcomes
    }

    // MARK: Spends

    /// The columns of `ledger_entries` that its statements write and read, in this order.
    static let entryColumns =
        "kind, bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key, shortfall, created_at"
}

/// The events and credits of a group's ingests, written together when something needs them in
/// the ledger (``flush(on:)``): the credits with one statement (``CreditBalances``), then the
/// events, in the order they were appended, with another (``AppendEvents``). A credit's
/// `balance.credited` event carries the balance after it.
struct DeferredWrites {
    private enum Event {
        case ready(type: String, bundleID: String, appUserID: String?, payload: String, purchase: String?, at: Int64)
        /// The event of the credit at this index of `credits`, when it was applied.
        case credited(Int)
    }

    private struct Credit {
        var transactionID: String
        var bundleID: String
        var owner: String
        var credit: CurrencyCredit
        var at: Int64

        var key: BalanceKey { BalanceKey(bundleID: bundleID, owner: owner, currency: credit.currency) }
    }

    private var events: [Event] = []
    private var credits: [Credit] = []

    mutating func append(_ type: String, bundleID: String, appUserID: String?, payload: some EventPayload, at now: Int64) {
        events.append(
            .ready(
                type: type, bundleID: bundleID, appUserID: appUserID, payload: payload.json,
                purchase: payload.changedPurchase, at: now))
    }

    /// Credits each currency the grants name (``LedgerRules/credits(of:grants:quantity:)``) once,
    /// under its idempotency key, with its `balance.credited` event.
    mutating func credit(
        _ transaction: RecordedTransaction, grants: [Grant], quantity: Int, owner: String, at now: Int64
    ) throws {
        for credit in try LedgerRules.credits(of: transaction, grants: grants, quantity: quantity) {
            credits.append(
                Credit(
                    transactionID: transaction.transactionID, bundleID: transaction.bundleID, owner: owner,
                    credit: credit, at: now))
            events.append(.credited(credits.count - 1))
        }
    }

    /// Writes what was appended, in the transaction open on `connection`, and starts empty again.
    mutating func flush(on connection: PostgresConnection) async throws {
        let events = try await credit(on: connection)
        if !events.types.isEmpty { _ = try await connection.rows(events) }
    }

    /// Writes the credits appended, in the transaction open on `connection`, and returns the
    /// events appended, for the caller to write; starts empty again.
    mutating func credit(on connection: PostgresConnection) async throws -> AppendEvents {
        defer { self = DeferredWrites() }
        var balances: [Int64?] = []
        if !credits.isEmpty {
            let statement = CreditBalances(
                bundleIDs: credits.map(\.bundleID), owners: credits.map(\.owner),
                currencies: credits.map(\.credit.currency), amounts: credits.map(\.credit.amount),
                transactionIDs: credits.map(\.transactionID), keys: credits.map(\.credit.idempotencyKey),
                times: credits.map(\.at))
            var applied = Set<String>()
            var final: [BalanceKey: Int64] = [:]
            for row in try await connection.rows(statement) {
                let (key, bundle, owner, currency, amount) = try row.decode((String?, String?, String?, String?, Int64?).self)
                if let key { applied.insert(key) }
                if let bundle, let owner, let currency, let amount {
                    final[BalanceKey(bundleID: bundle, owner: owner, currency: currency)] = amount
                }
            }
            // The balance before this group's credits, then after each, in order.
            var running = final
            for credit in credits where applied.contains(credit.credit.idempotencyKey) {
                running[credit.key, default: 0] -= credit.credit.amount
            }
            for credit in credits {
                guard applied.contains(credit.credit.idempotencyKey) else {
                    balances.append(nil)
                    continue
                }
                running[credit.key, default: 0] += credit.credit.amount
                balances.append(running[credit.key])
            }
        }
        var rows = AppendEvents()
        for event in events {
            switch event {
            case .ready(let type, let bundleID, let appUserID, let payload, let purchase, let at):
                rows.append(type, bundleID: bundleID, appUserID: appUserID, payload: payload, changing: purchase, at: at)
            case .credited(let index):
                let credit = credits[index]
                guard let balance = balances[index] else { continue }
                rows.append(
                    LedgerEventType.balanceCredited, bundleID: credit.bundleID, appUserID: credit.owner,
                    payload: credit.credit.event(transactionID: credit.transactionID, balance: balance).json,
                    changing: nil, at: credit.at)
            }
        }
        return rows
    }

    private struct BalanceKey: Hashable {
        var bundleID: String
        var owner: String
        var currency: String
    }
}

/// Inserts rows of `transactions`, each unless its transaction ID is held already (`ON CONFLICT
/// DO NOTHING`), and returns the IDs it inserted. The rows travel as one JSON array whose members'
/// keys are the columns (``TransactionRow``'s coding keys), read back as rows of the table by
/// `json_populate_recordset`; their signed JWS (a few kilobytes each) travel beside it as an array
/// of text, which PostgreSQL takes as it is rather than parsing it as JSON.
struct RecordTransactions: PostgresPreparedStatement {
    static let sql = """
        INSERT INTO transactions (\(TransactionRow.columns.joined(separator: ", ")))
        SELECT \(TransactionRow.columns.map { $0 == "signed_transaction" ? "NULLIF(signed.jws, '')" : "r." + $0 }
            .joined(separator: ", "))
        FROM json_populate_recordset(NULL::transactions, $1::JSON) WITH ORDINALITY AS r
        JOIN unnest($2::TEXT[]) WITH ORDINALITY AS signed(jws, n) ON signed.n = r.ordinality
        ON CONFLICT (transaction_id) DO NOTHING
        RETURNING transaction_id
        """
    typealias Row = PostgresRow

    var rows: String
    /// Each row's signed JWS, empty for none.
    var signed: [String]

    init(_ rows: [TransactionRow]) throws {
        signed = rows.map { $0.signedTransaction ?? "" }
        let objects = try rows.map { row in
            var row = row
            row.signedTransaction = nil
            let columns = RowColumns()
            try row.encode(to: columns)
            return columns.written.values
        }
        var output = JSONOutput(capacity: rows.count * 640)
        output.array(objects) { output, columns in
            output.object { output in
                for (column, value) in columns {
                    output.key(column)
                    switch value {
                    case .text(let text): output.string(text)
                    case .integer(let integer): output.integer(integer)
                    }
                }
            }
        }
        self.rows = String(decoding: output.bytes, as: UTF8.self)
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(rows)
        bindings.append(signed)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// A flat row's columns (text, integers, bytes) through its coding keys, as ``RecordTransactions``
/// writes them into JSON: bytes in `bytea`'s hexadecimal form, an absent value left out (read as
/// `NULL`). Cheaper than `JSONEncoder`, which builds a tree of boxed values for every row.
private struct RowColumns: Encoder {
    enum Value {
        case text(String)
        case integer(Int64)
    }

    final class Written {
        var values: [(String, Value)] = []
    }

    let written = Written()
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Columns(written: written))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { preconditionFailure("a row has columns only") }
    func singleValueContainer() -> any SingleValueEncodingContainer { preconditionFailure("a row has columns only") }

    struct Columns<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let written: Written
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) {}
        mutating func encode(_ value: String, forKey key: Key) { written.values.append((key.stringValue, .text(value))) }
        mutating func encode(_ value: Int64, forKey key: Key) { written.values.append((key.stringValue, .integer(value))) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            guard let bytes = value as? Data else {
                throw EncodingError.invalidValue(value, .init(codingPath: [key], debugDescription: "not a column type"))
            }
            written.values.append((key.stringValue, .text("\\x" + bytes.hexDigits)))
        }

        mutating func nestedContainer<Nested: CodingKey>(
            keyedBy keyType: Nested.Type, forKey key: Key
        ) -> KeyedEncodingContainer<Nested> { preconditionFailure("a row has columns only") }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            preconditionFailure("a row has columns only")
        }
        mutating func superEncoder() -> any Encoder { preconditionFailure("a row has columns only") }
        mutating func superEncoder(forKey key: Key) -> any Encoder { preconditionFailure("a row has columns only") }
    }
}

/// Writes credit lines, each unless its idempotency key was used (`ON CONFLICT DO NOTHING`), and
/// raises each balance they name by what was written to it. Returns the keys written (`key`),
/// and each balance raised (`bundle_id`, `app_user_id`, `currency`, `amount` after).
struct CreditBalances: PostgresPreparedStatement {
    static let sql = """
        WITH credit AS (
            SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::BIGINT[], $5::TEXT[], $6::TEXT[], $7::BIGINT[])
                WITH ORDINALITY AS c(bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key,
                    created_at, n)),
        written AS (
            INSERT INTO ledger_entries (\(PostgresLedger.entryColumns))
            SELECT 'credit', bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key, 0, created_at
            FROM credit ORDER BY n
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING bundle_id, app_user_id, currency, amount, idempotency_key),
        raised AS (
            INSERT INTO balances (bundle_id, app_user_id, currency, amount)
            SELECT bundle_id, app_user_id, currency, SUM(amount)::BIGINT FROM written
            GROUP BY bundle_id, app_user_id, currency
            ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
            RETURNING bundle_id, app_user_id, currency, amount)
        SELECT idempotency_key AS key, NULL AS bundle_id, NULL AS app_user_id, NULL AS currency, NULL::BIGINT AS amount
        FROM written
        UNION ALL
        SELECT NULL, bundle_id, app_user_id, currency, amount FROM raised
        """
    typealias Row = PostgresRow

    var bundleIDs: [String]
    var owners: [String]
    var currencies: [String]
    var amounts: [Int64]
    var transactionIDs: [String]
    var keys: [String]
    var times: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(bundleIDs)
        bindings.append(owners)
        bindings.append(currencies)
        bindings.append(amounts)
        bindings.append(transactionIDs)
        bindings.append(keys)
        bindings.append(times)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// Appends outbox events, in the order given (their IDs increase in that order), and marks the
/// purchases they change for the metrics job (`metric_pending`, in key order). An event about
/// no customer has an empty `app_user_id`, stored as `NULL`; one that changes no purchase, an
/// empty purchase.
struct AppendEvents: PostgresPreparedStatement {
    /// The insert of the events.
    static let insert = """
        INSERT INTO events (type, bundle_id, app_user_id, payload, created_at)
        SELECT type, bundle_id, NULLIF(app_user_id, ''), payload, created_at
        FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[])
            WITH ORDINALITY AS e(type, bundle_id, app_user_id, payload, created_at, n)
        ORDER BY n
        """
    /// The insert of the marks, as a common table expression's body.
    static let mark = """
        INSERT INTO metric_pending (bundle_id, original_transaction_id)
        SELECT DISTINCT bundle_id, purchase FROM unnest($2::TEXT[], $6::TEXT[]) AS m(bundle_id, purchase)
        WHERE purchase <> '' ORDER BY bundle_id, purchase
        \(MetricStatements.markConflict)
        """
    static let sql = "WITH marked AS (\(mark))\n\(insert)"
    /// How many values the statement binds.
    static let bindingCount = 6
    typealias Row = PostgresRow

    var types: [String] = []
    var bundleIDs: [String] = []
    var appUserIDs: [String] = []
    var payloads: [String] = []
    var times: [Int64] = []
    var purchases: [String] = []

    mutating func append(
        _ type: String, bundleID: String, appUserID: String?, payload: String, changing purchase: String?, at now: Int64
    ) {
        types.append(type)
        bundleIDs.append(bundleID)
        appUserIDs.append(appUserID.map { CustomerIDRedaction.redacted($0) } ?? "")
        payloads.append(payload)
        times.append(now)
        purchases.append(purchase ?? "")
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: Self.bindingCount)
        bindings.append(types)
        bindings.append(bundleIDs)
        bindings.append(appUserIDs)
        bindings.append(payloads)
        bindings.append(times)
        bindings.append(purchases)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
