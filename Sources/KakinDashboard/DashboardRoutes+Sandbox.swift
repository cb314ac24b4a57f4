import Foundation
import KakinServer
import KakinLedger
import Hummingbird

/// The transaction manager: the embedded sandbox's state, and its actions as forms.
extension DashboardRoutes {
    /// The storefronts a tester can be moved to.
    static let storefronts = ["USA", "JPN", "GBR", "DEU", "CHN"]

    func sandboxPage(_ session: DashboardSessions.Session) async throws -> Page {
        guard let sandbox else {
            throw DashboardNotFound(message: "This server runs without an embedded sandbox App Store (use kakin serve).")
        }
        guard opensSandbox(session) else { throw DashboardNotFound(message: Self.sandboxClosed) }
        let state = try await sandbox.state()
        return Page(
            template: "sandbox", view: SandboxView(state, storefronts: Self.storefronts), title: "Transaction manager",
            current: "sandbox")
    }

    /// Why a session that does not open the sandbox's app is refused the transaction manager: the
    /// sandbox's testers, clock, settings and certificates serve every purchase it signs.
    static let sandboxClosed =
        "The transaction manager belongs to the app the embedded sandbox sells, which this session does not open."

    /// Turns a posted form into a sandbox action, performs it, and leads back to the page with
    /// what was done or why it was refused. A session that does not open the sandbox's app is
    /// answered 404 and nothing is done.
    func sandboxAction(_ form: [String: String], session: DashboardSessions.Session) async -> Response {
        let page = "/dashboard/sandbox"
        guard let sandbox else { return Self.redirect(page, problem: "there is no embedded sandbox") }
        guard opensSandbox(session) else {
            logger.warning("dashboard sandbox action refused: the session does not open the sandbox's app")
            return render(
                "message", MessageView(heading: "Not found", text: Self.sandboxClosed), title: "Not found",
                session: session, current: nil, status: .notFound)
        }
        let action: SandboxControlAction
        do { action = try Self.sandboxAction(from: form) } catch {
            return Self.redirect(page, problem: error.message)
        }
        do {
            let done = try await sandbox.perform(action)
            logger.info("dashboard sandbox action", metadata: ["action": "\(form["action"] ?? "")"])
            return Self.redirect(page, notice: done)
        } catch {
            return Self.redirect(page, problem: "\(error)")
        }
    }

    static func sandboxAction(from form: [String: String]) throws(ServerError) -> SandboxControlAction {
        func field(_ name: String) throws(ServerError) -> String {
            guard let value = form[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                throw ServerError(.invalidRequest, "the form has no \(name)")
            }
            return value
        }
        func number(_ name: String) throws(ServerError) -> Double {
            let text = try field(name)
            guard let value = Double(text), value.isFinite, value >= 0 else {
                throw ServerError(.invalidRequest, "\(name) must be a number, 0 or more; found \(text)")
            }
            return value
        }
        func integer(_ name: String) throws(ServerError) -> Int? {
            guard let text = form[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            guard let value = Int(text), value >= 0 else {
                throw ServerError(.invalidRequest, "\(name) must be a whole number, 0 or more; found \(text)")
            }
            return value
        }
        switch try field("action") {
        case "create-tester": return .createTester(name: try field("name"), storefront: try storefront(field("storefront")))
        case "storefront": return .setStorefront(testerID: try field("id"), storefront: try storefront(field("storefront")))
        case "ask-to-buy": return .setAskToBuy(testerID: try field("id"), enabled: form["enabled"] == "true")
        case "clear": return .clearPurchaseHistory(testerID: try field("id"))
        case "refund":
            let reason = try integer("reason") ?? 0
            guard reason <= 1 else { throw ServerError(.invalidRequest, "reason must be 0 or 1") }
            return .refund(transactionID: try field("id"), reason: reason)
        case "revoke": return .revoke(transactionID: try field("id"))
        case "approve": return .approve(pendingID: try field("id"))
        case "decline": return .decline(pendingID: try field("id"))
        case "renew": return .renew(originalTransactionID: try field("id"))
        case "fail-renewals": return .failRenewals(originalTransactionID: try field("id"))
        case "resolve-billing": return .resolveBilling(originalTransactionID: try field("id"))
        case "advance":
            let seconds = try number("seconds")
            guard seconds > 0 else { throw ServerError(.invalidRequest, "seconds must be more than 0") }
            return .advanceClock(seconds: seconds)
        case "rate": return .setClockRate(try number("rate"))
        case "settings":
            let url = form["notificationURL"]?.trimmingCharacters(in: .whitespaces) ?? ""
            if !url.isEmpty, URL(string: url)?.scheme == nil {
                throw ServerError(.invalidRequest, "the notification URL must be absolute; found \(url)")
            }
            return .updateSettings(
                .init(
                    askToBuy: form["askToBuy"] == "true", gracePeriodDays: try integer("gracePeriodDays") ?? 0,
                    failPurchasesWith: try integer("failPurchasesWith"), notificationURL: url.isEmpty ? nil : url))
        case "revoke-certificate":
            let kind = try field("certificate")
            guard ["leaf", "intermediate"].contains(kind) else {
                throw ServerError(.invalidRequest, "only the leaf or the intermediate can be revoked, not \(kind)")
            }
            return .revokeCertificate(kind: kind)
        case let other: throw ServerError(.invalidRequest, "the transaction manager has no action \(other)")
        }
    }

    private static func storefront(_ code: String) throws(ServerError) -> String {
        guard storefronts.contains(code) else {
            throw ServerError(.invalidRequest, "the storefront must be one of \(storefronts.joined(separator: ", "))")
        }
        return code
    }
}

struct SandboxView {
    struct Transaction {
        var id: String
        var originalID: String
        var isRenewal: Bool
        var testerID: String
        var productID: String
        var purchased: String
        var state: String
        var stateClass: String
        var revocable: Bool
    }
    struct Pending {
        var id: String
        var testerID: String
        var productID: String
        var reason: String
    }
    struct Subscription {
        var originalTransactionID: String
        var testerID: String
        var productID: String
        var expires: String
        var billing: String
        var billingFails: Bool
        var autoRenewEnabled: Bool
    }
    struct Storefront {
        var code: String
        var selected: Bool
    }
    struct Tester {
        var id: String
        var name: String
        var storefronts: [Storefront]
        var toggleTo: String
        var askToBuyLabel: String
    }
    struct Certificate {
        var kind: String
        var subject: String
        var serialNumber: String
        var validUntil: String
        var state: String
        var stateClass: String
        var revocable: Bool
    }
    struct Notification {
        var type: String
        var subtype: String
        var transactionID: String
        var state: String
        var stateClass: String
        var attempts: Int
    }
    var now: String
    var clock: String
    var rate: String
    var settings: SandboxControlState.Settings
    var transactions: [Transaction]
    var hasTransactions: Bool
    var pending: [Pending]
    var hasPending: Bool
    var subscriptions: [Subscription]
    var hasSubscriptions: Bool
    var testers: [Tester]
    var hasTesters: Bool
    var allStorefronts: [String]
    var notifications: [Notification]
    var hasNotifications: Bool
    var certificates: [Certificate]
    var hasCertificates: Bool

