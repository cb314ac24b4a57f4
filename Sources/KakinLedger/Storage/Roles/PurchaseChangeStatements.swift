import AppStoreModels
import Foundation

/// What a write that changes purchases leaves for its engine to apply before it commits: the
/// changes to the daily figures and to the metrics kept in the write. An engine adds them up over
/// a write (PostgreSQL over a group of ingests) and applies them once, at its end.
struct PurchaseChanges: Sendable {
    var figures = FigureChanges()
    var metrics = PurchaseMetricChanges()
}

/// The writes that change a purchase already recorded (a revocation and its clawbacks, a refund
/// reversal and its reinstatements, a move to another customer), and the credit of a currency:
/// decided once, run by either engine inside the write that asks for them.
enum PurchaseChangeStatements {
    // MARK: Credits

    /// Credits one currency once (its line under its idempotency key, `ON CONFLICT DO NOTHING`),
    /// raising the balance, with its `balance.credited` event; nothing when the key was used.
    static func credit(
        _ credit: CurrencyCredit, bundleID: String, owner: String, transactionID: String, at now: Int64
    ) throws -> LedgerTransaction<Void> {
        var writes = PendingWrites()
        writes.credit(credit, bundleID: bundleID, owner: owner, transactionID: transactionID, at: now)
        return try writes.written()
    }

    /// Credits currencies, each once: their lines under their idempotency keys (`ON CONFLICT DO
    /// NOTHING`), then each balance they raise, by the sum of its lines written, in key order.
    /// Returns, for each credit in order, its `balance.credited` event with the balance after
    /// it, or `nil` when its key was used.
    static func credit(_ credits: [PendingCredit]) throws -> LedgerTransaction<[PendingEvent?]> {
        guard !credits.isEmpty else { return .done([]) }
        let lines = credits.map {
            LedgerEntryRow(
                id: nil, idempotencyKey: $0.credit.idempotencyKey, kind: LedgerEntry.Kind.credit.rawValue,
                bundleID: $0.bundleID, appUserID: $0.owner, currency: $0.credit.currency, amount: $0.credit.amount,
                transactionID: $0.transactionID, shortfall: 0, createdAt: $0.at)
        }
        return .run([try "INSERT INTO \(insert: lines) ON CONFLICT (idempotency_key) DO NOTHING RETURNING idempotency_key AS value"]) {
            rows in
            let applied = Set(try rows[0].decode(LedgerColumn<String>.self).map(\.value))
            var sums: [BalanceKey: Int64] = [:]
            for credit in credits where applied.contains(credit.credit.idempotencyKey) {
                sums[credit.balance, default: 0] += credit.credit.amount
            }
            let raised = sums
            guard !raised.isEmpty else { return .done(credits.map { _ in nil }) }
            return .run([raise(raised)]) { rows in
                // The balance before these credits, then after each, in order.
                var running: [BalanceKey: Int64] = [:]
                for row in try rows[0].decode(BalanceRow.self) {
                    let key = BalanceKey(bundleID: row.bundleID, owner: row.appUserID, currency: row.currency)
                    running[key] = row.amount - (raised[key] ?? 0)
                }
                return .done(
                    credits.map { credit in
                        guard applied.contains(credit.credit.idempotencyKey) else { return nil }
                        running[credit.balance, default: 0] += credit.credit.amount
                        return PendingEvent(
                            LedgerEventType.balanceCredited, bundleID: credit.bundleID, appUserID: credit.owner,
                            payload: credit.credit.event(
                                transactionID: credit.transactionID, balance: running[credit.balance] ?? 0),
                            at: credit.at)
                    })
            }
        }
    }

    /// Adds to balances, each once, in key order, creating those the customer has none of; returns
    /// the balances after (``BalanceRow``'s columns).
    static func raise(_ amounts: [BalanceKey: Int64]) -> LedgerSQL {
        let rows = amounts.keys.sorted().map {
            BalanceRow(bundleID: $0.bundleID, appUserID: $0.owner, currency: $0.currency, amount: amounts[$0] ?? 0)
                .boundValues
        }
        return """
            INSERT INTO balances (\(unescaped: BalanceRow.boundColumns))
            \(values: rows)
            ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
            RETURNING \(unescaped: BalanceRow.boundColumns)
            """
    }

