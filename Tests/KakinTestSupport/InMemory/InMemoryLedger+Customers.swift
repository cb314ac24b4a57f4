import AppStoreModels
import Foundation

@testable import KakinLedger

/// A purchase an anonymous customer holds part of and another identified customer the rest.
private struct SharedPurchase: Hashable {
    var originalTransactionID: String
    var owner: String
}

/// The customers of ``InMemoryLedger``: their state, pages of their transactions, aliases, app
/// downloads and the search.
extension InMemoryLedger {
    public func customer(bundleID: String, appUserID: String) async throws -> CustomerState {
        CustomerState(
            bundleID: bundleID, appUserID: appUserID, balances: balances(bundleID: bundleID, appUserID: appUserID),
            transactions: try rows(bundleID: bundleID, appUserID: appUserID).map { try $0.transaction() },
            ledger: lines.filter { $0.bundleID == bundleID && $0.appUserID == appUserID })
    }

    public func transactions(
        bundleID: String, appUserID: String, limit: Int, after cursor: TransactionCursor?
    ) async throws -> [RecordedTransaction] {
        guard limit >= 0 else { throw LedgerStoreError(.invalidArgument, "limit must not be negative") }
        return try page(rows(bundleID: bundleID, appUserID: appUserID), limit: limit, before: cursor, withJWS: true)
    }

