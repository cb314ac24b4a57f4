import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Records a transaction and credits its currency grants, in one database transaction.
    ///
    /// The row is inserted with `ON CONFLICT (transaction_id) DO NOTHING`: whoever inserts first
    /// wins, and `RETURNING` tells each caller whether it was them. A known row without owner gets
    /// one with `UPDATE … WHERE app_user_id IS NULL`, so only one caller assigns it and credits.
    /// Credits are ledger lines under the unique key `grant:<transactionId>:<currency>`.
    public func record(_ transaction: RecordedTransaction, grants: [Grant]) async throws -> RecordOutcome {
        let unitCredits = try Self.unitCredits(grants, quantity: transaction.quantity)
        // A purchase the ledger already holds for this very customer changes nothing: answered
        // from a read, without waiting for the writer. Owners never go back to unknown and rows
        // are never deleted, so what the read saw is still true when the caller acts on it.
        if let owner = transaction.appUserID,
            case .known(let stored)? = try await readingStatement({ db in
                try await Self.storedOwner(of: transaction.transactionID, on: db)
            }), stored == owner
        {
            return .duplicate(ownerAssigned: false)
        }
        let digest = LedgerRows.signedDigest(transaction.signedTransaction)
        let signedDigests = self.signedDigests
        return try await writing(for: transaction.appUserID ?? transaction.originalTransactionID) { db in
            try await Self.record(
                transaction, digest: digest, unitCredits: unitCredits, noting: signedDigests, on: db)
        }
    }

    /// Records, transfers, revokes and summarizes in one write transaction.
    ///
    /// The summary is read on the writer's connection, which has every page it needs cached,
    /// where a reader would start cold after each commit. An upload that asks for a summary is
    /// almost always new (the server answers the same signed bytes again before it gets here), so
    /// it goes to the writer at once; a transaction without a summary or a revocation, already held
    /// for the same customer (a notification or a reconciliation about a known purchase), is
    /// answered from a read without waiting for the writer.
    public func ingest(_ change: LedgerIngest) async throws -> LedgerIngestOutcome {
        let transaction = change.transaction
        let unitCredits = try Self.unitCredits(change.grants, quantity: transaction.quantity)
        if let summary = change.summary, summary.recent < 0 {
            throw LedgerStoreError(.invalidArgument, "recent must not be negative")
        }
        let share = transaction.revokedShare
        if transaction.revocationDate != nil, !(1...RecordedTransaction.wholeShare).contains(share) {
            throw LedgerStoreError(
                .invalidArgument,
                "a revoked share is 1 to \(RecordedTransaction.wholeShare) milliunits of a percent, not \(share)")
        }
        if change.summary == nil, transaction.revocationDate == nil, let owner = transaction.appUserID,
            case .known(let stored)? = try await readingStatement({ db in
                try await Self.storedOwner(of: transaction.transactionID, on: db)
            }), stored == owner
        {
            return LedgerIngestOutcome(recorded: .duplicate(ownerAssigned: false))
        }
        let digest: Data? =
            transaction.signedTransaction == nil
            ? nil : change.signedDigest?.bytes ?? LedgerRows.signedDigest(transaction.signedTransaction)
        let signedDigests = self.signedDigests
        // A purchase that owes Apple a call runs its body, which writes the call with it.
        let batchItem = change.appleRequestOnRecord != nil ? nil : change.summary.map { summary in
            RecordBatchItem(
                transaction: transaction, digest: digest, unitCredits: unitCredits, recent: summary.recent,
                withJWS: summary.withJWS)
        }
        return try await writing(for: transaction.appUserID ?? transaction.originalTransactionID, batchItem: batchItem) {
            db in
            var outcome = LedgerIngestOutcome(
                recorded: try await Self.record(
                    transaction, digest: digest, unitCredits: unitCredits, noting: signedDigests, on: db))
            if case .ownedByAnotherCustomer(let owner) = outcome.recorded {
                guard change.transfersOwnership, let newOwner = transaction.appUserID else { return outcome }
                let moved = try await Self.transfer(
                    bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID,
                    from: owner, to: newOwner, at: LedgerTime.milliseconds(transaction.recordedAt), on: db)
                if moved > 0 { outcome.transferredFrom = owner }
            }
            if case .recorded = outcome.recorded, let request = change.appleRequestOnRecord {
                _ = try await Self.insert(request, on: db)
            }
            if outcome.transferredFrom != nil, let request = change.appleRequestOnTransfer {
                _ = try await Self.insert(request, on: db)
            }
            if let revoked = transaction.revocationDate {
                outcome.revoked = try await Self.revoke(
                    transactionID: transaction.transactionID, at: revoked,
                    reason: transaction.revocationReason?.rawValue, share: share, policy: change.clawbackPolicy, on: db)
            }
            if let summary = change.summary, let owner = transaction.appUserID {
                outcome.summary = try await Self.summary(
                    bundleID: transaction.bundleID, appUserID: owner, recent: summary.recent,
                    withJWS: summary.withJWS, on: db)
            }
            return outcome
        }
    }

    /// ``unitCredits(_:)`` once the quantity is known to be valid.
    static func unitCredits(
        _ grants: [Grant], quantity: Int
    ) throws -> [(currency: String, amount: Int64)] {
        guard quantity > 0 else {
            throw LedgerStoreError(.invalidArgument, "quantity must be at least 1, not \(quantity)")
        }
        return try unitCredits(grants)
    }

    /// Currency per unit bought, one entry per currency (the same currency listed twice adds up),
    /// sorted so credits are always written in the same order.
    static func unitCredits(_ grants: [Grant]) throws -> [(currency: String, amount: Int64)] {
        var byCurrency: [String: Int64] = [:]
        for case .currency(let currency, let amount) in grants {
            guard !currency.isEmpty, amount >= 0 else {
                throw LedgerStoreError(.invalidArgument, "a currency grant needs a name and a non-negative amount")
            }
            let (sum, overflow) = byCurrency[currency, default: 0].addingReportingOverflow(amount)
            guard !overflow else { throw LedgerStoreError(.invalidArgument, "the grants of \(currency) overflow") }
            byCurrency[currency] = sum
        }
        return byCurrency.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// `digest` is the SHA-256 of the signed JWS (``LedgerRows/signedDigest(_:)``), hashed
    /// before the writer's turn so that the writer does not spend its time on it; it joins
    /// `digests` when the row is written.
    private static func record(
        _ transaction: RecordedTransaction, digest: Data?, unitCredits: [(currency: String, amount: Int64)],
        noting digests: SignedDigestSet?, on db: any SQLDatabase
    ) async throws -> RecordOutcome {
        let now = LedgerTime.milliseconds(transaction.recordedAt)
        var owner = transaction.appUserID
        if owner == nil {
            owner = try await inheritedOwner(of: transaction, on: db)
        }

        let row: [LedgerValue] = [
            .text(transaction.transactionID),
            .text(transaction.originalTransactionID), .text(transaction.bundleID), .text(owner),
            .text(transaction.productID), .text(transaction.productType.rawValue), .integer(transaction.quantity),
            .integer(LedgerTime.milliseconds(transaction.purchaseDate)),
            .integer(transaction.expiresDate.map(LedgerTime.milliseconds)),
            .integer(transaction.revocationDate.map(LedgerTime.milliseconds)),
            .integer(transaction.revocationReason?.rawValue), .text(transaction.environment.rawValue),
            .text(transaction.appAccountToken), .text(transaction.signedTransaction),
            .text(transaction.source.rawValue), .integer(now), .text(transaction.periodType?.rawValue), .blob(digest),
        ]

        // On PostgreSQL a purchase with an owner and one currency to credit is recorded, credited
        // and its balance raised in one statement (one round trip); the events follow as usual.
        if LedgerSQLDialect(db.dialect) == .postgresql, let owner, transaction.revocationDate == nil,
            unitCredits.count == 1, let (currency, unit) = unitCredits.first
        {
            let credit = try GrantCredit(
                currency: currency, unit: unit, quantity: transaction.quantity, of: transaction, owner: owner, at: now)
            let result = try await db.run(.recordAndCredit, values: row + credit.values).first
            if try result?.decode(column: "inserted", as: Int.self) == 1 {
                try await appendRecordedEvent(transaction, owner: owner, ownerAssigned: false, at: now, on: db)
                if let balance = try result?.optional("balance", as: Int64.self) {
                    try await credit.appendEvent(balance: balance, on: db)
                }
                return .recorded
            }
            return try await recordSeenBefore(transaction, owner: owner, unitCredits: unitCredits, at: now, on: db)
        }

        let inserted = try await db.wrote(.insertTransaction, values: row)
        if inserted {
            if let digest { digests?.insert(digest) }
            try await appendRecordedEvent(transaction, owner: owner, ownerAssigned: false, at: now, on: db)
            if let owner, transaction.revocationDate == nil {
                try await credit(
                    unitCredits, quantity: transaction.quantity, transaction: transaction, owner: owner, at: now,
                    on: db)
            }
            return .recorded
        }
        return try await recordSeenBefore(transaction, owner: owner, unitCredits: unitCredits, at: now, on: db)
    }

    /// A transaction the ledger already holds: the first record wins, only a missing owner can
    /// still be filled in (and its grants credited then).
    private static func recordSeenBefore(
        _ transaction: RecordedTransaction, owner: String?, unitCredits: [(currency: String, amount: Int64)],
        at now: Int64, on db: any SQLDatabase
    ) async throws -> RecordOutcome {
        switch try await storedOwner(of: transaction.transactionID, on: db) {
        case .missing:
            throw LedgerStoreError(.inconsistentState, "transaction \(transaction.transactionID) vanished")
        case .known(let storedOwner):
            return outcomeForOwned(by: storedOwner, claimedBy: transaction.appUserID)
        case .unknown:
            break
        }
        guard let owner else { return .duplicate(ownerAssigned: false) }

        let assigned = try await db.first(.assignOwner, .text(owner), .text(transaction.transactionID))
        guard let assigned else {
            // Another writer assigned an owner between the read and the update (PostgreSQL's
            // READ COMMITTED allows it): its owner stands.
            guard case .known(let storedOwner) = try await storedOwner(of: transaction.transactionID, on: db) else {
                throw LedgerStoreError(.inconsistentState, "transaction \(transaction.transactionID) lost its owner")
            }
            return outcomeForOwned(by: storedOwner, claimedBy: transaction.appUserID)
        }
        let storedRevoked = try !assigned.decodeNil(column: "revocation_date")
        try await appendRecordedEvent(transaction, owner: owner, ownerAssigned: true, at: now, on: db)
        if !storedRevoked && transaction.revocationDate == nil {
            let quantity = try assigned.decode(column: "quantity", as: Int.self)
            try await credit(unitCredits, quantity: quantity, transaction: transaction, owner: owner, at: now, on: db)
        }
        return .duplicate(ownerAssigned: true)
    }

    private static func outcomeForOwned(by storedOwner: String, claimedBy claimed: String?) -> RecordOutcome {
        if let claimed, claimed != storedOwner {
            return .ownedByAnotherCustomer(storedOwner)
        }
        return .duplicate(ownerAssigned: false)
    }

    /// The owner of the earliest transaction of the same purchase (same app, same
    /// `originalTransactionId`) whose owner is known.
    private static func inheritedOwner(
        of transaction: RecordedTransaction, on db: any SQLDatabase
    ) async throws -> String? {
        try await db.first(
            .inheritedOwner, .text(transaction.bundleID), .text(transaction.originalTransactionID)
        )?.decode(column: "app_user_id", as: String.self)
    }

    /// Who owns a recorded transaction, as far as the ledger knows.
    enum StoredOwner: Sendable {
        case missing
        case unknown
        case known(String)
    }

    static func storedOwner(of transactionID: String, on db: any SQLDatabase) async throws -> StoredOwner {
        guard
            let row = try await db.first(.storedOwner, .text(transactionID))
        else { return .missing }
        return try row.optional("app_user_id", as: String.self).map(StoredOwner.known) ?? .unknown
    }

    static func appendRecordedEvent(
        _ transaction: RecordedTransaction, owner: String?, ownerAssigned: Bool, at now: Int64, on db: any SQLDatabase
    ) async throws {
        try await appendEvent(
            LedgerEventType.transactionRecorded, bundleID: transaction.bundleID, appUserID: owner,
            payload: recordedEventPayload(transaction, ownerAssigned: ownerAssigned), at: now, on: db)
    }

    /// The body of the `transaction.recorded` event of `transaction`.
    static func recordedEventPayload(_ transaction: RecordedTransaction, ownerAssigned: Bool) -> TransactionEventPayload {
        TransactionEventPayload(
            transactionId: transaction.transactionID, originalTransactionId: transaction.originalTransactionID,
            productId: transaction.productID, productType: transaction.productType.rawValue,
            quantity: transaction.quantity, environment: transaction.environment.rawValue,
            source: transaction.source.rawValue, ownerAssigned: ownerAssigned,
            revoked: transaction.revocationDate != nil)
    }

    /// Credits amount × quantity of each currency, once per transaction and currency.
    private static func credit(
        _ unitCredits: [(currency: String, amount: Int64)], quantity: Int, transaction: RecordedTransaction,
        owner: String, at now: Int64, on db: any SQLDatabase
    ) async throws {
        for (currency, unit) in unitCredits {
            let credit = try GrantCredit(
                currency: currency, unit: unit, quantity: quantity, of: transaction, owner: owner, at: now)
            let balance: Int64
            if LedgerSQLDialect(db.dialect) == .postgresql {
                // The credit and the balance in one statement (one round trip): no row when the
                // credit was there already.
                guard let row = try await db.run(.creditAndAddToBalance, values: credit.values).first else { continue }
                balance = try row.decode(column: "amount", as: Int64.self)
            } else {
                guard try await db.wrote(.insertCredit, values: credit.values) else { continue }
                balance = try await addToBalance(
                    credit.amount, bundleID: transaction.bundleID, appUserID: owner, currency: currency, on: db)
            }
            try await credit.appendEvent(balance: balance, on: db)
        }
    }

    /// One currency grant of a transaction: amount × quantity, credited once under the key
    /// `grant:<transactionId>:<currency>`.
    struct GrantCredit {
        let currency: String
        let amount: Int64
        let key: String
        let transaction: RecordedTransaction
        let owner: String
        let now: Int64

        init(
            currency: String, unit: Int64, quantity: Int, of transaction: RecordedTransaction, owner: String,
            at now: Int64
        ) throws {
            let (amount, overflow) = unit.multipliedReportingOverflow(by: Int64(quantity))
            guard !overflow else {
                throw LedgerStoreError(.invalidArgument, "\(unit) \(currency) × \(quantity) overflows")
            }
            self.currency = currency
            self.amount = amount
            key = "grant:\(transaction.transactionID):\(currency)"
            self.transaction = transaction
            self.owner = owner
            self.now = now
        }

        /// The credit's values, as ``LedgerWrite/insertCredit`` and ``LedgerStatement/creditAndAddToBalance`` take them.
        var values: [LedgerValue] {
            [
                .text(transaction.bundleID), .text(owner), .text(currency), .integer(amount),
                .text(transaction.transactionID), .text(key), .integer(now),
            ]
        }

        /// The `balance.credited` event, with the balance after the credit.
        func appendEvent(balance: Int64, on db: any SQLDatabase) async throws {
            try await SQLLedgerStore.appendEvent(
                LedgerEventType.balanceCredited, bundleID: transaction.bundleID, appUserID: owner,
                payload: eventPayload(balance: balance), at: now, on: db)
        }

        /// The body of the `balance.credited` event, with the balance after the credit.
        func eventPayload(balance: Int64) -> BalanceEventPayload {
            BalanceEventPayload(
                currency: currency, amount: amount, balance: balance, idempotencyKey: key,
                transactionId: transaction.transactionID)
        }

        /// The body of the `balance.credited` event split where its balance goes, for a statement
        /// that learns the balance only as it writes the event: the text before the balance's
        /// digits and the text after them. The balance is the body's second field, after the amount.
        func eventPayloadAroundBalance() throws -> (head: String, tail: String) {
            let whole = SQLLedgerStore.eventJSON(eventPayload(balance: 0))
            let head = "{\"amount\":\(amount),\"balance\":"
            guard whole.hasPrefix(head + "0,") else {
                throw LedgerStoreError(.inconsistentState, "a balance event's body does not start with its amount and balance")
            }
            return (head, String(whole.dropFirst(head.count + 1)))
        }
    }

    /// Adds `delta` (positive or negative) to a balance, creating it if needed; the new balance.
    static func addToBalance(
        _ delta: Int64, bundleID: String, appUserID: String, currency: String, on db: any SQLDatabase
    ) async throws -> Int64 {
        let key: [LedgerValue] = [.text(bundleID), .text(appUserID), .text(currency)]
        guard
            let row = try await db.written(.addToBalance, values: key + [.integer(delta)], readBack: .balance, key)
        else { throw LedgerStoreError(.inconsistentState, "the balance upsert returned nothing") }
        return try row.decode(column: "amount", as: Int64.self)
    }

    /// The current balance, zero when the customer never had that currency.
    static func balance(
        bundleID: String, appUserID: String, currency: String, on db: any SQLDatabase
    ) async throws -> Int64 {
        try await db.first(.balance, .text(bundleID), .text(appUserID), .text(currency))?
            .decode(column: "amount", as: Int64.self) ?? 0
    }
}