    init(_ state: SandboxControlState, storefronts: [String]) {
        now = DashboardFormat.time(state.now)
        if let rate = state.clockRate {
            clock = rate == 1 ? "running in real time" : "running at \(Self.number(rate))× real time"
            self.rate = Self.number(rate)
        } else {
            clock = "stopped"
            rate = "0"
        }
        settings = state.settings
        transactions = state.transactions.map { transaction in
            let expired = transaction.expiresDate.map { $0 <= state.now } ?? false
            let stateName = transaction.revocationDate != nil ? "refunded" : expired ? "expired" : "purchased"
            return Transaction(
                id: transaction.id, originalID: transaction.originalID, isRenewal: transaction.id != transaction.originalID,
                testerID: transaction.testerID, productID: transaction.productID,
                purchased: DashboardFormat.time(transaction.purchaseDate), state: stateName, stateClass: stateName,
                revocable: transaction.revocationDate == nil)
        }
        hasTransactions = !transactions.isEmpty
        pending = state.pending.map { Pending(id: $0.id, testerID: $0.testerID, productID: $0.productID, reason: $0.reason) }
        hasPending = !pending.isEmpty
        subscriptions = state.subscriptions.map { subscription in
            Subscription(
                originalTransactionID: subscription.originalTransactionID, testerID: subscription.testerID,
                productID: subscription.productID, expires: subscription.expiresDate.map(DashboardFormat.time) ?? "",
                billing: subscription.billingState, billingFails: subscription.billingFails,
                autoRenewEnabled: subscription.autoRenewEnabled)
        }
        hasSubscriptions = !subscriptions.isEmpty
        testers = state.testers.map { tester in
            Tester(
                id: tester.id, name: tester.name,
                storefronts: storefronts.map { Storefront(code: $0, selected: $0 == tester.storefront) },
                toggleTo: tester.asksToBuy ? "false" : "true",
                askToBuyLabel: tester.asksToBuy ? "On: turn off" : "Off: turn on")
        }
        hasTesters = !testers.isEmpty
        allStorefronts = storefronts
        notifications = state.notifications.map { notification in
            let stateName: String
            let stateClass: String
            if notification.delivered {
                (stateName, stateClass) = ("delivered", "delivered")
            } else if let next = notification.nextAttemptDate {
                (stateName, stateClass) = ("next attempt \(DashboardFormat.time(next))", "pending")
            } else {
                (stateName, stateClass) = (notification.attempts == 0 ? "queued" : "failed", "failed")
            }
            return Notification(
                type: notification.type, subtype: notification.subtype ?? "", transactionID: notification.transactionID,
                state: stateName, stateClass: stateClass, attempts: notification.attempts)
        }
        hasNotifications = !notifications.isEmpty
        certificates = state.certificates.map { certificate in
            let revoked = certificate.revocationDate.map { "revoked \(DashboardFormat.time($0))" }
            return Certificate(
                kind: certificate.kind, subject: certificate.subject, serialNumber: certificate.serialNumber,
                validUntil: DashboardFormat.time(certificate.notValidAfter), state: revoked ?? "in use",
                stateClass: revoked == nil ? "active" : "revoked",
                revocable: certificate.revocationDate == nil && certificate.kind != "root")
        }
        hasCertificates = !certificates.isEmpty
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
