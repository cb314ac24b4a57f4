import AppStoreModels
import Foundation
import Hummingbird
import KakinLedger
import KakinServer

/// The retention page: for each app the session opens, what its answers to the App Store's
/// retention message requests showed, by message, and who stayed; and the newest answers.
extension DashboardRoutes {
    /// How many days the saves by message cover by default.
    static let retentionDays = 30
    /// How many of the newest answers each app lists.
    static let retentionDecisionsShown = 50

    func retentionPage(_ request: Request, _ session: DashboardSessions.Session) async throws -> Page {
        let query = request.uri.queryParameters
        let today = DailyFigures.day(of: now())
        let days = query.get("range").flatMap(Int.init).map { min(max($0, 1), 3_650) } ?? Self.retentionDays
        let chosen = query.get("environment").flatMap { name in
            [AppStoreEnvironment.production, .sandbox].first { $0.rawValue == name }
        }
        var apps: [RetentionView.App] = []
        for bundleID in self.apps(of: session) {
            let environment = chosen ?? service.apps[bundleID]?.defaultEnvironment ?? .sandbox
            let saves = try await service.retentionSaves(
                bundleID: bundleID, environment: environment, days: (today - days + 1)...today)
            let decisions =
                try await service.retention?.retentionDecisions(
                    bundleID: bundleID, environment: environment, limit: Self.retentionDecisionsShown, after: nil,
                    now: now()) ?? []
            apps.append(
                RetentionView.App(
                    bundleID: bundleID, environment: environment.rawValue,
                    messages: saves.map(RetentionView.Message.init), hasMessages: !saves.isEmpty, decisions: decisions.map(RetentionView.Decision.init),
                    hasDecisions: !decisions.isEmpty))
        }
        return Page(
            template: "retention",
            view: RetentionView(
                days: days,
                environments: [AppStoreEnvironment.production, .sandbox].map {
                    OverviewView.Option(value: $0.rawValue, label: $0.rawValue, selected: $0 == chosen)
                }, apps: apps, hasApps: !apps.isEmpty),
            title: "Retention", current: "retention")
    }
}

/// What `retention.mustache` shows.
struct RetentionView {
    /// One message's saves.
    struct Message {
        var messageID: String
        var shown: Int
        var stayed: Int
        var left: Int
        var pending: Int
        /// Stayed over stayed and left, as a percentage; `–` while no outcome is known.
        var saveRate: String

        init(_ saves: RetentionSaves) {
            messageID = saves.messageID
            shown = saves.shown
            stayed = saves.stayed
            left = saves.left
            pending = saves.pending
            saveRate = saves.saveRate.map { String(format: "%.0f%%", $0 * 100) } ?? "–"
        }
    }

    /// One answer, newest first.
    struct Decision {
        var decidedAt: String
        var originalTransactionID: String
        /// The customer page of the subscription's owner, when the ledger knows them.
        var customerLink: String?
        var productID: String
        var rule: String
        var choice: String
        var outcome: String

        init(_ read: RetentionDecisionRead) {
            let decision = read.decision
            decidedAt = DashboardFormat.time(decision.decidedAt)
            originalTransactionID = decision.originalTransactionID
            customerLink = read.appUserID.map {
                DashboardRoutes.customerLink(bundleID: decision.bundleID, appUserID: $0)
            }
            productID = decision.productID
            rule = decision.ruleName ?? "no rule matched"
            choice =
                switch decision.choice {
                case .none: "App Store default"
                case .message: "message \(decision.messageID ?? "")"
                case .alternateProduct:
                    "message \(decision.messageID ?? ""), switch to \(decision.alternateProductID ?? "")"
                case .promotionalOffer: "message \(decision.messageID ?? ""), offer \(decision.offerID ?? "")"
                }
            outcome = read.outcome.rawValue
        }
    }

    /// One app's saves and newest answers.
    struct App {
        var bundleID: String
        var environment: String
        var messages: [Message]
        var hasMessages: Bool
        var decisions: [Decision]
        var hasDecisions: Bool
    }

    var days: Int
    var environments: [OverviewView.Option]
    var apps: [App]
    var hasApps: Bool
}
