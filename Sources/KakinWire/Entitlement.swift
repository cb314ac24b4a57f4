public import Foundation

/// One access right of a customer (`removeAds`, `premium`), derived from their transactions by
/// the purchase server's grants: the one entitlement type of the server, its API and the SDK.
///
/// On the wire (``CustomerAnswer``) its keys are `identifier`, `productId`, `isActive`,
/// `expiresDate`, `revocationDate`, `transactionId` and `originalTransactionId`, dates as integer
/// milliseconds since 1970, whatever the coder's date strategy.
public struct Entitlement: Codable, Hashable, Sendable {
    /// The name the app checks (`removeAds`, `premium`).
    public var identifier: String
    /// The product that grants it.
    public var productID: String
    /// Whether it grants access now (when the answer was made).
    public var isActive: Bool
    /// When it lapses (subscriptions); `nil` when it does not expire.
    public var expiresDate: Date?
    /// When the purchase was refunded or revoked, if it was.
    public var revocationDate: Date?
    /// The transaction that gives (or last gave) it.
    public var transactionID: String
    /// The original transaction ID of that transaction, shared by its renewals and restores.
    public var originalTransactionID: String

    /// Creates an entitlement.
    public init(
        identifier: String, productID: String, isActive: Bool, expiresDate: Date? = nil, revocationDate: Date? = nil,
        transactionID: String, originalTransactionID: String
    ) {
        self.identifier = identifier
        self.productID = productID
        self.isActive = isActive
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
    }

    enum CodingKeys: String, CodingKey {
        case identifier, productId, isActive, expiresDate, revocationDate, transactionId, originalTransactionId
    }

    /// The keys an SDK's device cache used before entitlements had one type (dates in the coder's
    /// own strategy): still read, so that a cache written then is not lost.
    enum EarlierCacheKeys: String, CodingKey {
        case productID, transactionID, expiresDate, revocationDate
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        isActive = try container.decode(Bool.self, forKey: .isActive)
        guard container.contains(.productId) else {
            let earlier = try decoder.container(keyedBy: EarlierCacheKeys.self)
            productID = try earlier.decode(String.self, forKey: .productID)
            transactionID = try earlier.decode(String.self, forKey: .transactionID)
            originalTransactionID = transactionID
            expiresDate = try earlier.decodeIfPresent(Date.self, forKey: .expiresDate)
            revocationDate = try earlier.decodeIfPresent(Date.self, forKey: .revocationDate)
            return
        }
        productID = try container.decode(String.self, forKey: .productId)
        transactionID = try container.decode(String.self, forKey: .transactionId)
        originalTransactionID = try container.decode(String.self, forKey: .originalTransactionId)
        expiresDate = try container.decodeIfPresent(Int64.self, forKey: .expiresDate).map(KakinJSON.date(epochMilliseconds:))
        revocationDate = try container.decodeIfPresent(Int64.self, forKey: .revocationDate)
            .map(KakinJSON.date(epochMilliseconds:))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(productID, forKey: .productId)
        try container.encode(isActive, forKey: .isActive)
        try container.encodeIfPresent(expiresDate.map(KakinJSON.epochMilliseconds), forKey: .expiresDate)
        try container.encodeIfPresent(revocationDate.map(KakinJSON.epochMilliseconds), forKey: .revocationDate)
        try container.encode(transactionID, forKey: .transactionId)
        try container.encode(originalTransactionID, forKey: .originalTransactionId)
    }
}
