public import Foundation

extension StoreKitConfiguration {
    /// How a StoreKit test session behaves: storefront, locale, simulated failures and time speed.
    ///
    /// Xcode writes these under keys that start with an underscore and adds new ones over time. The
    /// known keys are typed; all others are kept in ``otherSettings`` and written back unchanged.
    public struct Settings: Codable, Hashable, Sendable {
        /// The App Store Connect ID of the app, when the file is synced with App Store Connect.
        public var applicationInternalID: String?
        /// Whether purchases wait for a parent's approval (Ask to Buy).
        public var askToBuyEnabled: Bool?
        /// Whether subscriptions that fail to renew enter a billing grace period.
        public var billingGracePeriodEnabled: Bool?
        /// Whether purchases meet billing problems.
        public var billingIssuesEnabled: Bool?
        /// The developer's team ID, when the file is synced with App Store Connect.
        public var developerTeamID: String?
        /// Whether StoreKit skips its purchase confirmation dialogs.
        public var disableDialogs: Bool?
        /// Whether transactions fail.
        public var failTransactionsEnabled: Bool?
        /// When the file was last synced with App Store Connect, in seconds since 2001-01-01 UTC.
        /// See ``lastSynchronizedDateValue``.
        public var lastSynchronizedDate: Double?
        /// The locale of the test session, such as `en_US`.
        public var locale: String?
        /// Whether renewals meet billing problems.
        public var renewalBillingIssuesEnabled: Bool?
        /// The storefront of the test session, as an ISO 3166-1 alpha-3 code such as `USA`.
        public var storefront: String?
        /// The StoreKit calls that should fail, and how.
        public var storeKitErrors: [StoreKitErrorSetting]?
        /// How fast time passes for subscriptions; `0` is real time. Xcode's numbering of the faster
        /// rates is not documented.
        public var timeRate: Int?
        /// Every other setting, as raw JSON, keyed as in the file.
        public var otherSettings: [String: JSONValue]

        /// Creates settings; every field defaults to absent.
        public init(
            applicationInternalID: String? = nil, askToBuyEnabled: Bool? = nil,
            billingGracePeriodEnabled: Bool? = nil, billingIssuesEnabled: Bool? = nil,
            developerTeamID: String? = nil, disableDialogs: Bool? = nil, failTransactionsEnabled: Bool? = nil,
            lastSynchronizedDate: Double? = nil, locale: String? = nil, renewalBillingIssuesEnabled: Bool? = nil,
            storefront: String? = nil, storeKitErrors: [StoreKitErrorSetting]? = nil, timeRate: Int? = nil,
            otherSettings: [String: JSONValue] = [:]
        ) {
            self.applicationInternalID = applicationInternalID
            self.askToBuyEnabled = askToBuyEnabled
            self.billingGracePeriodEnabled = billingGracePeriodEnabled
            self.billingIssuesEnabled = billingIssuesEnabled
            self.developerTeamID = developerTeamID
            self.disableDialogs = disableDialogs
            self.failTransactionsEnabled = failTransactionsEnabled
            self.lastSynchronizedDate = lastSynchronizedDate
            self.locale = locale
            self.renewalBillingIssuesEnabled = renewalBillingIssuesEnabled
            self.storefront = storefront
            self.storeKitErrors = storeKitErrors
            self.timeRate = timeRate
            self.otherSettings = otherSettings
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case applicationInternalID = "_applicationInternalID"
            case askToBuyEnabled = "_askToBuyEnabled"
            case billingGracePeriodEnabled = "_billingGracePeriodEnabled"
            case billingIssuesEnabled = "_billingIssuesEnabled"
            case developerTeamID = "_developerTeamID"
            case disableDialogs = "_disableDialogs"
            case failTransactionsEnabled = "_failTransactionsEnabled"
            case lastSynchronizedDate = "_lastSynchronizedDate"
            case locale = "_locale"
            case renewalBillingIssuesEnabled = "_renewalBillingIssuesEnabled"
            case storefront = "_storefront"
            case storeKitErrors = "_storeKitErrors"
            case timeRate = "_timeRate"
        }

