import Foundation
import KakinWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Small JSON-over-HTTP helper shared by the sandbox backend and the server client: one place
/// where transport failures become retryable ``KakinError/Code/network`` errors.
struct JSONHTTP: Sendable {
    struct Reply: Sendable {
        let status: Int
        let headers: [String: String]
        let body: Data
    }

    let timeout: TimeInterval

    init(timeout: TimeInterval = 30) {
        self.timeout = timeout
    }

    func send(
        _ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil
    ) async throws(KakinError)
        -> Reply
    {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        do {
            let (data, response) = try await URLSession.shared.cancellableData(for: request)
            guard let http = response as? HTTPURLResponse else {
                throw KakinError(.invalidResponse, "\(url.host ?? "the server") did not answer over HTTP")
            }
            var fields: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
            }
            return Reply(status: http.statusCode, headers: fields, body: data)
        } catch let error as KakinError {
            throw error
        } catch {
            throw KakinError(
                .network, "\(url.host ?? "the server") could not be reached: \(error.localizedDescription)")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(KakinError) -> T {
        do { return try KakinJSON.decoder().decode(T.self, from: data) } catch {
            throw KakinError(.invalidResponse, "unexpected answer: \(error)")
        }
    }

    /// The API's JSON for a request body whose encoding cannot fail (plain strings and numbers).
    static func encode<T: Encodable>(_ value: T) -> Data {
        (try? KakinJSON.encoder().encode(value)) ?? Data("{}".utf8)
    }
}
