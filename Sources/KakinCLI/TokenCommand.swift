import AppStoreSecurity
import ArgumentParser
import Crypto
import Foundation

/// `kakin token`: a bearer token for the App Store Server API, to call it with curl.
struct TokenCommand: AsyncParsableCommand, OutputProducingCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
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
