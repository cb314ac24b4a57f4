import AppStoreModels
public import AppStoreSecurity
import Crypto
public import Foundation

/// An In-App Purchase key registered with the sandbox, as App Store Connect holds one: the
/// sandbox checks promotional offer and introductory-offer eligibility signatures with it.
public struct SandboxOfferKey: Codable, Hashable, Sendable {
    /// The key's ID (the JWS `kid`, the older signature's `keyIdentifier`).
    public var keyID: String
    /// The issuer ID a JWS signed with the key must carry (`iss`).
    public var issuerID: String
    /// The public key, PEM (`-----BEGIN PUBLIC KEY-----`).
    public var publicKeyPEM: String
    /// The apps the key may sign for; empty means any.
    public var bundleIDs: [String]

    /// Creates a key from its parts.
    public init(keyID: String, issuerID: String, publicKeyPEM: String, bundleIDs: [String] = []) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.publicKeyPEM = publicKeyPEM
        self.bundleIDs = bundleIDs
    }

    /// The key as the verifiers take it.
    /// - Throws: ``SandboxError/Code/invalidRequest`` when the PEM is not a P-256 public key.
    public func verifierKey() throws(SandboxError) -> AppStoreServerAPITokenVerifier.Key {
        guard let key = try? P256.Signing.PublicKey(pemRepresentation: publicKeyPEM) else {
            throw SandboxError(.invalidRequest, "the key \(keyID) is not a PEM P-256 public key")
        }
        return .init(keyID: keyID, issuerID: issuerID, bundleIDs: Set(bundleIDs), publicKey: key)
    }
}

/// A promotional offer's signature as the app passes it to StoreKit: the JWS
/// (`.promotionalOffer(_:compactJWS:)`), or the older parts (`.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`,
/// StoreKit 1's `SKPaymentDiscount`).
public struct PromotionalOfferSignature: Codable, Hashable, Sendable {
    /// The compact JWS the app's server signed.
    public var compactJWS: String?
    /// The older signature's key ID.
    public var keyID: String?
    /// The older signature's nonce.
    public var nonce: UUID?
    /// The older signature's timestamp, in milliseconds since 1970.
    public var timestamp: Int64?
    /// The older signature: base64 of a DER ECDSA signature.
    public var signature: String?

    /// A JWS signature.
    public init(compactJWS: String) {
        self.compactJWS = compactJWS
    }

    /// An older signature from its parts.
    public init(keyID: String, nonce: UUID, timestamp: Int64, signature: String) {
        self.keyID = keyID
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
    }
}

/// Offer signatures: the keys that check them, and the checks the App Store makes before it
/// applies a promotional offer or an introductory-offer eligibility.
extension SandboxEngine {
    /// Registers (or replaces) an In-App Purchase key; kept with the state, and kept by a reset.
    /// - Throws: ``SandboxError/Code/invalidRequest`` for an empty ID or issuer, or a key that is
    ///   not a PEM P-256 public key.
    public func registerOfferKey(_ key: SandboxOfferKey) throws(SandboxError) {
        guard !key.keyID.isEmpty, !key.issuerID.isEmpty else {
            throw SandboxError(.invalidRequest, "a key needs a keyId and an issuerId")
        }
        _ = try key.verifierKey()
        state.offerKeys[key.keyID] = key
        try save()
    }

    /// The registered keys, by ID.
    public func offerKeys() -> [SandboxOfferKey] {
        state.offerKeys.values.sorted { $0.keyID < $1.keyID }
    }

    /// Removes a registered key.
    /// - Throws: ``SandboxError/Code/invalidRequest`` when no key has that ID.
    public func removeOfferKey(_ keyID: String) throws(SandboxError) {
        guard state.offerKeys.removeValue(forKey: keyID) != nil else {
            throw SandboxError(.invalidRequest, "no key \(keyID) is registered")
        }
        try save()
    }

