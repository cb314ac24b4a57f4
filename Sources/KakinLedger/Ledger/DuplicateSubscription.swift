import Foundation
import KakinCore

/// One customer subscribed twice to what one entitlement gives, in two stores (the App Store and
/// the web): what the `subscription.duplicated` event says, so that the app's backend can offer a
/// refund of one of them.
public struct DuplicateSubscription: Hashable, Sendable {
    /// One of the subscriptions.
    public struct Subscription: Hashable, Sendable {
        /// Where the customer pays for it.
        public var store: PurchaseStore
        /// Its original transaction ID (the App Store's, or the Stripe subscription's ID).
        public var originalTransactionID: String
        /// The product it renews.
        public var productID: String

        /// A subscription from its parts.
        public init(store: PurchaseStore, originalTransactionID: String, productID: String) {
            self.store = store
            self.originalTransactionID = originalTransactionID
            self.productID = productID
        }
    }

    /// The app.
    public var bundleID: String
    /// The customer.
    public var appUserID: String
    /// The entitlement both give.
    public var entitlement: String
    /// The active subscriptions that give it, in at least two stores.
    public var subscriptions: [Subscription]

    /// A duplicate from its parts.
    public init(bundleID: String, appUserID: String, entitlement: String, subscriptions: [Subscription]) {
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.entitlement = entitlement
        self.subscriptions = subscriptions
    }

    /// The event's body: `{"entitlement", "subscriptions": [{"originalTransactionId", "productId", "store"}]}`.
    public var json: String { DuplicateSubscriptionPayload(self).json }
}

/// Body of `subscription.duplicated` events.
struct DuplicateSubscriptionPayload: EventPayload {
    struct Item: Encodable {
        var originalTransactionId: String
        var productId: String
        var store: String
    }

    var entitlement: String
    var subscriptions: [Item]

    init(_ duplicate: DuplicateSubscription) {
        entitlement = duplicate.entitlement
        subscriptions = duplicate.subscriptions.map {
            Item(originalTransactionId: $0.originalTransactionID, productId: $0.productID, store: $0.store.rawValue)
        }
    }

    func write(to output: inout JSONOutput) {
        output.object { output in
            output.field("entitlement", entitlement)
            output.key("subscriptions")
            output.array(subscriptions) { output, subscription in
                output.object { output in
                    output.field("originalTransactionId", subscription.originalTransactionId)
                    output.field("productId", subscription.productId)
                    output.field("store", subscription.store)
                }
            }
        }
    }
}