/// The statements of recording a purchase, finding the same signed bytes again, and answering
/// with the customer's summary.
extension LedgerStatement {
    static let assignOwner = LedgerStatement(
        """
        UPDATE transactions SET app_user_id = ?
        WHERE transaction_id = ? AND app_user_id IS NULL
        RETURNING quantity, revocation_date
        """)
    static let inheritedOwner = LedgerStatement(
        """
        SELECT app_user_id FROM transactions
        WHERE bundle_id = ? AND original_transaction_id = ? AND app_user_id IS NOT NULL
        ORDER BY purchase_date, recorded_at, transaction_id
        LIMIT 1
        """)
    static let storedOwner = LedgerStatement("SELECT app_user_id FROM transactions WHERE transaction_id = ?")
    static let signedTransaction = LedgerStatement(
        "SELECT transaction_id, bundle_id, environment, app_user_id FROM transactions WHERE signed_digest = ?")
    static let signedDigestCount = LedgerStatement(
        "SELECT COUNT(*) AS n FROM transactions WHERE signed_digest IS NOT NULL")
    /// The next page of digests: rows after rowid `?`, at most `?` of them (SQLite only).
    static let signedDigestPage = LedgerStatement(
        """
        SELECT rowid, signed_digest FROM transactions
        WHERE rowid > ? AND signed_digest IS NOT NULL ORDER BY rowid LIMIT ?
        """)
    static let balance = LedgerStatement(
        "SELECT amount FROM balances WHERE bundle_id = ? AND app_user_id = ? AND currency = ?")
    static let balances = LedgerStatement(
        "SELECT currency, amount FROM balances WHERE bundle_id = ? AND app_user_id = ?")
    /// A new purchase's row, its one credit and the balance it raises, in one statement
    /// (PostgreSQL): `inserted` is 1 when the row is new (then `balance` is the new balance), 0
    /// when the transaction was recorded before (nothing changed). Takes the transaction's values
    /// as ``LedgerWrite/insertTransaction`` does, then the credit's as ``creditAndAddToBalance``.
    static let recordAndCredit = LedgerStatement(
        """
        WITH recorded AS (
            INSERT INTO transactions (\(LedgerRows.transactionColumns), signed_digest)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (transaction_id) DO NOTHING
            RETURNING transaction_id),
        credit AS (
            INSERT INTO ledger_entries (\(LedgerRows.ledgerColumns))
            SELECT 'credit', ?, ?, ?, ?, ?, ?, 0, ? FROM recorded
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING bundle_id, app_user_id, currency, amount),
        balance AS (
            INSERT INTO balances (bundle_id, app_user_id, currency, amount)
            SELECT bundle_id, app_user_id, currency, amount FROM credit
            ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
            RETURNING amount)
        SELECT (SELECT COUNT(*) FROM recorded) AS inserted, (SELECT amount FROM balance) AS balance
        """)
    /// A grant's credit and the balance it raises, in one statement (PostgreSQL): the new balance,
    /// or no row when the credit's idempotency key was used already.
    static let creditAndAddToBalance = LedgerStatement(
        """
        WITH credit AS (
            INSERT INTO ledger_entries (\(LedgerRows.ledgerColumns))
            VALUES ('credit', ?, ?, ?, ?, ?, ?, 0, ?)
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING bundle_id, app_user_id, currency, amount)
        INSERT INTO balances (bundle_id, app_user_id, currency, amount)
        SELECT bundle_id, app_user_id, currency, amount FROM credit
        ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
        RETURNING amount
        """)
    static let appendEvent = LedgerStatement(
        "INSERT INTO events (type, bundle_id, app_user_id, payload, created_at) VALUES (?, ?, ?, ?, ?)")

