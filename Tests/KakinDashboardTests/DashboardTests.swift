import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import KakinDashboard
@testable import KakinServer
@testable import KakinLedger
import KakinTestSupport
import StoreSandbox
import Synchronization
import Testing

/// A sandbox stand-in that records what the dashboard asked of it.
actor RecordingSandboxControl: SandboxControl {
    var performed: [SandboxControlAction] = []
    var refusal: String?

    func refuse(with message: String?) { refusal = message }

    func state() async throws -> SandboxControlState {
        SandboxControlState(
            now: Date(timeIntervalSince1970: 1_790_000_000), clockRate: 86_400,
            settings: .init(askToBuy: false, gracePeriodDays: 16, failPurchasesWith: nil, notificationURL: nil),
            testers: [.init(id: "jp", name: "jp@example.com", storefront: "JPN", asksToBuy: true, canMakePayments: true)],
            transactions: [
                .init(
                    id: "2000000000000007", originalID: "2000000000000007", testerID: "jp",
                    productID: "com.example.kakin.removeAd", productType: "Non-Consumable",
                    purchaseDate: Date(timeIntervalSince1970: 1_789_990_000), expiresDate: nil, revocationDate: nil)
            ],
            pending: [.init(id: "pending-1", testerID: "jp", productID: "com.example.kakin.unlock", reason: "ask to buy")],
            subscriptions: [],
            notifications: [
                .init(
                    uuid: "u1", type: "ONE_TIME_CHARGE", subtype: nil, transactionID: "2000000000000007", attempts: 1,
                    delivered: true, nextAttemptDate: nil)
            ],
            certificates: [
                .init(
                    kind: "root", subject: "CN=Kakin Sandbox Root CA", serialNumber: "0a01",
                    notValidAfter: Date(timeIntervalSince1970: 2_500_000_000), revocationDate: nil),
                .init(
                    kind: "intermediate", subject: "CN=Kakin Sandbox WWDR", serialNumber: "0a02",
                    notValidAfter: Date(timeIntervalSince1970: 2_500_000_000), revocationDate: nil),
                .init(
                    kind: "leaf", subject: "CN=Kakin Sandbox <Signing>", serialNumber: "0a04",
                    notValidAfter: Date(timeIntervalSince1970: 1_900_000_000), revocationDate: nil),
                .init(
                    kind: "leaf", subject: "CN=Kakin Sandbox <Signing>", serialNumber: "0a03",
                    notValidAfter: Date(timeIntervalSince1970: 1_900_000_000),
                    revocationDate: Date(timeIntervalSince1970: 1_789_000_000)),
            ])
    }

    func perform(_ action: SandboxControlAction) async throws -> String {
        if let refusal { throw ServerError(.invalidRequest, refusal) }
        performed.append(action)
        return "done <\(performed.count)>"
    }
}

enum DashboardTestSupport {
    static let sessionCookie = Browser.sessionCookie
    /// The deployment's operator key on these servers.
    static let operatorKey = "correct horse battery"

    /// A router with the dashboard over the fixture's server.
    static func router(
        _ fixture: ServerFixture, sandbox: (any SandboxControl)?, now: @escaping @Sendable () -> Date
    ) throws -> Router<KakinRequestContext> {
        let router = fixture.http.router()
        try DashboardRoutes(
            service: fixture.service,
            configuration: DashboardConfiguration(operatorKey: operatorKey, sessionSeconds: 3600),
            sandbox: sandbox, sandboxApp: ServerFixture.bundleID, now: now
        ).add(to: router)
        return router
    }
}

