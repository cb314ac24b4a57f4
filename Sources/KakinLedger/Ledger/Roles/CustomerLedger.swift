public import AppStoreModels
public import Foundation

/// The customers: their whole state, their transactions page by page, the anonymous customers
/// that became identified ones, their app downloads, and the search the customers page runs.
///
/// One role of ``LedgerStore``.
public protocol CustomerLedger: Sendable {
    /// The customer's transactions, ledger and balances; entitlements are derived by the caller
    /// from the transactions and the grants.
    func customer(bundleID: String, appUserID: String) async throws -> CustomerState

    /// A page of the customer's transactions, newest first, strictly after `cursor`.
    func transactions(
        bundleID: String, appUserID: String, limit: Int, after cursor: TransactionCursor?
    ) async throws -> [RecordedTransaction]

    /// Makes the anonymous customer `anonymousID` an alias of the identified customer `appUserID`
    /// and moves the anonymous customer's purchases, ledger lines, balances and app downloads to
    /// them, in one database transaction, recording a `customer.aliased` event. Purchases another
    /// identified customer holds part of move from that customer only when `transfersOwnership`.
    /// Idempotent: the same call again changes nothing. An anonymous ID aliased to another
    /// customer before is answered with ``CustomerAliasOutcome/aliasedToAnotherCustomer(_:)``.
    ///
    /// An anonymous ID the app's ledger has never seen (no alias row, transaction, balance, ledger
    /// line or app download of it in this app) is not recorded at all: no alias row and no
    /// `customer.aliased` event are written, and the answer is ``CustomerAliasOutcome/aliased(_:)``
    /// with a move that changed nothing (``CustomerAliasMove/created`` and
    /// ``CustomerAliasMove/changedAnything`` both `false`). Requests naming that ID later are not
    /// sent to `appUserID`, so a made-up or leaked anonymous ID cannot be claimed before its
    /// device has used it.
    func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at date: Date
    ) async throws -> CustomerAliasOutcome

    /// The identified customer the anonymous customer `anonymousID` became, if any.
    func aliasedCustomer(bundleID: String, anonymousID: String) async throws -> String?

    /// At most `limit` customers, newest purchase first: with an empty query, those with the
    /// newest purchases (read newest first through the index by purchase date, stopping once
    /// `limit` customers are found); otherwise those who own a transaction or original
    /// transaction with exactly that ID, and those whose app user ID starts with `query`
    /// (case-insensitive; the first `limit` in the order of their IDs, through the index by
    /// lowercase ID). Of one app when `bundleID` is given (the walk through the newest purchases
    /// reads as many rows either way, so an app with few of them may find fewer).
    func findCustomers(matching query: String, limit: Int, bundleID: String?) async throws -> [CustomerMatch]

    /// Records that an app download belongs to a customer (the latest link wins).
    func linkAppTransaction(
        bundleID: String, appTransactionID: String, appUserID: String, environment: AppStoreEnvironment, at date: Date
    ) async throws

    /// The app downloads linked to a customer, newest link first (at most 50).
    func appTransactions(bundleID: String, appUserID: String) async throws -> [(appTransactionID: String, linkedAt: Date)]

    /// The customer an app download was last linked to, if any.
    func appTransactionCustomer(bundleID: String, appTransactionID: String) async throws -> String?

    /// Records that a parent rescinded consent for the app download of `rescission`, unless a
    /// rescission Apple signed at the same moment or later is recorded for it already. When it is
    /// recorded and names a customer, the customer's consent-scoped data in `erasing` is erased
    /// and a `customer.consent_rescinded` event appended, all in one database transaction: the
    /// same notification twice changes nothing the second time.
    func recordConsentRescission(
        _ rescission: ConsentRescission, erasing: Set<ConsentScopedData>
    ) async throws -> ConsentRescissionOutcome

    /// The latest rescission recorded for the customer, if any (one indexed read).
    func consentRescission(bundleID: String, appUserID: String) async throws -> ConsentRescission?
}

extension CustomerLedger {
    /// Customers of every app matching `query` (``findCustomers(matching:limit:bundleID:)``).
    public func findCustomers(matching query: String, limit: Int) async throws -> [CustomerMatch] {
        try await findCustomers(matching: query, limit: limit, bundleID: nil)
    }
}
