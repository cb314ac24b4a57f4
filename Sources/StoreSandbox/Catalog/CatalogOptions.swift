public import AppStoreModels
public import Foundation

/// What the sandbox needs to know about a catalog that a `.storekit` file cannot say.
///
/// Xcode's format has no key for Apple-hosted content, for a product's availability per
/// storefront, for a product that is not cleared for sale, or for a price pinned in one
/// storefront. Kakin keeps these in this one value, built in code or read from a JSON **side
/// file** next to the `.storekit` file: `Kakin.storekit` → `Kakin.catalog.json`
/// (see ``sideFileURL(for:)``). Every key of the side file is optional:
///
/// ```json
/// {
///   "bundleID": "com.example.kakin",
///   "hostedContent": { "com.example.kakin.soundPack": { "contentVersion": "1.0", "contentLength": 4194304 } },
///   "notClearedForSale": [],
///   "unavailableStorefronts": { "com.example.kakin.seasonPass": ["CHN"] },
///   "priceOverrides": { "com.example.kakin.removeAd": { "JPN": "120" } },
///   "codeOffers": { "com.example.kakin.coins": [{ "offerID": "FREECOINS", "displayPrice": "0" }] },
///   "offerCodes": { "COINS2026": { "productID": "com.example.kakin.coins", "offerID": "FREECOINS" } },
///   "commitmentPlans": { "com.example.kakin.premium.yearly": { "commitmentPrice": "59.88" } }
/// }
/// ```
///
/// Prices in `priceOverrides` are strings, so that `0.99` stays exactly 0.99. `codeOffers` adds
/// offer-code offers to any product, in the `.storekit` file's own shape (a subscription's are added
/// to its file's `codeOffers`; a one-time product's need only an `offerID` and a `displayPrice`, free
/// when absent); `offerCodes` are the codes customers redeem, each naming a product and one of its
/// offer-code offers, with an optional `maximumRedemptions` (1 for a one-time code).
/// `commitmentPlans` sells yearly subscriptions on a monthly plan with a 12-month commitment as
/// well (see ``CommitmentPlanEntry``).
public struct CatalogOptions: Codable, Hashable, Sendable {
    /// The app's bundle ID. When set, every product ID must start with it and a dot, and a
    /// requested ID that does not is reported as ``InvalidProductReason/bundlePrefixMismatch``.
    /// A wildcard (`com.example.*`) makes every request fail with ``InvalidProductReason/wildcardAppID``.
    public var bundleID: String?
    /// The products whose content Apple hosts (App Store Connect's "Host Content with Apple"),
    /// by product ID. Only non-consumables can have hosted content.
    public var hostedContent: [String: HostedContent]
    /// Product IDs that are not cleared for sale: requests return them as invalid.
    public var notClearedForSale: Set<String>
    /// Per product ID, the storefronts (alpha-3 country codes) where it is not sold.
    public var unavailableStorefronts: [String: Set<String>]
    /// Per product ID, per alpha-3 country code, a price that replaces the tier table's.
    public var priceOverrides: [String: [String: Decimal]]
    /// A simulated problem with the app or the developer account, which makes every requested ID
    /// invalid with this reason; it must be one whose ``InvalidProductReason/isAppLevel`` is true.
    public var appProblem: InvalidProductReason?
    /// Offer-code offers per product ID, added to those of the `.storekit` file.
    public var codeOffers: [String: [StoreKitConfiguration.SubscriptionOffer]]
    /// Offer codes customers can redeem, by code.
    public var offerCodes: [String: OfferCodeEntry]
    /// Yearly auto-renewable subscriptions also sold on a monthly plan with a 12-month
    /// commitment, by product ID.
    public var commitmentPlans: [String: CommitmentPlanEntry]

    /// An offer code of the side file: the product and offer it unlocks.
    public struct OfferCodeEntry: Codable, Hashable, Sendable {
        /// The product the code is for.
        public var productID: String
        /// One of the product's offer-code offers.
        public var offerID: String
        /// How many redemptions the code allows in all; unlimited when absent.
        public var maximumRedemptions: Int?

        /// Creates an entry from its parts.
        public init(productID: String, offerID: String, maximumRedemptions: Int? = nil) {
            self.productID = productID
            self.offerID = offerID
            self.maximumRedemptions = maximumRedemptions
        }

        enum CodingKeys: String, CodingKey {
            case productID
            case offerID
            case maximumRedemptions
        }
    }

    /// Creates options; by default the catalog has no bundle ID, no hosted content, and sells
    /// every product everywhere at the tier table's prices.
    public init(
        bundleID: String? = nil, hostedContent: [String: HostedContent] = [:], notClearedForSale: Set<String> = [],
        unavailableStorefronts: [String: Set<String>] = [:], priceOverrides: [String: [String: Decimal]] = [:],
        appProblem: InvalidProductReason? = nil, codeOffers: [String: [StoreKitConfiguration.SubscriptionOffer]] = [:],
        offerCodes: [String: OfferCodeEntry] = [:], commitmentPlans: [String: CommitmentPlanEntry] = [:]
    ) {
        self.bundleID = bundleID
        self.hostedContent = hostedContent
        self.notClearedForSale = notClearedForSale
        self.unavailableStorefronts = unavailableStorefronts
        self.priceOverrides = priceOverrides
        self.appProblem = appProblem
        self.codeOffers = codeOffers
        self.offerCodes = offerCodes
        self.commitmentPlans = commitmentPlans
    }

