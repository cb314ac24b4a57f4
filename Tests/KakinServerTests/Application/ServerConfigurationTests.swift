import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinServer
import KakinLedger
import Testing

@Suite struct ServerConfigurationTests {
    static let full = """
        {
          "listen": {"host": "0.0.0.0", "port": "env:PORT"},
          "database": "sqlite:ledger.sqlite",
          "serverKey": "server-key.pem",
          "keys": {"publishable": "pk_live_123", "secret": "env:SECRET_KEY"},
          "webhooks": [{"url": "https://hooks.example.com/kakin", "secret": "whsec"}],
          "apps": [
            {
              "bundleId": "com.example.one", "appAppleId": 1234567890,
              "environments": ["Production", "Sandbox"], "sharedSecret": "env:SHARED",
              "appStoreServerAPI": {"keyId": "ABC123DEFG", "issuerId": "issuer", "privateKey": "keys/api.p8"},
              "catalog": "/etc/kakin/Products.storekit", "grants": "grants.json",
              "transferPolicy": "transferToNewUser", "extraRoots": ["roots/sandbox.pem"], "revocation": "bestEffort",
              "endpoints": {"verifyReceiptSandbox": "http://127.0.0.1:9/verifyReceipt"}
            },
            {"bundleId": "com.example.two", "environments": ["Sandbox"], "keys": {"publishable": "pk_two", "secret": "sk_two_0123456789abcdef"}}
          ],
          "clawbackPolicy": "allowNegative",
          "logging": {"format": "json", "level": "debug"},
          "limits": {"maxBodyBytes": 65536, "idleTimeoutSeconds": 10},
          "jobs": {"reconcileIntervalSeconds": 0}
        }
        """

    static let environment = ["PORT": "9090", "SECRET_KEY": "sk_live_0123456789abcdef", "SHARED": "s3cret"]

    @Test func aFullConfigurationIsReadWithSecretsFromTheEnvironment() throws {
        let base = URL(fileURLWithPath: "/srv/kakin")
        let configuration = try ServerConfiguration.parse(
            Data(Self.full.utf8), environment: Self.environment, relativeTo: base)
        #expect(configuration.listen.host == "0.0.0.0")
        #expect(configuration.listen.port == 9090)
        #expect(configuration.database == "sqlite:/srv/kakin/ledger.sqlite")
        #expect(configuration.serverKeyPath == "/srv/kakin/server-key.pem")
        #expect(configuration.keys.secret == "sk_live_0123456789abcdef")
        #expect(configuration.webhooks.first?.url.host == "hooks.example.com")
        #expect(configuration.apps.count == 2)
        let one = configuration.apps[0]
        #expect(one.appAppleID == 1_234_567_890)
        #expect(one.environments == [.production, .sandbox])
        #expect(one.sharedSecret == "s3cret")
        #expect(one.appStoreServerAPI?.privateKeyPath == "/srv/kakin/keys/api.p8")
        #expect(one.catalogPath == "/etc/kakin/Products.storekit", "absolute paths stay")
        #expect(one.extraRootPaths == ["/srv/kakin/roots/sandbox.pem"])
        #expect(one.transferPolicy == .transferToNewUser)
        #expect(one.revocation == .bestEffort)
        #expect(configuration.apps[1].revocation == nil, "absent: each environment's default")
        #expect(one.endpoints.verifyReceiptSandbox.absoluteString == "http://127.0.0.1:9/verifyReceipt")
        #expect(one.endpoints.verifyReceiptProduction == AppleEndpoints.verifyReceiptProduction, "Apple by default")
        #expect(one.endpoints.serverAPIProduction.host == "api.storekit.apple.com")
        #expect(one.endpoints.serverAPISandbox == AppleEndpoints.serverAPISandbox)
        #expect(configuration.apps[1].keys?.publishable == "pk_two")
        #expect(configuration.clawbackPolicy == .allowNegative)
        #expect(configuration.logFormat == .json)
        #expect(configuration.logLevel == "debug")
        #expect(configuration.maxBodyBytes == 65536)
        #expect(configuration.idleTimeoutSeconds == 10)
        #expect(configuration.reconcileIntervalSeconds == 0)
    }

    nonisolated(unsafe) static let minimal: [String: Any] = [
        "database": "sqlite::memory:", "serverKey": "/tmp/key.pem",
        "keys": ["publishable": "pk_a", "secret": "sk_0123456789abcdef"],
        "apps": [["bundleId": "com.example.app", "environments": ["Sandbox"]]],
    ]

