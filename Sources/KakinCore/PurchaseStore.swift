/// Where a customer paid for a purchase: in the App Store, or on the web through the app's Stripe
/// account.
///
/// The ledger keeps it with each transaction (its raw value is the stored text) and the server
/// answers it in each entitlement and transaction, so the two never convert between types. A
/// purchase recorded before the ledger kept it is the App Store's.
public enum PurchaseStore: String, Codable, Hashable, Sendable, CaseIterable {
    /// Apple's App Store (or its sandbox): StoreKit sold it.
    case appStore
    /// The app's web checkout, paid through Stripe.
    case stripe
}
