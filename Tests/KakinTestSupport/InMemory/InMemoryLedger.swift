import AppStoreModels
import Foundation

@testable import KakinLedger

/// Purchases, customers and balances kept in memory, over one state: ``PurchaseLedger``,
/// ``CustomerLedger`` and ``BalanceLedger`` for tests of what uses them, run without a database,
/// and ``MetricsLedger``: the daily figures and subscription metrics those purchases add up to.
/// The roles share their state as an engine's tables do: an ingest credits balances, a refund
/// takes back from them, an alias moves a customer's purchases, ledger lines and balances, and
/// the figures and metrics are read from the same transactions. It keeps the answers to Apple's
/// retention message requests too (``RetentionLedger``), their outcomes read from the
/// subscriptions it holds.
///
/// What it decides is the ledger's own (``LedgerRules``: the checks, credits, shares, keys and
/// outcomes), and transactions are kept as the engines keep them (``TransactionRow``, instants in
/// whole milliseconds), so what is read back is what an engine reads back. The rules the engines
/// hold only in their statements (recording once, the owner found later, revocations, reversals,
/// moves, aliases, the search) are applied here plainly, each method saying whose. The figures and
/// metrics are not kept as they change but worked out again on each read, with the ledger's own
/// arithmetic: the figures from the transactions, the metrics from the purchases as
/// ``updateMetrics(limit:)`` last took them (an engine's job keeps its rollups the same way). Not
/// kept: outbox events and the calls owed to Apple an ingest carries (roles with in-memory
/// implementations of their own).
public actor InMemoryLedger: PurchaseLedger, CustomerLedger, BalanceLedger, MetricsLedger {
    /// A customer's balance of one currency; ordered by app, customer and currency.
    struct BalanceKey: Hashable, Comparable {
        var bundleID: String
        var appUserID: String
        var currency: String

        init(bundleID: String, appUserID: String, currency: String) {
            (self.bundleID, self.appUserID, self.currency) = (bundleID, appUserID, currency)
        }

        /// The balance a ledger line changes.
        init(_ line: LedgerEntry) {
            self.init(bundleID: line.bundleID, appUserID: line.appUserID, currency: line.currency)
        }

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.bundleID, lhs.appUserID, lhs.currency) < (rhs.bundleID, rhs.appUserID, rhs.currency)
        }
    }

    /// Something of one app named by an ID: an alias, an app download, a subscription.
    struct AppKey: Hashable {
        var bundleID: String
        var id: String
    }

    /// Transactions by ID.
    var transactions: [String: TransactionRow] = [:]
    /// The ledger lines in the order written, each idempotency key once.
    var lines: [LedgerEntry] = []
    var balances: [BalanceKey: Int64] = [:]
    /// Notifications by UUID, without what the ledger holds of their transactions.
    var notifications: [String: ReceivedNotification] = [:]
    /// Renewal states by app and original transaction ID.
    var renewals: [AppKey: SubscriptionRenewalRow] = [:]
    /// The identified customer of each anonymous ID aliased, by app and anonymous ID.
    var aliases: [AppKey: String] = [:]
    /// The customer each app download was last linked to, and when, by app and app transaction ID.
    var appDownloads: [AppKey: (appUserID: String, linkedAt: Date)] = [:]
    /// The latest rescission of consent of each app download, by app and app transaction ID.
    var consentRescissions: [AppKey: ConsentRescission] = [:]
    /// The grace periods Apple reported, by app and original transaction ID, each end once.
    var graceExpiries: [AppKey: [MetricGrace]] = [:]
    /// The purchases as the metrics last took them (``updateMetrics(limit:)``), by app and
    /// original transaction ID: what the metrics are read from.
    var metricsTaken: [MetricsUpdate.UnitKey: MetricsPurchase] = [:]
    /// The answers to Apple's retention message requests, by app and request identifier.
    var retentionDecisionsByRequest: [AppKey: RetentionDecision] = [:]

    /// An empty ledger.
    public init() {}

    // MARK: Ingest

    /// Records, moves, revokes and summarizes as ``IngestStatements`` does on an engine. The
    /// change is checked before anything is written, and nothing after the checks can fail, so it
    /// is applied whole or not at all.
    public func ingest(_ change: LedgerIngest) async throws -> LedgerIngestOutcome {
        try LedgerRules.validate(change)
        let transaction = change.transaction
        let owner = transaction.appUserID ?? earliestOwner(of: transaction)
        var outcome = LedgerIngestOutcome(recorded: try record(change, owner: owner))
        if IngestStatements.keptByAnother(change, outcome) { return outcome }
        if case .ownedByAnotherCustomer(let from) = outcome.recorded, let to = transaction.appUserID {
            let moved = transfer(
                bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID, from: from,
                to: to)
            if moved > 0 { outcome.transferredFrom = from }
        }
        if let date = transaction.revocationDate {
            outcome.revoked = revoke(
                transaction.transactionID, at: date, reason: transaction.revocationReason?.rawValue,
                share: transaction.revokedShare, policy: change.clawbackPolicy)
        }
        if let asked = change.summary, let owner = transaction.appUserID {
            outcome.summary = try summary(
                bundleID: transaction.bundleID, appUserID: owner, recent: asked.recent, withJWS: asked.withJWS)
        }
        return outcome
    }

    /// The owner of the earliest transaction of the same purchase that has one (renewals and
    /// restores name none).
    private func earliestOwner(of transaction: RecordedTransaction) -> String? {
        transactions.values.filter {
            $0.bundleID == transaction.bundleID && $0.originalTransactionID == transaction.originalTransactionID
                && $0.appUserID != nil
        }.min {
            ($0.purchaseDate, $0.recordedAt, $0.transactionID) < ($1.purchaseDate, $1.recordedAt, $1.transactionID)
        }?
        .appUserID
    }

    /// Records a transaction once: the first record wins and credits its owner unless revoked; a
    /// transaction held without an owner gets `owner` now, and its credits then. The credits are
    /// worked out before anything changes.
    private func record(_ change: LedgerIngest, owner: String?) throws -> RecordOutcome {
        let transaction = change.transaction
        let id = transaction.transactionID
        guard let held = transactions[id] else {
            let credits = owner == nil || transaction.revocationDate != nil ? [] : try self.credits(of: change)
            let digest = transaction.signedTransaction.map { (change.signedDigest ?? SignedDigest($0)).bytes }
            transactions[id] = TransactionRow(transaction, owner: owner, signedDigest: digest)
            if let owner { credit(credits, of: transaction, owner: owner) }
            return .recorded
        }
        if let stored = held.appUserID {
            return LedgerRules.outcome(storedOwner: stored, claimedBy: transaction.appUserID)
        }
        guard let owner else { return .duplicate(ownerAssigned: false) }
        let revoked = held.revocationDate != nil || transaction.revocationDate != nil
        let credits = revoked ? [] : try self.credits(of: change, quantity: Int(held.quantity))
        transactions[id]?.appUserID = owner
        credit(credits, of: transaction, owner: owner)
        return .duplicate(ownerAssigned: true)
    }

    /// What the ingested transaction credits (``LedgerRules/credits(of:grants:quantity:)``), for
    /// `quantity` units (the transaction's own when `nil`).
    private func credits(of change: LedgerIngest, quantity: Int? = nil) throws -> [CurrencyCredit] {
        try LedgerRules.credits(
            of: change.transaction, grants: change.grants, quantity: quantity ?? change.transaction.quantity)
    }

    /// Credits `owner` each of `credits` of `transaction` once, dated when the transaction was recorded.
    private func credit(_ credits: [CurrencyCredit], of transaction: RecordedTransaction, owner: String) {
        for credit in credits {
            self.credit(
                credit, bundleID: transaction.bundleID, owner: owner, transactionID: transaction.transactionID,
                at: transaction.recordedAt)
        }
    }

    private func credit(
        _ credit: CurrencyCredit, bundleID: String, owner: String, transactionID: String, at date: Date
    ) {
        write(
            LedgerEntry(
                kind: .credit, bundleID: bundleID, appUserID: owner, currency: credit.currency, amount: credit.amount,
                transactionID: transactionID, idempotencyKey: credit.idempotencyKey, createdAt: date))
    }

    /// Writes a ledger line and changes its balance by its amount, unless its key was used.
    private func write(_ line: LedgerEntry) {
        guard !lines.contains(where: { $0.idempotencyKey == line.idempotencyKey }) else { return }
        var line = line
        line.createdAt = stored(line.createdAt)
        lines.append(line)
        balances[BalanceKey(line), default: 0] += line.amount
    }

    // MARK: Revocations, reversals and moves

    /// Marks a transaction revoked and takes back `share` of its credits, as
    /// ``PurchaseChangeStatements`` does: only a share larger than the one revoked so far, dated
    /// after the latest refund reversal, applies; of each credit (a reinstatement's aside), the
    /// share less what the revocations since that reversal asked for is taken back, all of it or
    /// down to a zero balance. Answers whether the transaction was revoked now.
    private func revoke(_ id: String, at date: Date, reason: Int?, share: Int, policy: ClawbackPolicy) -> Bool {
        let now = LedgerTime.milliseconds(date)
        let whole = RecordedTransaction.wholeShare
        guard var row = transactions[id],
            row.revocationPercentage.map(Int.init) ?? (row.revocationDate == nil ? 0 : whole) < share,
            row.revocationReversedAt ?? .min < now
        else { return false }
        row.revocationDate = now
        row.revocationReason = reason.map(Int64.init)
        row.revocationPercentage = share == whole ? nil : Int64(share)
        transactions[id] = row
        let reversedAt = row.revocationReversedAt
        let credits = lines.filter {
            $0.transactionID == id && $0.kind == .credit
                && !$0.idempotencyKey.hasPrefix(LedgerRules.reinstatementKeyPrefix)
        }
        for credit in credits {
            let asked = clawbacks(of: id, since: reversedAt).filter { $0.currency == credit.currency }
                .reduce(0) { $0 + $1.shortfall - $1.amount }
            let amount = LedgerRules.creditShare(credit.amount, share: share) - asked
            guard amount > 0 else { continue }
            let taken = policy == .clampAtZero ? min(amount, max(balances[BalanceKey(credit)] ?? 0, 0)) : amount
            write(
                LedgerEntry(
                    kind: .clawback, bundleID: credit.bundleID, appUserID: credit.appUserID, currency: credit.currency,
                    amount: -taken, transactionID: id,
                    idempotencyKey: LedgerRules.clawbackKey(
                        transactionID: id, currency: credit.currency, share: share, reversedAt: reversedAt),
                    shortfall: amount - taken, createdAt: date))
        }
        return true
    }

    /// The clawback lines of a transaction dated after a refund reversal (every one without).
    private func clawbacks(of id: String, since reversedAt: Int64?) -> [LedgerEntry] {
        lines.filter {
            $0.transactionID == id && $0.kind == .clawback && LedgerTime.milliseconds($0.createdAt) > reversedAt ?? .min
        }
    }

    /// Reinstates as ``PurchaseChangeStatements`` does: the reversal is kept on the transaction; a
    /// revocation dated before it is cleared, what the revocations since the previous reversal
    /// took is credited back to whom it was taken from, and an owner never credited is credited.
    public func reinstate(transactionID id: String, reversedAt date: Date, grants: [Grant]) async throws -> Bool {
        let reversedAt = LedgerTime.milliseconds(date)
        guard var row = transactions[id] else { return false }
        let previous = row.revocationReversedAt
        if let previous, previous >= reversedAt { return false }
        guard let revoked = row.revocationDate, revoked < reversedAt else {
            transactions[id]?.revocationReversedAt = reversedAt
            return false
        }
        let transaction = try row.transaction()
        let credits = try LedgerRules.credits(of: transaction, grants: grants, quantity: transaction.quantity)
        row.revocationReversedAt = reversedAt
        (row.revocationDate, row.revocationReason, row.revocationPercentage) = (nil, nil, nil)
        transactions[id] = row
        let taken = Dictionary(grouping: clawbacks(of: id, since: previous), by: BalanceKey.init)
            .mapValues { $0.reduce(0) { $0 - $1.amount } }.sorted { $0.key < $1.key }
        for (key, amount) in taken where amount > 0 {
            credit(
                CurrencyCredit(
                    currency: key.currency, amount: amount,
                    idempotencyKey: LedgerRules.reinstatementKey(
                        transactionID: id, currency: key.currency, reversedAt: reversedAt)),
                bundleID: key.bundleID, owner: key.appUserID, transactionID: id, at: date)
        }
        if let owner = row.appUserID {
            for credit in credits {
                self.credit(credit, bundleID: row.bundleID, owner: owner, transactionID: id, at: date)
            }
        }
        return true
    }

    /// Moves one purchase (the app's transactions of `originalTransactionID` that `from` owns) to
    /// `to`; answers how many moved. Currency credited stays where it was.
    func transfer(bundleID: String, originalTransactionID: String, from: String, to: String) -> Int {
        guard from != to else { return 0 }
        let moving = transactions.values.filter {
            $0.bundleID == bundleID && $0.originalTransactionID == originalTransactionID && $0.appUserID == from
        }
        for row in moving { transactions[row.transactionID]?.appUserID = to }
        return moving.count
    }

    // MARK: Balances

    /// Spends as the engines do: once per key of the app (a key naming another spend is refused),
    /// never below zero; a spend refused for want of currency leaves its key free.
    public func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String, at date: Date
    ) async throws -> SpendOutcome {
        try LedgerRules.validateSpend(amount: amount, idempotencyKey: idempotencyKey)
        let line = LedgerEntry(
            kind: .spend, bundleID: bundleID, appUserID: appUserID, currency: currency, amount: -amount,
            transactionID: nil,
            idempotencyKey: LedgerRules.spendKey(bundleID: bundleID, idempotencyKey: idempotencyKey),
            createdAt: date)
        let balance = balances[BalanceKey(line)] ?? 0
        if let earlier = lines.first(where: { $0.idempotencyKey == line.idempotencyKey }) {
            guard earlier.kind == .spend, BalanceKey(earlier) == BalanceKey(line), earlier.amount == line.amount else {
                throw LedgerStoreError(
                    .idempotencyKeyReused, "the key '\(idempotencyKey)' was used for another spend of this app")
            }
            return .alreadySpent(balance: balance)
        }
        guard balance >= amount else { return .insufficientBalance(balance: balance) }
        write(line)
        return .spent(balance: balance - amount)
    }

    // MARK: Reading purchases

    public func transaction(id: String) async throws -> RecordedTransaction? {
        try transactions[id]?.transaction()
    }

    public func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        guard let row = transactions.values.first(where: { $0.signedDigest == digest.bytes }) else { return nil }
        let known = KnownSignedTransaction(
            transactionID: row.transactionID, bundleID: row.bundleID,
            environment: AppStoreEnvironment(rawValue: row.environment), appUserID: row.appUserID)
        return (
            known,
            try row.appUserID.map { try summary(bundleID: row.bundleID, appUserID: $0, recent: 0, withJWS: false) }
        )
    }

    public func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool
    ) async throws -> CustomerSummary {
        guard recent >= 0 else { throw LedgerStoreError(.invalidArgument, "recent must not be negative") }
        return try summary(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: withJWS)
    }

    private func summary(bundleID: String, appUserID: String, recent: Int, withJWS: Bool) throws -> CustomerSummary {
        let owned = rows(bundleID: bundleID, appUserID: appUserID)
        return CustomerSummary(
            bundleID: bundleID, appUserID: appUserID, balances: balances(bundleID: bundleID, appUserID: appUserID),
            accessTransactions: try owned.filter { $0.productType != ProductType.consumable.rawValue }
                .sorted { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
                .map { try $0.transaction(withJWS: withJWS) },
            recentTransactions: try page(owned, limit: recent, before: nil, withJWS: withJWS),
            transactionCount: owned.count)
    }

    /// A customer's transactions, oldest first (by purchase date, when recorded, and ID).
    func rows(bundleID: String, appUserID: String) -> [TransactionRow] {
        transactions.values.filter { $0.bundleID == bundleID && $0.appUserID == appUserID }.sorted {
            ($0.purchaseDate, $0.recordedAt, $0.transactionID) < ($1.purchaseDate, $1.recordedAt, $1.transactionID)
        }
    }

    /// A page of `rows`, newest first (by purchase date and ID), strictly before `cursor`.
    func page(
        _ rows: [TransactionRow], limit: Int, before cursor: TransactionCursor?, withJWS: Bool
    ) throws -> [RecordedTransaction] {
        let end = cursor.map { (LedgerTime.milliseconds($0.purchaseDate), $0.transactionID) }
        return try rows.filter { row in end.map { (row.purchaseDate, row.transactionID) < $0 } ?? true }
            .sorted { ($0.purchaseDate, $0.transactionID) > ($1.purchaseDate, $1.transactionID) }
            .prefix(max(limit, 0)).map { try $0.transaction(withJWS: withJWS) }
    }

    /// A customer's balances by currency, those spent down to zero included.
    func balances(bundleID: String, appUserID: String) -> [String: Int64] {
        Dictionary(
            uniqueKeysWithValues: balances.filter { $0.key.bundleID == bundleID && $0.key.appUserID == appUserID }
                .map { ($0.key.currency, $0.value) })
    }
}

extension TransactionRow {
    /// The transaction the row records, its signed JWS left out unless `withJWS`.
    fileprivate func transaction(withJWS: Bool) throws -> RecordedTransaction {
        var transaction = try transaction()
        if !withJWS { transaction.signedTransaction = nil }
        return transaction
    }
}