    // MARK: Revocations

    /// Marks a transaction revoked and takes back `share` of its credits, once per share: the
    /// update applies only when the share revoked so far (0 when not revoked, the whole when
    /// revoked with no percentage) is smaller, and the revocation is dated after the latest refund
    /// reversal (`revocation_reversed_at`; one dated no later is a revocation it reversed). For
    /// each credit line other than a reinstatement's, `share` of it less what earlier revocations
    /// since that reversal asked for is taken back (``clawBack(_:transactionID:share:reversedAt:policy:at:)``).
    /// Answers whether the transaction was revoked now.
    static func revoke(
        transactionID: String, at now: Int64, reason: Int?, share: Int, policy: ClawbackPolicy,
        changes: PurchaseChanges
    ) -> LedgerTransaction<(Bool, PurchaseChanges)> {
        let whole = RecordedTransaction.wholeShare
        let storedShare: Int64? = share == whole ? nil : Int64(share)
        let select: LedgerSQL = "SELECT \(unescaped: TransactionRow.selection()) FROM transactions"
        return .run([
            // Locked, so the row read is the one the update changes.
            "\(select) WHERE transaction_id = \(transactionID) \(.forUpdate)",
            """
            UPDATE transactions SET revocation_date = \(now), revocation_reason = \(reason),
                revocation_percentage = \(storedShare)
            WHERE transaction_id = \(transactionID)
              AND COALESCE(revocation_percentage, CASE WHEN revocation_date IS NULL THEN 0 ELSE \(whole) END) < \(share)
              AND (revocation_reversed_at IS NULL OR revocation_reversed_at < \(now))
            RETURNING \(unescaped: TransactionRow.selection())
            """,
        ]) { rows in
            guard let row = try rows[1].first(TransactionRow.self) else { return .done((false, changes)) }
            let before = try rows[0].first(TransactionRow.self)
            var changes = changes
            if let before { changes.figures.replace(FigureSource(before), with: FigureSource(row)) }
            let keptInWrite = PurchaseMetricChanges.keptInWrite(productType: row.productType)
            if keptInWrite { changes.metrics.replace(before, with: row) }
            let reversedAt = row.revocationReversedAt
            let event = EventStatements.append(
                LedgerEventType.transactionRevoked, bundleID: row.bundleID, appUserID: row.appUserID,
                payload: TransactionEventPayload(
                    transactionId: transactionID, originalTransactionId: row.originalTransactionID,
                    metricsKeptInWrite: keptInWrite, productId: row.productID, revocationDate: now,
                    revocationReason: reason, revocationPercentage: share, store: row.store),
                at: now)
            let credits: LedgerSQL = """
                SELECT credit.bundle_id, credit.app_user_id, credit.currency, credit.amount,
                    (SELECT CAST(COALESCE(SUM(taken.shortfall - taken.amount), 0) AS BIGINT) FROM ledger_entries taken
                     WHERE taken.transaction_id = credit.transaction_id AND taken.kind = 'clawback'
                       AND taken.currency = credit.currency AND taken.created_at > \(reversedAt ?? Int64.min)) AS asked
                FROM ledger_entries credit
                WHERE credit.transaction_id = \(transactionID) AND credit.kind = 'credit'
                  AND credit.idempotency_key NOT LIKE \(LedgerRules.reinstatementKeyPrefix + "%")
                ORDER BY credit.id
                """
            let revoked = changes
            return .run(event + [credits]) { rows in
                let steps = try rows[event.count].decode(CurrencyLine.self).map {
                    clawBack($0, transactionID: transactionID, share: share, reversedAt: reversedAt, policy: policy, at: now)
                }
                return LedgerTransaction.sequence(steps).then { .done((true, revoked)) }
            }
        }
    }

