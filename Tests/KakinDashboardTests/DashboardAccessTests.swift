import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@testable import KakinDashboard
@testable import KakinLedger
@testable import KakinServer

/// A deployment of four apps on one ledger, as an attacker holding one app's secret key meets it:
/// A (the example app) and B with secret keys of their own, C and D sharing the deployment's
/// secret key; alice bought in A, bob in B.
struct FourAppDeployment: Sendable {
    static let appA = ServerFixture.bundleID
    static let appB = "com.example.other"
    static let appC = "com.example.third"
    static let appD = "com.example.fourth"
    static let operatorKey = "op_deployment_0123456789"
    static let sharedSecret = "sk_shared_0123456789"

    let store: any LedgerStore
    let clock: SandboxClock
    let service: PurchaseService
    /// The transaction bob bought in B.
    let bobsTransaction: String
    /// The transaction alice bought in A.
    let alicesTransaction: String

    /// Builds the deployment over `store` (migrated) with `serverAPI` for A and B when given.
    init(
        store: any LedgerStore, serverAPI: ServerAPIAccess? = nil, exchange: any HTTPExchange = URLSessionExchange()
    )
        async throws
    {
        self.store = store
        let clock = SandboxClock.manual(at: ServerFixture.start)
        self.clock = clock
        let catalog = try ExampleApp.catalog()
        func engine(_ bundleID: String, appleID: Int64) throws -> SandboxEngine {
            try SandboxEngine(
                signer: SandboxSigner(authority: ServerFixture.authority, bundleID: bundleID, appAppleID: appleID),
                clock: clock, storefrontIDs: catalog.storefrontIdentifiers, products: catalog.engineLookup)
        }
        func app(
            _ bundleID: String, appleID: Int64, publicKey: String, secretKey: String, api: Bool
        ) -> AppConfiguration {
            AppConfiguration(
                bundleID: bundleID, appAppleID: appleID, environments: [.sandbox],
                sandboxRoots: [ServerFixture.authority.root], publicKey: publicKey, secretKey: secretKey,
                serverAPI: api ? serverAPI : nil, revocation: .off)
        }
        let service = PurchaseService(
            store: store,
            apps: [
                app(Self.appA, appleID: 1, publicKey: "pk_a", secretKey: "sk_app_a_0123456789", api: true),
                app(Self.appB, appleID: 2, publicKey: "pk_b", secretKey: "sk_app_b_0123456789", api: true),
                app(Self.appC, appleID: 3, publicKey: "pk_shared", secretKey: Self.sharedSecret, api: false),
                app(Self.appD, appleID: 4, publicKey: "pk_shared", secretKey: Self.sharedSecret, api: false),
            ], grants: try ExampleApp.grants(), exchange: exchange,
            now: { clock.now() })
        self.service = service
        func buy(_ engine: SandboxEngine, _ bundleID: String, as user: String) async throws -> String {
            _ = try await engine.createTester(name: user, id: user)
            guard
                case .purchased(let transaction) = try await engine.purchase(
                    .init(testerID: user, productID: "com.example.kakin.removeAd", quantity: 1))
            else { throw ServerError(.invalidRequest, "the sandbox did not sell") }
            let jws = try engine.signer.signTransaction(transaction, at: clock.now())
            _ = try await service.submit(jws, bundleID: bundleID, appUserID: user)
            return transaction.id
        }
        alicesTransaction = try await buy(try engine(Self.appA, appleID: 1), Self.appA, as: "alice")
        // The two sandboxes number their transactions alike: B's first purchase stays unsent.
        let engineB = try engine(Self.appB, appleID: 2)
        _ = try await engineB.createTester(name: "unsent", id: "unsent")
        _ = try await engineB.purchase(.init(testerID: "unsent", productID: "com.example.kakin.removeAd", quantity: 1))
        bobsTransaction = try await buy(engineB, Self.appB, as: "bob")
    }

    /// The dashboard of this deployment.
    func router(
        sandbox: (any SandboxControl)? = nil, sandboxApp: String? = nil, reconciliations: ReconciliationRunner? = nil
    ) throws -> Router<KakinRequestContext> {
        let router = KakinServerHTTP(service: service, signingKey: P256.Signing.PrivateKey()).router()
        let clock = clock
        try DashboardRoutes(
            service: service,
            configuration: DashboardConfiguration(operatorKey: Self.operatorKey, sessionSeconds: 3600),
            reconciliations: reconciliations, sandbox: sandbox, sandboxApp: sandboxApp, now: { clock.now() }
        ).add(to: router)
        return router
    }
}

