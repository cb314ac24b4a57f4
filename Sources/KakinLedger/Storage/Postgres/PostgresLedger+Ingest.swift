public import Foundation
import KakinWire
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
            try await read({ try await Self.storedOwner(of: transaction.transactionID, on: $0) }) == .known(owner)
        {
            return LedgerIngestOutcome(recorded: .duplicate(ownerAssigned: false))
        }
        let digest = transaction.signedTransaction.map { (change.signedDigest ?? SignedDigest($0)).bytes }
        return try await write(for: transaction.appUserID ?? transaction.originalTransactionID) { connection in
            var outcome = LedgerIngestOutcome(
                recorded: try await Self.record(transaction, digest: digest, grants: change.grants, on: connection))
            // A purchase another customer keeps: nothing else happens.
            if case .ownedByAnotherCustomer(let owner) = outcome.recorded {
                guard change.transfersOwnership, let newOwner = transaction.appUserID else { return outcome }
                let moved = try await Self.transfer(
                    bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID,
                    from: owner, to: newOwner, at: ms(transaction.recordedAt), on: connection)
                if moved > 0 { outcome.transferredFrom = owner }
            }
            if outcome.recorded == .recorded, let request = change.appleRequestOnRecord {
                _ = try await Self.insert(request, on: connection)
            }
            if outcome.transferredFrom != nil, let request = change.appleRequestOnTransfer {
                _ = try await Self.insert(request, on: connection)
            }
            if let revoked = transaction.revocationDate {
                outcome.revoked = try await Self.revoke(
                    transaction.transactionID, at: ms(revoked),
                    reason: transaction.revocationReason?.rawValue, share: transaction.revokedShare,
                    policy: change.clawbackPolicy, on: connection)
            }
            if let summary = change.summary, let owner = transaction.appUserID {
                outcome.summary = try await Self.summary(
                    bundleID: transaction.bundleID, appUserID: owner, recent: summary.recent,
                    withJWS: summary.withJWS, on: connection)
            }
            return outcome
        }
    }

    /// Records a transaction once: the row and its `transaction.recorded` event in one statement
    /// (`ON CONFLICT (transaction_id) DO NOTHING`), then its credits when it has an owner and no
    /// revocation. Without an owner, the owner of the earliest transaction of the same purchase
    /// is taken. A transaction held already gets an owner only where it had none
    /// (`UPDATE … WHERE app_user_id IS NULL`), and its credits then.
    private static func record(
        _ transaction: RecordedTransaction, digest: Data?, grants: [Grant], on connection: PostgresConnection
    ) async throws -> RecordOutcome {
        let now = ms(transaction.recordedAt)
        var owner = transaction.appUserID
        if owner == nil {
            owner = try await connection.rows(
                """
                SELECT app_user_id FROM transactions
                WHERE bundle_id = \(transaction.bundleID)
                  AND original_transaction_id = \(transaction.originalTransactionID) AND app_user_id IS NOT NULL
                ORDER BY purchase_date, recorded_at, transaction_id LIMIT 1
                """
            ).first?.decode(String.self)
        }
        // The row's values in the order of its columns, as it encodes them (its coding keys).
        let encoded = ColumnEncoder()
        try TransactionRow(transaction, owner: owner, signedDigest: digest).encode(to: encoded)
        var values = PostgresBindings()
        for column in TransactionRow.columns {
            if let value = encoded.values[column] { try values.append(value) } else { values.appendNull() }
        }
        let placeholders = (1...values.count).map { "$\($0)" }.joined(separator: ", ")
        let event = LedgerRules.recordedEvent(transaction, ownerAssigned: false)
        values.append(LedgerEventType.transactionRecorded)
        values.append(event.json)
        let (type, payload) = (values.count - 1, values.count)
        let inserted = try await connection.rows(
            PostgresQuery(
                unsafeSQL: """
                    WITH recorded AS (
                        INSERT INTO transactions (\(TransactionRow.columns.joined(separator: ", ")))
                        VALUES (\(placeholders))
                        ON CONFLICT (transaction_id) DO NOTHING
                        RETURNING bundle_id, app_user_id, recorded_at),
                    event AS (
                        INSERT INTO events (type, bundle_id, app_user_id, payload, created_at)
                        SELECT $\(type), bundle_id, app_user_id, $\(payload), recorded_at FROM recorded)
                    SELECT 1 FROM recorded
                    """, binds: values))
        if !inserted.isEmpty {
            if let owner, transaction.revocationDate == nil {
                try await credit(
                    transaction, grants: grants, quantity: transaction.quantity, owner: owner, at: now, on: connection)
            }
            return .recorded
        }
        switch try await storedOwner(of: transaction.transactionID, on: connection) {
        case .missing: throw LedgerStoreError(.inconsistentState, "transaction \(transaction.transactionID) vanished")
        case .known(let stored): return LedgerRules.outcome(storedOwner: stored, claimedBy: transaction.appUserID)
        case .unknown: break
        }
        guard let owner else { return .duplicate(ownerAssigned: false) }
        let assigned = try await connection.rows(
            """
            UPDATE transactions SET app_user_id = \(owner)
            WHERE transaction_id = \(transaction.transactionID) AND app_user_id IS NULL
            RETURNING quantity, revocation_date
            """)
        guard let assigned = assigned.first else {
            // Another writer assigned an owner between the read and the update: its owner stands.
            guard case .known(let stored) = try await storedOwner(of: transaction.transactionID, on: connection) else {
                throw LedgerStoreError(.inconsistentState, "transaction \(transaction.transactionID) lost its owner")
            }
            return LedgerRules.outcome(storedOwner: stored, claimedBy: transaction.appUserID)
        }
        let (quantity, storedRevocation) = try assigned.decode((Int, Int64?).self)
        try await appendEvent(
            LedgerEventType.transactionRecorded, bundleID: transaction.bundleID, appUserID: owner,
            payload: LedgerRules.recordedEvent(transaction, ownerAssigned: true), at: now, on: connection)
        if storedRevocation == nil, transaction.revocationDate == nil {
            try await credit(transaction, grants: grants, quantity: quantity, owner: owner, at: now, on: connection)
        }
        return .duplicate(ownerAssigned: true)
    }

    /// Who owns a recorded transaction, as far as the ledger knows.
    enum StoredOwner: Equatable, Sendable {
        case missing
        case unknown
        case known(String)
    }

    static func storedOwner(of transactionID: String, on connection: PostgresConnection) async throws -> StoredOwner {
        guard
            let row = try await connection.rows(
                "SELECT app_user_id FROM transactions WHERE transaction_id = \(transactionID)"
            ).first
        else { return .missing }
        return try row.decode(String?.self).map(StoredOwner.known) ?? .unknown
    }

    /// Credits each currency the grants name (``LedgerRules/credits(of:grants:quantity:)``) once:
    /// the ledger line and the balance it raises in one statement, which returns no row when the
    /// line's key was used already; then the `balance.credited` event with the new balance.
    private static func credit(
        _ transaction: RecordedTransaction, grants: [Grant], quantity: Int, owner: String, at now: Int64,
        on connection: PostgresConnection
    ) async throws {
        for credit in try LedgerRules.credits(of: transaction, grants: grants, quantity: quantity) {
            let raised = try await connection.rows(
                """
                WITH credit AS (
                    INSERT INTO ledger_entries (\(unescaped: Self.entryColumns))
                    VALUES ('credit', \(transaction.bundleID), \(owner), \(credit.currency), \(credit.amount),
                        \(transaction.transactionID), \(credit.idempotencyKey), 0, \(now))
                    ON CONFLICT (idempotency_key) DO NOTHING
                    RETURNING bundle_id, app_user_id, currency, amount)
                INSERT INTO balances (bundle_id, app_user_id, currency, amount)
                SELECT bundle_id, app_user_id, currency, amount FROM credit
                ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
                RETURNING amount
                """)
            guard let balance = try raised.first?.decode(Int64.self) else { continue }
            try await appendEvent(
                LedgerEventType.balanceCredited, bundleID: transaction.bundleID, appUserID: owner,
                payload: credit.event(transactionID: transaction.transactionID, balance: balance), at: now,
                on: connection)
        }
    }

    /// Appends an outbox event in the transaction open on `connection`.
    static func appendEvent(
        _ type: String, bundleID: String, appUserID: String?, payload: some EventPayload, at now: Int64,
        on connection: PostgresConnection
    ) async throws {
        _ = try await connection.rows(
            """
            INSERT INTO events (type, bundle_id, app_user_id, payload, created_at)
            VALUES (\(type), \(bundleID), \(appUserID), \(payload.json), \(now))
            """)
    }

    // MARK: Revocations

    /// Marks a transaction revoked and takes back `share` of its credits, once per share: the
    /// update applies only when the share already revoked (0 when none, the whole for a revocation
    /// stored without a percentage) is smaller. For each credit line, what is taken back is its
    /// share less what earlier revocations asked for (``LedgerRules/creditShare(_:share:)``).
    private static func revoke(
        _ transactionID: String, at now: Int64, reason: Int?, share: Int, policy: ClawbackPolicy,
        on connection: PostgresConnection
    ) async throws -> Bool {
        let whole = RecordedTransaction.wholeShare
        let storedShare = share == whole ? nil : Int64(share)
        guard
            let row = try await connection.rows(
                """
                UPDATE transactions SET revocation_date = \(now), revocation_reason = \(reason.map(Int64.init)),
                    revocation_percentage = \(storedShare)
                WHERE transaction_id = \(transactionID)
                  AND COALESCE(revocation_percentage, CASE WHEN revocation_date IS NULL THEN 0 ELSE \(Int64(whole)) END)
                      < \(Int64(share))
                RETURNING bundle_id, app_user_id, original_transaction_id, product_id
                """
            ).first
        else { return false }
        let (bundleID, owner, original, product) = try row.decode((String, String?, String, String).self)
        try await appendEvent(
            LedgerEventType.transactionRevoked, bundleID: bundleID, appUserID: owner,
            payload: TransactionEventPayload(
                transactionId: transactionID, originalTransactionId: original, productId: product,
                revocationDate: now, revocationReason: reason, revocationPercentage: share),
            at: now, on: connection)
        let credits = try await connection.rows(
            """
            SELECT credit.bundle_id, credit.app_user_id, credit.currency, credit.amount,
                (SELECT COALESCE(SUM(shortfall - amount), 0)::BIGINT FROM ledger_entries taken
                 WHERE taken.transaction_id = credit.transaction_id AND taken.kind = 'clawback'
                   AND taken.currency = credit.currency)
            FROM ledger_entries credit WHERE credit.transaction_id = \(transactionID) AND credit.kind = 'credit'
            ORDER BY credit.id
            """)
        for credit in credits {
            let (bundleID, owner, currency, credited, asked) = try credit.decode(
                (String, String, String, Int64, Int64).self)
            let amount = LedgerRules.creditShare(credited, share: share) - asked
            guard amount > 0 else { continue }
            // Everything, or (clampAtZero) what the balance still holds, read locked.
            let clamp = policy == .clampAtZero
            guard
                let lowered = try await connection.rows(
                    """
                    WITH current AS (
                        SELECT amount FROM balances
                        WHERE bundle_id = \(bundleID) AND app_user_id = \(owner) AND currency = \(currency) FOR UPDATE),
                    taking AS (
                        SELECT CASE WHEN \(clamp) THEN LEAST(\(amount), GREATEST(amount, 0)) ELSE \(amount) END AS taken
                        FROM current)
                    UPDATE balances SET amount = balances.amount - taking.taken FROM taking
                    WHERE bundle_id = \(bundleID) AND app_user_id = \(owner) AND currency = \(currency)
                    RETURNING taking.taken, balances.amount
                    """
                ).first
            else {
                throw LedgerStoreError(.inconsistentState, "no \(currency) balance for a credit of \(transactionID)")
            }
            let (taken, balance) = try lowered.decode((Int64, Int64).self)
            let key = LedgerRules.clawbackKey(transactionID: transactionID, currency: currency, share: share)
            let entry = try await connection.rows(
                """
                INSERT INTO ledger_entries (\(unescaped: Self.entryColumns))
                VALUES ('clawback', \(bundleID), \(owner), \(currency), \(-taken), \(transactionID), \(key),
                    \(amount - taken), \(now))
                ON CONFLICT (idempotency_key) DO NOTHING RETURNING id
                """)
            // The revocation's guard makes this unreachable; throwing rolls the balance back.
            guard !entry.isEmpty else { throw LedgerStoreError(.inconsistentState, "\(key) was already applied") }
            try await appendEvent(
                LedgerEventType.balanceClawedBack, bundleID: bundleID, appUserID: owner,
                payload: BalanceEventPayload(
                    currency: currency, amount: -taken, balance: balance, idempotencyKey: key,
                    transactionId: transactionID, shortfall: amount - taken),
                at: now, on: connection)
        }
        return true
    }

    // MARK: Moves

    /// Moves a purchase (every transaction of the app with `originalTransactionID`) still owned by
    /// `from` to `to`, with a `transaction.transferred` event; how many transactions moved.
    /// Currency already credited stays with whoever it was credited to.
    private static func transfer(
        bundleID: String, originalTransactionID: String, from: String, to: String, at now: Int64,
        on connection: PostgresConnection
    ) async throws -> Int {
        guard from != to else { return 0 }
        let moved = try await connection.rows(
            """
            UPDATE transactions SET app_user_id = \(to)
            WHERE bundle_id = \(bundleID) AND original_transaction_id = \(originalTransactionID)
              AND app_user_id = \(from)
            RETURNING transaction_id
            """
        ).map { try $0.decode(String.self) }
        guard !moved.isEmpty else { return 0 }
        try await appendEvent(
            LedgerEventType.transactionTransferred, bundleID: bundleID, appUserID: to,
            payload: TransferEventPayload(
                originalTransactionId: originalTransactionID, from: from, to: to, transactionIds: moved.sorted()),
            at: now, on: connection)
        return moved.count
    }

    /// Makes `anonymousID` an alias of `appUserID` and moves the anonymous customer's purchases,
    /// ledger lines, balances (added to the identified customer's) and app downloads, with a
    /// `customer.aliased` event when anything changed. Purchases another identified customer holds
    /// part of move from them only when `transfersOwnership`.
    public func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at date: Date
    ) async throws -> CustomerAliasOutcome {
        guard AnonymousAppUserID.isAnonymous(anonymousID) else {
            throw LedgerStoreError(.invalidArgument, "\(anonymousID) is not an anonymous customer")
        }
        guard !appUserID.isEmpty, !AnonymousAppUserID.isAnonymous(appUserID) else {
            throw LedgerStoreError(.invalidArgument, "an alias names an identified customer, not '\(appUserID)'")
        }
        let now = ms(date)
        return try await write(for: appUserID) { connection in
            let inserted = try await connection.rows(
                """
                INSERT INTO customer_aliases (bundle_id, alias, app_user_id, created_at)
                VALUES (\(bundleID), \(anonymousID), \(appUserID), \(now))
                ON CONFLICT (bundle_id, alias) DO NOTHING RETURNING app_user_id
                """)
            if inserted.isEmpty {
                let target = try await connection.rows(
                    "SELECT app_user_id FROM customer_aliases WHERE bundle_id = \(bundleID) AND alias = \(anonymousID)"
                ).first?.decode(String.self)
                guard let target else {
                    throw LedgerStoreError(.inconsistentState, "the alias of \(anonymousID) vanished")
                }
                guard target == appUserID else { return .aliasedToAnotherCustomer(target) }
            }
            var move = CustomerAliasMove(created: !inserted.isEmpty)
            let shared = try await connection.rows(
                """
                SELECT DISTINCT other.original_transaction_id, other.app_user_id
                FROM transactions other
                JOIN transactions own
                  ON own.original_transaction_id = other.original_transaction_id AND own.bundle_id = other.bundle_id
                WHERE other.bundle_id = \(bundleID) AND own.app_user_id = \(anonymousID)
                  AND other.app_user_id IS NOT NULL AND other.app_user_id <> own.app_user_id
                  AND other.app_user_id <> \(appUserID)
                """
            ).map { try $0.decode((String, String).self) }.sorted { $0 < $1 }
            for (original, owner) in shared {
                if !transfersOwnership {
                    move.keptPurchases.append(original)
                } else if try await Self.transfer(
                    bundleID: bundleID, originalTransactionID: original, from: owner, to: appUserID, at: now,
                    on: connection) > 0
                {
                    move.transferredPurchases.append(original)
                }
            }
            move.transactionIDs = try await connection.rows(
                """
                UPDATE transactions SET app_user_id = \(appUserID)
                WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID)
                RETURNING transaction_id
                """
            ).map { try $0.decode(String.self) }.sorted()
            for row in try await connection.rows(
                """
                DELETE FROM balances WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID)
                RETURNING currency, amount
                """
            ) {
                let (currency, amount) = try row.decode((String, Int64).self)
                move.balances[currency] = amount
                _ = try await connection.rows(
                    """
                    INSERT INTO balances (bundle_id, app_user_id, currency, amount)
                    VALUES (\(bundleID), \(appUserID), \(currency), \(amount))
                    ON CONFLICT (bundle_id, app_user_id, currency)
                    DO UPDATE SET amount = balances.amount + excluded.amount
                    """)
            }
            for table in ["ledger_entries", "app_transactions"] {
                _ = try await connection.rows(
                    """
                    UPDATE \(unescaped: table) SET app_user_id = \(appUserID)
                    WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID)
                    """)
            }
            if move.changedAnything {
                try await Self.appendEvent(
                    LedgerEventType.customerAliased, bundleID: bundleID, appUserID: appUserID,
                    payload: AliasEventPayload(alias: anonymousID, appUserId: appUserID, move: move), at: now,
                    on: connection)
            }
            return CustomerAliasOutcome.aliased(move)
        }
    }

    // MARK: Spends

    /// Spends currency: the ledger line under the key `spend:<idempotencyKey>` first (`ON
    /// CONFLICT DO NOTHING`: a retry finds the same spend, or a reuse is refused), then `UPDATE
    /// balances … WHERE amount >= $1`; when the balance does not cover it, the job is rolled back,
    /// line included, and the key stays free.
    public func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String, at date: Date
    ) async throws -> SpendOutcome {
        guard amount > 0 else { throw LedgerStoreError(.invalidArgument, "a spend amount must be positive") }
        guard !idempotencyKey.isEmpty else {
            throw LedgerStoreError(.invalidArgument, "a spend needs an idempotency key")
        }
        let key = "spend:\(idempotencyKey)"
        let now = ms(date)
        let balance: PostgresQuery =
            """
            SELECT amount FROM balances WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID)
              AND currency = \(currency)
            """
        do {
            return try await write(for: appUserID) { connection -> SpendOutcome in
                let entry = try await connection.rows(
                    """
                    INSERT INTO ledger_entries (\(unescaped: Self.entryColumns))
                    VALUES ('spend', \(bundleID), \(appUserID), \(currency), \(-amount), NULL, \(key), 0, \(now))
                    ON CONFLICT (idempotency_key) DO NOTHING RETURNING id
                    """)
                guard !entry.isEmpty else {
                    let earlier = try await connection.rows(
                        """
                        SELECT kind, bundle_id, app_user_id, currency, amount FROM ledger_entries
                        WHERE idempotency_key = \(key)
                        """
                    ).first?.decode((String, String, String, String, Int64).self)
                    guard let earlier, earlier == ("spend", bundleID, appUserID, currency, -amount) else {
                        throw LedgerStoreError(.idempotencyKeyReused, "the key '\(key)' was used for another spend")
                    }
                    return .alreadySpent(balance: try await connection.rows(balance).first?.decode(Int64.self) ?? 0)
                }
                let updated = try await connection.rows(
                    """
                    UPDATE balances SET amount = amount - \(amount)
                    WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID) AND currency = \(currency)
                      AND amount >= \(amount)
                    RETURNING amount
                    """)
                guard let left = try updated.first?.decode(Int64.self) else {
                    throw InsufficientBalance(
                        balance: try await connection.rows(balance).first?.decode(Int64.self) ?? 0)
                }
                try await Self.appendEvent(
                    LedgerEventType.balanceSpent, bundleID: bundleID, appUserID: appUserID,
                    payload: BalanceEventPayload(
                        currency: currency, amount: -amount, balance: left, idempotencyKey: key),
                    at: now, on: connection)
                return .spent(balance: left)
            }
        } catch let refused as InsufficientBalance {
            return .insufficientBalance(balance: refused.balance)
        }
    }

    /// The columns of `ledger_entries` that its statements write and read, in this order.
    static let entryColumns =
        "kind, bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key, shortfall, created_at"

    /// Thrown inside a spend's job to roll it back when the balance does not cover it.
    private struct InsufficientBalance: Error {
        let balance: Int64
    }
}

