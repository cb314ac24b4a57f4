import AppStoreModels
import Foundation
import KakinLedger
import KakinWire

extension PurchaseService {
    /// `POST /v1/receipts`: the legacy app-receipt flow. Sends the base64 receipt to verifyReceipt
    /// (production first, the sandbox on 21007, production again on 21008), records every purchase
    /// in it for `appUserID`, and answers with the customer's state. Apple's status codes become
    /// typed errors: retryable ones (21005, 21009, 21100–21199, no answer) as `appleUnavailable`,
    /// the others as `receiptRejected` with Apple's status and a message that says what it means.
    public func submitReceipt(_ base64: String, bundleID: String, appUserID: String) async throws -> EntitledCustomer {
        let app = try app(bundleID)
        guard !base64.isEmpty, Data(base64Encoded: base64, options: .ignoreUnknownCharacters) != nil else {
            throw ServerError(.invalidRequest, "receipt must be the base64 app receipt")
        }
        let request = VerifyReceiptRequest(
            receiptData: base64, password: app.sharedSecret, excludeOldTransactions: false)
        var url = app.verifyReceiptProductionURL
        var response = try await verify(request, at: url)
        for _ in 0..<2 {
            guard let status = response.status, status.shouldRetryInOtherEnvironment else { break }
            url =
                status == .sandboxReceiptSentToProduction ? app.verifyReceiptSandboxURL : app.verifyReceiptProductionURL
            response = try await verify(request, at: url)
        }
        let status = response.status ?? .unreadableRequest
        guard status == .valid else {
            throw ServerError(
                status.isRetryable ? .appleUnavailable : .receiptRejected,
                "verifyReceipt \(status.rawValue): \(status.message)",
                appleStatus: status.rawValue)
        }
        guard response.receipt?.bundleID == bundleID else {
            throw ServerError(
                .verificationFailed, "the receipt is for \(response.receipt?.bundleID ?? "no app"), not \(bundleID)")
        }
        let environment: AppStoreEnvironment = response.environment ?? .production
        guard app.environments.contains(environment) else {
            throw ServerError(.verificationFailed, "\(bundleID) does not accept \(environment.rawValue) receipts")
        }
        try checkSandboxPolicy(environment, appUserID: appUserID, app: app)
        var seen: Set<String> = []
        for entry in (response.receipt?.inApp ?? []) + (response.latestReceiptInfo ?? []) {
            guard let id = entry.transactionID, seen.insert(id).inserted, let productID = entry.productID,
                let purchaseDate = entry.purchaseDate
            else { continue }
            let productType =
                (app.productTypes ?? productTypes)[productID]
                ?? (entry.expiresDate == nil ? .nonConsumable : .autoRenewableSubscription)
            let record = RecordedTransaction(
                transactionID: id, originalTransactionID: entry.originalTransactionID ?? id, bundleID: bundleID,
                appUserID: appUserID, productID: productID, productType: productType,
                quantity: Int(entry.quantity ?? "1") ?? 1, purchaseDate: purchaseDate, expiresDate: entry.expiresDate,
                revocationDate: entry.cancellationDate,
                revocationReason: entry.cancellationReason.flatMap { Int($0) }.map(RevocationReason.init(rawValue:)),
                environment: environment, appAccountToken: entry.appAccountToken, signedTransaction: nil,
                source: .receipt,
                recordedAt: now(),
                periodType: productType == .autoRenewableSubscription ? Self.periodType(of: entry) : nil)
            _ = try await ingest(record, app: app)
        }
        return try await customer(bundleID: bundleID, appUserID: appUserID)
    }

    private func verify(_ request: VerifyReceiptRequest, at url: URL) async throws(ServerError) -> VerifyReceiptResponse
    {
        do { return try await verifyReceiptClient.verify(request, at: url) } catch {
            throw ServerError(
                .appleUnavailable, "verifyReceipt at \(url.host ?? url.absoluteString) did not answer: \(error)")
        }
    }
}

extension PurchaseService {
    /// The period a receipt's subscription entry pays for: a free trial (`is_trial_period`), an
    /// introductory price (`is_in_intro_offer_period`), a promotional or offer code offer, or the
    /// regular price.
    static func periodType(of entry: VerifyReceiptInAppPurchase) -> Entitlement.PeriodType {
        if entry.isTrialPeriodValue == true { return .trial }
        if entry.isInIntroOfferPeriodValue == true { return .intro }
        if entry.promotionalOfferID != nil || entry.offerCodeRefName != nil { return .offer }
        return .normal
    }
}
