public import AppStoreModels
import AppStoreSecurity
import Foundation
public import KakinLedger

extension PurchaseService {
    /// What handling a notification did.
    public enum NotificationOutcome: Hashable, Sendable {
        /// Recorded now (and its transaction recorded, revoked, reinstated or renewed as it says).
        case processed(NotificationTypeV2)
        /// The same `notificationUUID` was handled before: nothing changed (Apple retried).
        case duplicate
    }

    /// `POST /v1/notifications/apple`: verifies an App Store Server Notification V2, records it once,
    /// records the transaction it carries, revokes on REFUND and REVOKE, reinstates on
    /// REFUND_REVERSED, and on RESCIND_CONSENT ends the customer's access and erases their
    /// consent-scoped data. Returns only after the writes are durable, so a 200 never loses a
    /// notification.
    ///
    /// The Advanced Commerce API's METADATA_UPDATE (a subscription's SKU, name or description
    /// changed), MIGRATION (an In-App Purchase subscription moved to Advanced Commerce; its
    /// transaction names the one it replaced in `previousOriginalTransactionId`) and PRICE_CHANGE
    /// carry a subscription's signed transaction and renewal info like any subscription
    /// notification: both are verified and recorded, and the notification acknowledged.
    ///
    /// Notifications can arrive late, twice, or out of order, so a refund and its reversal are
    /// ordered by Apple's dates, not by arrival: a REFUND_REVERSED reinstates the transaction
    /// only when its `signedDate` is later than the stored revocation's date (Apple's
    /// `revocationDate`), and the ledger keeps the latest reversal's `signedDate`, so a refund
    /// dated no later than it (the reversed refund, delivered again or late) does not revoke
    /// again, while a refund dated after it revokes again (`PurchaseLedger.reinstate(transactionID:reversedAt:grants:)`).
    public func receiveNotification(_ body: ResponseBodyV2) async throws -> NotificationOutcome {
        guard let signedPayload = body.signedPayload, !signedPayload.isEmpty else {
            throw ServerError(.invalidRequest, "the body has no signedPayload")
        }
        let (compact, decoded) = try Self.decode(signedPayload, as: ResponseBodyV2DecodedPayload.self)
        guard let bundleID = decoded.signedPayloadBundleID else {
            throw ServerError(.verificationFailed, "the notification names no app", cause: "malformedInput")
        }
        let app = try app(bundleID)
        guard let environment = decoded.signedPayloadEnvironment else {
            throw ServerError(.verificationFailed, "the notification names no environment", cause: "malformedInput")
        }
        let verifier = try verifier(app, environment)
        let notification: ResponseBodyV2DecodedPayload
        do { notification = try await verifier.verify(compact, decoded: decoded, checking: .all) } catch {
            throw ServerError(verification: error)
        }
        guard let uuid = notification.notificationUUID, let type = notification.notificationType else {
            throw ServerError(
                .verificationFailed, "the notification has no notificationUUID or notificationType",
                cause: "malformedInput")
        }

        // The transaction first, then the notification row: if anything fails in between, Apple's
        // retry finds no notification row and does the whole job again, idempotently.
        var transactionID: String?
        var originalTransactionID: String?
        var periodExpiresAt: Date?
        if let signedTransaction = notification.data?.signedTransactionInfo {
            let payload: JWSTransactionDecodedPayload
            do { payload = try await verifier.verifyTransaction(signedTransaction) } catch {
                throw ServerError(verification: error, context: "signedTransactionInfo")
            }
            var record = try Self.record(
                from: payload, jws: signedTransaction, appUserID: nil, source: .notification, at: now())
            // A purchase no app uploaded yet: its customer, when its app download was linked to one.
            var ownerless = try await purchases.transaction(id: record.originalTransactionID)?.appUserID == nil
            if ownerless, record.transactionID != record.originalTransactionID {
                ownerless = try await purchases.transaction(id: record.transactionID)?.appUserID == nil
            }
            if ownerless {
                record.appUserID = await customerOfAppDownload(payload, app: app, environment: environment)
            }
            if type == .refund || type == .revoke, record.revocationDate == nil {
                record.revocationDate = now()
            }
            transactionID = record.transactionID
            originalTransactionID = record.originalTransactionID
            if Self.advancedCommerceTypes.contains(type) {
                logger.info(
                    "ledger",
                    metadata: [
                        "event": "subscription.advanced_commerce", "notification_type": "\(type.rawValue)",
                        "bundle_id": "\(bundleID)", "original_transaction_id": "\(record.originalTransactionID)",
                        "previous_original_transaction_id": "\(payload.previousOriginalTransactionID ?? "")",
                    ])
            }
            periodExpiresAt = record.expiresDate
            _ = try await ingest(record, app: app)
            if type == .refundReversed {
                // The signed transaction no longer carries the revocation: the ledger reinstates
                // what it revoked, when the reversal is the later of the two.
                let reinstated = try await purchases.reinstate(
                    transactionID: record.transactionID, reversedAt: notification.signedDate ?? now(),
                    grants: grants(for: record.productID, of: app))
                if reinstated { ledgerEvent("transaction.reinstated", record, source: record.source.rawValue) }
            }
        }
        if let signedRenewalInfo = notification.data?.signedRenewalInfo {
            try await recordRenewal(
                signedRenewalInfo, of: notification, uuid: uuid, type: type, bundleID: bundleID,
                originalTransactionID: originalTransactionID, periodExpiresAt: periodExpiresAt, verifier: verifier)
        }
        if type == .rescindConsent {
            try await recordConsentRescission(notification, uuid: uuid, app: app)
        }
        if type == .consumptionRequest, let transactionID {
            try await recordConsumptionRequest(
                uuid: uuid, transactionID: transactionID, app: app, environment: environment,
                reason: notification.data?.consumptionRequestReason?.rawValue)
        }
        let isNew = try await purchases.recordNotification(
            uuid: uuid, type: type.rawValue, subtype: notification.subtype?.rawValue, bundleID: bundleID,
            transactionID: transactionID, signedPayload: signedPayload, receivedAt: now())
        return isNew ? .processed(type) : .duplicate
    }

