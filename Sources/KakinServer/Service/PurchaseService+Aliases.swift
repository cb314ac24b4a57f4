import Foundation
import KakinCore
import KakinLedger
import KakinWire

/// Anonymous customers and the identified customers they become: the SDK makes an anonymous ID
/// (`$kakin_anon_…`) for an app that sells before its user signs in, and on sign-in asks the
/// server to move what the anonymous customer bought to the identified customer.
extension PurchaseService {
    /// Makes the anonymous customer `anonymousID` an alias of the identified customer `appUserID`
    /// of `bundleID` and moves the anonymous customer's purchases and balances to them, in one
    /// database transaction (`CustomerLedger/alias(bundleID:anonymousID:to:transfersOwnership:at:)`).
    /// Purchases another identified customer holds part of move from that customer only under the
    /// app's ``TransferPolicy/transferToNewUser``. Idempotent: the same call again changes nothing.
    ///
    /// - Throws: ``ServerError/Code/invalidRequest`` when `anonymousID` is not an anonymous ID as
    ///   the SDK makes it (cause `notAnonymous`) or `appUserID` is (cause `anonymousTarget`); ``ServerError/Code/conflict``
    ///   (cause `aliasedToAnotherCustomer`) when `anonymousID` became another customer before.
    @discardableResult
    public func alias(
        bundleID: String, anonymousID: String, to appUserID: String
    ) async throws(ServerError) -> CustomerAliasMove {
        let app = try app(bundleID)
        let outcome: CustomerAliasOutcome
        do {
            // The ledger checks both IDs (``LedgerStoreError/cause`` says which one it refused).
            outcome = try await customers.alias(
                bundleID: app.bundleID, anonymousID: anonymousID, to: appUserID,
                transfersOwnership: app.transferPolicy == .transferToNewUser, at: now())
            // An upload for the anonymous ID can commit while the alias's transaction runs, after
            // its move read the rows, and look for the alias before the alias commits (PostgreSQL
            // replicas write concurrently). Such a row committed before this second pass starts,
            // so the pass moves it; a row committed later finds the alias itself (`followAlias`).
            if case .aliased(let move) = outcome, move.created {
                let late = try await customers.alias(
                    bundleID: app.bundleID, anonymousID: anonymousID, to: appUserID,
                    transfersOwnership: app.transferPolicy == .transferToNewUser, at: now())
                if case .aliased(let lateMove) = late, lateMove.changedAnything {
                    log(lateMove, of: anonymousID, to: appUserID, bundleID: app.bundleID)
                }
            }
        } catch { throw ServerError(error) }
        switch outcome {
        case .aliasedToAnotherCustomer:
            throw ServerError(
                .conflict, "\(anonymousID) became another customer before", cause: "aliasedToAnotherCustomer")
        case .aliased(let move):
            log(move, of: anonymousID, to: appUserID, bundleID: app.bundleID)
            return move
        }
    }

    /// Counts and logs an alias call that changed something.
    private func log(_ move: CustomerAliasMove, of anonymousID: String, to appUserID: String, bundleID: String) {
        guard move.changedAnything else { return }
        metrics?.ledgerEvent("customer.aliased")
        logger.info(
            "ledger",
            metadata: [
                "event": "customer.aliased", "bundle_id": "\(bundleID)", "alias": "\(CustomerIDRedaction.redacted(anonymousID))",
                "app_user_id": "\(CustomerIDRedaction.redacted(appUserID))", "created": "\(move.created)",
                "transactions": "\(move.transactionIDs.count)",
                "currencies": "\(move.balances.keys.sorted().joined(separator: ","))",
                "transferred": "\(move.transferredPurchases.count)", "kept": "\(move.keptPurchases.count)",
            ])
    }

    /// The customer a request naming `appUserID` is about: the identified customer an anonymous ID
    /// became, when it became one, else `appUserID` itself. Only anonymous IDs are looked up, so
    /// requests of identified customers cost nothing more.
    public func customerID(_ appUserID: String, bundleID: String) async throws(ServerError) -> String {
        guard AnonymousAppUserID.isAnonymous(appUserID) else { return appUserID }
        do {
            return try await customers.aliasedCustomer(bundleID: bundleID, anonymousID: appUserID) ?? appUserID
        } catch { throw ServerError(error) }
    }

    /// After a write made for `appUserID` as ``customerID(_:bundleID:)`` found it (not aliased):
    /// when the anonymous customer became an identified one meanwhile (a sign-in that ran while
    /// the upload was on its way), what the write left under the anonymous ID is moved to that
    /// customer, whose ID is returned. `nil` when there was nothing to do.
    func followAlias(of appUserID: String, bundleID: String) async throws(ServerError) -> String? {
        guard AnonymousAppUserID.isAnonymous(appUserID) else { return nil }
        let target: String?
        do { target = try await customers.aliasedCustomer(bundleID: bundleID, anonymousID: appUserID) } catch {
            throw ServerError(error)
        }
        guard let target else { return nil }
        try await alias(bundleID: bundleID, anonymousID: appUserID, to: target)
        return target
    }
}
