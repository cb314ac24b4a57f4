// The subscription status types StoreKit's top-level type aliases of iOS 18.4 name, and the aliases
// themselves, as Apple declares them. The backend does not read a status; the aliases are here
// because they share names with Kakin's own types, and the backend must compile beside them.
// Apple's documentation: https://developer.apple.com/documentation/storekit/product/subscriptioninfo/status-swift.struct
import Foundation

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product.SubscriptionInfo {
    /// The renewal status information for an auto-renewable subscription.
    /// https://developer.apple.com/documentation/storekit/product/subscriptioninfo/status-swift.struct
    public struct Status: Sendable {
        /// The renewal state of the auto-renewable subscription.
        public let state: Product.SubscriptionInfo.RenewalState
        /// The latest transaction of the subscription.
        public let transaction: VerificationResult<Transaction>
        /// The renewal information of the subscription.
        public let renewalInfo: VerificationResult<Product.SubscriptionInfo.RenewalInfo>
    }

    /// The renewal information of an auto-renewable subscription.
    /// https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalinfo
    public struct RenewalInfo: Equatable, Hashable, Sendable {
        /// Whether the subscription renews at the end of its period.
        public let willAutoRenew: Bool
        /// The product the subscription renews to.
        public let autoRenewPreference: String?
        /// The product of the subscription's current period.
        public let currentProductID: String
    }

    /// The renewal states of auto-renewable subscriptions.
    /// https://developer.apple.com/documentation/storekit/product/subscriptioninfo/renewalstate
    public struct RenewalState: RawRepresentable, Equatable, Hashable, Sendable {
        /// The state's value.
        public let rawValue: Int
        /// Creates a state.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The customer is subscribed.
        public static let subscribed = RenewalState(rawValue: 1)
        /// The subscription expired.
        public static let expired = RenewalState(rawValue: 2)
        /// The App Store is trying to bill the customer again.
        public static let inBillingRetryPeriod = RenewalState(rawValue: 3)
        /// Billing failed, and the customer keeps the service during a grace period.
        public static let inGracePeriod = RenewalState(rawValue: 4)
        /// The App Store refunded the subscription or revoked it from Family Sharing.
        public static let revoked = RenewalState(rawValue: 5)
    }
}

// StoreKit's top-level aliases for its nested subscription types, new in iOS 18.4. They are why a
// file that imports StoreKit and Kakin's modules must qualify Kakin's `SubscriptionPeriod`.

/// Information about an auto-renewable subscription.
/// https://developer.apple.com/documentation/storekit/subscriptioninfo
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionInfo = Product.SubscriptionInfo

/// Represents the duration of time between subscription renewals.
/// https://developer.apple.com/documentation/storekit/subscriptionperiod
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionPeriod = Product.SubscriptionPeriod

/// The renewal information for an auto-renewable subscription.
/// https://developer.apple.com/documentation/storekit/subscriptionrenewalinfo
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionRenewalInfo = Product.SubscriptionInfo.RenewalInfo

/// The renewal states of auto-renewable subscriptions.
/// https://developer.apple.com/documentation/storekit/subscriptionrenewalstate
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionRenewalState = Product.SubscriptionInfo.RenewalState

/// The renewal status information for an auto-renewable subscription.
/// https://developer.apple.com/documentation/storekit/subscriptionstatus
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionStatus = Product.SubscriptionInfo.Status
