import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@testable import KakinDashboard
@testable import KakinServer
@testable import KakinLedger

/// Each page renders what the ledger holds, escaped, for a signed-in operator.
@Suite struct DashboardPagesTests {
    /// A fixture with alice's purchases: remove ads (then refunded by a notification), 2 × 100
    /// points, and a monthly subscription.
    static func fixtureWithPurchases() async throws -> ServerFixture {
        let fixture = try await ServerFixture()
        let (removeAd, removeAdJWS) = try await fixture.buy("removeAd")
        let (_, pointsJWS) = try await fixture.buy("increasePoints", quantity: 2)
        let (_, monthlyJWS) = try await fixture.buy("premium.monthly")
        for jws in [removeAdJWS, pointsJWS, monthlyJWS] {
            _ = try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "alice")
        }
        _ = try await fixture.service.submit(
            try await fixture.buy("unlock", tester: "other").1, bundleID: ServerFixture.bundleID, appUserID: "<b>bob</b>")
        try await fixture.engine.refund(removeAd.id)
        let refund = try #require(await fixture.engine.events().last)
        _ = try await fixture.service.receiveNotification(try await fixture.engine.signedNotification(for: refund))
        return fixture
    }

    static func page(
        _ uri: String, fixture: ServerFixture, sandbox: (any SandboxControl)? = nil
    ) async throws -> (HTTPResponse.Status, String) {
        let clock = fixture.clock
        let router = try DashboardTestSupport.router(fixture, sandbox: sandbox, now: { clock.now() })
        return try await Application(router: router).test(.router) { client in
            var browser = Browser()
            _ = try #require(try await browser.signIn("sk_test", client))
            let response = try await browser.get(uri, client)
            return (response.status, String(buffer: response.body))
        }
    }

    @Test func theOverviewChartsRevenueAndActiveSubscriptions() async throws {
        let fixture = try await Self.fixtureWithPurchases()
        let (status, html) = try await Self.page("/dashboard", fixture: fixture)
        #expect(status == .ok)
        #expect(html.contains("<h2>com.example.kakin</h2>"))
        #expect(html.contains("data-figure=\"purchases\">4<"))
        #expect(html.contains("data-figure=\"refunds\">1<"))
        #expect(html.contains("data-figure=\"active\">1<"))
        #expect(html.contains("<svg class=\"chart\""))
        #expect(html.contains("Revenue per day, USD"))
        #expect(html.contains("<polyline class=\"line\""))
        #expect(html.contains("<rect class=\"bar\""))
        try await fixture.store.shutdown()
    }

    @Test("the overview charts the subscription metrics over the chosen range, periods and breakdown, with the cohort tables")
    func theOverviewChartsTheSubscriptionMetrics() async throws {
        let fixture = try await Self.fixtureWithPurchases()
        // The trial converts and renews twice; the App Store's notifications reach the server.
        for _ in 0..<3 {
            try await fixture.engine.advanceClock(by: 30 * 86_400)
            for record in try await fixture.engine.queueNotifications() {
                _ = try await fixture.service.receiveNotification(ResponseBodyV2(signedPayload: record.signedPayload))
            }
        }
        try await fixture.service.updateMetrics()
        let (status, html) = try await Self.page(
            "/dashboard?range=120&granularity=month&breakdown=product&environment=Sandbox", fixture: fixture)
        #expect(status == .ok)
        for metric in ["mrr", "active_subscriptions", "active_trials", "churn", "trial_conversion", "revenue"] {
            #expect(html.contains("<figure data-metric=\"\(metric)\">"), "\(metric)")
        }
        #expect(html.contains("Monthly recurring revenue, USD"))
        #expect(html.contains("<option value=\"month\" selected>"))
        #expect(html.contains("<option value=\"product\" selected>"))
        #expect(html.contains("<ul class=\"legend\">") || html.contains("<polyline class=\"line s0\""))
        #expect(html.contains("com.example.kakin.premium.monthly"))
        #expect(html.contains("Retention of paid subscriptions"))
        #expect(html.contains("<table class=\"cohorts\">"))
        #expect(html.contains("Realized lifetime value per customer, USD"))
        // Choices it cannot read are left at their defaults.
        let (fallback, plain) = try await Self.page("/dashboard?from=yesterday&granularity=hour&breakdown=colour", fixture: fixture)
        #expect(fallback == .ok)
        #expect(plain.contains("<option value=\"day\" selected>"))
        #expect(plain.contains("<option value=\"\" selected>None</option>"))
        try await fixture.store.shutdown()
    }

    @Test func customersAreFoundByUserIDOrTransactionID() async throws {
        let fixture = try await Self.fixtureWithPurchases()
        let (_, byUser) = try await Self.page("/dashboard/customers?q=ali", fixture: fixture)
        #expect(byUser.contains("/dashboard/customer?app=com.example.kakin&amp;user=alice"))
        #expect(!byUser.contains("bob"))
        let transactionID = try #require(
            try await fixture.store.customer(bundleID: ServerFixture.bundleID, appUserID: "<b>bob</b>").transactions.first)
            .transactionID
        let (_, byTransaction) = try await Self.page("/dashboard/customers?q=\(transactionID)", fixture: fixture)
        #expect(byTransaction.contains("&lt;b&gt;bob&lt;/b&gt;"), "user IDs are escaped")
        #expect(!byTransaction.contains("<b>bob</b>"))
        let (_, recent) = try await Self.page("/dashboard/customers", fixture: fixture)
        #expect(recent.contains("Recent customers"))
        #expect(recent.contains(">alice<"))
        try await fixture.store.shutdown()
    }

    @Test func aCustomersTimelineEntitlementsAndBalances() async throws {
        let fixture = try await Self.fixtureWithPurchases()
        let (status, html) = try await Self.page("/dashboard/customer?app=com.example.kakin&user=alice", fixture: fixture)
        #expect(status == .ok)
        #expect(html.contains("data-entitlement=\"removeAds\" data-state=\"revoked\""))
        #expect(html.contains("data-entitlement=\"premium\" data-state=\"active\" data-environment=\"Sandbox\""))
        #expect(html.contains("<span class=\"badge sandbox\""), "a sandbox account's purchase is marked")
        #expect(html.contains("<strong>points</strong> 200"))
        for kind in ["badge transaction", "badge refunded", "badge ledger", "badge notification", "badge webhook"] {
            #expect(html.contains(kind), "\(kind)")
        }
        let (missing, _) = try await Self.page("/dashboard/customer?app=com.example.kakin&user=nobody", fixture: fixture)
        #expect(missing == .notFound)
        try await fixture.store.shutdown()
    }

    @Test func aRescindedConsentIsMarkedOnTheCustomersPage() async throws {
        let fixture = try await Self.fixtureWithPurchases()
        try await fixture.service.linkAppTransaction(
            try await fixture.engine.signedAppTransaction(for: "tester"), bundleID: ServerFixture.bundleID,
            appUserID: "alice")
        fixture.clock.advance(by: 60)
        _ = try await fixture.engine.rescindConsent(of: "tester")
        let rescinded = try #require(await fixture.engine.events().last)
        #expect(
            try await fixture.service.receiveNotification(try await fixture.engine.signedNotification(for: rescinded))
                == .processed(.rescindConsent))
        let (status, html) = try await Self.page("/dashboard/customer?app=com.example.kakin&user=alice", fixture: fixture)
        #expect(status == .ok)
        #expect(html.contains("id=\"consent\" data-stands=\"true\""))
        #expect(html.contains("Erased: aliases, appTransactions."))
        #expect(html.contains("data-entitlement=\"premium\" data-state=\"consent-rescinded\""))
        #expect(html.contains("consent rescinded"))
        try await fixture.store.shutdown()
    }

    @Test func activityShowsNotificationsDeliveriesAndRuns() async throws {
        let fixture = try await Self.fixtureWithPurchases()
        var run = try await fixture.store.startReconciliation(
            bundleID: ServerFixture.bundleID, at: ServerFixture.start, abandonedAfter: 900).run
        (run.state, run.finishedAt, run.counts.transactionsSeen, run.counts.subscriptionsChecked) = (.completed, ServerFixture.start, 4, 2)
        try await fixture.store.updateReconciliation(run)
        _ = try await fixture.store.startReconciliation(
            bundleID: ServerFixture.bundleID, at: ServerFixture.start, abandonedAfter: 900)
        let (status, html) = try await Self.page("/dashboard/activity", fixture: fixture)
        #expect(status == .ok)
        #expect(html.contains("<td>REFUND</td>"))
        #expect(html.contains("recorded; transaction revoked"))
        #expect(html.contains("transaction.revoked"))
        #expect(html.contains("waiting for the first attempt"))
        #expect(html.contains(">completed</span>"))
        #expect(html.contains(">running</span>"), "a run going on is shown with its counts so far")
        try await fixture.store.shutdown()
    }

    @Test func theCustomerPageShowsTheirAppDownloads() async throws {
        let fixture = try await ServerFixture()
        _ = try await fixture.engine.createTester(name: "tester", id: "tester")
        let linked = try await fixture.service.linkAppTransaction(
            try await fixture.engine.signedAppTransaction(for: "tester"), bundleID: ServerFixture.bundleID,
            appUserID: "alice")
        let (status, html) = try await Self.page(
            "/dashboard/customer?app=\(ServerFixture.bundleID)&user=alice", fixture: fixture)
        #expect(status == .ok)
        let download = try #require(linked.appTransactionID)
        #expect(html.contains("<h2>App downloads</h2>") && html.contains(download))
        try await fixture.store.shutdown()
    }

    @Test func activityShowsCallsToAppleAndOfferSignatures() async throws {
        let fixture = try await ServerFixture()
        let now = fixture.clock.now()
        _ = try await fixture.store.recordAppleRequest(
            AppleRequestRecord(
                id: "uuid-1", kind: .consumptionInformation, bundleID: ServerFixture.bundleID,
                transactionID: "2000000000000001", environment: .sandbox, detail: "UNINTENDED_PURCHASE",
                requestedAt: now, state: .skipped, nextAttemptAt: now,
                lastError: "the app's customers did not consent <yet>", finishedAt: now))
        try await fixture.store.recordOfferSignature(
            OfferSignatureRecord(
                nonce: "0b5f6a0e-0000-4000-8000-000000000001", bundleID: ServerFixture.bundleID, appUserID: "alice",
                productID: "com.example.kakin.premium.monthly", offerID: "comeback50", kind: .promotional,
                keyID: "KEY", createdAt: now))
        let (status, html) = try await Self.page("/dashboard/activity", fixture: fixture)
        #expect(status == .ok)
        #expect(html.contains("Consumption information (UNINTENDED_PURCHASE)"))
        #expect(html.contains("did not consent &lt;yet&gt;"), "escaped")
        #expect(html.contains("<td>comeback50</td>") && html.contains("0b5f6a0e-0000-4000-8000-000000000001"))
        try await fixture.store.shutdown()
    }

    @Test func theTransactionManagerShowsTheSandbox() async throws {
        let fixture = try await ServerFixture()
        let (status, html) = try await Self.page(
            "/dashboard/sandbox", fixture: fixture, sandbox: RecordingSandboxControl())
        #expect(status == .ok)
        #expect(html.contains("data-transaction=\"2000000000000007\""))
        #expect(html.contains("data-action=\"refund\""))
        #expect(html.contains("pending-1"))
        #expect(html.contains("running at 86400× real time"))
        #expect(html.contains("<option value=\"JPN\" selected>"))
        #expect(html.contains("ONE_TIME_CHARGE"))
        let tokens = Set(
            html.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) })
        #expect(tokens.count == 1, "every form carries the session's token: \(tokens)")
        #expect(tokens.first?.count == 64)
        #expect(html.components(separatedBy: "name=\"csrf\"").count > 10)
        // The certificates: the intermediate and the leaf in use can be revoked; the root and a
        // revoked leaf cannot.
        #expect(html.contains("<h2>Certificates</h2>"))
        #expect(html.contains("<code>0a04</code>"))
        #expect(html.contains("CN=Kakin Sandbox &lt;Signing&gt;"), "subjects are escaped")
        #expect(html.contains("<span class=\"badge revoked\">revoked "))
        let revokeButtons = html.components(separatedBy: "data-action=\"revoke-certificate\"").count - 1
        #expect(revokeButtons == 2)
        #expect(html.contains("name=\"certificate\" value=\"intermediate\""))
        #expect(html.contains("name=\"certificate\" value=\"leaf\""))
        #expect(!html.contains("name=\"certificate\" value=\"root\""))
        let (without, message) = try await Self.page("/dashboard/sandbox", fixture: fixture)
        #expect(without == .notFound)
        #expect(message.contains("without an embedded sandbox"))
        #expect(!message.contains("Transaction manager</a>"), "no link to a page that is not there")
        try await fixture.store.shutdown()
    }

    @Test func everyPageIsOneStyleSheetAndNoScript() async throws {
        let fixture = try await Self.fixtureWithPurchases()
        for uri in ["/dashboard", "/dashboard/customers", "/dashboard/activity"] {
            let (_, html) = try await Self.page(uri, fixture: fixture)
            #expect(html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
            #expect(html.components(separatedBy: "rel=\"stylesheet\"").count == 2)
            #expect(!html.contains("<script"))
        }
        try await fixture.store.shutdown()
    }
}
