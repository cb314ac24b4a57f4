import AppStoreSecurity
import ArgumentParser
import Crypto
import Foundation
import KakinCore
import KakinServer
import KakinWire

/// `kakin token`: tokens to call with curl or to give an app: `api` (the default) for the App
/// Store Server API, `customer` for a customer of a purchase server.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a token: for the App Store Server API (api, the default) or a customer token (customer).",
        subcommands: [APITokenCommand.self, CustomerTokenCommand.self], defaultSubcommand: APITokenCommand.self)
}

/// `kakin token customer --config FILE --app BUNDLE --user ID`: a customer token signed with the
/// app's customer-token secret, as the app's own backend makes them, for tests and scripts.
struct CustomerTokenCommand: AsyncParsableCommand, OutputProducingCommand {
    static let configuration = CommandConfiguration(
        commandName: "customer",
        abstract: "Print a customer token (HS256 JWT) for an app user ID, signed with the app's customerTokens secret.",
        discussion: """
            The token is what an app's backend gives the app for its signed-in user; the SDK sends it as \
            X-Kakin-Customer-Token. It is signed with apps[].customerTokens.secret of the server's \
            configuration and expires after --lifetime seconds (at most a day).
            """)

    @Option(help: "The server's configuration file.") var config: String
    @Option(help: "The app's bundle ID.") var app: String
    @Option(help: "The app user ID the token speaks for.") var user: String
    @Option(help: "Seconds until the token expires (1 to 86400).") var lifetime: Int = 3600

    func run() async throws { try await emit() }

    func produceOutput() async -> CommandOutput {
        guard (1...Int(CustomerToken.maxLifetime)).contains(lifetime) else {
            return .failure("error: --lifetime must be from 1 to \(Int(CustomerToken.maxLifetime))")
        }
        let configuration: ServerConfiguration
        do { configuration = try ServerConfiguration.load(contentsOf: URL(fileURLWithPath: config)) } catch {
            return .failure("error: \(error.message)")
        }
        guard let found = configuration.apps.first(where: { $0.bundleID == app }) else {
            return .failure("error: \(config) configures no app \(app)")
        }
        guard let tokens = found.customerTokens else {
            return .failure("error: \(app) has no customerTokens in \(config)")
        }
        guard !user.isEmpty, !AnonymousAppUserID.isAnonymous(user) else {
            return .failure("error: --user must name an identified customer (anonymous customers need no token)")
        }
        let token = CustomerToken.mint(
            appUserID: user, bundleID: app, secret: CustomerTokenPolicy(secret: tokens.secret, required: true).secret,
            lifetime: TimeInterval(lifetime))
        return CommandOutput(standardOutput: token)
    }
}

/// `kakin token api`: a bearer token for the App Store Server API, to call it with curl.
struct APITokenCommand: AsyncParsableCommand, OutputProducingCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Print a bearer token (ES256 JWT) for the App Store Server API.",
        discussion: """
            Without --key, the token is made with the key `kakin serve` keeps in its data directory \
            (DATA/api-key.p8, its ID and issuer in DATA/keys.json), which the embedded sandbox accepts. \
            With --key-id, --issuer-id and --key FILE it is made with an in-app purchase key from App Store \
            Connect, for Apple's own API. Use it as `Authorization: Bearer <token>`; it expires after \
            --lifetime seconds (at most 3600).
            """)

    @Option(help: "The data directory of `kakin serve`.") var data: String = "kakin-data"
    @Option(name: .customLong("key-id"), help: "The key's ID (App Store Connect).") var keyID: String?
    @Option(name: .customLong("issuer-id"), help: "The issuer ID of the team's keys.") var issuerID: String?
    @Option(help: "The .p8 private key file.") var key: String?
    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID.") var bundleID: String = "com.example.kakin"
    @Option(help: "Seconds until the token expires (1 to 3600).") var lifetime: Int = 300

    func run() async throws { try await emit() }

    func produceOutput() async -> CommandOutput {
        guard (1...3600).contains(lifetime) else { return .failure("error: --lifetime must be from 1 to 3600") }
        var keyID = self.keyID
        var issuerID = self.issuerID
        var keyPath = self.key
        if keyPath == nil {
            let directory = URL(fileURLWithPath: data)
            guard
                let keys = try? JSONDecoder().decode(
                    ServeEnvironment.Keys.self,
                    from: Data(contentsOf: directory.appendingPathComponent(ServeEnvironment.Files.keys)))
            else {
                return .failure(
                    "error: \(data)/\(ServeEnvironment.Files.keys) cannot be read; run `kakin serve` once, or pass --key-id, --issuer-id and --key"
                )
            }
            keyID = keyID ?? keys.apiKeyID
            issuerID = issuerID ?? keys.apiIssuerID
            keyPath = directory.appendingPathComponent(ServeEnvironment.Files.apiKey).path
        }
        guard let keyID, let issuerID, let keyPath else {
            return .failure("error: --key needs --key-id and --issuer-id")
        }
        guard let text = try? String(contentsOfFile: keyPath, encoding: .utf8) else {
            return .failure("error: \(keyPath) cannot be read")
        }
        guard let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: text) else {
            return .failure("error: \(keyPath) is not a P-256 private key (.p8)")
        }
        do {
            let token = try AppStoreServerAPIToken.make(
                keyID: keyID, issuerID: issuerID, bundleID: bundleID, privateKey: privateKey,
                lifetime: TimeInterval(lifetime))
            return CommandOutput(standardOutput: token + "\n")
        } catch {
            return .failure("error: cannot sign the token: \(error)")
        }
    }
}