    enum CodingKeys: String, CodingKey {
        case bundleID
        case hostedContent
        case notClearedForSale
        case unavailableStorefronts
        case priceOverrides
        case appProblem
        case codeOffers
        case offerCodes
        case commitmentPlans
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        bundleID = try container.decodeIfPresent(String.self, forKey: .bundleID)
        hostedContent = try container.decodeIfPresent([String: HostedContent].self, forKey: .hostedContent) ?? [:]
        notClearedForSale = try container.decodeIfPresent(Set<String>.self, forKey: .notClearedForSale) ?? []
        unavailableStorefronts =
            try container.decodeIfPresent([String: Set<String>].self, forKey: .unavailableStorefronts) ?? [:]
        appProblem = try container.decodeIfPresent(InvalidProductReason.self, forKey: .appProblem)
        codeOffers =
            try container.decodeIfPresent([String: [StoreKitConfiguration.SubscriptionOffer]].self, forKey: .codeOffers)
            ?? [:]
        offerCodes = try container.decodeIfPresent([String: OfferCodeEntry].self, forKey: .offerCodes) ?? [:]
        commitmentPlans =
            try container.decodeIfPresent([String: CommitmentPlanEntry].self, forKey: .commitmentPlans) ?? [:]
        let texts = try container.decodeIfPresent([String: [String: String]].self, forKey: .priceOverrides) ?? [:]
        var prices: [String: [String: Decimal]] = [:]
        for (productID, perStorefront) in texts {
            for (countryCode, text) in perStorefront {
                guard let price = Self.decimal(text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .priceOverrides, in: container,
                        debugDescription:
                            "The price \"\(text)\" of \(productID) in \(countryCode) is not a plain number.")
                }
                prices[productID, default: [:]][countryCode] = price
            }
        }
        priceOverrides = prices
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(bundleID, forKey: .bundleID)
        try container.encode(hostedContent, forKey: .hostedContent)
        try container.encode(notClearedForSale.sorted(), forKey: .notClearedForSale)
        try container.encode(unavailableStorefronts.mapValues { $0.sorted() }, forKey: .unavailableStorefronts)
        try container.encode(priceOverrides.mapValues { $0.mapValues { "\($0)" } }, forKey: .priceOverrides)
        try container.encodeIfPresent(appProblem, forKey: .appProblem)
        try container.encode(codeOffers, forKey: .codeOffers)
        try container.encode(offerCodes, forKey: .offerCodes)
        try container.encode(commitmentPlans, forKey: .commitmentPlans)
    }

    /// Pins the price of `productID` in `storefront`, replacing the tier table's price there.
    public mutating func overridePrice(_ price: Decimal, for productID: String, in storefront: Storefront) {
        priceOverrides[productID, default: [:]][storefront.countryCode] = price
    }

    /// Stops selling `productID` in `storefront`.
    public mutating func makeUnavailable(_ productID: String, in storefront: Storefront) {
        unavailableStorefronts[productID, default: []].insert(storefront.countryCode)
    }

    /// Decodes a side file's contents; a malformed file is ``SandboxError/Code/catalogInvalid``.
    public static func load(from data: Data) throws(SandboxError) -> CatalogOptions {
        do {
            return try JSONDecoder().decode(CatalogOptions.self, from: data)
        } catch {
            throw SandboxError(.catalogInvalid, "The catalog options cannot be read: \(error)")
        }
    }

    /// The side file of a `.storekit` file: the same folder and name, with the extension
    /// `catalog.json` instead of `storekit`.
    public static func sideFileURL(for storeKitFile: URL) -> URL {
        storeKitFile.deletingPathExtension().appendingPathExtension("catalog.json")
    }

    /// Parses a price written with a dot, such as `"0.99"`.
    static func decimal(_ text: String) -> Decimal? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            text.filter({ $0 == "." }).count <= 1
        else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }
}

extension CatalogOptions {
    /// Content that Apple hosts for a non-consumable and that the app downloads after purchase.
    ///
    /// The sandbox does not host files; these values are placeholders that the product shows as
    /// `downloadContentVersion` and `downloadContentLengths`, as `SKProduct` does.
    public struct HostedContent: Codable, Hashable, Sendable {
        /// The version of the content package, such as `1.0`.
        public var contentVersion: String
        /// The size of the content package in bytes.
        public var contentLength: Int64

        /// Creates a description of hosted content.
        public init(contentVersion: String = "1.0", contentLength: Int64 = 0) {
            self.contentVersion = contentVersion
            self.contentLength = contentLength
        }

        enum CodingKeys: String, CodingKey {
            case contentVersion
            case contentLength
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            contentVersion = try container.decodeIfPresent(String.self, forKey: .contentVersion) ?? "1.0"
            contentLength = try container.decodeIfPresent(Int64.self, forKey: .contentLength) ?? 0
        }
    }
}
