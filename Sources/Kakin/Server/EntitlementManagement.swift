public import Foundation
public import KakinWire
import KakinCore

/// Where a customer manages (changes, cancels, asks a refund for) the purchase behind an
/// entitlement: where they paid for it.
public enum EntitlementManagement: Hashable, Sendable {
    /// In the App Store: the app shows Apple's manage-subscriptions sheet
    /// (``KakinStore/showManageSubscriptions(subscriptionGroupID:)``, StoreKit's
    /// `AppStore.showManageSubscriptions(in:)`) and its refund sheet.
    case appStore
    /// On the web, where the customer paid through the app's Stripe account: at the URL when the
    /// server gives one; `nil` when it does not (the purchase server has no customer portal
    /// today), and the app links to its own account page, where its backend changes or cancels
    /// the Stripe subscription. Apple's sheets know nothing of these purchases.
    case web(URL?)
}

extension Entitlement {
    /// Where the customer manages the purchase behind this entitlement: ``EntitlementManagement/web(_:)``
    /// for one paid on the web (`store` `stripe`), ``EntitlementManagement/appStore`` otherwise
    /// (a purchase the server recorded before it said where the customer paid is the App Store's).
    public var management: EntitlementManagement {
        switch store {
        case .stripe?: .web(nil)
        case .appStore?, nil: .appStore
        }
    }

    /// Whether the customer paid for this entitlement on the web, through the app's Stripe account.
    public var isWebPurchase: Bool { store == .stripe }
}
