public import AppStoreModels
import AppStoreSecurity
public import Foundation
public import KakinLedger
public import KakinWire

/// Offer signing: promotional offers and introductory-offer eligibilities, signed for one
/// customer with the app's In-App Purchase key.
extension PurchaseService {
    /// Signs what StoreKit needs to sell `request`'s offer to `appUserID`.
    ///
    /// Only offers the app's catalog defines are signed, only for customers the offer's rule
    /// (``OfferPolicy``) allows, and each signature carries a nonce made for it and logged in the
    /// ledger. An eligibility allows the introductory offer to customers who never subscribed in
    /// the product's group (as the App Store decides by itself) and refuses it to the others.
    ///
    /// - Throws: ``ServerError/Code/notConfigured`` without an App Store Server API key or a
    ///   catalog; ``ServerError/Code/notFound`` (cause `unknownOffer`) for a product or offer the
    ///   catalog lacks; ``ServerError/Code/notEntitled`` (cause `offerIneligible`) when the rule
    ///   refuses the customer; ``ServerError/Code/invalidRequest`` for a bad request.
    public func signOffer(_ request: OfferSigningRequest, appUserID: String) async throws(ServerError) -> SignedOffer {
        let app = try app(request.bundleId)
        let kind = request.kind.rawValue
        do {
            let signed = try await sign(request, appUserID: appUserID, app: app)
            metrics?.offerSignature(kind: kind, outcome: "signed")
            logger.info(
                "offer.signed",
                metadata: [
                    "bundleId": .string(app.bundleID), "appUserId": .string(appUserID), "kind": .string(kind),
                    "productId": .string(request.productId), "offerId": .string(request.offerId ?? ""),
                    "nonce": .string(signed.nonce),
                ])
            return signed
        } catch {
            metrics?.offerSignature(kind: kind, outcome: error.cause ?? "\(error.code)")
            throw error
        }
    }

    private func sign(
        _ request: OfferSigningRequest, appUserID: String, app: AppConfiguration
    ) async throws(ServerError) -> SignedOffer {
        guard let access = app.serverAPI else {
            throw ServerError(
                .notConfigured, "\(app.bundleID) has no In-App Purchase key (appStoreServerAPI) to sign offers with",
                cause: "notConfigured")
        }
        guard let catalog = app.catalog else {
            throw ServerError(
                .notConfigured, "\(app.bundleID) has no catalog: only offers a catalog defines are signed",
                cause: "notConfigured")
        }
        guard let subscription = catalog.allSubscriptions.first(where: { $0.productID == request.productId }),
            let groupID = subscription.subscriptionGroupID
        else {
            throw ServerError(
                .notFound, "the catalog has no auto-renewable subscription \(request.productId)", cause: "unknownOffer")
        }
        if let token = request.appAccountToken, !token.isEmpty, UUID(uuidString: token) == nil {
            throw ServerError(.invalidRequest, "appAccountToken must be a UUID")
        }
        let groupProducts = Set(
            catalog.allSubscriptions.filter { $0.subscriptionGroupID == groupID }.compactMap(\.productID))
        let history: CustomerState
        do { history = try await customer(bundleID: app.bundleID, appUserID: appUserID) } catch {
            throw ServerError(error)
        }
        let inGroup = history.transactions.filter { groupProducts.contains($0.productID) }
        let subscribedBefore = !inGroup.isEmpty
        let activeNow = history.entitlements.contains { $0.isActive && groupProducts.contains($0.productID) }
        let transactionID = request.transactionId ?? history.transactions.max { $0.purchaseDate < $1.purchaseDate }?
            .transactionID
        let signer = OfferSigner(
            keyID: access.keyID, issuerID: access.issuerID, bundleID: app.bundleID, privateKey: access.privateKey)
        let nonce = UUID()
        let now = now()
        let timestamp = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        var answer: SignedOffer
        switch request.kind {
        case .promotional:
            guard let offerID = request.offerId, !offerID.isEmpty else {
                throw ServerError(.invalidRequest, "a promotional offer needs offerId")
            }
            guard (subscription.adHocOffers ?? []).contains(where: { $0.offerID == offerID }) else {
                throw ServerError(
                    .notFound, "\(request.productId) has no promotional offer \(offerID) in the catalog",
                    cause: "unknownOffer")
            }
            let rule = app.offers.rule(for: offerID)
            let allowed =
                switch rule {
                case .everyone: true
                case .lapsedSubscribers: subscribedBefore && !activeNow
                case .neverSubscribed: !subscribedBefore
                case .activeSubscribers: activeNow
                }
            guard allowed else {
                throw ServerError(
                    .notEntitled, "\(offerID) is for \(rule.rawValue) only: this customer is not one",
                    cause: "offerIneligible")
            }
            let token = request.appAccountToken?.lowercased() ?? ""
            do {
                answer = SignedOffer(
                    kind: .promotional, productId: request.productId, offerId: offerID,
                    jws: try signer.promotionalOffer(
                        productID: request.productId, offerID: offerID, transactionID: transactionID, nonce: nonce,
                        issuedAt: now),
                    keyId: access.keyID, nonce: nonce.uuidString.lowercased(), timestamp: timestamp,
                    signature: try signer.legacyPromotionalOffer(
                        productID: request.productId, offerID: offerID, applicationUsername: token, nonce: nonce,
                        timestamp: timestamp),
                    appAccountToken: token)
            } catch { throw ServerError(.internalError, "the offer cannot be signed: \(error)") }
        case .introductoryEligibility:
            guard subscription.introductoryOffer != nil else {
                throw ServerError(
                    .notFound, "\(request.productId) has no introductory offer in the catalog", cause: "unknownOffer")
            }
            guard let transactionID else {
                throw ServerError(
                    .invalidRequest,
                    "an eligibility needs transactionId (the app transaction ID) for a customer without transactions")
            }
            do {
                answer = SignedOffer(
                    kind: .introductoryEligibility, productId: request.productId, offerId: nil,
                    jws: try signer.introductoryOfferEligibility(
                        productID: request.productId, allowIntroductoryOffer: !subscribedBefore,
                        transactionID: transactionID, nonce: nonce, issuedAt: now),
                    keyId: access.keyID, nonce: nonce.uuidString.lowercased(), timestamp: timestamp,
                    allowIntroductoryOffer: !subscribedBefore)
            } catch { throw ServerError(.internalError, "the eligibility cannot be signed: \(error)") }
        }
        do {
            try await store.recordOfferSignature(
                OfferSignatureRecord(
                    nonce: answer.nonce, bundleID: app.bundleID, appUserID: appUserID, productID: request.productId,
                    offerID: answer.offerId,
                    kind: request.kind, keyID: access.keyID,
                    createdAt: now))
        } catch { throw ServerError(error) }
        return answer
    }
}