@Suite struct DashboardTests {
    @Test func nothingIsReadableWithoutSigningIn() async throws {
        let fixture = try await ServerFixture()
        let router = try DashboardTestSupport.router(fixture, sandbox: RecordingSandboxControl(), now: { Date() })
        try await Application(router: router).test(.router) { client in
            for page in [
                "/dashboard", "/dashboard/customers?q=alice", "/dashboard/customer?app=com.example.kakin&user=alice",
                "/dashboard/activity", "/dashboard/sandbox",
            ] {
                let response = try await client.execute(uri: page, method: .get)
                #expect(response.status == .seeOther, "\(page)")
                #expect(response.headers[.location] == "/dashboard/login", "\(page)")
            }
            for action in ["/dashboard/sandbox/action", "/dashboard/logout", "/dashboard/reconcile"] {
                let response = try await client.execute(
                    uri: action, method: .post, body: ByteBuffer(string: "action=refund&id=1&csrf=x"))
                #expect(response.headers[.location] == "/dashboard/login", "\(action)")
            }
            // A made-up session token is no session.
            let forged = try await client.execute(
                uri: "/dashboard", method: .get, headers: [.cookie: "kakin_session=\(String(repeating: "a", count: 64))"])
            #expect(forged.headers[.location] == "/dashboard/login")
            #expect(try await client.execute(uri: "/dashboard/assets/dashboard.css", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/", method: .get).headers[.location] == "/dashboard")
        }
    }

