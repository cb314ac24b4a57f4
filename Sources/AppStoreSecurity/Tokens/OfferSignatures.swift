public import Crypto
public import Foundation

/// The claims of a JWS an app's server signs for StoreKit: a promotional offer
/// (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`) or an introductory-offer eligibility
/// (`.introductoryOfferEligibility(compactJWS:)`).
///
/// Every such JWS carries `bid`, `iss`, `aud` (which says what it is for), `iat` (whole seconds)
/// and a fresh `nonce` (a UUID); the feature adds its own claims. A promotional offer names the
/// product and the offer, and may name a transaction of the customer; an eligibility names the
/// product, a transaction of the customer, and whether the introductory offer is allowed.
public struct OfferSigningClaims: Codable, Hashable, Sendable {
    /// The app's bundle ID (`bid`).
    public var bundleID: String
    /// The issuer ID of the key's team (`iss`).
    public var issuer: String
    /// What the JWS is for (`aud`): ``OfferSignatures/promotionalOfferAudience`` or
    /// ``OfferSignatures/introductoryOfferEligibilityAudience``.
    public var audience: String
    /// When it was signed, in whole seconds since 1970 (`iat`).
    public var issuedAt: Int64
    /// A UUID made for this signature only (`nonce`).
    public var nonce: String
    /// The subscription's product ID (`productId`).
    public var productID: String
    /// The promotional offer's ID (`offerIdentifier`); promotional offers only.
    public var offerIdentifier: String?
    /// A transaction of the customer, or their app transaction ID (`transactionId`).
    public var transactionID: String?
    /// Whether the customer may have the introductory offer (`allowIntroductoryOffer`);
    /// eligibilities only.
    public var allowIntroductoryOffer: Bool?

    enum CodingKeys: String, CodingKey {
        case bundleID = "bid"
        case issuer = "iss"
        case audience = "aud"
        case issuedAt = "iat"
        case nonce
        case productID = "productId"
        case offerIdentifier
        case transactionID = "transactionId"
        case allowIntroductoryOffer
    }

    /// Creates claims from their parts.
    public init(
        bundleID: String, issuer: String, audience: String, issuedAt: Int64, nonce: String, productID: String,
        offerIdentifier: String? = nil, transactionID: String? = nil, allowIntroductoryOffer: Bool? = nil
    ) {
        self.bundleID = bundleID
        self.issuer = issuer
        self.audience = audience
        self.issuedAt = issuedAt
        self.nonce = nonce
        self.productID = productID
        self.offerIdentifier = offerIdentifier
        self.transactionID = transactionID
        self.allowIntroductoryOffer = allowIntroductoryOffer
    }
}

/// Signs what StoreKit needs to sell an offer that the app's server must vouch for, with the
/// app's In-App Purchase key (the `.p8` from App Store Connect, the same key the App Store Server
/// API takes).
///
/// - A promotional offer, as a JWS (``promotionalOffer(productID:offerID:transactionID:nonce:issuedAt:)``)
///   or as the older signature StoreKit 1 and older StoreKit 2 releases take
///   (``legacyPromotionalOffer(productID:offerID:applicationUsername:nonce:timestamp:)``).
/// - An introductory-offer eligibility, as a JWS
///   (``introductoryOfferEligibility(productID:allowIntroductoryOffer:transactionID:nonce:issuedAt:)``).
///
/// swift-crypto makes every signature; this type only lays out the signed bytes as Apple documents
/// them.
public struct OfferSigner: Sendable {
    /// The key's ID in App Store Connect (the JWS `kid`, the legacy `keyIdentifier`).
    public let keyID: String
    /// The issuer ID of the team's keys.
    public let issuerID: String
    /// The app's bundle ID.
    public let bundleID: String
    private let privateKey: P256.Signing.PrivateKey

    /// Creates a signer for one app and key.
    public init(keyID: String, issuerID: String, bundleID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.privateKey = privateKey
    }

    /// The public half of the key, as the App Store (or the sandbox) checks signatures with it.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// A promotional offer JWS (`aud` `promotional-offer`) for `offerID` of `productID`.
    public func promotionalOffer(
        productID: String, offerID: String, transactionID: String?, nonce: UUID, issuedAt: Date
    ) throws -> String {
        try sign(
            OfferSigningClaims(
                bundleID: bundleID, issuer: issuerID, audience: OfferSignatures.promotionalOfferAudience,
                issuedAt: OfferSignatures.seconds(issuedAt), nonce: nonce.uuidString.lowercased(),
                productID: productID, offerIdentifier: offerID, transactionID: transactionID))
    }

