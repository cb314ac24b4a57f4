public import Foundation

extension CatalogOptions {
    /// A yearly subscription's monthly plan with a 12-month commitment, as the side file says it.
    ///
    /// Apple sells such a plan next to the subscription's up-front yearly billing, under the same
    /// product ID; a purchase chooses it with the `MONTHLY` billing plan. Xcode's `.storekit`
    /// format documents no key for it, so the side file names the products:
    ///
    /// ```json
    /// "commitmentPlans": { "com.example.kakin.premium.yearly": { "commitmentPrice": "59.88" } }
    /// ```
    ///
    /// The product must be an auto-renewable subscription with a one-year period.
    /// `commitmentPrice` is the price of all 12 months, written like the `.storekit` file's
    /// prices (a string, in the currency of the file's storefront) and converted to other
    /// storefronts with the price tier table as the product's own price is; without it the
    /// commitment costs what the year costs up front. Each month is billed a twelfth of it,
    /// rounded down to the currency's smallest unit (``SandboxCommitmentPlan/monthlyPrice(of:periods:minorUnitMilliunits:)``).
    public struct CommitmentPlanEntry: Codable, Hashable, Sendable {
        /// The price of the whole commitment; the up-front yearly price when absent.
        public var commitmentPrice: Decimal?

        /// Creates an entry; without a price, the commitment costs the up-front yearly price.
        public init(commitmentPrice: Decimal? = nil) {
            self.commitmentPrice = commitmentPrice
        }

        enum CodingKeys: String, CodingKey {
            case commitmentPrice
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let text = try container.decodeIfPresent(String.self, forKey: .commitmentPrice) else {
                commitmentPrice = nil
                return
            }
            guard let price = CatalogOptions.decimal(text), price > 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .commitmentPrice, in: container,
                    debugDescription: "The commitment price \"\(text)\" is not a plain number above zero.")
            }
            commitmentPrice = price
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(commitmentPrice.map { "\($0)" }, forKey: .commitmentPrice)
        }
    }
}
