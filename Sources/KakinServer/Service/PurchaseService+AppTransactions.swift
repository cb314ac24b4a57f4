public import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinLedger

/// App downloads and their customers: the SDK reports the app transaction of the install a
/// customer uses, and a transaction that reaches the server without an owner (a notification about
/// a purchase the app never uploaded) is given the customer of its app download.
extension PurchaseService {
    /// Verifies an app transaction (StoreKit's `AppTransaction`, as its JWS) and links its
    /// `appTransactionId` to `appUserID`.
    ///
    /// - Throws: ``ServerError/Code/verificationFailed`` for an app transaction that does not
    ///   verify for the app, or has no `appTransactionId`.
    @discardableResult
    public func linkAppTransaction(
        _ jws: String, bundleID: String, appUserID: String
    ) async throws(ServerError) -> AppTransaction {
        let app = try app(bundleID)
        let appTransaction = try await verifiedAppTransaction(jws, app: app)
        guard let appTransactionID = appTransaction.appTransactionID, let environment = appTransaction.receiptType else {
            throw ServerError(.verificationFailed, "the app transaction has no appTransactionId", cause: "malformedInput")
        }
        do {
            try await customers.linkAppTransaction(
                bundleID: app.bundleID, appTransactionID: appTransactionID, appUserID: appUserID,
                environment: environment, at: now())
        } catch { throw ServerError(error) }
        metrics?.ledgerEvent("appTransaction.linked")
        return appTransaction
    }

    /// An app transaction (JWS) of `app`, verified as every signed item is: decoded first, its
    /// environment picks the verifier, which checks the chain, the signature and the app.
    ///
    /// - Throws: ``ServerError/Code/verificationFailed`` for one that does not verify, or has no
    ///   `appTransactionId`.
    func verifiedAppTransaction(_ jws: String, app: AppConfiguration) async throws(ServerError) -> AppTransaction {
        let (_, decoded) = try Self.decode(jws, as: AppTransaction.self)
        guard let environment = decoded.receiptType else {
            throw ServerError(.verificationFailed, "the app transaction names no environment", cause: "malformedInput")
        }
        let verifier = try verifier(app, environment)
        let appTransaction: AppTransaction
        do { appTransaction = try await verifier.verifyAppTransaction(jws) } catch {
            throw ServerError(verification: error)
        }
        guard let appTransactionID = appTransaction.appTransactionID, !appTransactionID.isEmpty else {
            throw ServerError(
                .verificationFailed, "the app transaction has no appTransactionId", cause: "malformedInput")
        }
        return appTransaction
    }

    /// The customer of a transaction the ledger has no owner for, found through its app download:
    /// the payload's `appTransactionId`, or, for a payload without one, the app transaction the
    /// App Store Server API returns for it (Get App Transaction Info, verified). `nil` when the
    /// download was never linked, or Apple cannot be asked.
    func customerOfAppDownload(
        _ payload: JWSTransactionDecodedPayload, app: AppConfiguration, environment: AppStoreEnvironment
    ) async -> String? {
        var appTransactionID = payload.appTransactionID
        if appTransactionID == nil, let access = app.serverAPI, let transactionID = payload.transactionID {
            let client = AppStoreServerAPIClient(access: access, exchange: exchange, bundleID: app.bundleID, now: realNow)
            if let answer = try? await client.get(
                AppTransactionInfoResponse.self, .getAppTransactionInfo,
                path: "inApps/v1/transactions/appTransactions/\(transactionID)",
                environment: environment, missingIsNil: true),
                let signed = answer.signedAppTransactionInfo,
                let verified = try? await verifier(app, environment).verifyAppTransaction(signed)
            {
                appTransactionID = verified.appTransactionID
            }
        }
        guard let appTransactionID else { return nil }
        return try? await customers.appTransactionCustomer(bundleID: app.bundleID, appTransactionID: appTransactionID)
    }
}
