import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinLedger
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
                    "bundleId": .string(app.bundleID), "appUserId": .string(CustomerIDRedaction.redacted(appUserID)), "kind": .string(kind),
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
        // The signature is over the customer's own app account token (or none): a request cannot
        // have an offer signed for another customer's purchases.
        let ownToken = AppAccountToken.derived(from: appUserID).uuidString.lowercased()
        let token: String
        switch request.appAccountToken?.lowercased() {
        case nil: token = ownToken
        case ""?: token = ""
        case let asked?:
            guard UUID(uuidString: asked) != nil else {
                throw ServerError(.invalidRequest, "appAccountToken must be a UUID")
            }
            guard asked == ownToken else {
                throw ServerError(
                    .forbidden, "appAccountToken is not this customer's: offers are signed over the customer's own token",
                    cause: "foreignAppAccountToken")
            }
            token = asked
        }
        let groupProducts = Set(
            catalog.allSubscriptions.filter { $0.subscriptionGroupID == groupID }.compactMap(\.productID))
        let history: EntitledCustomer
        do { history = try await customer(bundleID: app.bundleID, appUserID: appUserID) } catch {
            throw ServerError(error)
        }
        let inGroup = history.transactions.filter { groupProducts.contains($0.productID) }
        let subscribedBefore = !inGroup.isEmpty
        let activeNow = history.entitlements.contains { $0.isActive && groupProducts.contains($0.productID) }
        let transactionID = try await ownTransactionID(request.transactionId, history: history, app: app, appUserID: appUserID)
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
                    "an eligibility for a customer without transactions needs the customer's app transaction, linked first (POST /v1/customers/{user}/app-transaction)",
                    cause: "noTransaction")
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
            try await appleCalls.recordOfferSignature(
                OfferSignatureRecord(
                    nonce: answer.nonce, bundleID: app.bundleID, appUserID: appUserID, productID: request.productId,
                    offerID: answer.offerId,
                    kind: request.kind, keyID: access.keyID,
                    createdAt: now))
        } catch { throw ServerError(error) }
        return answer
    }

    /// The transaction ID an offer's signature carries: one of the customer's own. Without one
    /// asked for, the customer's latest transaction, else the app transaction last linked to the
    /// customer; one asked for must be among those (403 `forbidden`, cause `foreignTransaction`).
    private func ownTransactionID(
        _ asked: String?, history: EntitledCustomer, app: AppConfiguration, appUserID: String
    ) async throws(ServerError) -> String? {
        let latest = history.transactions.max { $0.purchaseDate < $1.purchaseDate }?.transactionID
        if asked == nil, let latest { return latest }
        if let asked,
            history.transactions.contains(where: { $0.transactionID == asked || $0.originalTransactionID == asked })
        {
            return asked
        }
        // Only now are the customer's linked app transactions read.
        let linked: [String]
        do {
            linked = try await customers.appTransactions(bundleID: app.bundleID, appUserID: appUserID).map(\.appTransactionID)
        } catch { throw ServerError(error) }
        guard let asked else { return linked.first }
        guard linked.contains(asked) else {
            throw ServerError(
                .forbidden, "transaction \(asked) is not one of this customer's", cause: "foreignTransaction")
        }
        return asked
    }
}
