import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import KakinDashboard
import KakinServer
import KakinLedger
import StoreSandbox

/// The dashboard's transaction manager on a sandbox engine in the same process (`kakin serve`):
/// the server knows only ``SandboxControl``; this adapts the engine to it.
struct EngineSandboxControl: SandboxControl {
    let engine: SandboxEngine
    /// How many transactions and notifications the transaction manager lists (the newest).
    var listLimit = 200

    func state() async throws -> SandboxControlState {
        // Events become notifications when the background loop next runs; queue them now so the
        // list shows every notification the sandbox is about to send.
        try await engine.queueNotifications()
        let snapshot = await engine.snapshot
        let now = engine.clock.now()
        let rate: Double? =
            switch engine.clock.currentMode {
            case .manual: nil
            case .running(let rate): rate
            }
        let settings = snapshot.settings
        let transactions = snapshot.transactions.elements.suffix(listLimit).reversed().map { transaction in
            SandboxControlState.Transaction(
                id: transaction.id, originalID: transaction.originalID, testerID: transaction.testerID,
                productID: transaction.productID, productType: transaction.productType.rawValue,
                purchaseDate: transaction.purchaseDate, expiresDate: transaction.expiresDate,
                revocationDate: transaction.revocationDate)
        }
        let latestExpiry = Dictionary(
            snapshot.transactions.compactMap { transaction in
                transaction.expiresDate.map { (transaction.originalID, $0) }
            }, uniquingKeysWith: { max($0, $1) })
        let subscriptions = snapshot.subscriptions.values.sorted { $0.originalTransactionID > $1.originalTransactionID }
            .map { subscription in
                let expires = latestExpiry[subscription.originalTransactionID]
                let billing: String
                switch subscription.billingState {
                case .gracePeriod: billing = "grace period"
                case .billingRetry: billing = "billing retry"
                default: billing = (expires.map { $0 <= now } ?? false) ? "expired" : "ok"
                }
                return SandboxControlState.Subscription(
                    originalTransactionID: subscription.originalTransactionID, testerID: subscription.testerID,
                    productID: subscription.productID, expiresDate: expires,
                    autoRenewEnabled: subscription.autoRenewEnabled, billingState: billing,
                    billingFails: subscription.billingFails)
            }
        let pending = snapshot.pendingPurchases.values.sorted { $0.createdAt < $1.createdAt }.map { purchase in
            SandboxControlState.PendingPurchase(
                id: purchase.id, testerID: purchase.request.testerID, productID: purchase.request.productID,
                reason: purchase.reason == .askToBuy ? "ask to buy" : "interrupted")
        }
        let notifications = snapshot.notifications.elements.suffix(listLimit).reversed().map { record in
            SandboxControlState.SentNotification(
                uuid: record.notificationUUID, type: record.notificationType.rawValue,
                subtype: record.subtype?.rawValue, transactionID: record.transactionID, attempts: record.attempts.count,
                delivered: record.attempts.last?.sendAttemptResult == .success, nextAttemptDate: record.nextAttemptDate)
        }
        return SandboxControlState(
            now: now, clockRate: rate,
            settings: .init(
                askToBuy: settings.askToBuy, gracePeriodDays: settings.gracePeriodDays,
                failPurchasesWith: settings.failPurchasesWith?.rawValue,
                notificationURL: settings.notificationURL?.absoluteString),
            testers: await engine.testers().map { tester in
                SandboxControlState.Tester(
                    id: tester.id, name: tester.name, storefront: tester.storefront, asksToBuy: tester.asksToBuy,
                    canMakePayments: tester.canMakePayments)
            },
            transactions: Array(transactions), pending: pending, subscriptions: subscriptions,
            notifications: Array(notifications), certificates: Self.certificates(of: engine.authority))
    }

    /// The certificates in use, then those revoked (newest first).
    static func certificates(of authority: SandboxCertificateAuthority) -> [SandboxControlState.Certificate] {
        (authority.currentCertificates + authority.revokedCertificateDescriptions).map { certificate in
            SandboxControlState.Certificate(
                kind: certificate.kind, subject: certificate.subject, serialNumber: certificate.serialNumber,
                notValidAfter: certificate.notValidAfter, revocationDate: certificate.revocationDate)
        }
    }

