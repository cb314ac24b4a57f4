public import KakinLedger
public import KakinWire

/// A customer as the server answers for them: what the ledger holds (``state``) and the
/// entitlements the app's grants derive from it now. The ledger's own fields read through, as in
/// `customer.transactions` or `customer.balances`.
@dynamicMemberLookup
public struct EntitledCustomer: Hashable, Sendable {
    /// The customer's transactions, ledger lines and balances, as the ledger holds them.
    public var state: CustomerState
    /// What the customer has access to now, and what lapsed or was refunded.
    public var entitlements: [Entitlement]
    /// The latest withdrawal of consent recorded for the customer (`RESCIND_CONSENT`), if any,
    /// whether it still stands or a new purchase lifted it.
    public var consentRescission: ConsentRescission?
    /// Whether ``consentRescission`` still stands: no new purchase lifted it, and access is withheld.
    public var consentWithheld: Bool
    /// The entitlements the customer pays for twice, in two stores, by entitlement: their active
    /// subscriptions (``EntitlementRules/duplicatedSubscriptions(_:grants:at:)``).
    public var duplicatedSubscriptions: [String: [DuplicateSubscription.Subscription]] = [:]

    /// A customer's state with the entitlements derived from it.
    public init(
        state: CustomerState, entitlements: [Entitlement], consentRescission: ConsentRescission? = nil,
        consentWithheld: Bool = false
    ) {
        self.state = state
        self.entitlements = entitlements
        self.consentRescission = consentRescission
        self.consentWithheld = consentWithheld
    }

    /// A field of the ledger's ``state``.
    public subscript<Value>(dynamicMember field: KeyPath<CustomerState, Value>) -> Value {
        state[keyPath: field]
    }
}
