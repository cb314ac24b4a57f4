import Hummingbird
import HummingbirdTesting
import KakinServer
import StoreSandbox

/// Runs `body` while a sandbox App Store (`sandbox`) and a purchase server (`server`) both listen
/// on 127.0.0.1, each on a port of its own (port 0: the system picks); `body` gets the two ports.
/// Both stop when `body` returns or throws.
public func withLiveSandboxAndServer(
    sandbox: SandboxService, server: KakinServerHTTP,
    _ body: @escaping @Sendable (_ sandboxPort: Int, _ serverPort: Int) async throws -> Void
) async throws {
    let sandboxApp = Application(
        router: sandbox.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    let serverApp = Application(router: server.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    try await sandboxApp.test(.live) { sandboxClient in
        try await serverApp.test(.live) { serverClient in
            guard let sandboxPort = sandboxClient.port, let serverPort = serverClient.port else {
                throw HTTPError(.internalServerError, message: "a live application has no port")
            }
            try await body(sandboxPort, serverPort)
        }
    }
}
