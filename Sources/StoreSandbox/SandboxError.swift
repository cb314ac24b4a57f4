public import AppStoreModels

/// The one error type of StoreSandbox.
///
/// Every failure has a ``code`` that a program can switch on and a ``message`` a developer can read.
/// Two errors compare equal when their codes are equal, so tests can write
/// `#expect(throws: SandboxError(.duplicateProduct))` without repeating the message.
///
/// The codes are static members of ``Code`` backed by a private enum, so new codes can be added
/// without breaking code that switches over the existing ones with a `default` branch.
public struct SandboxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable, machine-readable value.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case catalogInvalid
            case duplicateProduct
            case unknownProduct
            case productUnavailable
            case unknownStorefront
            case priceUnavailable
            case unknownTester
            case unknownTransaction
            case unknownPendingPurchase
            case invalidRequest
            case stateUnavailable
            case ineligible
            case limitReached
            case invalidQuantity
            case unknownOfferCode
            case simulatedError
            case invalidRefundPercentage
            case billingPlanUnavailable
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A `.storekit` file or the catalog options cannot be used: unreadable JSON, a product
        /// without an ID, type or price, an option naming a product or storefront that does not exist.
        public static let catalogInvalid = Code(.catalogInvalid)
        /// The same product ID appears twice, in one configuration or across several.
        public static let duplicateProduct = Code(.duplicateProduct)
        /// No product in the catalog has the requested ID.
        public static let unknownProduct = Code(.unknownProduct)
        /// The product exists but cannot be sold: not cleared for sale, or not in this storefront.
        public static let productUnavailable = Code(.productUnavailable)
        /// No storefront has the requested country code or storefront ID.
        public static let unknownStorefront = Code(.unknownStorefront)
        /// The price tier table has no price for a product in the storefront's currency.
        public static let priceUnavailable = Code(.priceUnavailable)

        /// No tester has the requested ID.
        public static let unknownTester = Code(.unknownTester)
        /// No transaction (or subscription) has the requested ID, for this tester.
        public static let unknownTransaction = Code(.unknownTransaction)
        /// No purchase waiting for approval has the requested ID.
        public static let unknownPendingPurchase = Code(.unknownPendingPurchase)
        /// The request is not acceptable: a duplicate tester ID, a revision this sandbox did not issue, …
        public static let invalidRequest = Code(.invalidRequest)
        /// The sandbox state could not be read, saved or signed.
        public static let stateUnavailable = Code(.stateUnavailable)

        /// The subscription cannot get what was asked (an extension of an inactive subscription,
        /// consumption information for a transaction that is not a consumable).
        public static let ineligible = Code(.ineligible)
        /// A limit was reached (at most two renewal date extensions a year).
        public static let limitReached = Code(.limitReached)

        /// A purchase asked for a quantity StoreKit refuses: below 1, above 1 for a product that is
        /// not a consumable, or above ``SandboxEngine/maximumQuantity`` (StoreKit's `invalidQuantity`).
        public static let invalidQuantity = Code(.invalidQuantity)
        /// No offer code has the redeemed code.
        public static let unknownOfferCode = Code(.unknownOfferCode)
        /// A StoreKit API was made to fail on purpose (``SandboxEngine/setSimulatedError(_:for:)``);
        /// ``SandboxError/storeKitCode`` says with which StoreKit error.
        public static let simulatedError = Code(.simulatedError)
        /// A refund asked for a share outside 1…100000 milliunits of a percent (0.001 % to 100 %),
        /// the range of Apple's `revocationPercentage`.
        public static let invalidRefundPercentage = Code(.invalidRefundPercentage)
        /// A purchase asked for a billing plan the product does not offer, such as `MONTHLY` for a
        /// subscription the catalog does not sell with a 12-month commitment.
        public static let billingPlanUnavailable = Code(.billingPlanUnavailable)

        /// The code's name, such as `duplicateProduct`.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence saying what went wrong, for a developer.
    public let message: String
    /// The StoreKit error (`SKError.Code`) the device sees, when the failure is one StoreKit reports.
    public let storeKitCode: StoreKitErrorCode?

    /// Creates an error.
    public init(_ code: Code, _ message: String = "", storeKitCode: StoreKitErrorCode? = nil) {
        self.code = code
        self.message = message
        self.storeKitCode = storeKitCode
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// One line: the code, then the message when there is one.
    public var description: String { message.isEmpty ? "\(code)" : "\(code): \(message)" }
}
