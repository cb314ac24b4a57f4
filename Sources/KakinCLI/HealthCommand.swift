import ArgumentParser
import Foundation
import KakinWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `kakin health [--url URL]`: asks a running server whether it is ready, for a container's
/// health check or a process supervisor, where no HTTP client may be installed.
struct HealthCommand: AsyncParsableCommand, OutputProducingCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask a running server's /ready whether it serves; exit 0 when it does, 1 otherwise.",
        discussion: """
            Sends GET to URL (default: the environment's KAKIN_HEALTH_URL, else \(defaultURL)) and exits \
            0 on a 2xx answer. Any other answer, no answer within --timeout seconds or a refused connection \
            prints one line and exits 1. The container image's HEALTHCHECK runs it; a server listening \
            elsewhere than port 8080 in the container sets KAKIN_HEALTH_URL.
            """)

    /// What is asked when neither `--url` nor `KAKIN_HEALTH_URL` names an address: the image's port.
    static let defaultURL = "http://127.0.0.1:8080/ready"

    @Option(help: "The readiness URL to ask (env KAKIN_HEALTH_URL; default \(defaultURL)).") var url: String?
    @Option(help: "Seconds to wait for the answer.") var timeout: Double = 5

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be above zero") }
    }

    func run() async throws { try await emit() }

    func produceOutput() async -> CommandOutput {
        await produceOutput(environment: ProcessInfo.processInfo.environment)
    }

    /// The answer, with `KAKIN_HEALTH_URL` read from `environment` when `--url` is not given.
    func produceOutput(environment: [String: String]) async -> CommandOutput {
        let text = url ?? environment["KAKIN_HEALTH_URL"] ?? Self.defaultURL
        guard let target = URL(string: text), let scheme = target.scheme?.lowercased(),
            ["http", "https"].contains(scheme), target.host != nil
        else { return .failure("error: \(text) is not an http(s) URL") }
        var request = URLRequest(url: target, timeoutInterval: timeout)
        request.httpMethod = "GET"
        let data: Data
        let status: Int
        do {
            let (answer, response) = try await URLSession.shared.cancellableData(for: request)
            guard let http = response as? HTTPURLResponse else {
                return .failure("unhealthy: \(text) did not answer over HTTP")
            }
            (data, status) = (answer, http.statusCode)
        } catch {
            return .failure("unhealthy: \(text) cannot be reached: \(error.localizedDescription)")
        }
        guard (200..<300).contains(status) else {
            return .failure("unhealthy: \(text) answered HTTP \(status)\(Self.reason(data))")
        }
        return CommandOutput(standardOutput: "healthy: \(text) answered HTTP \(status)")
    }

    /// `: code (cause)` from the server's `{"error": {"code", "cause"}}`; nothing for another body.
    private static func reason(_ body: Data) -> String {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let error = object["error"] as? [String: Any], let code = error["code"] as? String
        else { return "" }
        return ": \(code)" + ((error["cause"] as? String).map { " (\($0))" } ?? "")
    }
}