/// An HTTP exchange that never reaches anyone: a reconciliation started over it stops at once.
struct UnreachableExchange: HTTPExchange {
    func send(
        method: String, url: URL, headers: [String: String], body: Data?
    ) async throws -> (status: Int, body: Data) {
        throw ServerError(.invalidRequest, "no network in this test")
    }
}

/// What a dashboard session opens: the apps of the key that signed it in, and nothing else.
@Suite struct DashboardAccessTests {
    static let keyA = "sk_app_a_0123456789"
    static let keyB = "sk_app_b_0123456789"

    /// Signs in with `key` and GETs `uri`: its status and page.
    static func page(
        _ uri: String, signedInWith key: String, _ client: some TestClientProtocol
    ) async throws -> (HTTPResponse.Status, String) {
        var browser = Browser()
        _ = try #require(try await browser.signIn(key, client), "\(key) signs in")
        let response = try await browser.get(uri, client)
        return (response.status, String(buffer: response.body))
    }

    @Test("a session of app A cannot list, find or open app B's customers", arguments: StoreKind.backends)
    func anAppsKeyOpensThatAppOnly(_ kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let deployment = try await FourAppDeployment(store: store)
            let bob = deployment.bobsTransaction
            try await Application(router: try deployment.router()).test(.router) { client in
                let (_, overview) = try await Self.page("/dashboard", signedInWith: Self.keyA, client)
                #expect(overview.contains("<h2>com.example.kakin</h2>"))
                #expect(overview.contains("This session opens com.example.kakin."))
                for other in [FourAppDeployment.appB, FourAppDeployment.appC, FourAppDeployment.appD] {
                    #expect(!overview.contains("<h2>\(other)</h2>"), "\(other)")
                }

                let (_, recent) = try await Self.page("/dashboard/customers", signedInWith: Self.keyA, client)
                #expect(recent.contains(">alice<"))
                #expect(!recent.contains("bob"), "the newest customers are A's only")
                for query in ["bob", "b", bob] {
                    let (status, found) = try await Self.page(
                        "/dashboard/customers?q=\(query)", signedInWith: Self.keyA, client)
                    #expect(status == .ok)
                    #expect(found.contains("0 matches"), "\(query)")
                    #expect(!found.contains("com.example.other"), "\(query)")
                }

                // Opened by URL: not found, and nothing of bob's shown.
                let (status, page) = try await Self.page(
                    "/dashboard/customer?app=com.example.other&user=bob", signedInWith: Self.keyA, client)
                #expect(status == .notFound)
                #expect(!page.contains(bob))
                let (own, alice) = try await Self.page(
                    "/dashboard/customer?app=com.example.kakin&user=alice", signedInWith: Self.keyA, client)
                #expect(own == .ok)
                #expect(alice.contains(deployment.alicesTransaction))

                // The activity page lists A's events only.
                let (_, activity) = try await Self.page("/dashboard/activity", signedInWith: Self.keyA, client)
                #expect(activity.contains("alice"))
                #expect(!activity.contains("bob"))

                // And B's key the other way round.
                let (_, asB) = try await Self.page("/dashboard/customers", signedInWith: Self.keyB, client)
                #expect(asB.contains(">bob<") && !asB.contains(">alice<"))
                let (refused, _) = try await Self.page(
                    "/dashboard/customer?app=com.example.kakin&user=alice", signedInWith: Self.keyB, client)
                #expect(refused == .notFound)
            }
        }
    }

    @Test func theSharedSecretKeyOpensEveryAppWithoutKeysOfItsOwn() async throws {
        try await withLedgerStore(.memory) { store in
            let deployment = try await FourAppDeployment(store: store)
            try await Application(router: try deployment.router()).test(.router) { client in
                let (_, overview) = try await Self.page(
                    "/dashboard", signedInWith: FourAppDeployment.sharedSecret, client)
                #expect(
                    overview.contains("<h2>com.example.fourth</h2>") && overview.contains("<h2>com.example.third</h2>"))
                #expect(
                    !overview.contains("<h2>com.example.kakin</h2>") && !overview.contains("<h2>com.example.other</h2>")
                )
                let (_, customers) = try await Self.page(
                    "/dashboard/customers", signedInWith: FourAppDeployment.sharedSecret, client)
                #expect(!customers.contains(">alice<") && !customers.contains(">bob<"))
                let (activity, _) = try await Self.page(
                    "/dashboard/activity", signedInWith: FourAppDeployment.sharedSecret, client)
                #expect(activity == .ok, "read app by app")
                // A publishable key, even one shared by two apps, opens nothing.
                var browser = Browser()
                #expect(try await browser.signIn("pk_shared", client) == nil)
            }
        }
    }

    @Test("the operator key sees every app's customers", arguments: StoreKind.backends)
    func theOperatorKeyOpensEveryApp(_ kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let deployment = try await FourAppDeployment(store: store)
            try await Application(router: try deployment.router()).test(.router) { client in
                let key = FourAppDeployment.operatorKey
                let (_, overview) = try await Self.page("/dashboard", signedInWith: key, client)
                #expect(overview.contains("This session opens every app (operator key)."))
                for app in [
                    FourAppDeployment.appA, FourAppDeployment.appB, FourAppDeployment.appC, FourAppDeployment.appD,
                ] {
                    #expect(overview.contains("<h2>\(app)</h2>"), "\(app)")
                }
                let (_, customers) = try await Self.page("/dashboard/customers", signedInWith: key, client)
                #expect(customers.contains(">alice<") && customers.contains(">bob<"))
                let (bobStatus, bob) = try await Self.page(
                    "/dashboard/customer?app=com.example.other&user=bob", signedInWith: key, client)
                #expect(bobStatus == .ok && bob.contains(deployment.bobsTransaction))
                let (_, activity) = try await Self.page("/dashboard/activity", signedInWith: key, client)
                #expect(activity.contains("alice") && activity.contains("bob"))
            }
        }
    }

    @Test("the ledger keeps the apps a session opens, so every server sharing it agrees", arguments: StoreKind.backends)
    func theLedgerKeepsTheAppsASessionOpens(_ kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let deployment = try await FourAppDeployment(store: store)
            let now = deployment.clock.now()
            // A second server of the deployment: same ledger, its own routes.
            let (first, second) = (try deployment.router(), try deployment.router())
            let sessions = try await Application(router: first).test(.router) { client in
                var sessions: [String: String] = [:]
                for key in [Self.keyA, FourAppDeployment.sharedSecret, FourAppDeployment.operatorKey] {
                    var browser = Browser()
                    _ = try #require(try await browser.signIn(key, client))
                    let cookie = try #require(browser.cookies[Browser.sessionCookie])
                    sessions[key] = cookie
                }
                return sessions
            }
            func stored(_ key: String) async throws -> DashboardScope? {
                let token = try #require(sessions[key])
                return try await store.dashboardToken(
                    digest: Data(SHA256.hash(data: Data(token.utf8))), kind: .session, now: now)?.scope
            }
            #expect(try await stored(Self.keyA) == .apps([FourAppDeployment.appA]))
            #expect(
                try await stored(FourAppDeployment.sharedSecret)
                    == .apps([FourAppDeployment.appC, FourAppDeployment.appD]))
            #expect(try await stored(FourAppDeployment.operatorKey) == .allApps)
            try await Application(router: second).test(.router) { client in
                let cookie: HTTPFields = [.cookie: "\(Browser.sessionCookie)=\(sessions[Self.keyA] ?? "")"]
                let refused = try await client.execute(
                    uri: "/dashboard/customer?app=com.example.other&user=bob", method: .get, headers: cookie)
                #expect(refused.status == .notFound)
                let own = try await client.execute(
                    uri: "/dashboard/customer?app=com.example.kakin&user=alice", method: .get, headers: cookie)
                #expect(own.status == .ok)
            }
        }
    }

    @Test func aSessionStoredWithoutItsAppsOpensNothing() async throws {
        try await withLedgerStore(.memory) { store in
            let deployment = try await FourAppDeployment(store: store)
            let token = DashboardSessions.randomToken()
            _ = try await store.insertDashboardToken(
                digest: DashboardSessions.digest(token), kind: .session, csrf: DashboardSessions.randomToken(),
                scope: nil,
                expires: deployment.clock.now().addingTimeInterval(600), now: deployment.clock.now())
            try await Application(router: try deployment.router()).test(.router) { client in
                let page = try await client.execute(
                    uri: "/dashboard", method: .get, headers: [.cookie: "\(Browser.sessionCookie)=\(token)"])
                #expect(page.headers[.location] == "/dashboard/login")
            }
        }
    }

    @Test("Reconcile now starts runs of the session's apps only")
    func reconcileNowStartsTheSessionsAppsOnly() async throws {
        try await withLedgerStore(.memory) { store in
            let access = ServerAPIAccess(
                baseURL: URL(string: "http://127.0.0.1:9/")!, keyID: "KEY", issuerID: "issuer",
                privateKey: P256.Signing.PrivateKey())
            let deployment = try await FourAppDeployment(
                store: store, serverAPI: access, exchange: UnreachableExchange())
            let runner = ReconciliationRunner(
                reconciler: Reconciler(
                    service: deployment.service,
                    access: [FourAppDeployment.appA: access, FourAppDeployment.appB: access],
                    exchange: UnreachableExchange()))
            try await Application(router: try deployment.router(reconciliations: runner)).test(.router) { client in
                // C and D read nothing from Apple: their session has no button, and its form starts nothing.
                var shared = Browser()
                let sharedCSRF = try #require(try await shared.signIn(FourAppDeployment.sharedSecret, client))
                #expect(
                    !String(buffer: try await shared.get("/dashboard/activity", client).body).contains("Reconcile now"))
                let none = try await shared.post("/dashboard/reconcile", ["csrf": sharedCSRF], client)
                #expect(none.headers[.location]?.contains("problem=") == true)
                #expect(try await store.reconciliationRuns(limit: 10).isEmpty)

                var asA = Browser()
                let csrf = try #require(try await asA.signIn(Self.keyA, client))
                let started = try await asA.post("/dashboard/reconcile", ["csrf": csrf], client)
                #expect(started.status == .seeOther)
                #expect(started.headers[.location]?.contains("notice=") == true)
                let runs = try await store.reconciliationRuns(limit: 10)
                #expect(runs.map(\.bundleID) == [FourAppDeployment.appA])
                for run in runs { _ = try await runner.wait(for: run.id) }

                var operatorBrowser = Browser()
                let operatorCSRF = try #require(try await operatorBrowser.signIn(FourAppDeployment.operatorKey, client))
                _ = try await operatorBrowser.post("/dashboard/reconcile", ["csrf": operatorCSRF], client)
                let all = try await store.reconciliationRuns(limit: 10)
                #expect(Set(all.map(\.bundleID)) == [FourAppDeployment.appA, FourAppDeployment.appB])
                for run in all { _ = try await runner.wait(for: run.id) }

                // A's activity page lists A's runs only.
                let activity = String(buffer: try await asA.get("/dashboard/activity", client).body)
                #expect(activity.contains("<td>com.example.kakin</td>"))
                #expect(!activity.contains("<td>com.example.other</td>"))
            }
            await runner.stop()
        }
    }

    @Test func theTransactionManagerIsForSessionsThatOpenTheSandboxsApp() async throws {
        try await withLedgerStore(.memory) { store in
            let deployment = try await FourAppDeployment(store: store)
            for sandboxApp in [FourAppDeployment.appA, nil] {
                let sandbox = RecordingSandboxControl()
                let router = try deployment.router(sandbox: sandbox, sandboxApp: sandboxApp)
                try await Application(router: router).test(.router) { client in
                    var expected: [SandboxControlAction] = []
                    let keys = [Self.keyA, Self.keyB, FourAppDeployment.operatorKey]
                    for key in keys {
                        var browser = Browser()
                        let csrf = try #require(try await browser.signIn(key, client))
                        let opens = key == FourAppDeployment.operatorKey || (key == Self.keyA && sandboxApp != nil)
                        let overview = String(buffer: try await browser.get("/dashboard", client).body)
                        #expect(overview.contains("Transaction manager") == opens, "\(key), \(sandboxApp ?? "no app")")
                        let page = try await browser.get("/dashboard/sandbox", client)
                        #expect(page.status == (opens ? .ok : .notFound), "\(key), \(sandboxApp ?? "no app")")
                        let answer = try await browser.post(
                            "/dashboard/sandbox/action", ["csrf": csrf, "action": "revoke", "id": key], client)
                        #expect(answer.status == (opens ? .seeOther : .notFound), "\(key), \(sandboxApp ?? "no app")")
                        if opens { expected.append(.revoke(transactionID: key)) }
                    }
                    #expect(await sandbox.performed == expected)
                }
            }
        }
    }

    @Test func theOperatorKeyMustDifferFromEveryAppsKeys() async throws {
        try await withLedgerStore(.memory) { store in
            let deployment = try await FourAppDeployment(store: store)
            for key in [Self.keyA, "pk_shared"] {
                #expect(throws: ServerError.self, "\(key)") {
                    try DashboardRoutes(
                        service: deployment.service, configuration: DashboardConfiguration(operatorKey: key))
                }
            }
        }
    }

    @Test func scopesRoundTripThroughTheLedgersText() {
        for scope in [
            DashboardScope.allApps, .apps(["com.example.a"]), .apps(["com.example.b", "com.example.a"]), .apps([]),
        ] {
            #expect(DashboardScope(stored: scope.stored) == scope, "\(scope)")
        }
        #expect(DashboardScope.apps(["b", "a"]).stored == #"["a","b"]"#)
        #expect(DashboardScope(stored: nil) == nil)
        #expect(DashboardScope(stored: "com.example.a") == nil, "not a list")
        #expect(DashboardScope.apps(["a"]).opens("a") && !DashboardScope.apps(["a"]).opens("b"))
        #expect(DashboardScope.allApps.opened(["b", "a"]) == ["a", "b"])
    }
}