    /// Aliases as ``PurchaseChangeStatements`` does: nothing at all for an anonymous ID the app's
    /// ledger has never seen; otherwise the alias (kept when made before), the purchases another
    /// identified customer holds part of (moved or kept by `transfersOwnership`), then the
    /// anonymous customer's transactions, balances (added to the identified customer's), ledger
    /// lines and app downloads.
    public func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at date: Date
    ) async throws -> CustomerAliasOutcome {
        try LedgerRules.validateAlias(anonymousID, to: appUserID)
        let key = AppKey(bundleID: bundleID, id: anonymousID)
        func isAnonymous(_ bundle: String, _ owner: String?) -> Bool { bundle == bundleID && owner == anonymousID }
        let seen =
            aliases[key] != nil || transactions.values.contains { isAnonymous($0.bundleID, $0.appUserID) }
            || balances.keys.contains { isAnonymous($0.bundleID, $0.appUserID) }
            || lines.contains { isAnonymous($0.bundleID, $0.appUserID) }
            || appDownloads.contains { isAnonymous($0.key.bundleID, $0.value.appUserID) }
        guard seen else { return .aliased(CustomerAliasMove(created: false)) }
        let target = aliases[key] ?? appUserID
        guard target == appUserID else { return .aliasedToAnotherCustomer(target) }
        var move = CustomerAliasMove(created: aliases[key] == nil)
        aliases[key] = appUserID

        let own = Set(
            transactions.values.filter { isAnonymous($0.bundleID, $0.appUserID) }.map(\.originalTransactionID))
        let shared = Set(
            transactions.values.compactMap { row -> SharedPurchase? in
                guard row.bundleID == bundleID, own.contains(row.originalTransactionID), let owner = row.appUserID,
                    owner != anonymousID, owner != appUserID
                else { return nil }
                return SharedPurchase(originalTransactionID: row.originalTransactionID, owner: owner)
            }
        ).sorted { ($0.originalTransactionID, $0.owner) < ($1.originalTransactionID, $1.owner) }
        for purchase in shared {
            let original = purchase.originalTransactionID
            guard transfersOwnership else {
                move.keptPurchases.append(original)
                continue
            }
            let moved = transfer(
                bundleID: bundleID, originalTransactionID: original, from: purchase.owner, to: appUserID)
            if moved > 0 { move.transferredPurchases.append(original) }
        }

        let moving = transactions.values.filter { isAnonymous($0.bundleID, $0.appUserID) }.map(\.transactionID)
        for id in moving { transactions[id]?.appUserID = appUserID }
        move.transactionIDs = moving.sorted()
        for (held, amount) in balances where isAnonymous(held.bundleID, held.appUserID) {
            balances[held] = nil
            let identified = BalanceKey(bundleID: bundleID, appUserID: appUserID, currency: held.currency)
            balances[identified, default: 0] += amount
            move.balances[held.currency] = amount
        }
        for index in lines.indices where isAnonymous(lines[index].bundleID, lines[index].appUserID) {
            lines[index].appUserID = appUserID
        }
        for (download, link) in appDownloads where isAnonymous(download.bundleID, link.appUserID) {
            appDownloads[download]?.appUserID = appUserID
        }
        return .aliased(move)
    }

    public func aliasedCustomer(bundleID: String, anonymousID: String) async throws -> String? {
        aliases[AppKey(bundleID: bundleID, id: anonymousID)]
    }

    /// The engines' search, plainly: the owners of the newest purchases (at most
    /// ``CustomerSearch/scanLimit`` read), or the owners of a transaction or original transaction
    /// with the query as ID and the first `limit` customers whose ID starts with it, ignoring case;
    /// each counted, newest purchase first (``CustomerSearch``).
    public func findCustomers(matching query: String, limit: Int, bundleID: String?) async throws -> [CustomerMatch] {
        guard limit > 0 else { return [] }
        var found = CustomerSearch.Found(bundleID: bundleID)
        let owned = transactions.values.filter { $0.appUserID != nil }
        func add(_ row: TransactionRow) {
            if let owner = row.appUserID { found.add(CustomerSearch.Key(bundleID: row.bundleID, appUserID: owner)) }
        }
        if query.isEmpty {
            let newest = owned.sorted { ($0.purchaseDate, $0.transactionID) > ($1.purchaseDate, $1.transactionID) }
            for row in newest.prefix(CustomerSearch.scanLimit) where found.count < limit { add(row) }
        } else {
            owned.filter { $0.transactionID == query || $0.originalTransactionID == query }.forEach(add)
            let prefix = query.lowercased()
            let matching = owned.filter {
                ($0.appUserID ?? "").lowercased().hasPrefix(prefix) && (bundleID == nil || $0.bundleID == bundleID)
            }
            let keys = Set(
                matching.compactMap { row in
                    row.appUserID.map { CustomerSearch.Key(bundleID: row.bundleID, appUserID: $0) }
                })
            keys.sorted {
                ($0.appUserID.lowercased(), $0.bundleID, $0.appUserID) < (
                    $1.appUserID.lowercased(), $1.bundleID, $1.appUserID
                )
            }.prefix(limit).forEach { found.add($0) }
        }
        let matches = found.keys.map { key in
            let rows = owned.filter { $0.bundleID == key.bundleID && $0.appUserID == key.appUserID }
            return CustomerMatch(
                bundleID: key.bundleID, appUserID: key.appUserID, transactionCount: rows.count,
                lastPurchaseDate: LedgerTime.date(rows.map(\.purchaseDate).max() ?? 0))
        }
        return CustomerSearch.ordered(matches, limit: limit)
    }

    public func linkAppTransaction(
        bundleID: String, appTransactionID: String, appUserID: String, environment: AppStoreEnvironment, at date: Date
    ) async throws {
        appDownloads[AppKey(bundleID: bundleID, id: appTransactionID)] = (appUserID, stored(date))
    }

    public func appTransactions(
        bundleID: String, appUserID: String
    ) async throws -> [(appTransactionID: String, linkedAt: Date)] {
        let linked = appDownloads.filter { $0.key.bundleID == bundleID && $0.value.appUserID == appUserID }
            .map { (appTransactionID: $0.key.id, linkedAt: $0.value.linkedAt) }
        return Array(
            linked.sorted { ($1.linkedAt, $0.appTransactionID) < ($0.linkedAt, $1.appTransactionID) }.prefix(50))
    }

    public func appTransactionCustomer(bundleID: String, appTransactionID: String) async throws -> String? {
        appDownloads[AppKey(bundleID: bundleID, id: appTransactionID)]?.appUserID
    }
}