    func perform(_ action: SandboxControlAction) async throws -> String {
        switch action {
        case .createTester(let name, let storefront):
            let tester = try await engine.createTester(name: name, storefront: storefront)
            return "Tester \(tester.id) created in \(storefront)."
        case .setStorefront(let testerID, let storefront):
            var tester = try await engine.tester(testerID)
            tester.storefront = storefront
            try await engine.updateTester(tester)
            return "Tester \(testerID) now buys in \(storefront)."
        case .setAskToBuy(let testerID, let enabled):
            var tester = try await engine.tester(testerID)
            tester.asksToBuy = enabled
            try await engine.updateTester(tester)
            return "Ask to buy is \(enabled ? "on" : "off") for \(testerID)."
        case .clearPurchaseHistory(let testerID):
            try await engine.clearPurchaseHistory(of: testerID)
            return "Purchase history of \(testerID) cleared."
        case .refund(let transactionID, let reason):
            try await engine.refund(transactionID, reason: RevocationReason(rawValue: reason))
            return "Transaction \(transactionID) refunded; REFUND is on its way to the server."
        case .revoke(let transactionID):
            try await engine.revoke(transactionID)
            return "Transaction \(transactionID) revoked; REVOKE is on its way to the server."
        case .approve(let pendingID):
            return Self.describe(try await engine.approve(pendingID), verb: "approved", pendingID)
        case .decline(let pendingID):
            return Self.describe(try await engine.decline(pendingID), verb: "declined", pendingID)
        case .renew(let originalID):
            let events = try await engine.forceRenewal(originalTransactionID: originalID)
            return "Subscription \(originalID) renewed (\(events.count) event\(events.count == 1 ? "" : "s"))."
        case .failRenewals(let originalID):
            try await engine.failRenewals(originalTransactionID: originalID)
            return "Renewals of \(originalID) now fail."
        case .resolveBilling(let originalID):
            try await engine.resolveBillingIssue(originalTransactionID: originalID)
            return "Billing of \(originalID) resolved."
        case .advanceClock(let seconds):
            engine.clock.advance(by: seconds)
            let events = try await engine.processRenewals()
            return "Clock advanced by \(Int(seconds)) s; \(events.count) renewal event\(events.count == 1 ? "" : "s")."
        case .setClockRate(let rate):
            engine.clock.setMode(rate > 0 ? .running(rate: rate) : .manual)
            return rate > 0 ? "The clock runs at \(rate)× real time." : "The clock is stopped."
        case .updateSettings(let settings):
            let url: SandboxSettingsUpdate.Change<URL> = settings.notificationURL.flatMap(URL.init(string:)).map { .set($0) } ?? .clear
            let code: SandboxSettingsUpdate.Change<StoreKitErrorCode> =
                settings.failPurchasesWith.map { .set(StoreKitErrorCode(rawValue: $0)) } ?? .clear
            try await engine.updateSettings(
                SandboxSettingsUpdate(
                    failPurchasesWith: code, askToBuy: settings.askToBuy, gracePeriodDays: settings.gracePeriodDays,
                    notificationURL: url))
            return "Settings saved."
        case .revokeCertificate(let kind):
            guard let certificate = SandboxCertificateAuthority.CertificateKind(rawValue: kind) else {
                throw SandboxError(.invalidRequest, "only the leaf or the intermediate can be revoked, not \(kind)")
            }
            let old = engine.authority
            let rotated = try await engine.revokeCertificate(certificate)
            let revoked = certificate == .leaf ? "leaf" : "intermediate and its leaf"
            let newLeaf = rotated.currentCertificates[2].serialNumber
            let oldLeaf = old.currentCertificates[2].serialNumber
            return "The \(revoked) revoked; the sandbox now signs with leaf \(newLeaf) (was \(oldLeaf))."
        }
    }

    static func describe(_ outcome: PurchaseOutcome, verb: String, _ pendingID: String) -> String {
        switch outcome {
        case .purchased(let transaction): "Purchase \(pendingID) \(verb): transaction \(transaction.id)."
        case .deferred: "Purchase \(pendingID) still waits."
        case .failed(let code): "Purchase \(pendingID) \(verb) (StoreKit error \(code.rawValue))."
        }
    }
}