    /// A customer's summary in one statement, one row per item, told apart by `part`: 0 for each
    /// transaction that can grant access, 1 for each balance (`currency`, `amount`), 2 for the
    /// number of transactions (`amount`). Takes the app and the customer three times. Unordered:
    /// sorting the whole compound would take a sorter for every answer, where the caller orders the
    /// few transactions itself.
    static func customerSummary(withJWS: Bool) -> LedgerStatement {
        withJWS ? summaryWithJWS : summaryWithoutJWS
    }

    /// The newest `LIMIT ?` transactions of a customer, with or without the JWS.
    static func newestTransactions(withJWS: Bool) -> LedgerStatement {
        withJWS ? newestWithJWS : newestWithoutJWS
    }

    private static func summary(_ columns: String) -> LedgerStatement {
        let blanks = Array(repeating: "NULL", count: columns.split(separator: ",").count).joined(separator: ", ")
        return LedgerStatement(
            """
            SELECT 0 AS part, \(columns), NULL AS currency, NULL AS amount FROM transactions
            WHERE bundle_id = ? AND app_user_id = ? AND product_type <> 'Consumable'
            UNION ALL
            SELECT 1, \(blanks), currency, amount FROM balances WHERE bundle_id = ? AND app_user_id = ?
            UNION ALL
            SELECT 2, \(blanks), NULL, COUNT(*) FROM transactions WHERE bundle_id = ? AND app_user_id = ?
            """)
    }
    private static let summaryWithJWS = summary(LedgerRows.transactionColumns(withJWS: true))
    private static let summaryWithoutJWS = summary(LedgerRows.transactionColumns(withJWS: false))

