public import AppStoreModels
public import Foundation

extension SandboxEngine {
    /// The Notification V2 payload the App Store sends for an event: type, subtype, a fresh
    /// `notificationUUID`, and `data` with the app, the signed transaction, and for subscriptions
    /// the signed renewal info and status. A RENEWAL_EXTENSION summary carries `summary` instead,
    /// and RESCIND_CONSENT `appData` with the customer's signed app transaction.
    ///
    /// `signedDate` is when the App Store signs it (the sandbox's present time by default); the
    /// renewal info is the subscription's as the event left it (``SandboxEvent/renewalInfo``),
    /// signed at the same moment.
    public func notificationPayload(
        for event: SandboxEvent, uuid: UUID = UUID(), signedDate: Date? = nil
    ) throws(SandboxError)
        -> ResponseBodyV2DecodedPayload
    {
        let now = signedDate ?? clock.now()
        var payload = ResponseBodyV2DecodedPayload(
            notificationType: event.notificationType, subtype: event.subtype,
            notificationUUID: uuid.uuidString.lowercased(), version: "2.0", signedDate: now)
        if let summary = event.summary {
            payload.summary = summary
            return payload
        }
        if event.notificationType == .rescindConsent {
            payload.appData = AppData(
                appAppleID: signer.appAppleID, bundleID: signer.bundleID, environment: .sandbox,
                signedAppTransactionInfo: try signedAppTransaction(for: event.testerID))
            return payload
        }
        let transaction = try transaction(event.transactionID)
        var data = NotificationData(
            appAppleID: signer.appAppleID, bundleID: signer.bundleID, bundleVersion: signer.applicationVersion,
            environment: .sandbox)
        do {
            data.signedTransactionInfo = try signer.signTransaction(transaction, at: now)
            if transaction.productType == .autoRenewableSubscription {
                let renewal = try event.renewalInfo ?? renewalInfo(originalTransactionID: transaction.originalID)
                data.signedRenewalInfo = try signer.signRenewalInfo(renewal, at: now)
                data.status = try event.status ?? status(originalTransactionID: transaction.originalID)
            }
        } catch let error as SandboxError {
            throw error
        } catch {
            throw SandboxError(.stateUnavailable, "cannot sign the notification: \(error)")
        }
        payload.data = data
        return payload
    }

    /// The body Apple POSTs to the server: `{"signedPayload": "<JWS>"}`, signed at `signedDate`
    /// (the sandbox's present time by default).
    public func signedNotification(
        for event: SandboxEvent, uuid: UUID = UUID(), signedDate: Date? = nil
    ) throws(SandboxError) -> ResponseBodyV2 {
        let date = signedDate ?? clock.now()
        let payload = try notificationPayload(for: event, uuid: uuid, signedDate: date)
        do {
            return ResponseBodyV2(signedPayload: try signer.signNotification(payload, at: date))
        } catch {
            throw SandboxError(.stateUnavailable, "cannot sign the notification: \(error)")
        }
    }
}
