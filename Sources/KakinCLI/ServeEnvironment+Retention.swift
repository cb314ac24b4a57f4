import Foundation
import KakinServer

extension ServeEnvironment {
    /// The App Store Server API access `kakin serve` gives its app: the key it made in `data`
    /// (`keys.json` and `api-key.p8`), sent to the embedded sandbox at `host:sandboxPort`, which
    /// serves both environments. Reads only: a directory `kakin serve` never started in is an
    /// error, not made here.
    static func existingServerAPIAccess(
        data: String, host: String, sandboxPort: Int
    ) throws(ServerError) -> ServerAPIAccess {
        let directory = URL(fileURLWithPath: data)
        let keysURL = directory.appendingPathComponent(Files.keys)
        let keyURL = directory.appendingPathComponent(Files.apiKey)
        guard let keys = existingKeys(keysURL) else {
            throw ServerError(
                .invalidConfiguration,
                "\(keysURL.path) cannot be read: give the data directory of kakin serve (--data) or a server configuration (--config)"
            )
        }
        guard let privateKey = existingKey(keyURL) else { throw ServerError(.invalidConfiguration, "\(keyURL.path) is not the P-256 key kakin serve made") }
        guard let base = URL(string: "http://\(host):\(sandboxPort)"), base.host != nil else {
            throw ServerError(.invalidRequest, "--host \(host) and --sandbox-port \(sandboxPort) make no URL")
        }
        return ServerAPIAccess(baseURL: base, keyID: keys.apiKeyID, issuerID: keys.apiIssuerID, privateKey: privateKey)
    }
}