    /// An amount of one currency of a customer: a credit line a revocation takes a share of, with
    /// what earlier revocations of it since the latest refund reversal asked for (their amounts
    /// taken plus their shortfalls), or what the clawbacks of a transaction took.
    private struct CurrencyLine: Decodable, Sendable {
        var bundleID: String
        var appUserID: String
        var currency: String
        var amount: Int64
        var asked: Int64?

        enum CodingKeys: String, CodingKey {
            case bundleID = "bundle_id"
            case appUserID = "app_user_id"
            case currency, amount, asked
        }
    }

    /// Takes back `share` of one credit less what was asked before: all of it (`allowNegative`),
    /// or what the balance still holds (`clampAtZero`, read locked; the rest is the line's
    /// shortfall), under ``LedgerRules/clawbackKey(transactionID:currency:share:reversedAt:)``,
    /// with its `balance.clawedBack` event.
    private static func clawBack(
        _ credit: CurrencyLine, transactionID: String, share: Int, reversedAt: Int64?, policy: ClawbackPolicy,
        at now: Int64
    ) -> LedgerTransaction<Void> {
        let amount = LedgerRules.creditShare(credit.amount, share: share) - (credit.asked ?? 0)
        guard amount > 0 else { return .done(()) }
        let (bundleID, owner, currency) = (credit.bundleID, credit.appUserID, credit.currency)
        let held: LedgerSQL = """
            SELECT amount AS value FROM balances
            WHERE bundle_id = \(bundleID) AND app_user_id = \(owner) AND currency = \(currency) \(.forUpdate)
            """
        return .run(policy == .clampAtZero ? [held] : []) { rows in
            let taken =
                policy == .clampAtZero
                ? min(amount, max(try rows[0].first(LedgerColumn<Int64>.self)?.value ?? 0, 0)) : amount
            let key = LedgerRules.clawbackKey(
                transactionID: transactionID, currency: currency, share: share, reversedAt: reversedAt)
            let line = LedgerEntryRow(
                id: nil, idempotencyKey: key, kind: LedgerEntry.Kind.clawback.rawValue, bundleID: bundleID,
                appUserID: owner, currency: currency, amount: -taken, transactionID: transactionID,
                shortfall: amount - taken, createdAt: now)
            return .run([
                """
                UPDATE balances SET amount = amount - \(taken)
                WHERE bundle_id = \(bundleID) AND app_user_id = \(owner) AND currency = \(currency)
                RETURNING amount AS value
                """,
                try "INSERT INTO \(insert: line) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id",
            ]) { rows in
                guard let balance = try rows[0].first(LedgerColumn<Int64>.self)?.value else {
                    throw LedgerStoreError(.inconsistentState, "no \(currency) balance for a credit of \(transactionID)")
                }
                // The revocation's guard makes this unreachable; throwing rolls the balance back.
                guard !rows[1].isEmpty else { throw LedgerStoreError(.inconsistentState, "\(key) was already applied") }
                return .run(
                    EventStatements.append(
                        LedgerEventType.balanceClawedBack, bundleID: bundleID, appUserID: owner,
                        payload: BalanceEventPayload(
                            currency: currency, amount: -taken, balance: balance, idempotencyKey: key,
                            transactionId: transactionID, shortfall: amount - taken),
                        at: now)
                ) { _ in .done(()) }
            }
        }
    }

    // MARK: Refund reversals

