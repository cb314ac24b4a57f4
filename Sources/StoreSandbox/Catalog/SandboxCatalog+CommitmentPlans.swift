import Foundation

extension SandboxCatalog {
    /// The monthly plan with a 12-month commitment of `productID` in the storefront with
    /// `countryCode`, from ``CatalogOptions/commitmentPlans``; `nil` when the product is sold only
    /// up front, the storefront does not exist, or the product is not for sale there.
    ///
    /// The commitment price is converted to the storefront's currency with the price tier table,
    /// as the product's own price is; each month is billed a twelfth of it, rounded down to a cent,
    /// or to a whole unit in currencies the tier table prices in whole units (such as the yen).
    public func commitmentPlan(id productID: String, storefront countryCode: String) -> SandboxCommitmentPlan? {
        guard let entry = options.commitmentPlans[productID],
            let storefront = Storefront.lookup(countryCode: countryCode, in: storefronts),
            let catalogProduct = product(id: productID),
            let localized = try? localizedProduct(id: productID, storefront: storefront)
        else { return nil }
        let price: Decimal
        if let commitmentPrice = entry.commitmentPrice {
            guard
                let converted = priceTable.convert(
                    commitmentPrice, from: catalogProduct.currencyCode, to: storefront.currencyCode)
            else { return nil }
            price = converted
        } else {
            price = localized.price
        }
        let commitment = Self.milliunits(price)
        let wholeUnits: Set<PriceTierTable.Ending> = [.tens, .wholeUnits]
        let minorUnit: Int64 = wholeUnits.contains(priceTable.endings[storefront.currencyCode] ?? .cents) ? 1_000 : 10
        return SandboxCommitmentPlan(
            commitmentPriceMilliunits: commitment,
            monthlyPriceMilliunits: SandboxCommitmentPlan.monthlyPrice(of: commitment, minorUnitMilliunits: minorUnit))
    }

    /// A lookup of commitment plans for ``SandboxEngine``.
    public var commitmentPlanLookup: SandboxEngine.CommitmentPlanLookup {
        let catalog = self
        return { productID, countryCode in catalog.commitmentPlan(id: productID, storefront: countryCode) }
    }
}
