public import Foundation
import KakinWire
import SQLKit

/// What ``LedgerStore/alias(bundleID:anonymousID:to:transfersOwnership:at:)`` did.
public enum CustomerAliasOutcome: Hashable, Sendable {
    /// The anonymous customer is (now, or since an earlier call) an alias of the identified one;
    /// what this call moved.
    case aliased(CustomerAliasMove)
    /// The anonymous ID became another identified customer before: nothing was changed.
    case aliasedToAnotherCustomer(String)
}

/// What one alias call moved from the anonymous customer to the identified one. A call that
/// repeats an alias made before moves nothing (unless something reached the anonymous ID since).
public struct CustomerAliasMove: Hashable, Sendable {
    /// Whether the alias was recorded by this call (false: it was recorded before).
    public var created: Bool
    /// The anonymous customer's transactions that now belong to the identified customer.
    public var transactionIDs: [String]
    /// The anonymous customer's balances, added to the identified customer's, by currency.
    public var balances: [String: Int64]
    /// Purchases (original transaction IDs) that another identified customer held part of and
    /// that moved too, because the app's transfer policy moves purchases to who restores them.
    public var transferredPurchases: [String]
    /// Purchases another identified customer held part of and keeps: those customers' transactions
    /// stayed where they were (the app keeps purchases with their first owner).
    public var keptPurchases: [String]

    /// Whether the call changed anything.
    public var changedAnything: Bool {
        created || !transactionIDs.isEmpty || !balances.isEmpty || !transferredPurchases.isEmpty
    }

    /// Creates a move from its parts.
    public init(
        created: Bool, transactionIDs: [String] = [], balances: [String: Int64] = [:],
        transferredPurchases: [String] = [], keptPurchases: [String] = []
    ) {
        self.created = created
        self.transactionIDs = transactionIDs
        self.balances = balances
        self.transferredPurchases = transferredPurchases
        self.keptPurchases = keptPurchases
    }
}

extension SQLLedgerStore {
    /// Makes the anonymous customer `anonymousID` an alias of the identified customer `appUserID`
    /// and moves everything the anonymous customer has to them, in one database transaction:
    ///
    /// 1. The alias is recorded (`customer_aliases`, one row per anonymous ID, inserted with
    ///    `ON CONFLICT DO NOTHING`): an anonymous ID aliased to another customer before is refused
    ///    with ``CustomerAliasOutcome/aliasedToAnotherCustomer(_:)`` and nothing changes.
    /// 2. Purchases that another identified customer holds part of (transactions of the same
    ///    original transaction) move from that customer only when `transfersOwnership` (the app's
    ///    ``TransferPolicy/transferToNewUser``), as ``transfer(bundleID:originalTransactionID:from:to:at:)``
    ///    moves them, each with its `transaction.transferred` event; otherwise they stay.
    /// 3. The anonymous customer's own transactions, ledger lines, balances (added to the
    ///    identified customer's) and linked app downloads move to `appUserID`.
    /// 4. A `customer.aliased` event records what moved (`alias`, `appUserId`, `transactionIds`,
    ///    `balances`, `transferredPurchases`, `keptPurchases`, `created`).
    ///
    /// The same call again changes nothing and writes no event; it moves what reached the
    /// anonymous ID since the first call, if anything did. Both IDs are checked first: the first
    /// must be anonymous (`$kakin_anon_…`), the second must not.
    public func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at date: Date
    ) async throws -> CustomerAliasOutcome {
        guard AnonymousAppUserID.isAnonymous(anonymousID) else {
            throw LedgerStoreError(.invalidArgument, "\(anonymousID) is not an anonymous customer")
        }
        guard !appUserID.isEmpty, !AnonymousAppUserID.isAnonymous(appUserID) else {
            throw LedgerStoreError(.invalidArgument, "an alias names an identified customer, not '\(appUserID)'")
        }
        let now = LedgerTime.milliseconds(date)
        return try await writing(for: appUserID) { db in
            try await Self.alias(
                bundleID: bundleID, anonymousID: anonymousID, to: appUserID, transfersOwnership: transfersOwnership,
                at: now, on: db)
        }
    }

    /// The identified customer the anonymous customer `anonymousID` of `bundleID` became, if any.
    public func aliasedCustomer(bundleID: String, anonymousID: String) async throws -> String? {
        let row = try await readingStatement { db in
            try await db.run(.aliasTarget, .text(bundleID), .text(anonymousID)).first
        }
        return try row.map { try $0.decode(column: "app_user_id", as: String.self) }
    }

    private static func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at now: Int64,
        on db: any SQLDatabase
    ) async throws -> CustomerAliasOutcome {
        let inserted = try await db.first(
            .insertAlias, .text(bundleID), .text(anonymousID), .text(appUserID), .integer(now))
        if inserted == nil {
            // Recorded before (or by a concurrent call, whose commit the insert waited for).
            guard let existing = try await db.first(.aliasTarget, .text(bundleID), .text(anonymousID)) else {
                throw LedgerStoreError(.inconsistentState, "the alias of \(anonymousID) vanished")
            }
            let target = try existing.decode(column: "app_user_id", as: String.self)
            guard target == appUserID else { return .aliasedToAnotherCustomer(target) }
        }
        var move = CustomerAliasMove(created: inserted != nil)

        // Purchases whose other transactions another identified customer holds: the app's policy decides.
        let shared = try await db.run(.sharedPurchases, .text(bundleID), .text(anonymousID), .text(appUserID))
        var holders: [(original: String, owner: String)] = []
        for row in shared {
            holders.append(
                (
                    try row.decode(column: "original_transaction_id", as: String.self),
                    try row.decode(column: "app_user_id", as: String.self)
                ))
        }
        for (original, owner) in holders.sorted(by: { ($0.original, $0.owner) < ($1.original, $1.owner) }) {
            if transfersOwnership {
                let moved = try await transfer(
                    bundleID: bundleID, originalTransactionID: original, from: owner, to: appUserID, at: now, on: db)
                if moved > 0 { move.transferredPurchases.append(original) }
            } else {
                move.keptPurchases.append(original)
            }
        }

        move.transactionIDs = try await db.run(.moveTransactions, .text(appUserID), .text(bundleID), .text(anonymousID))
            .map { try $0.decode(column: "transaction_id", as: String.self) }.sorted()
        move.balances = try await balances(bundleID: bundleID, appUserID: anonymousID, on: db)
        if !move.balances.isEmpty {
            _ = try await db.run(.mergeBalances, .text(appUserID), .text(bundleID), .text(anonymousID))
            _ = try await db.run(.deleteBalances, .text(bundleID), .text(anonymousID))
        }
        _ = try await db.run(.moveLedgerLines, .text(appUserID), .text(bundleID), .text(anonymousID))
        _ = try await db.run(.moveAppTransactions, .text(appUserID), .text(bundleID), .text(anonymousID))

        if move.changedAnything {
            try await appendEvent(
                LedgerEventType.customerAliased, bundleID: bundleID, appUserID: appUserID,
                payload: AliasEventPayload(alias: anonymousID, appUserId: appUserID, move: move), at: now, on: db)
        }
        return .aliased(move)
    }
}


