import AppStoreSecurity
import AppStoreTesting
import ArgumentParser
import Crypto
import Foundation
import Hummingbird
import KakinServer
import KakinLedger
import Logging
import StoreSandbox

/// `kakin sandbox run` (and bare `kakin sandbox`): the local App Store on its own.
struct SandboxRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the sandbox App Store: device, control, verifyReceipt and App Store Server APIs (the default).",
        discussion: """
            The sandbox sells from the .storekit catalog, signs with its own certificate authority \
            (kept in DATA/ca, made on first start) and keeps its testers and transactions in \
            DATA/state.db (SQLite; a DATA/state.json from an older version is imported once) and \
            its Retention Messaging uploads in DATA/retention.json. \
            Without --data everything lives in memory and a new CA is made. The CA's intermediate \
            and leaf name the sandbox's OCSP responder, http://HOST:PORT/ocsp (with --port 0, the \
            port it got); `kakin sandbox ca revoke` revokes them.
            """)

    @Option(help: "The Xcode .storekit catalog to sell from.")
    var catalog: String = "Examples/Catalog/Kakin.storekit"

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 8081

    @Option(help: "The host to bind.")
    var host: String = "127.0.0.1"

    @Option(help: "A directory for the CA and the state; omit to keep everything in memory.")
    var data: String?

    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID.")
    var bundleID: String = "com.example.kakin"

    @Option(name: .customLong("app-apple-id"), help: "The app's App Store ID.")
    var appAppleID: Int64 = 6_450_000_001

    @Option(name: .customLong("shared-secret"), help: "The app's shared secret for verifyReceipt.")
    var sharedSecret: String?

    @Option(
        name: .customLong("api-key"),
        help:
            "An App Store Server API key accepted for bearer tokens, as KEY_ID:ISSUER_ID:FILE (a .p8 or a PEM public key); repeatable."
    )
    var apiKeys: [String] = []

    @Option(help: "A directory of hosted content packages, <productID>.zip; stand-ins are served otherwise.")
    var content: String?

    @Flag(
        name: .customLong("apple-rate-limits"),
        help: "Refuse App Store Server API requests past Apple's sandbox limits per endpoint (429, as Apple does).")
    var appleRateLimits = false

    @Option(name: .customLong("notification-url"), help: "Where to POST App Store Server Notifications V2.")
    var notificationURL: String?

    @OptionGroup var retentionTest: RetentionTestOptions

    func validate() throws {
        if let notificationURL, URL(string: notificationURL)?.scheme == nil {
            throw ValidationError("--notification-url must be an absolute URL; found \(notificationURL)")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard FileManager.default.fileExists(atPath: catalog) else {
            throw ValidationError("--catalog \(catalog): no such file")
        }
    }

    func run() async throws {
        let service: SandboxService
        do { service = try makeService() } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
        if let data {
            do {
                try await service.retention.keepUploads(
                    in: URL(fileURLWithPath: data).appendingPathComponent(ServeEnvironment.Files.retentionUploads))
            } catch {
                FileHandle.standardError.write(Data("error: the retention uploads cannot be read: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
        let host = self.host
        let engine = service.engine
        let app = Application(
            router: service.router(), configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                // With --port 0 the port is known only now: the certificates get the real URL.
                do { try await engine.useOCSPURL(Self.ocspURL(host: host, port: port)) } catch {
                    FileHandle.standardError.write(Data("warning: \(error)\n".utf8))
                }
                let lines = [
                    "Kakin sandbox App Store on http://\(host):\(port)",
                    "  device API:    http://\(host):\(port)/v1/device/",
                    "  control API:   http://\(host):\(port)/v1/control/",
                    "  verifyReceipt: http://\(host):\(port)/verifyReceipt (production: /production/verifyReceipt)",
                    "  OCSP:          \(Self.ocspURL(host: host, port: port))",
                ]
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            })
        if let notificationURL, let url = URL(string: notificationURL) {
            try await engine.updateSettings(SandboxSettingsUpdate(notificationURL: .set(url)))
        }
        let logger = Logger(label: "kakin.sandbox")
        let transport = URLSessionNotificationTransport()
        let work = PeriodicJob(name: "sandbox renewals and notifications", every: .seconds(1), logger: logger) {
            await engine.runDueWork(using: transport)
        }
        try await ServiceRunner.run([app, work], logger: logger, addresses: ["\(host):\(port)"])
    }

    /// The OCSP responder's URL, named in the sandbox's intermediate and leaf.
    static func ocspURL(host: String, port: Int) -> String { "http://\(host):\(port)/ocsp" }

    func makeService() throws -> SandboxService {
        let catalog = try SandboxCatalog.load(storeKitFile: URL(fileURLWithPath: self.catalog))
        let authority: SandboxCertificateAuthority
        let authorityDirectory: URL?
        let store: any SandboxStateStore
        // With port 0 the URL is set once the port is known (see run()).
        let ocspURL = port == 0 ? nil : Self.ocspURL(host: host, port: port)
        if let data {
            let directory = URL(fileURLWithPath: data)
            authorityDirectory = directory.appendingPathComponent("ca")
            authority = try SandboxCertificateAuthority.loadOrCreate(
                in: directory.appendingPathComponent("ca"), ocspURL: ocspURL)
            store = try SQLiteStateStore(directory: directory)
        } else {
            authority = try SandboxCertificateAuthority.generate(ocspURL: ocspURL)
            authorityDirectory = nil
            store = MemoryStateStore()
        }
        let engine = try SandboxEngine(
            signer: SandboxSigner(authority: authority, bundleID: bundleID, appAppleID: appAppleID),
            clock: SandboxClock(), store: store, storefrontIDs: catalog.storefrontIdentifiers,
            authorityDirectory: authorityDirectory, commitmentPlans: catalog.commitmentPlanLookup,
            products: catalog.engineLookup)
        return SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                sharedSecret: sharedSecret, apiKeys: try apiKeys.map(Self.apiKey),
                rateLimits: appleRateLimits ? .apple : nil),
            content: HostedContentStore(directory: content.map { URL(fileURLWithPath: $0) }),
            retention: SandboxRetention(engine: engine, configuration: .init(performanceTest: retentionTest.config)))
    }

    /// Reads `KEY_ID:ISSUER_ID:FILE`, where FILE holds a `.p8` private key or a PEM public key.
    static func apiKey(_ text: String) throws -> AppStoreServerAPITokenVerifier.Key {
        let parts = text.split(separator: ":", maxSplits: 2).map(String.init)
        guard parts.count == 3, let pem = try? String(contentsOfFile: parts[2], encoding: .utf8) else {
            throw ValidationError("--api-key must be KEY_ID:ISSUER_ID:FILE with a readable FILE; found \(text)")
        }
        if let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
            return .init(keyID: parts[0], issuerID: parts[1], publicKey: privateKey.publicKey)
        }
        guard let publicKey = try? P256.Signing.PublicKey(pemRepresentation: pem) else {
            throw ValidationError("--api-key \(parts[2]) is neither a P-256 private key (.p8) nor a PEM public key")
        }
        return .init(keyID: parts[0], issuerID: parts[1], publicKey: publicKey)
    }
}