    /// Verifies a notification's `signedRenewalInfo` and stores the renewal state it reports
    /// (`SubscriptionRenewal`), unless the ledger holds a state Apple signed later: what the
    /// subscription's entitlement says of renewal, billing problems and grace periods.
    private func recordRenewal(
        _ signedRenewalInfo: String, of notification: ResponseBodyV2DecodedPayload, uuid: String,
        type: NotificationTypeV2, bundleID: String, originalTransactionID: String?, periodExpiresAt: Date?,
        verifier: SignedDataVerifier
    ) async throws {
        let info: JWSRenewalInfoDecodedPayload
        do { info = try await verifier.verifyRenewalInfo(signedRenewalInfo) } catch {
            throw ServerError(verification: error, context: "signedRenewalInfo")
        }
        guard
            var renewal = SubscriptionRenewal(
                bundleID: bundleID, type: type, subtype: notification.subtype, notificationUUID: uuid,
                notificationSignedDate: notification.signedDate, renewalInfo: info,
                originalTransactionID: originalTransactionID, receivedAt: now())
        else { return }
        // The notification's transaction is the period whose renewal failed when that period had
        // ended as Apple signed it (a renewal that recovered it expires later).
        if let periodExpiresAt, periodExpiresAt <= (notification.signedDate ?? renewal.signedDate) {
            renewal.periodExpiresAt = periodExpiresAt
        }
        if try await purchases.recordRenewal(renewal) {
            metrics?.ledgerEvent("subscription.renewal")
            logger.info(
                "ledger",
                metadata: [
                    "event": "subscription.renewal", "bundle_id": "\(bundleID)",
                    "original_transaction_id": "\(renewal.originalTransactionID)",
                    "notification_type": "\(type.rawValue)",
                    "will_renew": "\(renewal.willRenew.map(String.init) ?? "")",
                    "billing_issue": "\(renewal.billingIssueDetectedAt != nil)",
                ])
        }
    }