    /// Reinstates a transaction whose refund Apple reversed at `reversedAt` (see
    /// ``LedgerStore/reinstate(transactionID:reversedAt:grants:)``): the reversal is kept on the
    /// row (a revocation dated no later is one it reversed); a revoked row loses its revocation, its
    /// owner gets back what the revocations since the previous reversal took (once per reversal,
    /// under ``LedgerRules/reinstatementKey(transactionID:currency:reversedAt:)``) and, for a
    /// transaction recorded revoked and so never credited, its credits. Answers whether the
    /// transaction was reinstated now.
    static func reinstate(
        transactionID: String, reversedAt: Int64, grants: [Grant]
    ) -> LedgerTransaction<(Bool, PurchaseChanges)> {
        .run([
            // Locked, so the row read is the one the updates change.
            """
            SELECT \(unescaped: TransactionRow.selection()) FROM transactions
            WHERE transaction_id = \(transactionID) \(.forUpdate)
            """
        ]) { rows in
            guard let stored = try rows[0].first(TransactionRow.self) else { return .done((false, PurchaseChanges())) }
            let previous = stored.revocationReversedAt
            if let previous, previous >= reversedAt { return .done((false, PurchaseChanges())) }
            guard let revoked = stored.revocationDate, revoked < reversedAt else {
                return .run([
                    """
                    UPDATE transactions SET revocation_reversed_at = \(reversedAt) WHERE transaction_id = \(transactionID)
                    """
                ]) { _ in .done((false, PurchaseChanges())) }
            }
            var reinstated = stored
            (reinstated.revocationDate, reinstated.revocationReason, reinstated.revocationPercentage) = (nil, nil, nil)
            var made = PurchaseChanges()
            made.figures.replace(FigureSource(stored), with: FigureSource(reinstated))
            if PurchaseMetricChanges.keptInWrite(productType: stored.productType) {
                made.metrics.replace(stored, with: reinstated)
            }
            let changes = made
            let update: LedgerSQL = """
                UPDATE transactions SET revocation_reversed_at = \(reversedAt), revocation_date = NULL,
                    revocation_reason = NULL, revocation_percentage = NULL
                WHERE transaction_id = \(transactionID)
                """
            let event = EventStatements.append(
                LedgerEventType.transactionReinstated, bundleID: stored.bundleID, appUserID: stored.appUserID,
                payload: LedgerRules.reinstatedEvent(stored, reversedAt: reversedAt), at: reversedAt)
            // What the revocations since the previous reversal took, to whom they took it from.
            let taken: LedgerSQL = """
                SELECT bundle_id, app_user_id, currency, CAST(SUM(-amount) AS BIGINT) AS amount FROM ledger_entries
                WHERE transaction_id = \(transactionID) AND kind = 'clawback' AND created_at > \(previous ?? Int64.min)
                GROUP BY bundle_id, app_user_id, currency
                ORDER BY bundle_id, app_user_id, currency
                """
            return .run([update] + event + [taken]) { rows in
                var steps = try rows[rows.count - 1].decode(CurrencyLine.self).filter { $0.amount > 0 }.map { line in
                    try credit(
                        CurrencyCredit(
                            currency: line.currency, amount: line.amount,
                            idempotencyKey: LedgerRules.reinstatementKey(
                                transactionID: transactionID, currency: line.currency, reversedAt: reversedAt)),
                        bundleID: line.bundleID, owner: line.appUserID, transactionID: transactionID, at: reversedAt)
                }
                // A transaction recorded revoked was never credited: its owner is, now.
                if let owner = stored.appUserID {
                    let transaction = try stored.transaction()
                    steps += try LedgerRules.credits(of: transaction, grants: grants, quantity: transaction.quantity).map {
                        try credit($0, bundleID: stored.bundleID, owner: owner, transactionID: transactionID, at: reversedAt)
                    }
                }
                return LedgerTransaction.sequence(steps).then { .done((true, changes)) }
            }
        }
    }

    // MARK: Moves

    /// Moves one purchase (every transaction of the app with `originalTransactionID` still owned by
    /// `from`) to `to`, with a `transaction.transferred` event; answers how many transactions moved.
    /// Currency already credited stays where it was: a move carries access, not balances.
    static func transfer(
        bundleID: String, originalTransactionID: String, from: String, to: String, at now: Int64,
        changes: PurchaseChanges
    ) -> LedgerTransaction<(Int, PurchaseChanges)> {
        guard from != to else { return .done((0, changes)) }
        return .run([
            """
            UPDATE transactions SET app_user_id = \(to)
            WHERE bundle_id = \(bundleID) AND original_transaction_id = \(originalTransactionID) AND app_user_id = \(from)
            RETURNING \(unescaped: TransactionRow.selection())
            """
        ]) { rows in
            let moved = try rows[0].decode(TransactionRow.self)
            guard !moved.isEmpty else { return .done((0, changes)) }
            var moving = changes
            moving.metrics.move(moved, from: from)
            let changes = moving
            return .run(
                EventStatements.append(
                    LedgerEventType.transactionTransferred, bundleID: bundleID, appUserID: to,
                    payload: TransferEventPayload(
                        originalTransactionId: originalTransactionID, from: from, to: to,
                        transactionIds: moved.map(\.transactionID).sorted(),
                        metricsKeptInWrite: moved.allSatisfy {
                            PurchaseMetricChanges.keptInWrite(productType: $0.productType)
                        }),
                    at: now)
            ) { _ in .done((moved.count, changes)) }
        }
    }
}

