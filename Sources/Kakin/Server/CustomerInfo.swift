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

    /// One access right: the entitlement type the server's answers carry.
    public typealias Entitlement = KakinWire.Entitlement

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
            entitlements: answer.entitlements,
            balances: answer.balances, source: .server)
    }

    /// Whether `identifier` is active at `date`: active when the answer was made, and not expired
    /// since (an answer kept for a while must not keep a lapsed subscription unlocked). A
    /// subscription whose renewal failed lasts until its grace period ends (its entitlement's
    /// `gracePeriodExpiresAt`).
    public func isEntitled(to identifier: String, at date: Date = Date()) -> Bool {
        entitlements.contains { entitlement in
            guard entitlement.identifier == identifier, entitlement.isActive else { return false }
            guard var end = entitlement.expiresDate else { return true }
            if entitlement.billingIssueDetectedAt != nil, let graceEnd = entitlement.gracePeriodExpiresAt {
                end = max(end, graceEnd)
            }
            return end > date
        }
    }

    /// Whether this answer was computed on the device while the server could not be reached.
    public var isProvisional: Bool { source == .device }
}