    /// An introductory-offer eligibility JWS (`aud` `introductory-offer-eligibility`): StoreKit
    /// gives the introductory offer of `productID` when `allowIntroductoryOffer` is true and
    /// withholds it when false, whatever it would have decided itself.
    public func introductoryOfferEligibility(
        productID: String, allowIntroductoryOffer: Bool, transactionID: String, nonce: UUID, issuedAt: Date
    ) throws -> String {
        try sign(
            OfferSigningClaims(
                bundleID: bundleID, issuer: issuerID, audience: OfferSignatures.introductoryOfferEligibilityAudience,
                issuedAt: OfferSignatures.seconds(issuedAt), nonce: nonce.uuidString.lowercased(),
                productID: productID, transactionID: transactionID, allowIntroductoryOffer: allowIntroductoryOffer))
    }

    /// The older promotional offer signature: base64 of the DER ECDSA P-256 SHA-256 signature over
    /// ``OfferSignatures/legacyMessage(bundleID:keyID:productID:offerID:applicationUsername:nonce:timestamp:)``.
    ///
    /// - Parameters:
    ///   - applicationUsername: the app account token (or StoreKit 1 `applicationUsername`) the
    ///     purchase will carry, or empty; it is signed lowercased.
    ///   - timestamp: milliseconds since 1970; the App Store accepts the signature for 24 hours.
    public func legacyPromotionalOffer(
        productID: String, offerID: String, applicationUsername: String, nonce: UUID, timestamp: Int64
    ) throws -> String {
        let message = OfferSignatures.legacyMessage(
            bundleID: bundleID, keyID: keyID, productID: productID, offerID: offerID,
            applicationUsername: applicationUsername, nonce: nonce, timestamp: timestamp)
        return try privateKey.signature(for: Data(message.utf8)).derRepresentation.base64EncodedString()
    }

    private func sign(_ claims: OfferSigningClaims) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = JWSHeader(algorithm: "ES256", keyID: keyID, type: "JWT")
        return try CompactJWS.sign(
            headerJSON: try encoder.encode(header), payload: try encoder.encode(claims), key: privateKey)
    }
}

/// Constants and checks of offer signatures, shared by the signer and the verifier.
public enum OfferSignatures {
    /// The `aud` of a promotional offer JWS.
    public static let promotionalOfferAudience = "promotional-offer"
    /// The `aud` of an introductory-offer eligibility JWS.
    public static let introductoryOfferEligibilityAudience = "introductory-offer-eligibility"
    /// How long a signature is accepted after it was made: 24 hours, as Apple documents for the
    /// older signature's timestamp.
    public static let lifetime: TimeInterval = 24 * 3600

    /// The text the older promotional offer signature covers: bundle ID, key ID, product ID,
    /// offer ID, the application username (lowercased, may be empty), the nonce (lowercased) and
    /// the timestamp in milliseconds, joined by U+2063 (INVISIBLE SEPARATOR).
    public static func legacyMessage(
        bundleID: String, keyID: String, productID: String, offerID: String, applicationUsername: String,
        nonce: UUID, timestamp: Int64
    ) -> String {
        [
            bundleID, keyID, productID, offerID, applicationUsername.lowercased(), nonce.uuidString.lowercased(),
            String(timestamp),
        ].joined(separator: "\u{2063}")
    }

    static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }
}

/// Checks offer signatures as the App Store does before it applies an offer: the key must be
/// registered (for the app), the signature must verify with it, the claims must be for this app,
/// product and offer, and the signature must be less than ``OfferSignatures/lifetime`` old.
/// Whether a nonce was used before is the caller's to decide (it keeps the used ones).
public struct OfferSignatureVerifier: Sendable {
    private let keys: [String: AppStoreServerAPITokenVerifier.Key]
    /// Tolerated clock difference between the signer and this verifier.
    public let leeway: TimeInterval

    /// Creates a verifier for `keys` (In-App Purchase keys, as registered for the API).
    public init(keys: [AppStoreServerAPITokenVerifier.Key], leeway: TimeInterval = 60) {
        self.keys = Dictionary(keys.map { ($0.keyID, $0) }, uniquingKeysWith: { _, last in last })
        self.leeway = leeway
    }