    @Test func theSecretKeyOrTheOperatorKeySignsIn() async throws {
        let fixture = try await ServerFixture()
        let router = try DashboardTestSupport.router(fixture, sandbox: nil, now: { Date() })
        try await Application(router: router).test(.router) { client in
            var stranger = Browser()
            #expect(try await stranger.signIn("sk_wrong", client) == nil)
            #expect(try await stranger.signIn("pk_test", client) == nil, "the publishable key ships in apps")
            #expect(stranger.cookies[DashboardTestSupport.sessionCookie] == nil)

            var operator1 = Browser()
            let form = try await operator1.get("/dashboard/login", client)
            let token = try #require(Browser.csrf(in: form))
            let signedIn = try await operator1.post("/dashboard/login", ["csrf": token, "password": "sk_test"], client)
            #expect(signedIn.status == .seeOther)
            let cookie = try #require(
                signedIn.headers[values: .setCookie].first { $0.hasPrefix(DashboardTestSupport.sessionCookie + "=") })
            #expect(cookie.contains("HttpOnly"))
            #expect(cookie.contains("SameSite=Strict"))
            let token64 = try #require(operator1.cookies[DashboardTestSupport.sessionCookie])
            #expect(token64.count == 64)
            let overview = try await operator1.get("/dashboard", client)
            #expect(overview.status == .ok)
            #expect(String(buffer: overview.body).contains("<h1>Overview</h1>"))

            var admin = Browser()
            #expect(try await admin.signIn(DashboardTestSupport.operatorKey, client) != nil)
            #expect(admin.cookies[DashboardTestSupport.sessionCookie] != token64, "every session has its own token")
        }
    }

    @Test func theSignInFormNeedsItsOwnToken() async throws {
        let fixture = try await ServerFixture()
        let router = try DashboardTestSupport.router(fixture, sandbox: nil, now: { Date() })
        try await Application(router: router).test(.router) { client in
            var browser = Browser()
            _ = try await browser.get("/dashboard/login", client)
            let forged = try await browser.post("/dashboard/login", ["csrf": "guess", "password": "sk_test"], client)
            #expect(forged.status == .forbidden)
            #expect(browser.cookies[DashboardTestSupport.sessionCookie] == nil)
        }
    }

    @Test func aSignInFormSignsInOnceAndExpires() async throws {
        let fixture = try await ServerFixture()
        let now = Mutex(Date(timeIntervalSince1970: 1_790_000_000))
        let router = try DashboardTestSupport.router(fixture, sandbox: nil, now: { now.withLock { $0 } })
        try await Application(router: router).test(.router) { client in
            var browser = Browser()
            let token = try #require(Browser.csrf(in: try await browser.get("/dashboard/login", client)))
            let wrong = try await browser.post("/dashboard/login", ["csrf": token, "password": "guess"], client)
            #expect(wrong.status == .unauthorized)
            // The same form again, now with the right password: used already.
            browser.cookies["kakin_login"] = token
            let again = try await browser.post("/dashboard/login", ["csrf": token, "password": "sk_test"], client)
            #expect(again.status == .forbidden)
            #expect(browser.cookies[DashboardTestSupport.sessionCookie] == nil)

            let late = try #require(Browser.csrf(in: try await browser.get("/dashboard/login", client)))
            now.withLock { $0 += 3601 }
            let expired = try await browser.post("/dashboard/login", ["csrf": late, "password": "sk_test"], client)
            #expect(expired.status == .forbidden)
            #expect(browser.cookies[DashboardTestSupport.sessionCookie] == nil)

            // A token of the right shape whose code was not made with this deployment's key.
            let parts = late.split(separator: ".")
            let forged = "\(Int64(now.withLock { $0 }.timeIntervalSince1970) + 600).\(parts[1]).\(parts[2])"
            browser.cookies["kakin_login"] = forged
            #expect(try await browser.post("/dashboard/login", ["csrf": forged, "password": "sk_test"], client).status == .forbidden)
        }
    }

    @Test func sessionsAndFormsWorkOnEveryServerOfADeploymentAndSignOutEndsThemEverywhere() async throws {
        let fixture = try await ServerFixture()
        let key = SymmetricKey(size: .bits256)
        // Two servers of one deployment: the same ledger and the same key, nothing else shared.
        func server() throws -> Application<RouterResponder<KakinRequestContext>> {
            let router = fixture.http.router()
            try DashboardRoutes(
                service: fixture.service,
                configuration: DashboardConfiguration(
                    operatorKey: DashboardTestSupport.operatorKey, sessionSeconds: 3600),
                formKey: key
            ).add(to: router)
            return Application(router: router)
        }
        let (first, second) = (try server(), try server())
        // A form from the first server signs in on the second.
        let form = try await first.test(.router) { client in
            var browser = Browser()
            let form = try #require(Browser.csrf(in: try await browser.get("/dashboard/login", client)))
            return (browser, form)
        }
        let signedIn = try await second.test(.router) { client in
            var browser = form.0
            let answer = try await browser.post("/dashboard/login", ["csrf": form.1, "password": "sk_test"], client)
            #expect(answer.status == .seeOther)
            return (browser, try #require(Browser.csrf(in: try await browser.get("/dashboard", client))))
        }
        let session = try #require(signedIn.0.cookies[DashboardTestSupport.sessionCookie])
        // The session the second server made is one on the first.
        let cookie: HTTPFields = [.cookie: "\(DashboardTestSupport.sessionCookie)=\(session)"]
        try await first.test(.router) { client in
            let page = try await client.execute(uri: "/dashboard", method: .get, headers: cookie)
            #expect(page.status == .ok)
        }
        // Signed out on the second server: the first no longer accepts the session either.
        try await second.test(.router) { client in
            var browser = signedIn.0
            let out = try await browser.post("/dashboard/logout", ["csrf": signedIn.1], client)
            #expect(out.status == .seeOther)
        }
        try await first.test(.router) { client in
            let replayed = try await client.execute(uri: "/dashboard", method: .get, headers: cookie)
            #expect(replayed.headers[.location] == "/dashboard/login")
        }
    }

    @Test func withoutSecureCookiesTheyAreSecureOverHTTPSBehindATrustedProxy() async throws {
        let fixture = try await ServerFixture()
        for trust in [false, true] {
            let router = fixture.http.router()
            try DashboardRoutes(
                service: fixture.service,
                configuration: DashboardConfiguration(
                    operatorKey: DashboardTestSupport.operatorKey, sessionSeconds: 3600, trustForwardedProto: trust,
                    secureCookies: false)
            ).add(to: router)
            try await Application(router: router).test(.router) { client in
                let https: HTTPFields = [HTTPField.Name("X-Forwarded-Proto")!: "https"]
                let plain = try await client.execute(uri: "/dashboard/login", method: .get)
                #expect(plain.headers[values: .setCookie].allSatisfy { !$0.contains("Secure") })
                let form = try await client.execute(uri: "/dashboard/login", method: .get, headers: https)
                let cookie = try #require(form.headers[values: .setCookie].first)
                #expect(cookie.hasSuffix("; Secure") == trust, "trusted: \(trust)")

                let token = try #require(Browser.csrf(in: form))
                var headers = https
                headers[.cookie] = "kakin_login=\(token)"
                headers[.contentType] = "application/x-www-form-urlencoded"
                let signIn = try await client.execute(
                    uri: "/dashboard/login", method: .post, headers: headers,
                    body: ByteBuffer(string: "csrf=\(token)&password=sk_test"))
                #expect(signIn.status == .seeOther)
                let cookies = signIn.headers[values: .setCookie]
                #expect(cookies.count == 2)
                #expect(cookies.allSatisfy { $0.hasSuffix("; Secure") == trust }, "\(cookies)")
            }
        }
    }

    @Test func sessionsExpireOnTheServersClockAndEndAtSignOut() async throws {
        let fixture = try await ServerFixture()
        let now = Mutex(Date(timeIntervalSince1970: 1_790_000_000))
        let router = try DashboardTestSupport.router(fixture, sandbox: nil, now: { now.withLock { $0 } })
        try await Application(router: router).test(.router) { client in
            var browser = Browser()
            #expect(try await browser.signIn("sk_test", client) != nil)
            now.withLock { $0 += 3599 }
            #expect(try await browser.get("/dashboard", client).status == .ok)
            now.withLock { $0 += 2 }
            #expect(try await browser.get("/dashboard", client).headers[.location] == "/dashboard/login")

            let csrf = try #require(try await browser.signIn("sk_test", client))
            let token = try #require(browser.cookies[DashboardTestSupport.sessionCookie])
            #expect(try await browser.post("/dashboard/logout", ["csrf": csrf], client).status == .seeOther)
            #expect(browser.cookies[DashboardTestSupport.sessionCookie] == nil)
            // The server forgot the session: the old cookie, sent again, is no session.
            let replayed = try await client.execute(
                uri: "/dashboard", method: .get, headers: [.cookie: "\(DashboardTestSupport.sessionCookie)=\(token)"])
            #expect(replayed.headers[.location] == "/dashboard/login")
        }
    }

    @Test func everyFormIsCheckedForTheSessionsCSRFToken() async throws {
        let fixture = try await ServerFixture()
        let sandbox = RecordingSandboxControl()
        let router = try DashboardTestSupport.router(fixture, sandbox: sandbox, now: { Date() })
        try await Application(router: router).test(.router) { client in
            var browser = Browser()
            let csrf = try #require(try await browser.signIn("sk_test", client))
            let refund = ["action": "refund", "id": "2000000000000007", "reason": "1"]
            let missing = try await browser.post("/dashboard/sandbox/action", refund, client)
            #expect(missing.status == .forbidden)
            var wrong = refund
            wrong["csrf"] = String(repeating: "0", count: 64)
            #expect(try await browser.post("/dashboard/sandbox/action", wrong, client).status == .forbidden)
            #expect(try await browser.post("/dashboard/logout", [:], client).status == .forbidden)
            #expect(await sandbox.performed.isEmpty)

            var other = Browser()
            let otherCSRF = try #require(try await other.signIn("sk_test", client))
            var crossed = refund
            crossed["csrf"] = otherCSRF
            #expect(
                try await browser.post("/dashboard/sandbox/action", crossed, client).status == .forbidden,
                "a token is good for its own session only")

            var good = refund
            good["csrf"] = csrf
            let done = try await browser.post("/dashboard/sandbox/action", good, client)
            #expect(done.status == .seeOther)
            #expect(done.headers[.location]?.hasPrefix("/dashboard/sandbox?notice=") == true)
            #expect(await sandbox.performed == [.refund(transactionID: "2000000000000007", reason: 1)])
        }
    }

    @Test(arguments: [
        (["action": "advance", "seconds": "86400"], SandboxControlAction.advanceClock(seconds: 86_400)),
        (["action": "rate", "rate": "0"], .setClockRate(0)),
        (["action": "approve", "id": "p1"], .approve(pendingID: "p1")),
        (["action": "decline", "id": "p1"], .decline(pendingID: "p1")),
        (["action": "renew", "id": "o1"], .renew(originalTransactionID: "o1")),
        (["action": "fail-renewals", "id": "o1"], .failRenewals(originalTransactionID: "o1")),
        (["action": "resolve-billing", "id": "o1"], .resolveBilling(originalTransactionID: "o1")),
        (["action": "revoke", "id": "t1"], .revoke(transactionID: "t1")),
        (["action": "create-tester", "name": "gb@example.com", "storefront": "GBR"], .createTester(name: "gb@example.com", storefront: "GBR")),
        (["action": "storefront", "id": "jp", "storefront": "USA"], .setStorefront(testerID: "jp", storefront: "USA")),
        (["action": "ask-to-buy", "id": "jp", "enabled": "true"], .setAskToBuy(testerID: "jp", enabled: true)),
        (["action": "clear", "id": "jp"], .clearPurchaseHistory(testerID: "jp")),
        (["action": "revoke-certificate", "certificate": "leaf"], .revokeCertificate(kind: "leaf")),
        (["action": "revoke-certificate", "certificate": "intermediate"], .revokeCertificate(kind: "intermediate")),
        (
            ["action": "settings", "askToBuy": "true", "gracePeriodDays": "6", "failPurchasesWith": "", "notificationURL": "http://127.0.0.1:1/n"],
            .updateSettings(.init(askToBuy: true, gracePeriodDays: 6, failPurchasesWith: nil, notificationURL: "http://127.0.0.1:1/n"))
        ),
    ])
    func formsBecomeSandboxActions(form: [String: String], action: SandboxControlAction) throws {
        #expect(try DashboardRoutes.sandboxAction(from: form) == action)
    }

    @Test(arguments: [
        ["action": "refund"], ["action": "refund", "id": "1", "reason": "7"], ["action": "advance", "seconds": "-1"],
        ["action": "rate", "rate": "fast"], ["action": "storefront", "id": "jp", "storefront": "ATL"],
        ["action": "explode"], ["id": "1"], ["action": "revoke-certificate", "certificate": "root"],
        ["action": "revoke-certificate"],
    ])
    func badFormsAreRefused(form: [String: String]) {
        #expect(throws: ServerError.self) { try DashboardRoutes.sandboxAction(from: form) }
    }

    @Test func theCertificatesRevokeButtonReachesTheSandbox() async throws {
        let fixture = try await ServerFixture()
        let sandbox = RecordingSandboxControl()
        let router = try DashboardTestSupport.router(fixture, sandbox: sandbox, now: { Date() })
        try await Application(router: router).test(.router) { client in
            var browser = Browser()
            let csrf = try #require(try await browser.signIn("sk_test", client))
            let page = String(buffer: try await browser.get("/dashboard/sandbox", client).body)
            #expect(page.contains("<input type=\"hidden\" name=\"action\" value=\"revoke-certificate\">"))
            let done = try await browser.post(
                "/dashboard/sandbox/action", ["csrf": csrf, "action": "revoke-certificate", "certificate": "leaf"],
                client)
            #expect(done.status == .seeOther)
            #expect(done.headers[.location]?.hasPrefix("/dashboard/sandbox?notice=") == true)
            #expect(await sandbox.performed == [.revokeCertificate(kind: "leaf")])
        }
    }

    @Test func aRefusalFromTheSandboxIsShownOnThePage() async throws {
        let fixture = try await ServerFixture()
        let sandbox = RecordingSandboxControl()
        await sandbox.refuse(with: "no transaction has ID 42")
        let router = try DashboardTestSupport.router(fixture, sandbox: sandbox, now: { Date() })
        try await Application(router: router).test(.router) { client in
            var browser = Browser()
            let csrf = try #require(try await browser.signIn("sk_test", client))
            let refused = try await browser.post(
                "/dashboard/sandbox/action", ["csrf": csrf, "action": "refund", "id": "42"], client)
            let location = try #require(refused.headers[.location])
            #expect(location.hasPrefix("/dashboard/sandbox?problem="))
            let page = String(buffer: try await browser.get(location, client).body)
            #expect(page.contains("no transaction has ID 42"))
        }
    }
}
