import Foundation

/// An offer code a customer can redeem (App Store Connect's custom and one-time codes): the code
/// the customer types, and the product offer it unlocks.
///
/// A code works for every product type. For an auto-renewable subscription it names one of the
/// subscription's offer-code offers (``SandboxProductInfo/codeOffers``); for any other product
/// one of its ``SandboxProductInfo/oneTimeCodeOffers``. Each customer redeems a code once; a code
/// with ``maximumRedemptions`` (1 for a one-time code) stops working when they are used up.
public struct SandboxOfferCode: Codable, Hashable, Sendable {
    /// What the customer types, such as `SPRING2026`; matched without regard to case.
    public var code: String
    /// The product the code is for.
    public var productID: String
    /// The offer it applies, which transactions carry as `offerIdentifier`.
    public var offerID: String
    /// How many redemptions the code allows in all; unlimited when absent.
    public var maximumRedemptions: Int?
    /// The testers who redeemed it, in order.
    public var redeemedBy: [String]

    /// Creates an offer code from its parts, not yet redeemed by default.
    public init(
        code: String, productID: String, offerID: String, maximumRedemptions: Int? = nil, redeemedBy: [String] = []
    ) {
        self.code = code
        self.productID = productID
        self.offerID = offerID
        self.maximumRedemptions = maximumRedemptions
        self.redeemedBy = redeemedBy
    }

    enum CodingKeys: String, CodingKey {
        case code
        case productID
        case offerID
        case maximumRedemptions
        case redeemedBy
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(String.self, forKey: .code)
        productID = try container.decode(String.self, forKey: .productID)
        offerID = try container.decode(String.self, forKey: .offerID)
        maximumRedemptions = try container.decodeIfPresent(Int.self, forKey: .maximumRedemptions)
        redeemedBy = try container.decodeIfPresent([String].self, forKey: .redeemedBy) ?? []
    }

    /// The key the sandbox files a code under: upper case, so `spring2026` finds `SPRING2026`.
    static func key(_ code: String) -> String { code.trimmingCharacters(in: .whitespaces).uppercased() }
}