/// A row of `customer_aliases`: the identified customer an anonymous customer of an app became
/// when the app signed in, once and for good; requests that name the anonymous ID are served
/// for that customer.
struct CustomerAliasRow: LedgerRecord {
    static let table = "customer_aliases"
    typealias Columns = CodingKeys

    var bundleID: String
    /// The anonymous customer's ID.
    var alias: String
    var appUserID: String
    var createdAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case alias
        case appUserID = "app_user_id"
        case createdAt = "created_at"
    }
}

extension PurchaseChangeStatements {
    // MARK: Aliases

    /// Makes `anonymousID` an alias of `appUserID` (see
    /// ``LedgerStore/alias(bundleID:anonymousID:to:transfersOwnership:at:)``): nothing at all when
    /// the app's ledger has never seen the anonymous ID; otherwise the alias row (`ON CONFLICT DO
    /// NOTHING`), the purchases another identified customer holds part of (moved or kept by
    /// `transfersOwnership`), then the anonymous customer's transactions, balances (added to the
    /// identified customer's), ledger lines and app downloads, and a `customer.aliased` event
    /// when anything changed.
    static func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at now: Int64
    ) -> LedgerTransaction<(CustomerAliasOutcome, PurchaseChanges)> {
        let seen: LedgerSQL = """
            SELECT (EXISTS (SELECT 1 FROM customer_aliases WHERE bundle_id = \(bundleID) AND alias = \(anonymousID))
                 OR EXISTS (SELECT 1 FROM transactions WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID))
                 OR EXISTS (SELECT 1 FROM balances WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID))
                 OR EXISTS (SELECT 1 FROM ledger_entries WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID))
                 OR EXISTS (SELECT 1 FROM app_transactions WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID)))
                AS value
            """
        return .run([seen]) { rows in
            // An anonymous ID the app's ledger has never seen: nothing is written.
            guard try rows[0].first(LedgerColumn<Bool>.self)?.value == true else {
                return .done((.aliased(CustomerAliasMove(created: false)), PurchaseChanges()))
            }
            let alias = CustomerAliasRow(bundleID: bundleID, alias: anonymousID, appUserID: appUserID, createdAt: now)
            return .run([
                try "INSERT INTO \(insert: alias) ON CONFLICT (bundle_id, alias) DO NOTHING RETURNING app_user_id AS value",
                "SELECT app_user_id AS value FROM customer_aliases WHERE bundle_id = \(bundleID) AND alias = \(anonymousID)",
                """
                SELECT DISTINCT other.original_transaction_id, other.app_user_id
                FROM transactions other
                JOIN transactions own
                  ON own.original_transaction_id = other.original_transaction_id AND own.bundle_id = other.bundle_id
                WHERE other.bundle_id = \(bundleID) AND own.app_user_id = \(anonymousID)
                  AND other.app_user_id IS NOT NULL AND other.app_user_id <> own.app_user_id
                  AND other.app_user_id <> \(appUserID)
                """,
            ]) { rows in
                guard let target = try rows[1].first(LedgerColumn<String>.self)?.value else {
                    throw LedgerStoreError(.inconsistentState, "the alias of \(anonymousID) vanished")
                }
                guard target == appUserID else { return .done((.aliasedToAnotherCustomer(target), PurchaseChanges())) }
                let shared = try rows[2].decode(SharedPurchase.self).sorted {
                    ($0.originalTransactionID, $0.appUserID) < ($1.originalTransactionID, $1.appUserID)
                }
                var chain = LedgerTransaction<(CustomerAliasMove, PurchaseChanges)>.done(
                    (CustomerAliasMove(created: !rows[0].isEmpty), PurchaseChanges()))
                for purchase in shared {
                    chain = chain.then { move, changes in
                        guard transfersOwnership else {
                            var kept = move
                            kept.keptPurchases.append(purchase.originalTransactionID)
                            return .done((kept, changes))
                        }
                        return transfer(
                            bundleID: bundleID, originalTransactionID: purchase.originalTransactionID,
                            from: purchase.appUserID, to: appUserID, at: now, changes: changes
                        ).then { count, changes in
                            var moved = move
                            if count > 0 { moved.transferredPurchases.append(purchase.originalTransactionID) }
                            return .done((moved, changes))
                        }
                    }
                }
                return chain.then { move, changes in
                    moveCustomer(bundleID: bundleID, anonymousID: anonymousID, to: appUserID, at: now, move, changes)
                }
            }
        }
    }

    /// The anonymous customer's own rows moved to `appUserID`, its balances added to theirs.
    private static func moveCustomer(
        bundleID: String, anonymousID: String, to appUserID: String, at now: Int64, _ move: CustomerAliasMove,
        _ changes: PurchaseChanges
    ) -> LedgerTransaction<(CustomerAliasOutcome, PurchaseChanges)> {
        .run([
            """
            UPDATE transactions SET app_user_id = \(appUserID) WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID)
            RETURNING \(unescaped: TransactionRow.selection())
            """,
            """
            DELETE FROM balances WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID)
            RETURNING currency, amount
            """,
            "UPDATE ledger_entries SET app_user_id = \(appUserID) WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID)",
            "UPDATE app_transactions SET app_user_id = \(appUserID) WHERE bundle_id = \(bundleID) AND app_user_id = \(anonymousID)",
        ]) { rows in
            let moved = try rows[0].decode(TransactionRow.self)
            var move = move
            var changes = changes
            move.transactionIDs = moved.map(\.transactionID).sorted()
            changes.metrics.move(moved, from: anonymousID)
            for balance in try rows[1].decode(BalanceLine.self) { move.balances[balance.currency] = balance.amount }
            var raised: [BalanceKey: Int64] = [:]
            for (currency, amount) in move.balances {
                raised[BalanceKey(bundleID: bundleID, owner: appUserID, currency: currency)] = amount
            }
            var statements = raised.isEmpty ? [] : [raise(raised)]
            if move.changedAnything {
                statements += EventStatements.append(
                    LedgerEventType.customerAliased, bundleID: bundleID, appUserID: appUserID,
                    payload: AliasEventPayload(alias: anonymousID, appUserId: appUserID, move: move), at: now)
            }
            let outcome = (CustomerAliasOutcome.aliased(move), changes)
            return .run(statements) { _ in .done(outcome) }
        }
    }

    /// A purchase the anonymous customer holds part of and another identified customer the rest.
    private struct SharedPurchase: Decodable, Sendable {
        var originalTransactionID: String
        var appUserID: String

        enum CodingKeys: String, CodingKey {
            case originalTransactionID = "original_transaction_id"
            case appUserID = "app_user_id"
        }
    }
}