    /// The App Store's checks of a promotional offer purchase, or the StoreKit error it fails
    /// with: the offer must be one of the product's (`invalidOfferIdentifier`), the signature
    /// given (`missingOfferParams`), made by a registered key for this app, product and offer,
    /// less than 24 hours ago, with a nonce never used before (`invalidSignature`). A nonce is
    /// used once the check passes.
    func checkPromotionalOffer(
        _ request: PurchaseRequest, offerID: String, product: SandboxProductInfo, extraKeys: [AppStoreServerAPITokenVerifier.Key]
    ) -> StoreKitErrorCode? {
        guard product.type == .autoRenewableSubscription,
            product.promotionalOffers.contains(where: { $0.identifier == offerID })
        else { return .invalidOfferIdentifier }
        guard let signature = request.promotionalOfferSignature else { return .missingOfferParams }
        let verifier = offerVerifier(extraKeys)
        let bundleID = signer.bundleID
        let now = clock.now()
        let nonce: String
        if let jws = signature.compactJWS {
            guard
                let claims = try? verifier.verify(
                    jws: jws, audience: OfferSignatures.promotionalOfferAudience, bundleID: bundleID,
                    productID: product.id, now: now),
                claims.offerIdentifier == offerID
            else { return .invalidSignature }
            if let transactionID = claims.transactionID, !belongs(transactionID, to: request.testerID) {
                return .invalidSignature
            }
            nonce = claims.nonce.lowercased()
        } else {
            guard let keyID = signature.keyID, let parts = signature.nonce, let timestamp = signature.timestamp,
                let value = signature.signature
            else { return .missingOfferParams }
            let username = request.appAccountToken?.uuidString ?? request.applicationUsername ?? ""
            do {
                try verifier.verifyLegacy(
                    signature: value, keyID: keyID, bundleID: bundleID, productID: product.id, offerID: offerID,
                    applicationUsername: username, nonce: parts, timestamp: timestamp, now: now)
            } catch { return .invalidSignature }
            nonce = parts.uuidString.lowercased()
        }
        guard state.usedOfferNonces[nonce] == nil else { return .invalidSignature }
        state.usedOfferNonces[nonce] = now
        return nil
    }

    /// The introductory-offer decision an eligibility JWS makes for this purchase: `true` or
    /// `false` when the purchase carries a valid one (its nonce is then used), `nil` when it
    /// carries none (the App Store decides). A JWS that does not verify fails the purchase with
    /// `invalidSignature`.
    func introductoryOfferDecision(
        _ request: PurchaseRequest, product: SandboxProductInfo, extraKeys: [AppStoreServerAPITokenVerifier.Key]
    ) -> (allow: Bool?, failure: StoreKitErrorCode?) {
        guard let jws = request.introductoryOfferEligibilityJWS else { return (nil, nil) }
        guard
            let claims = try? offerVerifier(extraKeys).verify(
                jws: jws, audience: OfferSignatures.introductoryOfferEligibilityAudience, bundleID: signer.bundleID,
                productID: product.id, now: clock.now()),
            let allow = claims.allowIntroductoryOffer, let transactionID = claims.transactionID,
            belongs(transactionID, to: request.testerID)
        else { return (nil, .invalidSignature) }
        let nonce = claims.nonce.lowercased()
        guard state.usedOfferNonces[nonce] == nil else { return (nil, .invalidSignature) }
        state.usedOfferNonces[nonce] = clock.now()
        return (allow, nil)
    }

    private func offerVerifier(_ extraKeys: [AppStoreServerAPITokenVerifier.Key]) -> OfferSignatureVerifier {
        OfferSignatureVerifier(keys: extraKeys + state.offerKeys.values.compactMap { try? $0.verifierKey() })
    }

    /// The tester's app transaction ID (`AppTransaction.appTransactionID`), made on first use.
    public func appTransactionID(of testerID: String) throws(SandboxError) -> String {
        _ = try tester(testerID)
        let download = appDownload(of: testerID)
        try save()
        return download.appTransactionID
    }

    /// Whether `transactionID` is one of the tester's transactions or their app transaction ID.
    private func belongs(_ transactionID: String, to testerID: String) -> Bool {
        state.transactions[transactionID]?.testerID == testerID
            || state.appDownloads[testerID]?.appTransactionID == transactionID
    }
}