/// Collects what a type whose coding keys are column names (``TransactionRow``) encodes, by
/// column; a `nil` property encodes nothing, and its column is bound as `NULL`.
private final class ColumnEncoder: Encoder {
    var values: [String: any PostgresThrowingDynamicTypeEncodable] = [:]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Columns(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { preconditionFailure("a row has columns only") }
    func singleValueContainer() -> any SingleValueEncodingContainer { preconditionFailure("a row has columns only") }

    struct Columns<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ColumnEncoder
        var codingPath: [any CodingKey] { [] }

        func encodeNil(forKey key: Key) throws {}

        func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            guard let value = value as? any PostgresThrowingDynamicTypeEncodable else {
                throw EncodingError.invalidValue(value, .init(codingPath: [key], debugDescription: "not a column type"))
            }
            encoder.values[key.stringValue] = value
        }

        func nestedContainer<Nested: CodingKey>(
            keyedBy type: Nested.Type, forKey key: Key
        ) -> KeyedEncodingContainer<Nested> { preconditionFailure("a row has columns only") }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            preconditionFailure("a row has columns only")
        }
        func superEncoder() -> any Encoder { preconditionFailure("a row has columns only") }
        func superEncoder(forKey key: Key) -> any Encoder { preconditionFailure("a row has columns only") }
    }
}
