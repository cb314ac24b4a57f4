public import AppStoreModels
public import Foundation

extension SignedDataVerifier {
    /// Verifies a signed transaction (`signedTransactionInfo`, StoreKit 2's `jwsRepresentation`):
    /// chain, signature, bundle ID and environment.
    public func verifyTransaction(
        _ jws: String, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError)
        -> JWSTransactionDecodedPayload
    {
        try await verify(jws, as: JWSTransactionDecodedPayload.self, checking: [.bundleID, .environment], at: validationTime)
    }

    /// Verifies signed renewal info (`signedRenewalInfo`): chain, signature and environment (it
    /// carries no bundle ID).
    public func verifyRenewalInfo(
        _ jws: String, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError)
        -> JWSRenewalInfoDecodedPayload
    {
        try await verify(jws, as: JWSRenewalInfoDecodedPayload.self, checking: [.environment], at: validationTime)
    }

    /// Verifies an App Store Server Notification V2 (`signedPayload`): chain, signature, bundle ID,
    /// app ID in Production, and environment, read from `data`, `summary`, `externalPurchaseToken`
    /// or `appData`, whichever the notification carries.
    public func verifyNotification(
        _ jws: String, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError)
        -> ResponseBodyV2DecodedPayload
    {
        try await verify(jws, as: ResponseBodyV2DecodedPayload.self, checking: .all, at: validationTime)
    }

    /// Verifies a signed app transaction (`AppTransaction.shared`, Get App Transaction Info): chain
    /// at `receiptCreationDate`, signature, bundle ID, app ID in Production, and `receiptType`.
    public func verifyAppTransaction(
        _ jws: String, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError)
        -> AppTransaction
    {
        try await verify(jws, as: AppTransaction.self, checking: .all, at: validationTime)
    }

    /// Verifies a `Get Retention Message` request's `signedPayload` (the JWS in a
    /// `RealtimeRequestBody`), signed like a notification: chain, signature, environment, and the
    /// app's ``appAppleID``.
    ///
    /// Apple asks the endpoint not to answer a request whose `appAppleId` is not the app's, in either
    /// environment; so, unlike the other payloads, the app ID is compared whenever the verifier knows
    /// it, not only in Production. The request names no bundle ID.
    public func verifyRealtimeRequest(
        _ jws: String, at validationTime: Date? = nil
    ) async throws(AppStoreSecurityError)
        -> DecodedRealtimeRequestBody
    {
        let payload = try await verify(
            jws, as: DecodedRealtimeRequestBody.self, checking: [.environment], at: validationTime)
        if let appAppleID, payload.appAppleID != appAppleID {
            throw AppStoreSecurityError(
                .wrongAppAppleID, "the retention message request is for another app", expected: "\(appAppleID)",
                found: payload.appAppleID.map { "\($0)" } ?? "no appAppleId")
        }
        return payload
    }
}