extension LedgerStatement {
    static let insertAlias = LedgerStatement(
        """
        INSERT INTO customer_aliases (bundle_id, alias, app_user_id, created_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (bundle_id, alias) DO NOTHING
        RETURNING app_user_id
        """)
    static let aliasTarget = LedgerStatement(
        "SELECT app_user_id FROM customer_aliases WHERE bundle_id = ? AND alias = ?")
    /// The purchases of the anonymous customer (2nd value) that a customer other than it and the
    /// identified one (3rd value) holds transactions of, with that holder.
    static let sharedPurchases = LedgerStatement(
        """
        SELECT DISTINCT other.original_transaction_id, other.app_user_id
        FROM transactions other
        JOIN transactions own
          ON own.original_transaction_id = other.original_transaction_id AND own.bundle_id = other.bundle_id
        WHERE other.bundle_id = ? AND own.app_user_id = ?
          AND other.app_user_id IS NOT NULL AND other.app_user_id <> own.app_user_id AND other.app_user_id <> ?
        """)
    static let moveTransactions = LedgerStatement(
        "UPDATE transactions SET app_user_id = ? WHERE bundle_id = ? AND app_user_id = ? RETURNING transaction_id")
    /// Adds the anonymous customer's balances (3rd value) to the identified customer's (1st).
    static let mergeBalances = LedgerStatement(
        """
        INSERT INTO balances (app_user_id, bundle_id, currency, amount)
        SELECT ?, bundle_id, currency, amount FROM balances WHERE bundle_id = ? AND app_user_id = ?
        ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
        """)
    static let deleteBalances = LedgerStatement("DELETE FROM balances WHERE bundle_id = ? AND app_user_id = ?")
    static let moveLedgerLines = LedgerStatement(
        "UPDATE ledger_entries SET app_user_id = ? WHERE bundle_id = ? AND app_user_id = ?")
    static let moveAppTransactions = LedgerStatement(
        "UPDATE app_transactions SET app_user_id = ? WHERE bundle_id = ? AND app_user_id = ?")
}
