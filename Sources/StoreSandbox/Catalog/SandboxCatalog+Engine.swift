import AppStoreModels
import Foundation

extension SandboxCatalog {
    /// What the purchase engine needs to sell `productID` in the storefront with `countryCode`:
    /// its type, its price there in milliunits, and for subscriptions the group, level, period and
    /// offers. `nil` when the catalog has no such product or the storefront does not exist; a
    /// product not for sale there comes back with `isAvailable` false.
    public func engineProduct(id productID: String, storefront countryCode: String) -> SandboxProductInfo? {
        guard let storefront = Storefront.lookup(countryCode: countryCode, in: storefronts),
            let catalogProduct = product(id: productID)
        else { return nil }
        guard let localized = try? localizedProduct(id: productID, storefront: storefront) else {
            return SandboxProductInfo(
                id: productID, type: catalogProduct.type, priceMilliunits: 0, currency: storefront.currencyCode,
                isAvailable: false)
        }
        let subscription = localized.subscription
        var codeOffers: [SandboxProductInfo.Offer] = []
        var oneTimeCodeOffers: [SandboxProductInfo.OneTimeOffer] = []
        for offer in catalogProduct.codeOffers {
            guard let offerID = offer.offerID else { continue }
            if catalogProduct.type == .autoRenewableSubscription {
                let made = self.offer(
                    id: offerID, kind: .offerCode, mode: offer.paymentMode, period: offer.subscriptionPeriod,
                    count: offer.numberOfPeriods, price: offer.displayPriceValue, of: catalogProduct, in: storefront)
                if let engineOffer = made.flatMap(Self.engineOffer) { codeOffers.append(engineOffer) }
            } else if let price = priceTable.convert(
                offer.displayPriceValue ?? 0, from: catalogProduct.currencyCode, to: storefront.currencyCode)
            {
                oneTimeCodeOffers.append(.init(identifier: offerID, priceMilliunits: Self.milliunits(price)))
            }
        }
        var info = SandboxProductInfo(
            id: productID, type: localized.type, priceMilliunits: Self.milliunits(localized.price),
            currency: localized.currencyCode, subscriptionGroupID: subscription?.subscriptionGroupID,
            groupLevel: subscription?.groupLevel, period: subscription?.subscriptionPeriodValue,
            introductoryOffer: subscription?.introductoryOffer.flatMap(Self.engineOffer),
            promotionalOffers: subscription?.promotionalOffers.compactMap(Self.engineOffer) ?? [],
            winBackOffers: subscription?.winBackOffers.compactMap(Self.engineOffer) ?? [], codeOffers: codeOffers,
            oneTimeCodeOffers: oneTimeCodeOffers, isAvailable: isAvailable(catalogProduct, in: storefront))
        info.isFamilyShareable = catalogProduct.isFamilyShareable
        return info
    }

    /// The offer code `code` of the catalog options (``CatalogOptions/offerCodes``), matched
    /// without regard to case; `nil` when the options define no such code.
    public func offerCode(_ code: String) -> SandboxOfferCode? {
        let key = SandboxOfferCode.key(code)
        guard let entry = options.offerCodes.first(where: { SandboxOfferCode.key($0.key) == key })?.value else {
            return nil
        }
        return SandboxOfferCode(
            code: key, productID: entry.productID, offerID: entry.offerID, maximumRedemptions: entry.maximumRedemptions)
    }

    /// A lookup for ``SandboxEngine``.
    public var engineLookup: SandboxEngine.ProductLookup {
        let catalog = self
        return { productID, countryCode in catalog.engineProduct(id: productID, storefront: countryCode) }
    }

    /// Apple storefront IDs by country code, for the engine's transactions.
    public var storefrontIdentifiers: [String: String] {
        Dictionary(storefronts.map { ($0.countryCode, $0.identifier) }, uniquingKeysWith: { first, _ in first })
    }

    static func engineOffer(_ offer: LocalizedProduct.Offer) -> SandboxProductInfo.Offer? {
        guard let period = offer.periodValue else { return nil }
        let discount: OfferDiscountType =
            switch offer.paymentMode {
            case .free: .freeTrial
            case .payUpFront: .payUpFront
            default: .payAsYouGo
            }
        return SandboxProductInfo.Offer(
            identifier: offer.type == .introductory ? nil : offer.id, discountType: discount, period: period,
            periodCount: max(1, offer.periodCount), priceMilliunits: milliunits(offer.price))
    }

    static func milliunits(_ price: Decimal) -> Int64 {
        var scaled = price * 1000
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        return NSDecimalNumber(decimal: rounded).int64Value
    }
}