/// The writes that change purchases, the same statements on both engines.
extension StatementEngine {
    /// Reinstates a transaction whose refund Apple reversed, in one write (see
    /// ``LedgerStore/reinstate(transactionID:reversedAt:grants:)`` and
    /// ``PurchaseChangeStatements/reinstate(transactionID:reversedAt:grants:)``).
    public func reinstate(transactionID: String, reversedAt date: Date, grants: [Grant]) async throws -> Bool {
        try await perform(
            for: transactionID,
            changing: PurchaseChangeStatements.reinstate(
                transactionID: transactionID, reversedAt: LedgerTime.milliseconds(date), grants: grants))
    }

    /// Aliases an anonymous customer in one write (see
    /// ``LedgerStore/alias(bundleID:anonymousID:to:transfersOwnership:at:)`` and
    /// ``PurchaseChangeStatements/alias(bundleID:anonymousID:to:transfersOwnership:at:)``).
    public func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at date: Date
    ) async throws -> CustomerAliasOutcome {
        try LedgerRules.validateAlias(anonymousID, to: appUserID)
        return try await perform(
            for: appUserID,
            changing: PurchaseChangeStatements.alias(
                bundleID: bundleID, anonymousID: anonymousID, to: appUserID, transfersOwnership: transfersOwnership,
                at: LedgerTime.milliseconds(date)))
    }
}