    private static func newest(_ columns: String) -> LedgerStatement {
        LedgerStatement(
            """
            SELECT \(columns) FROM transactions
            WHERE bundle_id = ? AND app_user_id = ?
            ORDER BY purchase_date DESC, transaction_id DESC
            LIMIT ?
            """)
    }
    private static let newestWithJWS = newest(LedgerRows.transactionColumns(withJWS: true))
    private static let newestWithoutJWS = newest(LedgerRows.transactionColumns(withJWS: false))
}

/// The writes of recording a purchase that only need to know whether they wrote their row.
extension LedgerWrite {
    static let insertTransaction = LedgerWrite(
        """
        INSERT INTO transactions (\(LedgerRows.transactionColumns), signed_digest)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (transaction_id) DO NOTHING
        """, returning: "transaction_id")
    static let insertCredit = LedgerWrite(
        """
        INSERT INTO ledger_entries (\(LedgerRows.ledgerColumns))
        VALUES ('credit', ?, ?, ?, ?, ?, ?, 0, ?)
        ON CONFLICT (idempotency_key) DO NOTHING
        """, returning: "id")
    static let addToBalance = LedgerWrite(
        """
        INSERT INTO balances (bundle_id, app_user_id, currency, amount)
        VALUES (?, ?, ?, ?)
        ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
        """, returning: "amount")
}
