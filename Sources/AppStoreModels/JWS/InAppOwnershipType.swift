/// Whether the customer bought the product or has it through Family Sharing.
public struct InAppOwnershipType: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer bought it themselves.
    public static let purchased = Self(rawValue: "PURCHASED")
    /// A family member bought it and shares it with the customer.
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")

    public static let knownValues: [Self] = [.purchased, .familyShared]
}