extension LedgerTransaction where Output == Void {
    /// The steps one after the other, in the same database transaction.
    static func sequence(_ steps: [LedgerTransaction<Void>]) -> LedgerTransaction<Void> {
        steps.reduce(.done(())) { chain, step in chain.then { step } }
    }
}

/// One balance of a customer, as a statement reads it (`currency`, `amount`).
struct BalanceLine: Decodable, Sendable {
    var currency: String
    var amount: Int64
}

/// A customer's balance of one currency.
struct BalanceKey: Hashable, Comparable, Sendable {
    var bundleID: String
    var owner: String
    var currency: String

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.bundleID, lhs.owner, lhs.currency) < (rhs.bundleID, rhs.owner, rhs.currency)
    }
}

/// A currency credited for a transaction (``PurchaseChangeStatements/credit(_:)-([PendingCredit])``).
struct PendingCredit: Sendable {
    var credit: CurrencyCredit
    var bundleID: String
    var owner: String
    var transactionID: String
    var at: Int64

    var balance: BalanceKey { BalanceKey(bundleID: bundleID, owner: owner, currency: credit.currency) }
}

/// The events and credits of a write, kept until something needs them in the ledger and then
/// written together (``written()``): the credits with two statements, then the events, in the
/// order they were added, with one more; a credit's `balance.credited` event carries the
/// balance after it.
struct PendingWrites: Sendable {
    private enum Event: Sendable {
        case ready(PendingEvent)
        /// The event of the credit at this index of `credits`, when it was applied.
        case credited(Int)
    }

    private var events: [Event] = []
    private var credits: [PendingCredit] = []

    mutating func append(_ event: PendingEvent) {
        events.append(.ready(event))
    }

    /// Credits `credit` to `owner` for a transaction, once, with its event.
    mutating func credit(_ credit: CurrencyCredit, bundleID: String, owner: String, transactionID: String, at now: Int64) {
        credits.append(PendingCredit(credit: credit, bundleID: bundleID, owner: owner, transactionID: transactionID, at: now))
        events.append(.credited(credits.count - 1))
    }

    /// The `transaction.recorded` event of a row recorded, or given its owner, now; then, with
    /// `credits` and an owner, the credits of the currencies its grants name, each once.
    mutating func recorded(
        _ transaction: RecordedTransaction, owner: String?, ownerAssigned: Bool, grants: [Grant], quantity: Int,
        credits: Bool
    ) throws {
        let now = LedgerTime.milliseconds(transaction.recordedAt)
        append(
            PendingEvent(
                LedgerEventType.transactionRecorded, bundleID: transaction.bundleID, appUserID: owner,
                payload: LedgerRules.recordedEvent(transaction, ownerAssigned: ownerAssigned), at: now))
        guard let owner, credits else { return }
        for credit in try LedgerRules.credits(of: transaction, grants: grants, quantity: quantity) {
            self.credit(credit, bundleID: transaction.bundleID, owner: owner, transactionID: transaction.transactionID, at: now)
        }
    }

    /// Writes what was added.
    func written() throws -> LedgerTransaction<Void> {
        guard !events.isEmpty else { return .done(()) }
        let events = events
        return try PurchaseChangeStatements.credit(credits).then { credited in
            let rows = events.compactMap { event -> PendingEvent? in
                switch event {
                case .ready(let event): event
                case .credited(let index): credited[index]
                }
            }
            return .run(EventStatements.append(rows)) { _ in .done(()) }
        }
    }
}
