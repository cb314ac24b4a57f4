import ArgumentParser
import Foundation
import KakinWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--url`: where the running sandbox listens.
struct SandboxConnectionOptions: ParsableArguments {
    @Option(help: "The running sandbox's base URL.")
    var url: String = "http://127.0.0.1:8081"

    func validate() throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme),
            parsed.host != nil
        else { throw ValidationError("--url must be an http(s) URL such as http://127.0.0.1:8081; found \(url)") }
    }

    var client: SandboxControlClient { SandboxControlClient(baseURL: url) }
}

/// One call to a running sandbox's control API (`/v1/control/…`), turned into what the command prints.
struct SandboxControlClient: Sendable {
    let baseURL: String
    var timeout: TimeInterval = 30

    /// Sends `method` to `/v1/control/` followed by the path segments (each percent-encoded).
    ///
    /// A 2xx answer prints its JSON body (or `done` when there is none) and exits 0. A refusal
    /// prints `error: <code>: <message>` from the sandbox's error body; an unreachable sandbox or
    /// an answer that is not the sandbox's prints one line saying so. Both exit 1.
    func send(
        _ method: String, _ segments: [String], body: [String: Any]? = nil, done: String
    ) async -> CommandOutput {
        let path = segments.map(Self.encode).joined(separator: "/")
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        guard let url = URL(string: "\(base)/v1/control/\(path)") else {
            return .failure("error: \(base)/v1/control/\(path) is not a valid URL")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try? JSONSerialization.data(withJSONObject: body)
        }
        let data: Data
        let status: Int
        do {
            let (answer, response) = try await URLSession.shared.cancellableData(for: request)
            guard let http = response as? HTTPURLResponse else {
                return .failure("error: \(base) did not answer over HTTP")
            }
            data = answer
            status = http.statusCode
        } catch {
            return .failure("error: the sandbox at \(base) cannot be reached: \(error.localizedDescription)")
        }
        guard (200..<300).contains(status) else { return .failure(Self.refusal(status: status, body: data)) }
        if data.isEmpty { return CommandOutput(standardOutput: done) }
        return CommandOutput(standardOutput: PrettyJSON.string(fromJSON: data) ?? String(decoding: data, as: UTF8.self))
    }

    /// `error: <code>: <message> (HTTP <status>)`, from the sandbox's `{"error": {"code", "message"}}`.
    static func refusal(status: Int, body: Data) -> String {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        if let error = object?["error"] as? [String: Any], let code = error["code"] as? String {
            let message = (error["message"] as? String).map { ": \($0)" } ?? ""
            return "error: \(code)\(message) (HTTP \(status))"
        }
        return "error: the sandbox answered HTTP \(status) without an error body; is --url a Kakin sandbox?"
    }

    private static func encode(_ segment: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%")
        return segment.addingPercentEncoding(withAllowedCharacters: allowed) ?? segment
    }
}
