public import AppStoreModels
import AppStoreSecurity
public import Foundation

extension PurchaseService {
    /// What handling a notification did.
    public enum NotificationOutcome: Hashable, Sendable {
        /// Recorded now (and its transaction recorded, revoked or renewed as it says).
        case processed(NotificationTypeV2)
        /// The same `notificationUUID` was handled before: nothing changed (Apple retried).
        case duplicate
    }

    /// `POST /v1/notifications/apple`: verifies an App Store Server Notification V2, records it once,
    /// records the transaction it carries, and revokes on REFUND and REVOKE. Returns only after
    /// the writes are durable, so a 200 never loses a notification.
    public func receiveNotification(_ body: ResponseBodyV2) async throws -> NotificationOutcome {
        guard let signedPayload = body.signedPayload, !signedPayload.isEmpty else {
            throw ServerError(.invalidRequest, "the body has no signedPayload")
        }
        let claims: SignedClaims
        do {
            claims = try JSONDecoder().decode(SignedClaims.self, from: try CompactJWS(signedPayload).payloadData())
        } catch {
            throw ServerError(
                .verificationFailed, "malformedInput: signedPayload is not a compact JWS with a JSON payload")
        }
        guard let bundleID = claims.signedPayloadBundleID else {
            throw ServerError(.verificationFailed, "the notification names no app")
        }
        let app = try app(bundleID)
        guard let environment = claims.signedPayloadEnvironment, let verifier = app.verifier(for: environment, now: now)
        else {
            throw ServerError(.verificationFailed, "\(bundleID) does not accept this notification's environment")
        }
        let notification: ResponseBodyV2DecodedPayload
        do { notification = try verifier.verifyNotification(signedPayload) } catch {
            throw ServerError(.verificationFailed, "\(error)")
        }
        guard let uuid = notification.notificationUUID, let type = notification.notificationType else {
            throw ServerError(.verificationFailed, "the notification has no notificationUUID or notificationType")
        }

        // The transaction first, then the notification row: if anything fails in between, Apple's
        // retry finds no notification row and does the whole job again, idempotently.
        var transactionID: String?
        if let signedTransaction = notification.data?.signedTransactionInfo {
            let payload: JWSTransactionDecodedPayload
            do { payload = try verifier.verifyTransaction(signedTransaction) } catch {
                throw ServerError(.verificationFailed, "signedTransactionInfo: \(error)")
            }
            let record = try Self.record(
                from: payload, jws: signedTransaction, appUserID: nil, source: .notification, at: now())
            transactionID = record.transactionID
            let productGrants = grants.grants(for: record.productID)
            _ = try await store.record(record, grants: productGrants)
            if type == .refund || type == .revoke || record.revocationDate != nil {
                _ = try await store.revoke(
                    transactionID: record.transactionID, at: record.revocationDate ?? now(),
                    reason: record.revocationReason?.rawValue, grants: productGrants, policy: clawbackPolicy)
            }
        }
        let isNew = try await store.recordNotification(
            uuid: uuid, type: type.rawValue, subtype: notification.subtype?.rawValue, bundleID: bundleID,
            transactionID: transactionID, signedPayload: signedPayload, receivedAt: now())
        return isNew ? .processed(type) : .duplicate
    }
}