/// When the dashboard's cookies are `Secure`.
@Suite struct DashboardCookieTests {
    /// The cookies of the sign-in page, asked with `headers`.
    static func cookies(
        _ configuration: DashboardConfiguration, headers: HTTPFields = [:]
    ) async throws -> [String] {
        let fixture = try await ServerFixture()
        let router = fixture.http.router()
        try DashboardRoutes(service: fixture.service, configuration: configuration).add(to: router)
        return try await Application(router: router).test(.router) { client in
            let form = try await client.execute(uri: "/dashboard/login", method: .get, headers: headers)
            return form.headers[values: .setCookie]
        }
    }

    static let https: HTTPFields = [HTTPField.Name("X-Forwarded-Proto")!: "https"]

    @Test func byDefaultEveryCookieIsSecureEvenOverPlainHTTPAndAnUntrustedProxy() async throws {
        let configuration = DashboardConfiguration()
        #expect(configuration.secureCookies)
        for headers in [HTTPFields(), Self.https] {
            let cookies = try await Self.cookies(configuration, headers: headers)
            #expect(!cookies.isEmpty && cookies.allSatisfy { $0.hasSuffix("; Secure") }, "\(cookies)")
        }
    }

    @Test func withoutSecureCookiesOnlyHTTPSMakesThemSecure() async throws {
        let plain = DashboardConfiguration(secureCookies: false)
        #expect(try await Self.cookies(plain).allSatisfy { !$0.contains("Secure") })
        #expect(try await Self.cookies(plain, headers: Self.https).allSatisfy { !$0.contains("Secure") }, "not trusted")
        let trusting = DashboardConfiguration(trustForwardedProto: true, secureCookies: false)
        #expect(try await Self.cookies(trusting, headers: Self.https).allSatisfy { $0.hasSuffix("; Secure") })
        #expect(try await Self.cookies(trusting).allSatisfy { !$0.contains("Secure") })
        // A request that came over TLS to the server itself.
        let direct = Request(
            head: HTTPRequest(method: .get, scheme: "https", authority: "kakin.example.com", path: "/dashboard/login"),
            body: .init(buffer: ByteBuffer()))
        #expect(DashboardRoutes.cameOverHTTPS(direct, trustForwardedProto: false))
    }