    /// The first line of the error for `change` applied to the minimal configuration.
    static func failure(_ change: (inout [String: Any]) -> Void, environment: [String: String] = [:]) -> String? {
        var object = minimal
        change(&object)
        let data = try! JSONSerialization.data(withJSONObject: object)
        do {
            _ = try ServerConfiguration.parse(data, environment: environment)
            return nil
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(!error.message.contains("\n"), "one line")
            return error.message
        }
    }

    @Test func theMinimalConfigurationIsEnough() throws {
        let configuration = try ServerConfiguration.parse(try JSONSerialization.data(withJSONObject: Self.minimal))
        #expect(configuration.listen.port == 8080 && configuration.listen.host == "127.0.0.1")
        #expect(configuration.idleTimeoutSeconds <= 30, "stalled connections are closed by default")
    }

    @Test func everyMistakeNamesItsKey() {
        #expect(Self.failure { $0["databse"] = "x" } == "databse: unknown key")
        #expect(
            Self.failure { $0["apps"] = [["bundleId": "a", "environments": ["Sandbox"], "sharedSecrt": "x"]] }
                == "apps[0].sharedSecrt: unknown key")
        #expect(
            Self.failure {
                $0["apps"] = [
                    [
                        "bundleId": "a", "environments": ["Sandbox"],
                        "appStoreServerAPI": ["keyID": "K", "issuerId": "I", "privateKey": "p"],
                    ]
                ]
            }?.hasPrefix("apps[0].appStoreServerAPI.keyId") == true)
        #expect(Self.failure { $0["listen"] = ["port": 70000] }?.hasPrefix("listen.port:") == true)
        #expect(
            Self.failure { $0["listen"] = ["port": "env:NOPE"] }
                == "listen.port: the environment variable NOPE is not set")
        #expect(Self.failure { $0.removeValue(forKey: "database") } == "database: is required")
        #expect(Self.failure { $0["database"] = "mysql://x" }?.hasPrefix("database:") == true)
        #expect(Self.failure { $0["apps"] = [] }?.hasPrefix("apps:") == true)
        #expect(
            Self.failure { $0["apps"] = [["bundleId": "a"]] }?.hasPrefix("apps[0].appAppleId: is required") == true,
            "Production needs the app's Apple ID")
        #expect(
            Self.failure { $0["apps"] = [["bundleId": "a", "environments": ["Xcode"]]] }?.hasPrefix(
                "apps[0].environments:") == true)
        #expect(
            Self.failure { $0["apps"] = [["bundleId": "a", "environments": ["Sandbox"], "transferPolicy": "maybe"]] }?
                .hasPrefix("apps[0].transferPolicy:") == true)
        #expect(
            Self.failure {
                $0["apps"] = [
                    ["bundleId": "a", "environments": ["Sandbox"], "endpoints": ["serverAPISandbox": "ftp://x"]]
                ]
            }?.hasPrefix("apps[0].endpoints.serverAPISandbox:") == true)
        #expect(
            Self.failure { $0["keys"] = ["publishable": "pk", "secret": "short"] }?.hasPrefix("keys.secret:") == true)
        #expect(
            Self.failure {
                $0["apps"] = [
                    ["bundleId": "a", "environments": ["Sandbox"]], ["bundleId": "a", "environments": ["Sandbox"]],
                ]
            }?.hasPrefix("apps[1].bundleId:") == true)
        #expect(Self.failure { $0["logging"] = ["format": "xml"] }?.hasPrefix("logging.format:") == true)
    }

    @Test("an app's consent-scoped data is all of it by default, what the list names, or none")
    func consentScopedData() throws {
        func scoped(_ value: Any?) throws -> Set<ConsentScopedData> {
            var object = Self.minimal
            var app: [String: Any] = ["bundleId": "com.example.app", "environments": ["Sandbox"]]
            app["consentScopedData"] = value
            object["apps"] = [app]
            return try ServerConfiguration.parse(try JSONSerialization.data(withJSONObject: object)).apps[0]
                .consentScopedData
        }
        #expect(try scoped(nil) == [.aliases, .appTransactions])
        #expect(try scoped(["aliases"]) == [.aliases])
        #expect(try scoped([String]()) == [])
        #expect(
            Self.failure {
                $0["apps"] = [["bundleId": "a", "environments": ["Sandbox"], "consentScopedData": ["purchases"]]]
            } == "apps[0].consentScopedData: expected aliases or appTransactions; found purchases")
    }

    @Test("an app's Stripe account: its key and webhook secrets from the environment, its web products, checked")
    func stripeAccount() throws {
        func app(_ stripe: [String: Any]) -> [String: Any] {
            ["bundleId": "com.example.app", "environments": ["Sandbox"], "stripe": stripe]
        }
        var object = Self.minimal
        object["apps"] = [
            app([
                "secretKey": "env:STRIPE_KEY", "webhookSecrets": ["whsec_old0123456789", "env:STRIPE_WHSEC"],
                "products": [
                    ["productId": "com.example.premium.monthly", "price": "price_usd"],
                    ["productId": "com.example.premium.monthly", "price": "price_eur"],
                ],
            ])
        ]
        let read = try ServerConfiguration.parse(
            try JSONSerialization.data(withJSONObject: object),
            environment: ["STRIPE_KEY": "sk_test_0123456789", "STRIPE_WHSEC": "whsec_new0123456789"])
        let account = try #require(read.apps[0].stripe)
        #expect(account.secretKey == "sk_test_0123456789")
        #expect(account.webhookSecrets == ["whsec_old0123456789", "whsec_new0123456789"])
        #expect(account.apiBase == URL(string: "https://api.stripe.com"))
        #expect(account.environment == .sandbox)
        #expect(account.accepts(livemode: false) && !account.accepts(livemode: true))
        #expect(account.products(for: "com.example.premium.monthly").map(\.price) == ["price_usd", "price_eur"])
        #expect(account.product(price: "price_eur")?.productID == "com.example.premium.monthly")
        #expect(account.product(price: "price_gbp") == nil)
        #expect(StripeAccount(secretKey: "rk_live_0123456789", webhookSecrets: ["whsec_0123456789"]).environment == .production)
        #expect(try ServerConfiguration.parse(try JSONSerialization.data(withJSONObject: Self.minimal)).apps[0].stripe == nil)

        let mistakes: [([String: Any], String)] = [
            (["webhookSecrets": ["whsec_0123456789"]], "apps[0].stripe.secretKey: is required"),
            (["secretKey": "pk_test_0123456789", "webhookSecrets": ["whsec_0123456789"]], "apps[0].stripe.secretKey: expected a secret"),
            (["secretKey": "sk_test_0123456789", "webhookSecrets": []], "apps[0].stripe.webhookSecrets: at least one"),
            (["secretKey": "sk_test_0123456789", "webhookSecrets": ["sk_test_0123456789"]], "apps[0].stripe.webhookSecrets: sk_tes… is not"),
            (
                ["secretKey": "sk_test_0123456789", "webhookSecrets": ["whsec_0123456789"], "apiBase": "http://stripe.example.com"],
                "apps[0].stripe.apiBase: Stripe's API is reached over HTTPS"
            ),
            (
                [
                    "secretKey": "sk_test_0123456789", "webhookSecrets": ["whsec_0123456789"],
                    "products": [["productId": "a", "price": "price_1"], ["productId": "b", "price": "price_1"]],
                ],
                "apps[0].stripe.products: the price price_1 is named twice"
            ),
            (
                ["secretKey": "sk_test_0123456789", "webhookSecrets": ["whsec_0123456789"], "products": [["productId": "a"]]],
                "apps[0].stripe.products[0].price: is required"
            ),
            (["secretKey": "sk_test_0123456789", "webhookSecrets": ["whsec_0123456789"], "key": "x"], "apps[0].stripe.key: unknown key"),
        ]
        for (stripe, message) in mistakes {
            let failure = Self.failure { $0["apps"] = [app(stripe)] }
            #expect(failure?.hasPrefix(message) == true, "\(failure ?? "accepted")")
        }
    }

    @Test("an app's web checkout: its publishable key of the secret key's mode, its return URLs and trials, checked")
    func stripeCheckout() throws {
        func app(_ stripe: [String: Any]) -> [String: Any] {
            ["bundleId": "com.example.app", "environments": ["Sandbox"], "stripe": stripe]
        }
        let base: [String: Any] = ["secretKey": "sk_test_0123456789", "webhookSecrets": ["whsec_0123456789"]]
        var object = Self.minimal
        object["apps"] = [
            app(
                base.merging([
                    "publishableKey": "pk_test_0123456789", "returnUrls": ["myapp://checkout", "https://example.com/done"],
                    "products": [
                        ["productId": "com.example.premium.monthly", "price": "price_usd", "trialDays": 7],
                        ["productId": "com.example.unlock", "price": "price_unlock"],
                    ],
                ]) { $1 })
        ]
        let account = try #require(try ServerConfiguration.parse(try JSONSerialization.data(withJSONObject: object)).apps[0].stripe)
        #expect(account.publishableKey == "pk_test_0123456789")
        #expect(account.returnURLs == ["myapp://checkout", "https://example.com/done"])
        #expect(account.products.map(\.trialDays) == [7, nil])
        #expect(account.stripeJSURL == URL(string: "https://js.stripe.com/v3/"))
        #expect(account.allowsReturn(to: "myapp://checkout"))
        #expect(account.allowsReturn(to: "myapp://checkout/done?order=1"))
        #expect(account.allowsReturn(to: "https://example.com/done#x"))
        #expect(!account.allowsReturn(to: "myapp://checkoutx"))
        #expect(!account.allowsReturn(to: "https://example.com/done.evil.test"))
        #expect(!account.allowsReturn(to: "https://example.com/"))
        var emulated = account
        emulated.apiBase = URL(string: "http://127.0.0.1:4242/")!
        #expect(emulated.stripeJSURL == URL(string: "http://127.0.0.1:4242/js.stripe.com/v3/"))
        // An account without the checkout's keys still reads as before.
        let plain = try ServerConfiguration.parse(
            try JSONSerialization.data(withJSONObject: Self.minimal.merging(["apps": [app(base)]]) { $1 }))
        #expect(plain.apps[0].stripe?.publishableKey == nil)
        #expect(plain.apps[0].stripe?.returnURLs == [])

        let mistakes: [([String: Any], String)] = [
            (["publishableKey": "sk_test_0123456789"], "apps[0].stripe.publishableKey: expected a publishable key"),
            (["publishableKey": "pk_live_0123456789"], "apps[0].stripe.publishableKey: a pk_test_… key is needed"),
            (["returnUrls": ["checkout"]], "apps[0].stripe.returnUrls: checkout is not an absolute URL"),
            (["products": [["productId": "a", "price": "price_1", "trialDays": 0]]], "apps[0].stripe.products[0].trialDays"),
        ]
        for (extra, message) in mistakes {
            let failure = Self.failure { $0["apps"] = [app(base.merging(extra) { $1 })] }
            #expect(failure?.hasPrefix(message) == true, "\(failure ?? "accepted")")
        }
    }

    @Test("the metrics' rates table, job interval and an app's commission program are read and checked")
    func metricsSettings() throws {
        var object = Self.minimal
        object["metrics"] = ["reportingCurrency": "USD", "rates": ["EUR": 1.08, "JPY": "0.0067"]]
        object["jobs"] = ["metricsIntervalSeconds": 10]
        object["apps"] = [["bundleId": "com.example.app", "environments": ["Sandbox"], "smallBusinessProgram": true]]
        let configuration = try ServerConfiguration.parse(try JSONSerialization.data(withJSONObject: object))
        #expect(configuration.currencyRates == CurrencyRates(reportingCurrency: "USD", rates: ["EUR": 1.08, "JPY": 0.0067]))
        #expect(configuration.currencyRates?.rates["USD"] == 1)
        #expect(configuration.metricsIntervalSeconds == 10)
        #expect(configuration.apps[0].smallBusinessProgram)
        #expect(try ServerConfiguration.parse(try JSONSerialization.data(withJSONObject: Self.minimal)).currencyRates == nil)
        #expect(Self.failure { $0["metrics"] = ["rates": ["EUR": 1.08]] } == "metrics.reportingCurrency: is required")
        #expect(
            Self.failure { $0["metrics"] = ["reportingCurrency": "dollars"] }?.hasPrefix("metrics.reportingCurrency:") == true)
        #expect(
            Self.failure { $0["metrics"] = ["reportingCurrency": "USD", "rates": ["EUR": -1]] }
                == "metrics.rates.EUR: expected a number above zero")
        #expect(
            Self.failure { $0["metrics"] = ["reportingCurrency": "USD", "rates": ["euro": 1]] }
                == "metrics.rates.euro: expected an ISO 4217 currency code")
        #expect(Self.failure { $0["metrics"] = ["reportingCurrency": "USD", "rate": [:]] } == "metrics.rate: unknown key")
    }

    @Test func aPostgreSQLDatabaseTakesItsPoolAndTLSSettings() throws {
        var object = Self.minimal
        object["database"] = "env:DATABASE_URL"
        object["postgres"] = [
            "maxConnections": 32, "connectionWaitSeconds": 3, "tls": "require", "caFile": "db-ca.pem", "schema": "ledger",
            "writers": 3,
        ]
        object["jobs"] = ["webhookLeaseSeconds": 60]
        let configuration = try ServerConfiguration.parse(
            try JSONSerialization.data(withJSONObject: object),
            environment: ["DATABASE_URL": "postgres://kakin:secret@db.internal/kakin?sslmode=disable&pool_max_conns=4"],
            relativeTo: URL(fileURLWithPath: "/etc/kakin"))
        let options = try configuration.postgresOptions()
        #expect(options.host == "db.internal" && options.port == 5432 && options.database == "kakin")
        #expect(options.username == "kakin" && options.password == "secret")
        #expect(options.maxConnections == 32 && options.tls == .require, "the postgres object overrides the URL")
        #expect(options.caFile == "/etc/kakin/db-ca.pem" && options.schema == "ledger")
        #expect(options.connectionWait == .seconds(3))
        #expect(options.writers == 3)
        #expect(configuration.webhookLeaseSeconds == 60)

        #expect(
            Self.failure {
                $0["database"] = "postgres://kakin@db/kakin"
                $0["postgres"] = ["tls": "sometimes"]
            }?.hasPrefix("postgres.tls:") == true)
        #expect(
            Self.failure {
                $0["database"] = "postgres://kakin@db/kakin"
                $0["postgres"] = ["maxConnections": 0]
            }?.hasPrefix("postgres.maxConnections:") == true)
        #expect(Self.failure { $0["postgres"] = ["maxConnections": 4] }?.hasPrefix("postgres:") == true)
        #expect(Self.failure { $0["database"] = "postgres://db/kakin" }?.hasPrefix("database:") == true)
        #expect(Self.failure { $0["database"] = "postgres://kakin@db/kakin?sslmode=often" }?.hasPrefix("database:") == true)
    }

    @Test func missingAndBadFilesStopTheStartNamingTheKey() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("not a certificate".utf8).write(to: directory.appendingPathComponent("bad.pem"))
        func start(_ app: [String: Any]) async -> String? {
            var object = Self.minimal
            object["serverKey"] = "key.pem"
            object["apps"] = [app]
            let data = try! JSONSerialization.data(withJSONObject: object)
            do {
                let configuration = try ServerConfiguration.parse(data, relativeTo: directory)
                _ = try await buildApplication(configuration: configuration)
                return nil
            } catch {
                return ServerError(error).message
            }
        }
        let base: [String: Any] = ["bundleId": "com.example.app", "environments": ["Sandbox"]]
        var missingRoot = base
        missingRoot["extraRoots"] = ["missing.pem"]
        #expect(await start(missingRoot)?.hasPrefix("apps[0].extraRoots[0]: ") == true)
        var badRoot = base
        badRoot["extraRoots"] = ["bad.pem"]
        #expect(await start(badRoot)?.contains("is not a PEM certificate") == true)
        var missingKey = base
        missingKey["appStoreServerAPI"] = ["keyId": "K", "issuerId": "I", "privateKey": "nope.p8"]
        #expect(await start(missingKey)?.hasPrefix("apps[0].appStoreServerAPI.privateKey: ") == true)
        var missingCatalog = base
        missingCatalog["catalog"] = "none.storekit"
        #expect(await start(missingCatalog)?.hasPrefix("apps[0].catalog: ") == true)
        var missingGrants = base
        missingGrants["grants"] = "none.json"
        #expect(await start(missingGrants)?.hasPrefix("apps[0].grants: ") == true)
        #expect(
            FileManager.default.fileExists(atPath: directory.appendingPathComponent("key.pem").path),
            "the server key is made on first start")
    }
}

@Suite("The grants file")
struct GrantsFileTests {
    @Test("a product ID that no catalog can hold stops the start, naming it")
    func productIDsAreChecked() throws {
        for productID in ["../../tmp/pwn", "a b", "café", "", "x/y"] {
            let data = try JSONSerialization.data(withJSONObject: [productID: [["entitlement": "pro"]]])
            #expect(throws: ServerError.self, "\(productID)") { try GrantsCatalog.load(from: data) }
        }
        let good = try GrantsCatalog.load(from: Data(#"{"com.example.app_1.pro": [{"content": true}]}"#.utf8))
        #expect(good.grants(for: "com.example.app_1.pro") == [.content])
    }
}
