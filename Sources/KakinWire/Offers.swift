import Foundation
public import KakinCore

/// The body of `POST /v1/customers/{user}/offers/sign`: what the app wants to sell with a
/// server-signed offer.
public struct OfferSigningRequest: Codable, Hashable, Sendable {
    /// What to sign: a promotional offer, or the customer's eligibility for the introductory offer.
    public typealias Kind = OfferSignatureKind

    /// The app's bundle ID.
    public var bundleId: String
    /// The subscription's product ID.
    public var productId: String
    /// What to sign.
    public var kind: Kind
    /// The promotional offer's ID (promotional offers only).
    public var offerId: String?
    /// The app account token the purchase will carry (lowercase UUID), which the older signature
    /// covers; empty or absent when the purchase carries none.
    public var appAccountToken: String?
    /// A transaction of the customer, or their app transaction ID (`AppTransaction.appTransactionID`),
    /// for the JWS's `transactionId`. The server uses the customer's newest transaction when absent;
    /// an eligibility needs one or the other.
    public var transactionId: String?

    /// Creates a request.
    public init(
        bundleId: String, productId: String, kind: Kind, offerId: String? = nil, appAccountToken: String? = nil,
        transactionId: String? = nil
    ) {
        self.bundleId = bundleId
        self.productId = productId
        self.kind = kind
        self.offerId = offerId
        self.appAccountToken = appAccountToken
        self.transactionId = transactionId
    }
}

/// What StoreKit needs to apply a server-signed offer: the answer of
/// `POST /v1/customers/{user}/offers/sign`.
///
/// For a promotional offer, ``jws`` goes to `Product.PurchaseOption.promotionalOffer(_:compactJWS:)`,
/// and ``keyId``, ``nonce``, ``timestamp`` and ``signature`` to the older
/// `.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)` (or StoreKit 1's `SKPaymentDiscount`).
/// For an eligibility, ``jws`` goes to `.introductoryOfferEligibility(compactJWS:)`. Each answer
/// has a fresh nonce: use it for one purchase, within 24 hours.
public struct SignedOffer: Codable, Hashable, Sendable {
    /// What was signed.
    public var kind: OfferSigningRequest.Kind
    /// The subscription's product ID.
    public var productId: String
    /// The promotional offer's ID (promotional offers only).
    public var offerId: String?
    /// The compact JWS.
    public var jws: String
    /// The In-App Purchase key's ID.
    public var keyId: String
    /// The nonce both forms carry (lowercase UUID).
    public var nonce: String
    /// When it was signed, in milliseconds since 1970.
    public var timestamp: Int64
    /// The older promotional offer signature (base64 of a DER ECDSA signature); promotional offers only.
    public var signature: String?
    /// The app account token the older signature covers (lowercase), or empty.
    public var appAccountToken: String?
    /// For an eligibility: whether the JWS allows the introductory offer.
    public var allowIntroductoryOffer: Bool?

    /// Creates an answer.
    public init(
        kind: OfferSigningRequest.Kind, productId: String, offerId: String?, jws: String, keyId: String, nonce: String,
        timestamp: Int64, signature: String? = nil, appAccountToken: String? = nil, allowIntroductoryOffer: Bool? = nil
    ) {
        self.kind = kind
        self.productId = productId
        self.offerId = offerId
        self.jws = jws
        self.keyId = keyId
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
        self.appAccountToken = appAccountToken
        self.allowIntroductoryOffer = allowIntroductoryOffer
    }
}