    /// Verifies a promotional offer or eligibility JWS for `bundleID` and `productID`, with the
    /// `audience` expected, at `now`; returns its claims.
    public func verify(
        jws: String, audience: String, bundleID: String, productID: String, now: Date
    ) throws(AppStoreSecurityError) -> OfferSigningClaims {
        let compact = try CompactJWS(jws)
        let header = try compact.header()
        guard header.algorithm == "ES256" else {
            throw AppStoreSecurityError(
                .wrongAlgorithm, "offer signatures are ES256", expected: "ES256", found: header.algorithm ?? "no alg")
        }
        guard let keyID = header.keyID else {
            throw AppStoreSecurityError(.invalidToken, "the offer JWS header has no kid", expected: "a key ID")
        }
        let key = try registeredKey(keyID, bundleID: bundleID)
        try compact.verifySignature(with: key.publicKey)
        let claims: OfferSigningClaims
        do { claims = try JSONDecoder().decode(OfferSigningClaims.self, from: try compact.payloadData()) } catch {
            throw AppStoreSecurityError(.invalidToken, "the offer JWS needs bid, iss, aud, iat, nonce and productId")
        }
        guard claims.audience == audience else {
            throw AppStoreSecurityError(.invalidToken, "wrong audience", expected: audience, found: claims.audience)
        }
        guard claims.issuer == key.issuerID else {
            throw AppStoreSecurityError(
                .invalidToken, "wrong issuer for this key", expected: key.issuerID, found: claims.issuer)
        }
        guard claims.bundleID == bundleID else {
            throw AppStoreSecurityError(
                .wrongBundleID, "the offer is signed for another app", expected: bundleID, found: claims.bundleID)
        }
        guard claims.productID == productID else {
            throw AppStoreSecurityError(
                .invalidToken, "the offer is signed for another product", expected: productID,
                found: claims.productID)
        }
        guard UUID(uuidString: claims.nonce) != nil else {
            throw AppStoreSecurityError(.invalidToken, "the nonce is not a UUID", found: claims.nonce)
        }
        try checkAge(signedAt: TimeInterval(claims.issuedAt), now: now)
        return claims
    }

    /// Verifies an older promotional offer signature (base64 DER) over its parts, at `now`.
    public func verifyLegacy(
        signature: String, keyID: String, bundleID: String, productID: String, offerID: String,
        applicationUsername: String, nonce: UUID, timestamp: Int64, now: Date
    ) throws(AppStoreSecurityError) {
        let key = try registeredKey(keyID, bundleID: bundleID)
        guard let bytes = Data(base64Encoded: signature),
            let parsed = try? P256.Signing.ECDSASignature(derRepresentation: bytes)
        else {
            throw AppStoreSecurityError(
                .badSignature, "the offer signature is not base64 of a DER ECDSA signature")
        }
        let message = OfferSignatures.legacyMessage(
            bundleID: bundleID, keyID: keyID, productID: productID, offerID: offerID,
            applicationUsername: applicationUsername, nonce: nonce, timestamp: timestamp)
        guard key.publicKey.isValidSignature(parsed, for: Data(message.utf8)) else {
            throw AppStoreSecurityError(.badSignature, "the offer signature does not match its parts and the key")
        }
        try checkAge(signedAt: TimeInterval(timestamp) / 1000, now: now)
    }

    private func registeredKey(
        _ keyID: String, bundleID: String
    ) throws(AppStoreSecurityError) -> AppStoreServerAPITokenVerifier.Key {
        guard let key = keys[keyID] else {
            throw AppStoreSecurityError(.unknownKey, "no In-App Purchase key is registered under this ID", found: keyID)
        }
        if !key.bundleIDs.isEmpty, !key.bundleIDs.contains(bundleID) {
            throw AppStoreSecurityError(
                .wrongBundleID, "this key may not sign for the app", expected: key.bundleIDs.sorted().joined(
                    separator: ", "), found: bundleID)
        }
        return key
    }

    private func checkAge(signedAt: TimeInterval, now: Date) throws(AppStoreSecurityError) {
        let current = now.timeIntervalSince1970
        if signedAt - leeway > current {
            throw AppStoreSecurityError(.tokenExpired, "the offer was signed in the future")
        }
        if current - signedAt > OfferSignatures.lifetime + leeway {
            throw AppStoreSecurityError(
                .tokenExpired, "the offer signature is older than 24 hours",
                found: "\(Int64(current - signedAt)) s old")
        }
    }
}
