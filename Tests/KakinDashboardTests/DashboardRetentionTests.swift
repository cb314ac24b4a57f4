import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import Testing

@testable import KakinDashboard
@testable import KakinLedger
@testable import KakinServer

/// The retention page: the saves by message and the newest answers of the apps the session opens.
@Suite struct DashboardRetentionTests {
    /// A decision about `original` in `bundleID`, showing `message`.
    static func decision(_ bundleID: String, original: String, message: String, at date: Date) -> RetentionDecision {
        RetentionDecision(
            id: "d-\(bundleID)", bundleID: bundleID, environment: .sandbox, requestIdentifier: "r-\(bundleID)",
            originalTransactionID: original, productID: "com.example.kakin.removeAd", locale: "en-US",
            subscriberState: "paid", ruleName: "rule-\(message)", choice: .message, messageID: message,
            decidedAt: date, periodExpiresAt: nil)
    }

    @Test(
        "a session sees the saves and answers of its apps only, linked to their customers",
        arguments: StoreKind.backends)
    func scopedToTheSessionsApps(_ kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let deployment = try await FourAppDeployment(store: store)
            let now = deployment.clock.now()
            #expect(
                try await store.recordRetentionDecision(
                    Self.decision(
                        FourAppDeployment.appA, original: deployment.alicesTransaction, message: "message-for-a",
                        at: now)))
            #expect(
                try await store.recordRetentionDecision(
                    Self.decision(
                        FourAppDeployment.appB, original: deployment.bobsTransaction, message: "message-for-b",
                        at: now)))
            try await Application(router: try deployment.router()).test(.router) { client in
                let (status, page) = try await DashboardAccessTests.page(
                    "/dashboard/retention", signedInWith: DashboardAccessTests.keyA, client)
                #expect(status == .ok)
                #expect(page.contains(#"<a href="/dashboard/retention" aria-current="page">Retention</a>"#))
                #expect(page.contains(#"data-app="com.example.kakin""#))
                #expect(
                    page.contains(#"<tr data-message="message-for-a"><td><code>message-for-a</code></td><td>1</td>"#))
                #expect(page.contains(#"<a href="/dashboard/customer?app=com.example.kakin&amp;user=alice">"#))
                #expect(page.contains("rule-message-for-a"))
                #expect(page.contains(#"<span class="badge pending">pending</span>"#))
                #expect(!page.contains("message-for-b") && !page.contains(deployment.bobsTransaction))
                #expect(!page.contains(FourAppDeployment.appB))

                let (_, operatorPage) = try await DashboardAccessTests.page(
                    "/dashboard/retention?range=7&environment=Sandbox", signedInWith: FourAppDeployment.operatorKey,
                    client)
                #expect(operatorPage.contains("message-for-a") && operatorPage.contains("message-for-b"))
            }
        }
    }
}
