public import AppStoreModels
import AppStoreSecurity
import Crypto
public import Foundation

/// Legacy `verifyReceipt`, answered as Apple answers it, with its status codes.
extension SandboxEngine {
    /// Which of Apple's two verifyReceipt hosts a request reached.
    public enum VerifyReceiptEndpoint: Sendable {
        /// `buy.itunes.apple.com`: answers 21007 for sandbox receipts, so clients retry in the sandbox.
        case production
        /// `sandbox.itunes.apple.com`.
        case sandbox
    }

    /// Verifies a base64 receipt and describes it, or answers the status code that says why not.
    ///
    /// - Parameters:
    ///   - sharedSecret: the app's shared secret; when set, a request for a receipt with
    ///     auto-renewable subscriptions must carry it as `password` (21004 otherwise).
    public func verifyReceipt(
        _ request: VerifyReceiptRequest, endpoint: VerifyReceiptEndpoint, sharedSecret: String? = nil
    ) async -> VerifyReceiptResponse {
        guard let base64 = request.receiptData, !base64.isEmpty,
            let signed = try? SignedAppReceipt(base64Encoded: base64)
        else { return VerifyReceiptResponse(status: .malformedReceiptData) }
        let now = clock.now()
        let verification: AppReceiptVerification
        do {
            verification = try await signed.verify(roots: [signer.authority.root], bundleID: signer.bundleID, now: now)
        } catch {
            return VerifyReceiptResponse(status: .receiptNotAuthenticated)
        }
        let receipt = verification.receipt
        let isSandboxReceipt = receipt.receiptType != .production && receipt.receiptType != .productionVPP
        switch (endpoint, isSandboxReceipt) {
        case (.production, true): return VerifyReceiptResponse(status: .sandboxReceiptSentToProduction)
        case (.sandbox, false): return VerifyReceiptResponse(status: .productionReceiptSentToSandbox)
        default: break
        }
        let testerIDs = Set(
            receipt.inAppPurchases.compactMap { record in
                state.transactions[record.transactionID]?.testerID
            })
        if !receipt.inAppPurchases.isEmpty, testerIDs.isEmpty {
            return VerifyReceiptResponse(status: .accountNotFound)
        }
        let testerID = testerIDs.first
        let all = testerID.map { transactions(of: $0) } ?? []
        let subscriptions = all.filter { $0.productType == .autoRenewableSubscription }
        if let sharedSecret, !subscriptions.isEmpty, request.password != sharedSecret {
            return VerifyReceiptResponse(status: .sharedSecretMismatch)
        }

        var body = VerifyReceiptReceipt(
            receiptType: .productionSandbox, adamID: 0, appItemID: 0, bundleID: receipt.bundleID,
            applicationVersion: receipt.applicationVersion, downloadID: 0,
            originalApplicationVersion: receipt.originalApplicationVersion,
            inApp: receipt.inAppPurchases.map { record in
                Self.entry(state.transactions[record.transactionID], record: record)
            })
        body.receiptCreationDate = receipt.creationDate
        body.requestDate = now
        body.originalPurchaseDate = receipt.originalPurchaseDate
        var response = VerifyReceiptResponse(status: .valid, environment: .sandbox, receipt: body)
        guard !subscriptions.isEmpty else { return response }

        var latest = subscriptions
        if request.excludeOldTransactions == true {
            latest = Dictionary(grouping: subscriptions, by: \.originalID).values.compactMap { $0.last }
        }
        response.latestReceipt = base64
        response.latestReceiptInfo = latest.sorted { $0.purchaseDate > $1.purchaseDate }.map {
            Self.entry($0, record: nil)
        }
        response.pendingRenewalInfo = Set(subscriptions.map(\.originalID)).sorted().compactMap { id in
            guard let subscription = state.subscriptions[id] else { return nil }
            var info = PendingRenewalInfo(
                autoRenewProductID: subscription.autoRenewProductID,
                autoRenewStatus: subscription.autoRenewEnabled ? "1" : "0",
                expirationIntent: subscription.expirationIntent.map { "\($0.rawValue)" },
                isInBillingRetryPeriod: subscription.billingState != .ok && subscription.expirationIntent == nil
                    ? "1" : "0",
                originalTransactionID: id, productID: subscription.productID)
            info.gracePeriodExpiresDate = subscription.gracePeriodExpiresDate
            return info
        }
        return response
    }

    /// One `in_app` / `latest_receipt_info` entry, with Apple's string values and date triples.
    private static func entry(
        _ transaction: SandboxTransaction?, record: InAppPurchaseReceipt?
    ) -> VerifyReceiptInAppPurchase {
        var entry = VerifyReceiptInAppPurchase(
            quantity: "\(transaction?.quantity ?? record?.quantity ?? 1)",
            productID: transaction?.productID ?? record?.productID,
            transactionID: transaction?.id ?? record?.transactionID,
            originalTransactionID: transaction?.originalID ?? record?.originalTransactionID,
            webOrderLineItemID: transaction?.webOrderLineItemID)
        entry.purchaseDate = transaction?.purchaseDate ?? record?.purchaseDate
        entry.originalPurchaseDate = transaction?.originalPurchaseDate ?? record?.originalPurchaseDate
        entry.expiresDate = transaction?.expiresDate ?? record?.expiresDate
        entry.cancellationDate = transaction?.revocationDate
        entry.cancellationReason = transaction?.revocationReason.map { "\($0.rawValue)" }
        if let transaction {
            let intro = transaction.offerType == .introductory
            entry.isTrialPeriod = intro && transaction.offerDiscountType == .freeTrial ? "true" : "false"
            entry.isInIntroOfferPeriod = intro ? "true" : "false"
            entry.isUpgraded = transaction.isUpgraded ? "true" : nil
            entry.promotionalOfferID = transaction.offerType == .promotional ? transaction.offerIdentifier : nil
            entry.subscriptionGroupIdentifier = transaction.subscriptionGroupID
            entry.inAppOwnershipType = .purchased
            entry.appAccountToken = transaction.appAccountToken
        }
        return entry
    }
}

extension SandboxEngine {
    /// The tester's app receipt on a device, as `Bundle.main.appStoreReceiptURL` holds it.
    ///
    /// The opaque value is derived from the tester and the device, so the same device gets the same
    /// value and the receipt's SHA-1 device hash checks out there and nowhere else.
    public func appReceipt(for testerID: String, deviceIdentifier: UUID) throws(SandboxError) -> [UInt8] {
        _ = try tester(testerID)
        let download = appDownload(of: testerID)
        let seed = SHA256.hash(data: Data((testerID + deviceIdentifier.uuidString).utf8))
        do {
            let receipt = try signer.appReceipt(
                transactions: transactions(of: testerID), originalPurchaseDate: download.originalPurchaseDate,
                deviceIdentifier: deviceIdentifier, opaqueValue: Data(seed.prefix(16)), at: clock.now())
            try save()
            return receipt
        } catch let error as SandboxError {
            throw error
        } catch {
            throw SandboxError(.stateUnavailable, "cannot sign the receipt: \(error)")
        }
    }
}
