import AppStoreModels
public import Foundation
public import KakinLedger
public import KakinWire

/// Derives a customer's entitlements from their transactions and the grants, at a moment.
///
/// An entitlement is active while some transaction granting it is valid: not refunded or revoked,
/// and for auto-renewable subscriptions, before its expiry or, while the App Store retries a
/// failed renewal in a billing grace period, before the grace period ends. When several
/// transactions grant the same entitlement, the active one with the latest expiry wins; otherwise
/// the latest one is shown as inactive, so the app can say "expired" or "refunded".
///
/// A subscription's entitlement also says whether it renews, the kind of period its transaction
/// pays for, and any billing problem, from the subscription's renewal state (`SubscriptionRenewal`).
public enum EntitlementRules {
    /// The entitlements `transactions` give at `date` under `grants`, one per identifier, sorted by
    /// identifier; `renewals` is the renewal state of the subscriptions among them, by original
    /// transaction ID.
    ///
    /// While a parent's withdrawal of consent (`consent`) stands, every entitlement is inactive and
    /// carries its date (`Entitlement.consentRescindedDate`); a new purchase of something that
    /// grants an entitlement, made after it, lifts it (`ConsentRescission.isLifted(by:)`).
    public static func entitlements(
        transactions: [RecordedTransaction], grants: GrantsCatalog,
        renewals: [String: SubscriptionRenewal] = [:], consent: ConsentRescission? = nil, at date: Date
    ) -> [Entitlement] {
        let granting = granting(transactions, grants: grants)
        let withheld = consent.flatMap { $0.isLifted(by: granting) ? nil : $0.rescindedAt }
        return entitlements(granting, grants: grants, renewals: renewals, at: date).map { entitlement in
            guard let withheld else { return entitlement }
            var ended = entitlement
            ended.isActive = false
            ended.consentRescindedDate = withheld
            return ended
        }
    }

    /// Whether `consent`, a withdrawal of consent, still stands over `transactions`: no new
    /// purchase of something that grants an entitlement was made after it.
    public static func withholds(
        _ consent: ConsentRescission, transactions: [RecordedTransaction], grants: GrantsCatalog
    ) -> Bool {
        !consent.isLifted(by: granting(transactions, grants: grants))
    }

    /// The transactions of a product that grants an entitlement.
    private static func granting(_ transactions: [RecordedTransaction], grants: GrantsCatalog) -> [RecordedTransaction] {
        transactions.filter { transaction in
            grants.grants(for: transaction.productID).contains { grant in
                if case .entitlement = grant { true } else { false }
            }
        }
    }

    private static func entitlements(
        _ transactions: [RecordedTransaction], grants: GrantsCatalog, renewals: [String: SubscriptionRenewal],
        at date: Date
    ) -> [Entitlement] {
        var best: [String: Entitlement] = [:]
        let latest = latestSubscriptionTransactions(transactions)
        for transaction in transactions.sorted(by: { $0.purchaseDate < $1.purchaseDate }) {
            for case .entitlement(let identifier) in grants.grants(for: transaction.productID) {
                let renewal =
                    latest.contains(transaction.transactionID)
                    ? renewals[transaction.originalTransactionID] : nil
                let candidate = entitlement(identifier, from: transaction, renewal: renewal, at: date)
                guard let current = best[identifier] else {
                    best[identifier] = candidate
                    continue
                }
                if candidate.isActive && !current.isActive {
                    best[identifier] = candidate
                } else if candidate.isActive == current.isActive {
                    let currentEnd = current.expiresDate ?? .distantFuture
                    let candidateEnd = candidate.expiresDate ?? .distantFuture
                    if candidateEnd >= currentEnd { best[identifier] = candidate }
                }
            }
        }
        return best.values.sorted { $0.identifier < $1.identifier }
    }