    /// The Advanced Commerce API's notification types, recorded as any subscription notification.
    static let advancedCommerceTypes: Set<NotificationTypeV2> = [.metadataUpdate, .migration, .priceChange]

    /// RESCIND_CONSENT: a parent withdrew consent for a minor's use of the app. Verifies the app
    /// transaction the notification's `appData` carries, finds the customer its download is
    /// linked to, and records the withdrawal once (``CustomerLedger/recordConsentRescission(_:erasing:)``):
    /// the customer's entitlements end, customer tokens issued before it are refused, the app's
    /// consent-scoped data is erased and a `customer.consent_rescinded` event is sent.
    private func recordConsentRescission(
        _ notification: ResponseBodyV2DecodedPayload, uuid: String, app: AppConfiguration
    ) async throws {
        guard let jws = notification.appData?.signedAppTransactionInfo, !jws.isEmpty else {
            throw ServerError(
                .verificationFailed, "the RESCIND_CONSENT notification has no appData.signedAppTransactionInfo",
                cause: "malformedInput")
        }
        let appTransaction = try await verifiedAppTransaction(jws, app: app)
        guard let appTransactionID = appTransaction.appTransactionID,
            let environment = appTransaction.receiptType ?? notification.appData?.environment
        else { return }
        let customer = try await customers.appTransactionCustomer(
            bundleID: app.bundleID, appTransactionID: appTransactionID)
        let now = now()
        let outcome = try await customers.recordConsentRescission(
            ConsentRescission(
                bundleID: app.bundleID, appTransactionID: appTransactionID, appUserID: customer,
                environment: environment, rescindedAt: notification.signedDate ?? now, notificationUUID: uuid,
                recordedAt: now),
            erasing: app.consentScopedData)
        guard outcome.recorded else { return }
        metrics?.ledgerEvent("customer.consent_rescinded")
        let erased = outcome.erasedCounts.map { "\($0.key.rawValue)=\($0.value)" }.sorted().joined(separator: ",")
        logger.info(
            "ledger",
            metadata: [
                "event": "customer.consent_rescinded", "bundle_id": "\(app.bundleID)",
                "app_transaction_id": "\(appTransactionID)",
                "app_user_id": "\(customer.map(CustomerIDRedaction.redacted) ?? "")",
                "erased": "\(erased)",
            ])
    }

    /// Records Apple's request for consumption information, once per notification: `pending` for
    /// the ``AppleRequestSender`` to send, or `skipped` at once when the app may not send it
    /// (no App Store Server API key, or its customers did not consent).
    private func recordConsumptionRequest(
        uuid: String, transactionID: String, app: AppConfiguration, environment: AppStoreEnvironment, reason: String?
    ) async throws {
        let now = now()
        var skip: String?
        if app.serverAPI == nil {
            skip = "the app has no App Store Server API key"
        } else if app.consumption?.customersConsented != true {
            skip = "the app's customers did not consent (consumption.customersConsented)"
        }
        let recorded = try await appleCalls.recordAppleRequest(
            AppleRequestRecord(
                id: uuid, kind: .consumptionInformation, bundleID: app.bundleID, transactionID: transactionID,
                environment: environment, detail: reason, requestedAt: now, state: skip == nil ? .pending : .skipped,
                nextAttemptAt: now, lastError: skip, finishedAt: skip == nil ? nil : now))
        if recorded, skip != nil { metrics?.appleRequest(kind: "consumptionInformation", outcome: "skipped") }
    }

    /// Stores the renewal state Apple gave for a subscription outside a notification (a status
    /// reconciliation asked for), unless the ledger holds what Apple signed at the same moment or
    /// later; whether the stored state changed.
    @discardableResult
    public func recordRenewal(_ renewal: SubscriptionRenewal) async throws -> Bool {
        try await purchases.recordRenewal(renewal)
    }
}