    @Test func kakinServerCookiesAreSecureByDefaultAndTheOperatorKeyIsRead() throws {
        func parse(_ dashboard: String, environment: [String: String] = [:]) throws -> DashboardConfiguration {
            let json = """
                {"database": "sqlite:ledger.sqlite", "serverKey": "key.pem",
                 "keys": {"publishable": "pk_config_0123456789", "secret": "sk_config_0123456789"},
                 "apps": [{"bundleId": "com.example.kakin", "environments": ["Sandbox"]}]\(dashboard)}
                """
            return try ServerConfiguration.parse(Data(json.utf8), environment: environment).dashboard
        }
        let defaults = try parse("")
        #expect(defaults.secureCookies && defaults.operatorKey == nil)
        let configured = try parse(
            #", "dashboard": {"operatorKey": "env:KAKIN_OPERATOR_KEY", "secureCookies": false}"#,
            environment: ["KAKIN_OPERATOR_KEY": "op_from_the_environment"])
        #expect(configured.operatorKey == "op_from_the_environment" && !configured.secureCookies)
        // The older name is read as the same key.
        #expect(try parse(#", "dashboard": {"adminPassword": "twelve chars"}"#).operatorKey == "twelve chars")
        for bad in [
            #", "dashboard": {"operatorKey": "fifteen chars.."}"#,
            #", "dashboard": {"adminPassword": "eleven char"}"#,
            #", "dashboard": {"operatorKey": "op_0123456789abcdef", "adminPassword": "op_0123456789abcdef"}"#,
        ] {
            #expect(throws: ServerError.self, "\(bad)") { try parse(bad) }
        }
    }
}
