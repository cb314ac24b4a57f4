public import Foundation

/// The filters and paging of Get Transaction History, sent as query parameters.
///
/// It is `Codable` so that it can be stored or logged as JSON, but on the wire it travels as the
/// query string built by ``queryItems()``; ``init(queryItems:)`` reads it back on the server side.
/// Repeat the same filters on every page and pass the previous page's ``HistoryResponse/revision``.
public struct TransactionHistoryRequest: Codable, Hashable, Sendable {
    /// The token from the previous page; absent for the first page.
    public var revision: String?
    /// Only transactions purchased at or after this moment.
    @EpochMilliseconds public var startDate: Date?
    /// Only transactions purchased before this moment.
    @EpochMilliseconds public var endDate: Date?
    /// Only these products.
    public var productIDs: [String]?
    /// Only these kinds of product.
    public var productTypes: [ProductType]?
    /// The order of transactions by modification date; ascending when absent.
    public var sort: Order?
    /// Only products of these subscription groups.
    public var subscriptionGroupIdentifiers: [String]?
    /// Only purchased, or only family-shared, transactions.
    public var inAppOwnershipType: InAppOwnershipType?
    /// Only revoked transactions (`true`) or only transactions that were not revoked (`false`).
    public var revoked: Bool?

    /// Creates a request; every filter defaults to absent.
    public init(
        revision: String? = nil, startDate: Date? = nil, endDate: Date? = nil, productIDs: [String]? = nil,
        productTypes: [ProductType]? = nil, sort: Order? = nil, subscriptionGroupIdentifiers: [String]? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil, revoked: Bool? = nil
    ) {
        self.revision = revision
        self.startDate = startDate
        self.endDate = endDate
        self.productIDs = productIDs
        self.productTypes = productTypes
        self.sort = sort
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.revoked = revoked
    }

    enum CodingKeys: String, CodingKey {
        case revision
        case startDate
        case endDate
        case productIDs = "productId"
        case productTypes = "productType"
        case sort
        case subscriptionGroupIdentifiers = "subscriptionGroupIdentifier"
        case inAppOwnershipType
        case revoked
    }
}

extension TransactionHistoryRequest {
    /// A kind of product, spelled as the transaction history filter wants it.
    ///
    /// The filter uses different words from a transaction's ``JWSTransactionDecodedPayload/type``.
    public struct ProductType: WireEnum {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Auto-renewable subscriptions.
        public static let autoRenewable = Self(rawValue: "AUTO_RENEWABLE")
        /// Non-renewing subscriptions.
        public static let nonRenewable = Self(rawValue: "NON_RENEWABLE")
        /// Consumables.
        public static let consumable = Self(rawValue: "CONSUMABLE")
        /// Non-consumables.
        public static let nonConsumable = Self(rawValue: "NON_CONSUMABLE")

        public static let knownValues: [Self] = [.autoRenewable, .nonRenewable, .consumable, .nonConsumable]
    }

    /// The order in which transaction history lists transactions.
    public struct Order: WireEnum {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Oldest first.
        public static let ascending = Self(rawValue: "ASCENDING")
        /// Newest first.
        public static let descending = Self(rawValue: "DESCENDING")

        public static let knownValues: [Self] = [.ascending, .descending]
    }
}
