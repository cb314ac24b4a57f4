import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinCore
import KakinDashboard
import KakinLedger
import KakinServer
import KakinTestSupport
import KakinWire
import Logging
import NIOCore
import StoreSandbox
import X509
import Synchronization
import Testing

/// A real purchase server (``buildApplication(configuration:dependencies:)``, the dashboard added,
/// a socket on 127.0.0.1) on a SQLite file or a PostgreSQL schema, trusting a sandbox App Store
/// that runs in the test: what an attacker holding the publishable key faces.
struct AttackedServer {
    /// How the server is configured.
    enum Setup: String, CaseIterable, CustomTestStringConvertible {
        /// What the Security Model article recommends for production: customer tokens required,
        /// sandbox purchases from an allow list, an operator key, a metrics token.
        case recommended
        /// The configuration's defaults (no customer tokens, sandbox purchases granted), under the
        /// transfer policy the example configuration shows.
        case defaults

        var testDescription: String { rawValue }
    }

    static let bundleID = ExampleApp.bundleID
    static let publishable = "pk_attacked_0123456789"
    static let secret = "sk_attacked_0123456789abcdef"
    static let tokenSecret = "customer-token-secret-0123456789abcdef"
    static let operatorKey = "operator-key-0123456789"
    static let metricsToken = "metrics-token-0123456789"
    /// The app user ID on the allow list of sandbox purchases (App Review's account).
    static let reviewer = "app-review"
    /// The allow list of sandbox purchases under `recommended`: App Review and the team's testers,
    /// who play every customer of these tests but a TestFlight tester.
    static let allowList: Set<String> = [
        reviewer, "victim", "thief", "victim-new-device", "subscriber", "member", "alice",
    ]

    let setup: Setup
    let engine: SandboxEngine
    let clock: SandboxClock
    let logs: RecordedLogs
    /// A second handle on the server's ledger, to look at what it holds.
    let ledger: any LedgerStore
    let client: any TestClientProtocol
    /// The rate limits' clock, in seconds: it moves only when a test moves it.
    let uptime: ManualUptime

    /// Runs `body` against a server of `setup` on a ledger of `kind` (`.file` or `.postgres`).
    static func run(
        _ setup: Setup, on kind: StoreKind, _ body: @Sendable (AttackedServer) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-attacked-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        switch kind {
        case .postgres:
            try await PostgresTestDatabase.withSchema { schema in
                let url = try #require(PostgresTestDatabase.url)
                try await run(setup, database: url, schema: schema, directory: directory, kind: kind, body)
            }
        default:
            try await run(
                setup, database: "sqlite:" + directory.appendingPathComponent("ledger.sqlite").path, schema: nil,
                directory: directory, kind: .file, body)
        }
    }

