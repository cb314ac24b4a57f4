import Foundation

extension JWSTransactionDecodedPayload: FlatJSONDecodable {
    /// Reads a payload whose members are all flat (every field but ``advancedCommerceInfo`` and
    /// ``commitmentInfo``, which send the payload to `JSONDecoder`). Unknown members are skipped,
    /// as `JSONDecoder` skips them; a known member given twice sends the payload to `JSONDecoder`.
    public init?(flatJSON bytes: UnsafeRawBufferPointer) {
        guard let keys = Self.flatKeys else { return nil }
        self.init()
        var scanner = FlatJSONScanner(bytes)
        var seen: UInt64 = 0
        while true {
            switch scanner.next() {
            case .declined: return nil
            case .end: return
            case .member(let name, let value):
                guard let (key, bit) = keys[name] else { continue }
                guard seen & bit == 0, read(key, value) else { return nil }
                seen |= bit
            }
        }
    }

    /// Each member name with its key and a bit of its own, to tell a member given twice; `nil`
    /// if there were more keys than bits, and then every payload goes to `JSONDecoder`.
    static let flatKeys: [String: (key: CodingKeys, bit: UInt64)]? =
        CodingKeys.allCases.count > 64
        ? nil
        : Dictionary(
            uniqueKeysWithValues: CodingKeys.allCases.enumerated().map { index, key in
                (key.rawValue, (key, UInt64(1) << UInt64(index)))
            })

    /// Sets the field of `key` from `value`; false when the value is not of the field's kind.
    private mutating func read(_ key: CodingKeys, _ value: FlatJSONValue) -> Bool {
        switch key {
        case .transactionID: return assign(&transactionID, value.string)
        case .originalTransactionID: return assign(&originalTransactionID, value.string)
        case .webOrderLineItemID: return assign(&webOrderLineItemID, value.string)
        case .bundleID: return assign(&bundleID, value.string)
        case .productID: return assign(&productID, value.string)
        case .subscriptionGroupIdentifier: return assign(&subscriptionGroupIdentifier, value.string)
        case .purchaseDate: return assign(&purchaseDate, value.integer.map { $0.map(Date.init(epochMilliseconds:)) })
        case .originalPurchaseDate:
            return assign(&originalPurchaseDate, value.integer.map { $0.map(Date.init(epochMilliseconds:)) })
        case .expiresDate: return assign(&expiresDate, value.integer.map { $0.map(Date.init(epochMilliseconds:)) })
        case .quantity: return assign(&quantity, value.int)
        case .type: return assign(&type, value.string.map { $0.map(ProductType.init(rawValue:)) })
        case .appAccountToken: return assign(&appAccountToken, value.string)
        case .inAppOwnershipType:
            return assign(&inAppOwnershipType, value.string.map { $0.map(InAppOwnershipType.init(rawValue:)) })
        case .signedDate: return assign(&signedDate, value.integer.map { $0.map(Date.init(epochMilliseconds:)) })
        case .revocationReason:
            return assign(&revocationReason, value.int.map { $0.map(RevocationReason.init(rawValue:)) })
        case .revocationDate:
            return assign(&revocationDate, value.integer.map { $0.map(Date.init(epochMilliseconds:)) })
        case .isUpgraded: return assign(&isUpgraded, value.bool)
        case .offerType: return assign(&offerType, value.int.map { $0.map(OfferType.init(rawValue:)) })
        case .offerIdentifier: return assign(&offerIdentifier, value.string)
        case .environment: return assign(&environment, value.string.map { $0.map(AppStoreEnvironment.init(rawValue:)) })
        case .storefront: return assign(&storefront, value.string)
        case .storefrontID: return assign(&storefrontID, value.string)
        case .transactionReason:
            return assign(&transactionReason, value.string.map { $0.map(TransactionReason.init(rawValue:)) })
        case .currency: return assign(&currency, value.string)
        case .price: return assign(&price, value.integer)
        case .offerDiscountType:
            return assign(&offerDiscountType, value.string.map { $0.map(OfferDiscountType.init(rawValue:)) })
        case .appTransactionID: return assign(&appTransactionID, value.string)
        case .offerPeriod: return assign(&offerPeriod, value.string)
        case .revocationType:
            return assign(&revocationType, value.string.map { $0.map(RevocationType.init(rawValue:)) })
        case .revocationPercentage: return assign(&revocationPercentage, value.int)
        case .billingPlanType:
            return assign(&billingPlanType, value.string.map { $0.map(BillingPlanType.init(rawValue:)) })
        case .deviceVerification: return assign(&deviceVerification, value.string)
        case .deviceVerificationNonce: return assign(&deviceVerificationNonce, value.string)
        case .previousOriginalTransactionID: return assign(&previousOriginalTransactionID, value.string)
        // Objects: only `JSONDecoder` reads them; a `null` is what the fast reader can say.
        case .advancedCommerceInfo, .commitmentInfo: return value == .null
        }
    }

}

/// Stores `value` (`.some(nil)` for `null`) in `field`; false when it is `nil` (the wrong kind).
private func assign<T>(_ field: inout T?, _ value: T??) -> Bool {
    guard let value else { return false }
    field = value
    return true
}
