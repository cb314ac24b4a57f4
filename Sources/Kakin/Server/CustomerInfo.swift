public import Foundation
public import KakinWire

/// What a customer has: the server's signed answer, or, while the server cannot be reached,
/// what the device computed from the store's own transactions (see ``source``).
public struct CustomerInfo: Codable, Hashable, Sendable {
    /// Where an answer comes from.
    public enum Source: String, Codable, Hashable, Sendable {
        /// The purchase server's answer, its signature and nonce checked.
        case server
        /// Computed on the device from the store's transactions while the server could not be
        /// reached: entitlements only (balances are the last ones the server confirmed, or none),
        /// to be replaced by the server's answer as soon as it is reachable.
        case device
    }

    /// One access right.
    public struct Entitlement: Codable, Hashable, Sendable {
        /// The name the app checks (`removeAds`, `premium`).
        public var identifier: String
        /// The product that grants it.
        public var productID: String
        /// Whether it grants access now.
        public var isActive: Bool
        /// When it lapses (subscriptions); `nil` when it does not expire.
        public var expiresDate: Date?
        /// When the purchase was refunded or revoked, if it was.
        public var revocationDate: Date?
        /// The transaction it comes from.
        public var transactionID: String

        /// Creates an entitlement.
        public init(
            identifier: String, productID: String, isActive: Bool, expiresDate: Date?, revocationDate: Date?,
            transactionID: String
        ) {
            self.identifier = identifier
            self.productID = productID
            self.isActive = isActive
            self.expiresDate = expiresDate
            self.revocationDate = revocationDate
            self.transactionID = transactionID
        }
    }

    /// The app user this answer is about.
    public var appUserID: String
    /// The customer's access rights, active and inactive.
    public var entitlements: [Entitlement]
    /// Balances by currency, e.g. `["points": 100]`.
    public var balances: [String: Int64]
    /// Where this answer comes from.
    public var source: Source

    /// Creates customer information; it counts as the server's answer unless `source` says otherwise.
    public init(
        appUserID: String, entitlements: [Entitlement], balances: [String: Int64], source: Source = .server
    ) {
        self.appUserID = appUserID
        self.entitlements = entitlements
        self.balances = balances
        self.source = source
    }

    /// The server's answer, as the SDK presents it.
    public init(_ answer: CustomerAnswer) {
        self.init(
            appUserID: answer.appUserId,
            entitlements: answer.entitlements.map {
                Entitlement(
                    identifier: $0.identifier, productID: $0.productId, isActive: $0.isActive,
                    expiresDate: $0.expiresDate.map(KakinJSON.date(epochMilliseconds:)),
                    revocationDate: $0.revocationDate.map(KakinJSON.date(epochMilliseconds:)),
                    transactionID: $0.transactionId)
            },
            balances: answer.balances, source: .server)
    }

    /// Whether `identifier` is active at `date`: active when the answer was made, and not expired
    /// since (an answer kept for a while must not keep a lapsed subscription unlocked).
    public func isEntitled(to identifier: String, at date: Date = Date()) -> Bool {
        entitlements.contains {
            $0.identifier == identifier && $0.isActive && ($0.expiresDate.map { $0 > date } ?? true)
        }
    }

    /// Whether this answer was computed on the device while the server could not be reached.
    public var isProvisional: Bool { source == .device }
}