    /// The entitlement `identifier` as `transaction` gives it at `date`. For a subscription:
    /// `willRenew` from `renewal` (without one, whether it is active), its period type, and the
    /// billing problem `renewal` reports.
    static func entitlement(
        _ identifier: String, from transaction: RecordedTransaction, renewal: SubscriptionRenewal?, at date: Date
    ) -> Entitlement {
        var entitlement = Entitlement(
            identifier: identifier, productID: transaction.productID,
            isActive: isActive(transaction, renewal: renewal, at: date), expiresDate: transaction.expiresDate,
            revocationDate: transaction.revocationDate, transactionID: transaction.transactionID,
            originalTransactionID: transaction.originalTransactionID,
            environment: Entitlement.Environment(rawValue: transaction.environment.rawValue), store: transaction.store)
        guard transaction.productType == .autoRenewableSubscription else { return entitlement }
        entitlement.periodType = transaction.periodType
        entitlement.billingIssueDetectedAt = renewal?.billingIssueDetectedAt
        entitlement.gracePeriodExpiresAt = renewal?.gracePeriodExpiresAt
        entitlement.willRenew =
            transaction.revocationDate == nil && (renewal?.willRenew ?? entitlement.isActive)
        return entitlement
    }

    /// Whether one transaction gives access at `date`.
    public static func isActive(_ transaction: RecordedTransaction, at date: Date) -> Bool {
        isActive(transaction, renewal: nil, at: date)
    }

    /// Whether one transaction gives access at `date`, given the renewal state of its
    /// subscription: a subscription whose renewal failed stays active until its grace period ends.
    public static func isActive(
        _ transaction: RecordedTransaction, renewal: SubscriptionRenewal?, at date: Date
    ) -> Bool {
        guard transaction.revocationDate == nil else { return false }
        switch transaction.productType {
        case .autoRenewableSubscription:
            if (transaction.expiresDate ?? .distantPast) > date { return true }
            guard let renewal, renewal.billingIssueDetectedAt != nil, let graceEnd = renewal.gracePeriodExpiresAt,
                transaction.expiresDate != nil
            else { return false }
            return graceEnd > date
        case .consumable:
            return false
        default:
            return transaction.expiresDate.map { $0 > date } ?? true
        }
    }

    /// The transaction IDs of the latest transaction (latest expiry, then purchase) of each
    /// subscription among `transactions`: the one its renewal state describes.
    static func latestSubscriptionTransactions(_ transactions: [RecordedTransaction]) -> Set<String> {
        var latest: [String: RecordedTransaction] = [:]
        // In the order ``entitlements(transactions:grants:renewals:consent:at:)`` weighs them, the
        // later of two that end together winning, so that both pick the same one.
        for transaction in transactions.sorted(by: { $0.purchaseDate < $1.purchaseDate })
        where transaction.productType == .autoRenewableSubscription {
            guard let current = latest[transaction.originalTransactionID] else {
                latest[transaction.originalTransactionID] = transaction
                continue
            }
            let key = (transaction.expiresDate ?? .distantPast, transaction.purchaseDate)
            if key >= (current.expiresDate ?? .distantPast, current.purchaseDate) {
                latest[transaction.originalTransactionID] = transaction
            }
        }
        return Set(latest.values.map(\.transactionID))
    }

    /// The subscriptions active at `date` among `transactions` that give the same entitlement from
    /// more than one store (`PurchaseStore`): by entitlement, each subscription once (its
    /// original transaction), oldest first. Empty when every entitlement is paid for in one store.
    public static func duplicatedSubscriptions(
        _ transactions: [RecordedTransaction], grants: GrantsCatalog, at date: Date
    ) -> [String: [DuplicateSubscription.Subscription]] {
        var byEntitlement: [String: [DuplicateSubscription.Subscription]] = [:]
        let active = transactions.filter { $0.productType == .autoRenewableSubscription && isActive($0, at: date) }
        for transaction in active.sorted(by: { $0.purchaseDate < $1.purchaseDate }) {
            for case .entitlement(let identifier) in grants.grants(for: transaction.productID) {
                let subscription = DuplicateSubscription.Subscription(
                    store: transaction.store, originalTransactionID: transaction.originalTransactionID,
                    productID: transaction.productID)
                if byEntitlement[identifier, default: []].contains(where: {
                    $0.originalTransactionID == subscription.originalTransactionID
                }) { continue }
                byEntitlement[identifier, default: []].append(subscription)
            }
        }
        return byEntitlement.filter { Set($0.value.map(\.store)).count > 1 }
    }
}