    private static func run(
        _ setup: Setup, database: String, schema: String?, directory: URL, kind: StoreKind,
        _ body: @Sendable (AttackedServer) async throws -> Void
    ) async throws {
        let clock = SandboxClock.manual(at: ServerFixture.start)
        let engine = try ExampleSandbox.engine(
            catalog: ExampleApp.catalog(), authority: ServerFixture.authority, clock: clock)
        let root = directory.appendingPathComponent("root.pem")
        try ServerFixture.authority.root.serializeAsPEM().pemString.write(to: root, atomically: true, encoding: .utf8)
        let apiKey = directory.appendingPathComponent("api.p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(to: apiKey, atomically: true, encoding: .utf8)

        var app = ServerConfiguration.App(bundleID: bundleID, appAppleID: ExampleApp.appAppleID)
        // Production and Sandbox, as an app with an App Store ID and no `environments` accepts.
        app.environments = [.production, .sandbox]
        app.extraRootPaths = [root.path]
        app.catalogPath = ExampleApp.catalogDirectory.appendingPathComponent("Kakin.storekit").path
        app.grantsPath = ExampleApp.grantsFile.path
        app.transferPolicy = .transferToNewUser
        app.setAppAccountTokens = false
        app.appStoreServerAPI = .init(keyID: "KEY1234567", issuerID: "issuer", privateKeyPath: apiKey.path)
        app.endpoints.serverAPIProduction = URL(string: "http://127.0.0.1:9")!
        app.endpoints.serverAPISandbox = URL(string: "http://127.0.0.1:9")!
        if setup == .recommended {
            app.customerTokens = (tokenSecret, true)
            app.sandboxPurchases = .allowList(allowList)
        }
        var configuration = ServerConfiguration(
            database: database, serverKeyPath: directory.appendingPathComponent("server-key.pem").path,
            keys: .init(publishable: publishable, secret: secret), apps: [app])
        configuration.postgresSchema = schema
        configuration.listen = .init(host: "127.0.0.1", port: 0)
        configuration.reconcileIntervalSeconds = 0
        if setup == .recommended { configuration.operations.metricsToken = metricsToken }
        // The test's requests all come from 127.0.0.1: the address each claims stands for a client.
        configuration.signInThrottle.trustForwardedFor = true
        let logs = RecordedLogs()
        var dependencies = ServerDependencies()
        dependencies.now = { clock.now() }
        let uptime = ManualUptime()
        dependencies.uptime = { uptime.seconds.withLock { $0 } }
        dependencies.logger = Logger(label: "kakin.attacked") { _ in RecordedLogHandler(logs: logs) }
        dependencies.addDashboard()
        let application = try await buildApplication(configuration: configuration, dependencies: dependencies)
        let ledger = try await openLedger(kind, path: String(database.dropFirst("sqlite:".count)), schema: schema)
        do {
            try await application.test(.live) { client in
                try await body(
                    AttackedServer(
                        setup: setup, engine: engine, clock: clock, logs: logs, ledger: ledger, client: client,
                        uptime: uptime))
            }
        } catch {
            try? await ledger.shutdown()
            throw error
        }
        try await ledger.shutdown()
    }

    // MARK: - What a device does

    /// A purchase of `product` by the sandbox account `tester`, signed as the device receives it.
    func buy(_ product: String, tester: String) async throws -> (SandboxTransaction, String) {
        if (try? await engine.tester(tester)) == nil { _ = try await engine.createTester(name: tester, id: tester) }
        guard
            case .purchased(let transaction) = try await engine.purchase(
                .init(testerID: tester, productID: "com.example.kakin.\(product)"))
        else { throw ServerError(.invalidRequest, "the sandbox did not sell \(product)") }
        return (transaction, try engine.signer.signTransaction(transaction, at: clock.now()))
    }

    /// The app transaction of a device signed in to the sandbox account `tester`.
    func appTransaction(of tester: String) async throws -> String {
        if (try? await engine.tester(tester)) == nil { _ = try await engine.createTester(name: tester, id: tester) }
        return try await engine.signedAppTransaction(for: tester)
    }

    /// A customer token for `appUserID`, as the app's backend makes it.
    func token(for appUserID: String) -> String {
        CustomerToken.mint(
            appUserID: appUserID, bundleID: Self.bundleID, secret: SymmetricKey(data: Data(Self.tokenSecret.utf8)),
            lifetime: 600, now: clock.now())
    }

    /// The headers of a request with the publishable key from `address`, speaking for `customer`
    /// (with that customer's token, where the setup has them).
    func device(_ customer: String? = nil, from address: String = "192.0.2.10") -> HTTPFields {
        var fields: HTTPFields = [
            HTTPField.Name(KakinHeader.publishableKey)!: Self.publishable, .contentType: "application/json",
            HTTPField.Name("X-Forwarded-For")!: address,
        ]
        if let customer, setup == .recommended, !AnonymousAppUserID.isAnonymous(customer) {
            fields[HTTPField.Name(KakinHeader.customerToken)!] = token(for: customer)
        }
        return fields
    }

    /// The headers of the app's backend (the secret key).
    var backend: HTTPFields {
        [.authorization: "Bearer \(Self.secret)", .contentType: "application/json"]
    }

    /// Posts `body` as JSON.
    func post(_ path: String, _ body: some Encodable, headers: HTTPFields) async throws -> TestResponse {
        try await client.execute(
            uri: path, method: .post, headers: headers, body: ByteBuffer(data: try JSONEncoder().encode(body)))
    }

    /// Uploads a signed transaction as the SDK does.
    func upload(
        _ jws: String, for customer: String, proof: String? = nil, headers: HTTPFields? = nil
    ) async throws -> TestResponse {
        try await post(
            "/v1/transactions?transactions=0",
            TransactionSubmission(
                bundleId: Self.bundleID, appUserId: customer, signedTransaction: jws, signedAppTransaction: proof),
            headers: headers ?? device(customer))
    }

    /// Reads a customer.
    func read(_ customer: String, query: String = "", headers: HTTPFields? = nil) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/customers/\(KakinRoute.encode(customer))?bundleId=\(Self.bundleID)\(query)", method: .get,
            headers: headers ?? device(customer))
    }

    /// The customer's active entitlements, read with the secret key.
    func entitlements(of customer: String) async throws -> [Entitlement] {
        let answer = try await read(customer, headers: backend)
        #expect(answer.status == .ok)
        let decoded = try KakinJSON.decoder().decode(SignedCustomerAnswer.self, from: Data(buffer: answer.body))
        return decoded.customer.entitlements.filter(\.isActive)
    }
}

/// A monotonic clock a test moves.
final class ManualUptime: Sendable {
    let seconds = Mutex(0.0)
}

/// The error code and cause of an error answer.
func refusal(_ response: TestResponse) -> (code: String, cause: String?) {
    let answer = try? JSONDecoder().decode(ErrorAnswer.self, from: Data(buffer: response.body))
    return (answer?.error.code ?? "", answer?.error.cause)
}