        private static let typedKeys = Set(CodingKeys.allCases.map(\.rawValue))

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            applicationInternalID = try container.decodeIfPresent(String.self, forKey: .applicationInternalID)
            askToBuyEnabled = try container.decodeIfPresent(Bool.self, forKey: .askToBuyEnabled)
            billingGracePeriodEnabled = try container.decodeIfPresent(Bool.self, forKey: .billingGracePeriodEnabled)
            billingIssuesEnabled = try container.decodeIfPresent(Bool.self, forKey: .billingIssuesEnabled)
            developerTeamID = try container.decodeIfPresent(String.self, forKey: .developerTeamID)
            disableDialogs = try container.decodeIfPresent(Bool.self, forKey: .disableDialogs)
            failTransactionsEnabled = try container.decodeIfPresent(Bool.self, forKey: .failTransactionsEnabled)
            lastSynchronizedDate = try container.decodeIfPresent(Double.self, forKey: .lastSynchronizedDate)
            locale = try container.decodeIfPresent(String.self, forKey: .locale)
            renewalBillingIssuesEnabled = try container.decodeIfPresent(
                Bool.self, forKey: .renewalBillingIssuesEnabled)
            storefront = try container.decodeIfPresent(String.self, forKey: .storefront)
            storeKitErrors = try container.decodeIfPresent([StoreKitErrorSetting].self, forKey: .storeKitErrors)
            timeRate = try container.decodeIfPresent(Int.self, forKey: .timeRate)
            otherSettings = try decoder.container(keyedBy: DynamicCodingKey.self)
                .decodeExtras(excluding: Self.typedKeys)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(applicationInternalID, forKey: .applicationInternalID)
            try container.encodeIfPresent(askToBuyEnabled, forKey: .askToBuyEnabled)
            try container.encodeIfPresent(billingGracePeriodEnabled, forKey: .billingGracePeriodEnabled)
            try container.encodeIfPresent(billingIssuesEnabled, forKey: .billingIssuesEnabled)
            try container.encodeIfPresent(developerTeamID, forKey: .developerTeamID)
            try container.encodeIfPresent(disableDialogs, forKey: .disableDialogs)
            try container.encodeIfPresent(failTransactionsEnabled, forKey: .failTransactionsEnabled)
            try container.encodeIfPresent(lastSynchronizedDate, forKey: .lastSynchronizedDate)
            try container.encodeIfPresent(locale, forKey: .locale)
            try container.encodeIfPresent(renewalBillingIssuesEnabled, forKey: .renewalBillingIssuesEnabled)
            try container.encodeIfPresent(storefront, forKey: .storefront)
            try container.encodeIfPresent(storeKitErrors, forKey: .storeKitErrors)
            try container.encodeIfPresent(timeRate, forKey: .timeRate)
            var extras = encoder.container(keyedBy: DynamicCodingKey.self)
            try extras.encodeExtras(otherSettings, excluding: Self.typedKeys)
        }

        /// ``lastSynchronizedDate`` as a date.
        public var lastSynchronizedDateValue: Date? {
            lastSynchronizedDate.map(Date.init(timeIntervalSinceReferenceDate:))
        }
    }

    /// One entry of `_storeKitErrors`: whether a StoreKit call fails in the test session.
    public struct StoreKitErrorSetting: Codable, Hashable, Sendable {
        /// The error to produce when enabled; its shape is not documented, so it is kept as raw JSON.
        public var current: JSONValue?
        /// Whether the call fails.
        public var enabled: Bool?
        /// Which StoreKit call the entry is about.
        public var name: Name?

        /// Creates an entry; every field defaults to absent.
        public init(current: JSONValue? = nil, enabled: Bool? = nil, name: Name? = nil) {
            self.current = current
            self.enabled = enabled
            self.name = name
        }

        enum CodingKeys: String, CodingKey {
            case current
            case enabled
            case name
        }

        /// A StoreKit call whose failure can be simulated.
        public struct Name: WireEnum {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }

            /// Loading products.
            public static let loadProducts = Self(rawValue: "Load Products")
            /// Purchasing.
            public static let purchase = Self(rawValue: "Purchase")
            /// Verifying signed transactions.
            public static let verification = Self(rawValue: "Verification")
            /// Syncing with the App Store (restoring purchases).
            public static let appStoreSync = Self(rawValue: "App Store Sync")
            /// Reading subscription status.
            public static let subscriptionStatus = Self(rawValue: "Subscription Status")
            /// Reading the app transaction.
            public static let appTransaction = Self(rawValue: "App Transaction")
            /// Showing the manage subscriptions sheet.
            public static let manageSubscriptionsSheet = Self(rawValue: "Manage Subscriptions Sheet")
            /// Showing the refund request sheet.
            public static let refundRequestSheet = Self(rawValue: "Refund Request Sheet")
            /// Showing the offer code redemption sheet.
            public static let offerCodeRedeemSheet = Self(rawValue: "Offer Code Redeem Sheet")

            public static let knownValues: [Self] = [
                .loadProducts, .purchase, .verification, .appStoreSync, .subscriptionStatus, .appTransaction,
                .manageSubscriptionsSheet, .refundRequestSheet, .offerCodeRedeemSheet,
            ]
        }
    }
}
