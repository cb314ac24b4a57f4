import AppStoreModels
import Foundation
import Hummingbird

/// The control API: what a test (or a dashboard) does to the sandbox from outside the app.
extension SandboxService {
    struct TesterBody: Codable, Sendable {
        var id: String?
        var name: String
        var storefront: String?
        var canMakePayments: Bool?
        var interruptsPurchases: Bool?
        var asksToBuy: Bool?
    }

    struct TestersResponse: Codable, Sendable {
        var testers: [SandboxTester]
    }

    struct ClockBody: Codable, Sendable {
        /// Seconds to move the sandbox clock forward.
        var advanceSeconds: Double?
        /// Sandbox seconds per real second; 0 stops the clock.
        var rate: Double?
    }

    struct ClockResponse: Codable, Sendable {
        var now: Date
        var events: [SandboxEvent]
    }

    struct RefundBody: Codable, Sendable {
        var reason: Int?
        /// The refunded share in milliunits of a percent (1…100000); a full refund when absent.
        var percentage: Int?
    }

    struct OutcomeResponse: Codable, Sendable {
        var state: String
        var transactionID: String?
    }

    func addControlRoutes(to router: Router<SandboxRequestContext>) {
        let control = router.group("v1/control")
        addStoreKitControlRoutes(to: control)
        addCertificateControlRoutes(to: control)
        addOfferControlRoutes(to: control)
        addRetentionControlRoutes(to: control)
        control.get("testers") { _, _ in
            ServiceJSON.response(TestersResponse(testers: await engine.testers()))
        }
        control.post("testers") { request, _ in
            await respond {
                let body = try await ServiceJSON.decode(TesterBody.self, from: request)
                let storefront = try Storefront.named(body.storefront ?? "USA")
                var tester = try await engine.createTester(
                    name: body.name, storefront: storefront.countryCode, id: body.id)
                tester.canMakePayments = body.canMakePayments ?? true
                tester.interruptsPurchases = body.interruptsPurchases ?? false
                tester.asksToBuy = body.asksToBuy ?? false
                try await engine.updateTester(tester)
                return ServiceJSON.response(tester, status: .created)
            }
        }
        control.put("testers/:tester") { request, context in
            await respond {
                let body = try await ServiceJSON.decode(TesterBody.self, from: request)
                var tester = try await engine.tester(try context.parameters.require("tester"))
                tester.name = body.name
                if let storefront = body.storefront { tester.storefront = try Storefront.named(storefront).countryCode }
                if let value = body.canMakePayments { tester.canMakePayments = value }
                if let value = body.interruptsPurchases { tester.interruptsPurchases = value }
                if let value = body.asksToBuy { tester.asksToBuy = value }
                try await engine.updateTester(tester)
                return ServiceJSON.response(tester)
            }
        }
        control.delete("testers/:tester") { _, context in
            await respond {
                try await engine.deleteTester(try context.parameters.require("tester"))
                return Response(status: .noContent)
            }
        }
        control.post("testers/:tester/clear") { _, context in
            await respond {
                try await engine.clearPurchaseHistory(of: try context.parameters.require("tester"))
                return Response(status: .noContent)
            }
        }
        control.get("settings") { _, _ in ServiceJSON.response(await engine.settings) }
        control.put("settings") { request, _ in
            await respond {
                let update = try await ServiceJSON.decode(SandboxSettingsUpdate.self, from: request)
                return ServiceJSON.response(try await engine.updateSettings(update))
            }
        }
        control.post("clock") { request, _ in
            await respond {
                let body = try await ServiceJSON.decode(ClockBody.self, from: request)
                if let rate = body.rate, !(rate.isFinite && rate >= 0) {
                    throw SandboxError(.invalidRequest, "the clock's rate must be 0 or more, not \(rate)")
                }
                if let seconds = body.advanceSeconds, !(seconds.isFinite && seconds >= 0) {
                    throw SandboxError(
                        .invalidRequest,
                        "the clock only moves forward: advanceSeconds must be 0 or more, not \(seconds)")
                }
                if let rate = body.rate { engine.clock.setMode(rate > 0 ? .running(rate: rate) : .manual) }
                let events = try await engine.advanceClock(by: body.advanceSeconds ?? 0)
                return ServiceJSON.response(ClockResponse(now: engine.clock.now(), events: events))
            }
        }
        control.post("pending/:pending/approve") { _, context in
            await respond { Self.outcome(try await engine.approve(try context.parameters.require("pending"))) }
        }
        control.post("pending/:pending/decline") { _, context in
            await respond { Self.outcome(try await engine.decline(try context.parameters.require("pending"))) }
        }
        control.post("transactions/:transaction/refund") { request, context in
            await respond {
                let body = try await ServiceJSON.decode(RefundBody.self, from: request)
                let transaction = try await engine.refund(
                    try context.parameters.require("transaction"), reason: RevocationReason(rawValue: body.reason ?? 0),
                    percentage: body.percentage)
                return ServiceJSON.response(OutcomeResponse(state: "refunded", transactionID: transaction.id))
            }
        }
        control.post("transactions/:transaction/revoke") { _, context in
            await respond {
                let transaction = try await engine.revoke(try context.parameters.require("transaction"))
                return ServiceJSON.response(OutcomeResponse(state: "revoked", transactionID: transaction.id))
            }
        }
        control.post("transactions/:transaction/consumption-request") { _, context in
            await respond {
                try await engine.requestConsumptionInformation(
                    transactionID: try context.parameters.require("transaction"))
                return Response(status: .noContent)
            }
        }
        control.post("subscriptions/:original/renew") { _, context in
            await respond {
                let events = try await engine.forceRenewal(
                    originalTransactionID: try context.parameters.require("original"))
                return ServiceJSON.response(ClockResponse(now: engine.clock.now(), events: events))
            }
        }
        control.post("reset") { _, _ in
            await respond {
                try await engine.resetAll()
                return Response(status: .noContent)
            }
        }
        control.post("subscriptions/:original/fail-renewals") { _, context in
            await respond {
                try await engine.failRenewals(originalTransactionID: try context.parameters.require("original"))
                return Response(status: .noContent)
            }
        }
        control.post("subscriptions/:original/resolve-billing") { _, context in
            await respond {
                try await engine.resolveBillingIssue(originalTransactionID: try context.parameters.require("original"))
                return Response(status: .noContent)
            }
        }
        // The customer turning automatic renewal off or on in Settings: DID_CHANGE_RENEWAL_STATUS.
        for (state, enabled) in [("off", false), ("on", true)] {
            control.post("subscriptions/:original/auto-renew/\(state)") { _, context in
                await respond {
                    try await engine.setAutoRenew(
                        enabled, originalTransactionID: try context.parameters.require("original"))
                    return Response(status: .noContent)
                }
            }
        }
    }

    static func outcome(_ outcome: PurchaseOutcome) -> Response {
        switch outcome {
        case .purchased(let transaction):
            ServiceJSON.response(OutcomeResponse(state: "purchased", transactionID: transaction.id))
        case .deferred: ServiceJSON.response(OutcomeResponse(state: "deferred"))
        case .failed: ServiceJSON.response(OutcomeResponse(state: "failed"))
        }
    }
}
