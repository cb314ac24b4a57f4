public import Foundation

/// One in-app purchase in an app receipt: the value of a type-17 attribute.
///
/// The record is itself a `SET OF ReceiptAttribute` with types 1701 and up. Apple always writes
/// quantity, product ID, transaction ID and purchase date; everything else is optional, and an
/// empty string in Apple's encoding reads as `nil`. Attributes this model does not interpret are
/// kept in ``otherAttributes`` so that serializing a parsed record loses nothing.
public struct InAppPurchaseReceipt: Codable, Hashable, Sendable {
    /// How many items were bought (1701).
    public var quantity: Int
    /// The product identifier (1702).
    public var productID: String
    /// The transaction identifier (1703). Xcode writes `"0"`.
    public var transactionID: String
    /// When the item was bought, or when a subscription renewed (1704).
    public var purchaseDate: Date
    /// The transaction identifier of the original purchase (1705); equal to ``transactionID`` for a first purchase.
    public var originalTransactionID: String?
    /// When the original purchase happened (1706).
    public var originalPurchaseDate: Date?
    /// The kind of product (1707), as an undocumented number.
    public var productType: Int?
    /// When an auto-renewable subscription expires (1708).
    public var expiresDate: Date?
    /// The identifier of a subscription period across devices (1711).
    public var webOrderLineItemID: Int64?
    /// When Apple support refunded the purchase (1712).
    public var cancellationDate: Date?
    /// Whether the subscription is in a free trial (1713).
    public var isTrialPeriod: Bool?
    /// Whether the subscription is in an introductory price period (1719).
    public var isInIntroOfferPeriod: Bool?
    /// The identifier of the promotional offer redeemed (1721).
    public var promotionalOfferIdentifier: String?
    /// Attributes of types this model does not interpret, and repeats of known types, as found;
    /// ordered by type, as they are written.
    public var otherAttributes: [ReceiptAttribute]
    /// Known attributes exactly as Apple encoded them, where that differs from how this model
    /// writes them (a version other than 1, an empty string, a PrintableString). They are written
    /// back as long as they still hold the property's current value.
    public var originalEncodings: [ReceiptAttribute]

    /// Creates a record; only the four attributes every record carries are required.
    public init(
        quantity: Int = 1,
        productID: String,
        transactionID: String,
        purchaseDate: Date,
        originalTransactionID: String? = nil,
        originalPurchaseDate: Date? = nil,
        productType: Int? = nil,
        expiresDate: Date? = nil,
        webOrderLineItemID: Int64? = nil,
        cancellationDate: Date? = nil,
        isTrialPeriod: Bool? = nil,
        isInIntroOfferPeriod: Bool? = nil,
        promotionalOfferIdentifier: String? = nil,
        otherAttributes: [ReceiptAttribute] = [],
        originalEncodings: [ReceiptAttribute] = []
    ) {
        self.quantity = quantity
        self.productID = productID
        self.transactionID = transactionID
        self.purchaseDate = purchaseDate
        self.originalTransactionID = originalTransactionID
        self.originalPurchaseDate = originalPurchaseDate
        self.productType = productType
        self.expiresDate = expiresDate
        self.webOrderLineItemID = webOrderLineItemID
        self.cancellationDate = cancellationDate
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.promotionalOfferIdentifier = promotionalOfferIdentifier
        self.otherAttributes = otherAttributes
        self.originalEncodings = originalEncodings
    }

    private enum CodingKeys: String, CodingKey {
        case quantity
        case productID
        case transactionID
        case purchaseDate
        case originalTransactionID
        case originalPurchaseDate
        case productType
        case expiresDate
        case webOrderLineItemID
        case cancellationDate
        case isTrialPeriod
        case isInIntroOfferPeriod
        case promotionalOfferIdentifier
        case otherAttributes
        case originalEncodings
    }

    /// Decodes a record; the two attribute lists may be left out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        quantity = try container.decode(Int.self, forKey: .quantity)
        productID = try container.decode(String.self, forKey: .productID)
        transactionID = try container.decode(String.self, forKey: .transactionID)
        purchaseDate = try container.decode(Date.self, forKey: .purchaseDate)
        originalTransactionID = try container.decodeIfPresent(String.self, forKey: .originalTransactionID)
        originalPurchaseDate = try container.decodeIfPresent(Date.self, forKey: .originalPurchaseDate)
        productType = try container.decodeIfPresent(Int.self, forKey: .productType)
        expiresDate = try container.decodeIfPresent(Date.self, forKey: .expiresDate)
        webOrderLineItemID = try container.decodeIfPresent(Int64.self, forKey: .webOrderLineItemID)
        cancellationDate = try container.decodeIfPresent(Date.self, forKey: .cancellationDate)
        isTrialPeriod = try container.decodeIfPresent(Bool.self, forKey: .isTrialPeriod)
        isInIntroOfferPeriod = try container.decodeIfPresent(Bool.self, forKey: .isInIntroOfferPeriod)
        promotionalOfferIdentifier = try container.decodeIfPresent(String.self, forKey: .promotionalOfferIdentifier)
        otherAttributes = try container.decodeIfPresent([ReceiptAttribute].self, forKey: .otherAttributes) ?? []
        originalEncodings = try container.decodeIfPresent([ReceiptAttribute].self, forKey: .originalEncodings) ?? []
    }
}
